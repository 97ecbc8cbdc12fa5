/* In: an MLIR module in the LLVM dialect. Out: LLVM IR text or a host object
 * file. The LLVM module is optimized with the new pass manager's
 * default<O{n}> pipeline before emission, for the host CPU and its features,
 * position independent so the object links into executables and shared
 * libraries alike. */
#include "stc_emit.h"

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <mlir-c/Target/LLVMIR.h>

#include <stdio.h>
#include <string.h>

stc_status stc_emit_kind_parse(const char *text, stc_emit_kind *out) {
  static const char *const names[] = {"mlir", "llvm", "obj"};
  for (int i = 0; i < 3; i++)
    if (strcmp(text, names[i]) == 0) {
      *out = (stc_emit_kind)i;
      return STC_OK;
    }
  return STC_ERR_INVALID;
}

static stc_status write_bytes(const char *path, const char *data, size_t size,
                              stc_error *err) {
  FILE *file = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
  if (!file) {
    stc_error_set(err, path, 0, 0, "cannot open output file");
    return STC_ERR_IO;
  }
  size_t written = fwrite(data, 1, size, file);
  int failed = written != size || fflush(file) != 0;
  if (file != stdout)
    failed |= fclose(file) != 0;
  if (failed) {
    stc_error_set(err, path, 0, 0, "cannot write output file");
    return STC_ERR_IO;
  }
  return STC_OK;
}

static LLVMTargetMachineRef create_host_machine(stc_error *err) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *message = NULL;
  LLVMTargetMachineRef machine = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &message)) {
    stc_error_set(err, NULL, 0, 0, "no LLVM target for %s: %s", triple,
                  message ? message : "");
  } else {
    char *cpu = LLVMGetHostCPUName();
    char *features = LLVMGetHostCPUFeatures();
    machine = LLVMCreateTargetMachine(target, triple, cpu, features,
                                      LLVMCodeGenLevelAggressive,
                                      LLVMRelocPIC, LLVMCodeModelDefault);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    if (!machine)
      stc_error_set(err, NULL, 0, 0, "cannot create a target machine for %s",
                    triple);
  }
  LLVMDisposeMessage(message);
  LLVMDisposeMessage(triple);
  return machine;
}

static stc_status optimize(LLVMModuleRef module, LLVMTargetMachineRef machine,
                           int opt_level, stc_error *err) {
  if (opt_level <= 0)
    return STC_OK;
  char pipeline[32];
  snprintf(pipeline, sizeof pipeline, "default<O%d>", opt_level > 3 ? 3 : opt_level);
  LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
  LLVMErrorRef error = LLVMRunPasses(module, pipeline, machine, options);
  LLVMDisposePassBuilderOptions(options);
  if (error) {
    char *message = LLVMGetErrorMessage(error);
    stc_error_set(err, NULL, 0, 0, "LLVM optimization failed: %s", message);
    LLVMDisposeErrorMessage(message);
    return STC_ERR_INVALID;
  }
  return STC_OK;
}

static stc_status emit(LLVMModuleRef module, LLVMTargetMachineRef machine,
                       stc_emit_kind kind, const char *path, stc_error *err) {
  if (kind == STC_EMIT_LLVM) {
    char *text = LLVMPrintModuleToString(module);
    stc_status status = write_bytes(path, text, strlen(text), err);
    LLVMDisposeMessage(text);
    return status;
  }
  LLVMMemoryBufferRef buffer = NULL;
  char *message = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(machine, module, LLVMObjectFile,
                                          &message, &buffer)) {
    stc_error_set(err, NULL, 0, 0, "cannot emit object code: %s",
                  message ? message : "");
    LLVMDisposeMessage(message);
    return STC_ERR_INVALID;
  }
  stc_status status =
      write_bytes(path, LLVMGetBufferStart(buffer), LLVMGetBufferSize(buffer), err);
  LLVMDisposeMemoryBuffer(buffer);
  return status;
}

stc_status stc_emit_module(MlirOperation module, stc_emit_kind kind,
                           int opt_level, const char *path, stc_error *err) {
  if (kind == STC_EMIT_MLIR) {
    stc_error_set(err, NULL, 0, 0, "stc_emit_module does not print MLIR");
    return STC_ERR_INVALID;
  }
  LLVMTargetMachineRef machine = create_host_machine(err);
  if (!machine)
    return STC_ERR_INVALID;
  LLVMContextRef context = LLVMContextCreate();
  LLVMModuleRef llvm_module = mlirTranslateModuleToLLVMIR(module, context);
  stc_status status = STC_OK;
  if (!llvm_module) {
    stc_error_set(err, NULL, 0, 0,
                  "cannot translate to LLVM IR: the module must contain only "
                  "LLVM dialect operations");
    status = STC_ERR_INVALID;
  } else {
    char *triple = LLVMGetTargetMachineTriple(machine);
    LLVMSetTarget(llvm_module, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(machine);
    LLVMSetModuleDataLayout(llvm_module, layout);
    LLVMDisposeTargetData(layout);
    status = optimize(llvm_module, machine, opt_level, err);
    if (status == STC_OK)
      status = emit(llvm_module, machine, kind, path, err);
    LLVMDisposeModule(llvm_module);
  }
  LLVMContextDispose(context);
  LLVMDisposeTargetMachine(machine);
  return status;
}
