/* stc_emit.h - turns a module already lowered to the LLVM dialect into
 * LLVM IR text or a host object file (PIC, host CPU), in process, through
 * mlirTranslateModuleToLLVMIR and llvm-c. Shared by stc-opt (--emit=), the
 * AOT recipe and stc-run (object in memory, loaded with ORC). */
#ifndef STC_EMIT_H
#define STC_EMIT_H

#include "stc/status.h"

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

/* The names under which stc_emit_object_in_memory's object exports its
 * global constructors and destructors (called in ascending priority): the
 * loader calls them, since ORC without a platform runtime does not. */
#define STC_EMIT_CTORS_SYMBOL "__stc_emit_global_ctors"
#define STC_EMIT_DTORS_SYMBOL "__stc_emit_global_dtors"

typedef struct stc_emit_timing {
  double translate_optimize_s; /* MLIR -> LLVM IR, then default<O{n}> */
  double codegen_s;            /* instruction selection to object bytes */
} stc_emit_timing;

/* Translates `module` (LLVM dialect only), optimizes it at opt_level (0-3,
 * the code generator at the same level, like MLIR's ExecutionEngine) and
 * emits a PIC host-CPU ELF object into *data (malloc'd, *size bytes), with
 * @llvm.global_ctors/dtors turned into the two functions above. timing may
 * be NULL. */
stc_status stc_emit_object_in_memory(MlirOperation module, int opt_level,
                                     stc_emit_timing *timing, char **data,
                                     size_t *size, stc_error *err);

/* What the emitted code depends on besides the module: LLVM version, target
 * triple, host CPU name and features, as lines of text (malloc'd), for a
 * compiled-code cache key. */
stc_status stc_emit_host_identity(char **text, stc_error *err);

#endif /* STC_EMIT_H */
