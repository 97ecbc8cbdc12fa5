/* stc_emit.h - turns a module already lowered to the LLVM dialect into
 * LLVM IR text or a host object file (PIC, host CPU), in process, through
 * mlirTranslateModuleToLLVMIR and llvm-c. Shared by stc-opt (--emit=) and
 * the AOT recipe. */
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

#endif /* STC_EMIT_H */
