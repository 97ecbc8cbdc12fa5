/* In: an MLIR module in the LLVM dialect. Out: LLVM IR text or a host object
 * file (written out, or in memory for stc-run's loader). The LLVM module is optimized with the new pass manager's
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

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static LLVMTargetMachineRef create_host_machine(LLVMCodeGenOptLevel level,
                                                stc_error *err) {
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
                                      level, LLVMRelocPIC, LLVMCodeModelDefault);
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

/* ---- global constructors and destructors -------------------------------
 * An object loaded by ORC without a platform runtime does not run its
 * .init_array; so the entries of @llvm.global_ctors / @llvm.global_dtors
 * become calls, in ascending priority (stable, as ORC's CtorDtorRunner and
 * MLIR's ExecutionEngine order them), in one exported function each, which
 * the loader calls (STC_EMIT_CTORS_SYMBOL, STC_EMIT_DTORS_SYMBOL). */

typedef struct structor {
  uint64_t priority;
  LLVMValueRef function;
  size_t index;
} structor;

static int structor_order(const void *a_, const void *b_) {
  const structor *a = a_, *b = b_;
  if (a->priority != b->priority)
    return a->priority < b->priority ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

static stc_status lower_structors(LLVMModuleRef module, const char *array,
                                  const char *symbol, stc_error *err) {
  LLVMContextRef context = LLVMGetModuleContext(module);
  LLVMTypeRef void_type = LLVMVoidTypeInContext(context);
  LLVMTypeRef fn_type = LLVMFunctionType(void_type, NULL, 0, 0);
  if (LLVMGetNamedFunction(module, symbol)) {
    stc_error_set(err, NULL, 0, 0, "the module defines '%s', reserved for "
                  "its global constructors", symbol);
    return STC_ERR_INVALID;
  }
  LLVMValueRef runner = LLVMAddFunction(module, symbol, fn_type);
  LLVMBuilderRef builder = LLVMCreateBuilderInContext(context);
  LLVMPositionBuilderAtEnd(builder,
                           LLVMAppendBasicBlockInContext(context, runner, ""));
  LLVMValueRef global = LLVMGetNamedGlobal(module, array);
  LLVMValueRef init = global ? LLVMGetInitializer(global) : NULL;
  int count = init && LLVMIsAConstantArray(init) ? LLVMGetNumOperands(init) : 0;
  structor *list = count ? calloc((size_t)count, sizeof *list) : NULL;
  if (count && !list) {
    LLVMDisposeBuilder(builder);
    stc_error_set(err, NULL, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  size_t used = 0;
  for (int i = 0; i < count; i++) {
    LLVMValueRef element = LLVMGetOperand(init, (unsigned)i);
    if (!element || LLVMGetNumOperands(element) < 2)
      continue;
    LLVMValueRef priority = LLVMGetOperand(element, 0);
    LLVMValueRef function = LLVMGetOperand(element, 1);
    if (!function || LLVMIsNull(function))
      continue;
    list[used++] = (structor){
        priority && LLVMIsAConstantInt(priority)
            ? LLVMConstIntGetZExtValue(priority)
            : 65535,
        function, (size_t)i};
  }
  if (used > 1)
    qsort(list, used, sizeof *list, structor_order);
  for (size_t i = 0; i < used; i++)
    LLVMBuildCall2(builder, fn_type, list[i].function, NULL, 0, "");
  LLVMBuildRetVoid(builder);
  LLVMDisposeBuilder(builder);
  free(list);
  if (global)
    LLVMDeleteGlobal(global);
  return STC_OK;
}

/* Translation, target setup and optimization: the LLVM module is returned
 * in *out (in context), ready to print or emit. */
static stc_status translate(MlirOperation module, LLVMContextRef context,
                            LLVMTargetMachineRef machine, int opt_level,
                            bool lower_ctors, LLVMModuleRef *out,
                            stc_error *err) {
  LLVMModuleRef llvm_module = mlirTranslateModuleToLLVMIR(module, context);
  if (!llvm_module) {
    stc_error_set(err, NULL, 0, 0,
                  "cannot translate to LLVM IR: the module must contain only "
                  "LLVM dialect operations");
    return STC_ERR_INVALID;
  }
  char *triple = LLVMGetTargetMachineTriple(machine);
  LLVMSetTarget(llvm_module, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(machine);
  LLVMSetModuleDataLayout(llvm_module, layout);
  LLVMDisposeTargetData(layout);
  stc_status status = STC_OK;
  if (lower_ctors) {
    status = lower_structors(llvm_module, "llvm.global_ctors",
                             STC_EMIT_CTORS_SYMBOL, err);
    if (status == STC_OK)
      status = lower_structors(llvm_module, "llvm.global_dtors",
                               STC_EMIT_DTORS_SYMBOL, err);
  }
  if (status == STC_OK)
    status = optimize(llvm_module, machine, opt_level, err);
  if (status != STC_OK) {
    LLVMDisposeModule(llvm_module);
    return status;
  }
  *out = llvm_module;
  return STC_OK;
}

stc_status stc_emit_module(MlirOperation module, stc_emit_kind kind,
                           int opt_level, const char *path, stc_error *err) {
  if (kind == STC_EMIT_MLIR) {
    stc_error_set(err, NULL, 0, 0, "stc_emit_module does not print MLIR");
    return STC_ERR_INVALID;
  }
  LLVMTargetMachineRef machine =
      create_host_machine(LLVMCodeGenLevelAggressive, err);
  if (!machine)
    return STC_ERR_INVALID;
  LLVMContextRef context = LLVMContextCreate();
  LLVMModuleRef llvm_module = NULL;
  stc_status status =
      translate(module, context, machine, opt_level, false, &llvm_module, err);
  if (status == STC_OK) {
    status = emit(llvm_module, machine, kind, path, err);
    LLVMDisposeModule(llvm_module);
  }
  LLVMContextDispose(context);
  LLVMDisposeTargetMachine(machine);
  return status;
}

stc_status stc_emit_object_in_memory(MlirOperation module, int opt_level,
                                     stc_emit_timing *timing, char **data,
                                     size_t *size, stc_error *err) {
  static const LLVMCodeGenOptLevel levels[] = {
      LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
      LLVMCodeGenLevelAggressive};
  *data = NULL;
  *size = 0;
  LLVMTargetMachineRef machine = create_host_machine(
      levels[opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level], err);
  if (!machine)
    return STC_ERR_INVALID;
  struct timespec t0, t1, t2;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  LLVMContextRef context = LLVMContextCreate();
  LLVMModuleRef llvm_module = NULL;
  stc_status status =
      translate(module, context, machine, opt_level, true, &llvm_module, err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (status == STC_OK) {
    LLVMMemoryBufferRef buffer = NULL;
    char *message = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(machine, llvm_module,
                                            LLVMObjectFile, &message,
                                            &buffer)) {
      stc_error_set(err, NULL, 0, 0, "cannot emit object code: %s",
                    message ? message : "");
      LLVMDisposeMessage(message);
      status = STC_ERR_INVALID;
    } else {
      *size = LLVMGetBufferSize(buffer);
      *data = malloc(*size ? *size : 1);
      if (*data)
        memcpy(*data, LLVMGetBufferStart(buffer), *size);
      else
        status = STC_ERR_NOMEM;
      LLVMDisposeMemoryBuffer(buffer);
    }
    LLVMDisposeModule(llvm_module);
  }
  LLVMContextDispose(context);
  LLVMDisposeTargetMachine(machine);
  clock_gettime(CLOCK_MONOTONIC, &t2);
  if (timing) {
    timing->translate_optimize_s =
        (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    timing->codegen_s =
        (double)(t2.tv_sec - t1.tv_sec) + (t2.tv_nsec - t1.tv_nsec) * 1e-9;
  }
  return status;
}

stc_status stc_emit_host_identity(char **text, stc_error *err) {
  LLVMInitializeNativeTarget();
  char *triple = LLVMGetDefaultTargetTriple();
  char *cpu = LLVMGetHostCPUName();
  char *features = LLVMGetHostCPUFeatures();
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  size_t length = strlen(triple) + strlen(cpu) + strlen(features) + 96;
  *text = malloc(length);
  if (*text)
    snprintf(*text, length, "llvm %u.%u.%u\ntriple %s\ncpu %s\nfeatures %s\n",
             major, minor, patch, triple, cpu, features);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  if (!*text) {
    stc_error_set(err, NULL, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  return STC_OK;
}
