/* transform_apply.h - applying transform-dialect scripts from C passes, and
 * the diagnostics around it: stc-multi-variant (variant schedules) and
 * stc-default-lowering (the default schedule of every op) share these.
 * Remarks are emitted through a generated transform.debug.emit_remark_at
 * script, since the C API has no remark emitter. */
#ifndef STC_PASSES_TRANSFORM_APPLY_H
#define STC_PASSES_TRANSFORM_APPLY_H

#include "region_id.h" /* stc_text */

#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>
#include <stdbool.h>

/* Swallows the diagnostics of a step that may fail on purpose (parsing a
 * user script, applying a schedule) and keeps the first error, so that the
 * pass can re-report it at a better place or turn it into a remark. */
typedef struct stc_diag_capture {
  stc_text message; /* owned: stc_text_free after stc__capture_end */
  unsigned line, column; /* 0 = no file location */
  bool has_error;
} stc_diag_capture;

MlirDiagnosticHandlerID stc__capture_begin(MlirContext ctx, stc_diag_capture *capture);
void stc__capture_end(MlirContext ctx, MlirDiagnosticHandlerID id);
/* The first line of the captured error (interpreter errors go on with a dump
 * of the payload op, noise in a one-line message); "unknown error" if none.
 * Points into capture->message. */
const char *stc__capture_text(stc_diag_capture *capture);

/* Applies the named sequence `entry` of `script` to `payload`, the op bound
 * to its first argument. The script must have been verified: the
 * interpreter has crashed on invalid scripts. */
bool stc__apply_sequence(MlirOperation payload, MlirOperation entry,
                         MlirOperation script);

/* transform.named_sequence @name at the top of a script module, or null. */
MlirOperation stc__find_sequence(MlirOperation script, const char *name);

/* Parses `text` (a script module; `source` names it in diagnostics),
 * verifies it and applies its named sequence @entry to payload. False when
 * a step fails; diagnostics go to the context's handlers. */
bool stc__apply_script_text(MlirContext ctx, MlirOperation payload,
                            const char *text, const char *source,
                            const char *entry);

/* Emits `message` as a remark at `at`. Best effort: a remark that cannot be
 * built is dropped (it never changes the IR). */
void stc__pass_remark(MlirContext ctx, MlirOperation at, const char *message);

#endif /* STC_PASSES_TRANSFORM_APPLY_H */
