/* stc_host.h - the host machine as LLVM sees it (triple, CPU name and
 * features), detected once per process, and target machines for it. LLVM
 * only (no MLIR): stc-run's JIT module links with it without loading MLIR;
 * stc_emit compiles for it. */
#ifndef STC_HOST_H
#define STC_HOST_H

#include "stc/status.h"

#include <llvm-c/TargetMachine.h>

/* A PIC target machine for this host at the given code generation level,
 * the caller's to dispose; NULL with err set. Thread-safe. The native
 * target is initialized on first use. */
LLVMTargetMachineRef stc_host_machine(LLVMCodeGenOptLevel level,
                                      stc_error *err);

/* A target machine for the host's triple with no CPU name or features,
 * the caller's to dispose; NULL with err set. For a JIT that only links
 * objects compiled elsewhere (LLJIT takes its data layout from it and builds
 * an IR compiler it never uses): creating a machine closes its features
 * over their implications, and the host's hundred or so made each of the
 * three machines LLJIT creates cost ~0.2 ms on a warm start. */
LLVMTargetMachineRef stc_host_link_machine(stc_error *err);

#endif /* STC_HOST_H */
