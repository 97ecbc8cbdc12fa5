/* stc_emit.h - turns a module already lowered to the LLVM dialect into
 * LLVM IR text or a host object file (PIC, host CPU), in process, through
 * mlirTranslateModuleToLLVMIR and llvm-c. Shared by stc-opt (--emit=), the
 * AOT recipe and stc-run (object in memory, loaded with ORC). */
#ifndef STC_EMIT_H
#define STC_EMIT_H

#include "stc/status.h"
#include "stc_emit_objects.h"
#include "stc_host.h"

#include <llvm-c/TargetMachine.h>

#include <mlir-c/IR.h>

typedef enum stc_emit_kind {
  STC_EMIT_MLIR = 0, /* print the MLIR module (no translation) */
  STC_EMIT_LLVM = 1, /* textual LLVM IR */
  STC_EMIT_OBJ = 2,  /* ELF object for the host */
} stc_emit_kind;

/* Parses "mlir" / "llvm" / "obj"; STC_ERR_INVALID otherwise. */
stc_status stc_emit_kind_parse(const char *text, stc_emit_kind *out);

/* Translates `module` (LLVM dialect only) and writes it to `path` ("-" is
 * stdout) as LLVM IR (optimized at opt_level 0-3 when > 0) or an object file.
 * STC_ERR_INVALID when the module cannot be translated (err says why),
 * STC_ERR_IO when the output cannot be written. kind must not be MLIR. */
stc_status stc_emit_module(MlirOperation module, stc_emit_kind kind,
                           int opt_level, const char *path, stc_error *err);

/* Frees the objects stc_emit_objects_in_memory made. */
void stc_emit_objects_free(stc_emit_objects *objects);

/* Lazy units (stc_emit_objects.h). Number of units (0 for NULL). */
size_t stc_emit_lazy_units(const stc_emit_lazy *lazy);

/* The entries of unit (< stc_emit_lazy_units) as the eager objects name
 * them; *names stays valid until stc_emit_lazy_free. */
size_t stc_emit_lazy_roots(const stc_emit_lazy *lazy, size_t unit,
                           const char *const **names);

/* Optimizes and emits unit's object (malloc'd into *data). Thread-safe:
 * several units (or one unit several times) may compile at once. */
stc_status stc_emit_lazy_compile(const stc_emit_lazy *lazy, size_t unit,
                                 char **data, size_t *size, stc_error *err);

void stc_emit_lazy_free(stc_emit_lazy *lazy);

/* Translates `module` (LLVM dialect only), optimizes it at opt_level (0-3,
 * the code generator at the same level, like MLIR's ExecutionEngine) and
 * emits PIC host-CPU ELF objects into *out, with @llvm.global_ctors/dtors
 * turned into STC_EMIT_CTORS_SYMBOL and STC_EMIT_DTORS_SYMBOL
 * (stc_emit_objects.h; defined in exactly one object).
 * threads > 1 splits the module into at most that many partitions of whole
 * functions (fewer when it has fewer functions; one when it has aliases,
 * ifuncs or comdats), each optimized and emitted on its own thread; 1 is
 * one object, optimized whole; 0 is as many as online CPUs (at most
 * STC_EMIT_MAX_PARTITIONS), fewer for a small module; a negative n is the
 * same with up to -n partitions per CPU for a big module (for a caller that
 * merges the objects afterwards: the scheduler then balances partitions
 * whose instruction counts misjudge their cost). timing may be NULL. */
/* With lazy non-NULL, the module's non-reference variants become lazy units
 * (*lazy; NULL when there are none, e.g. no dispatch tables, or a module
 * with aliases, ifuncs or comdats, which compiles whole): the objects in
 * *out then leave them out, even with threads == 1 (one eager object). */
stc_status stc_emit_objects_in_memory(MlirOperation module, int opt_level,
                                      int threads, stc_emit_lazy **lazy,
                                      stc_emit_timing *timing,
                                      stc_emit_objects *out, stc_error *err);

#endif /* STC_EMIT_H */
