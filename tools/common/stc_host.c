/* stc_host.c - the host machine, detected once per process (stc_host.h).
 * In: nothing (LLVM's host detection). Out: target machines. */
#include "stc_host.h"

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include <pthread.h>

/* LLVM's CPU name and feature detection runs dozens of CPUID instructions,
 * each a trap to the hypervisor in a VM (~9 us), 0.2-0.3 ms a time; it was
 * asked for every partition and lazy unit compiled (the object cache's key
 * reads CPUID itself: tools/stc-run/host_identity.h; the JIT's machine
 * needs no CPU). Never freed (process lifetime). */
static struct {
  char *triple, *cpu, *features;
} g_host;

static void detect_host(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  g_host.triple = LLVMGetDefaultTargetTriple();
  g_host.cpu = LLVMGetHostCPUName();
  g_host.features = LLVMGetHostCPUFeatures();
}

static void host(const char **triple, const char **cpu,
                 const char **features) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, detect_host);
  *triple = g_host.triple ? g_host.triple : "";
  *cpu = g_host.cpu ? g_host.cpu : "";
  *features = g_host.features ? g_host.features : "";
}

static LLVMTargetMachineRef create_machine(const char *triple, const char *cpu,
                                           const char *features,
                                           LLVMCodeGenOptLevel level,
                                           stc_error *err) {
  LLVMTargetRef target;
  char *message = NULL;
  LLVMTargetMachineRef machine = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &message)) {
    stc_error_set(err, NULL, 0, 0, "no LLVM target for %s: %s", triple,
                  message ? message : "");
  } else {
    machine = LLVMCreateTargetMachine(target, triple, cpu, features, level,
                                      LLVMRelocPIC, LLVMCodeModelDefault);
    if (!machine)
      stc_error_set(err, NULL, 0, 0, "cannot create a target machine for %s",
                    triple);
  }
  LLVMDisposeMessage(message);
  return machine;
}

LLVMTargetMachineRef stc_host_machine(LLVMCodeGenOptLevel level,
                                      stc_error *err) {
  const char *triple, *cpu, *features;
  host(&triple, &cpu, &features);
  return create_machine(triple, cpu, features, level, err);
}

LLVMTargetMachineRef stc_host_link_machine(stc_error *err) {
  LLVMInitializeNativeTarget();
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetMachineRef machine =
      create_machine(triple, "", "", LLVMCodeGenLevelDefault, err);
  LLVMDisposeMessage(triple);
  return machine;
}
