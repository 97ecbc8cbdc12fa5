/* transform_apply.c - applying transform-dialect scripts and capturing
 * their diagnostics (transform_apply.h). In: verified script modules and
 * payload ops. Out: the payload rewritten in place, or the first error. */
#include "transform_apply.h"

#include "stc_passes.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Transform/Interpreter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MlirLogicalResult capture_handler(MlirDiagnostic diag, void *user) {
  stc_diag_capture *capture = user;
  if (mlirDiagnosticGetSeverity(diag) == MlirDiagnosticError &&
      !capture->has_error) {
    capture->has_error = true;
    mlirDiagnosticPrint(diag, stc_text_callback, &capture->message);
    MlirLocation loc = mlirDiagnosticGetLocation(diag);
    if (mlirLocationIsAFileLineColRange(loc)) {
      capture->line = (unsigned)mlirLocationFileLineColRangeGetStartLine(loc);
      capture->column = (unsigned)mlirLocationFileLineColRangeGetStartColumn(loc);
    }
  }
  return mlirLogicalResultSuccess();
}

MlirDiagnosticHandlerID stc__capture_begin(MlirContext ctx, stc_diag_capture *capture) {
  memset(capture, 0, sizeof *capture);
  return mlirContextAttachDiagnosticHandler(ctx, capture_handler, capture, NULL);
}

void stc__capture_end(MlirContext ctx, MlirDiagnosticHandlerID id) {
  mlirContextDetachDiagnosticHandler(ctx, id);
}

/* The first line of the captured error: interpreter errors go on with a
 * dump of the payload op, which is noise in a one-line message. */
const char *stc__capture_text(stc_diag_capture *capture) {
  if (!capture->message.data)
    return "unknown error";
  char *newline = strchr(capture->message.data, '\n');
  if (newline) {
    *newline = 0;
    while (newline > capture->message.data &&
           (newline[-1] == ' ' || newline[-1] == '>' || newline[-1] == '-'))
      *--newline = 0;
  }
  return capture->message.data;
}

/* Applies the named sequence @entry of `script` to `payload`, the op bound
 * to its first argument. The script must have been verified. */
bool stc__apply_sequence(MlirOperation payload, MlirOperation entry,
                         MlirOperation script) {
  MlirTransformOptions options = mlirTransformOptionsCreate();
  MlirLogicalResult result =
      mlirTransformApplyNamedSequence(payload, entry, script, options);
  mlirTransformOptionsDestroy(options);
  return mlirLogicalResultIsSuccess(result);
}

/* Finds transform.named_sequence @name at the top of a script module. */
MlirOperation stc__find_sequence(MlirOperation script, const char *name) {
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(script, 0));
  for (MlirOperation op = mlirBlockGetFirstOperation(body);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    if (!stc__op_is(op, "transform.named_sequence"))
      continue;
    MlirAttribute sym = mlirOperationGetAttributeByName(op, stc__str("sym_name"));
    if (mlirAttributeIsNull(sym) || !mlirAttributeIsAString(sym))
      continue;
    MlirStringRef have = mlirStringAttrGetValue(sym);
    if (have.length == strlen(name) && memcmp(have.data, name, have.length) == 0)
      return op;
  }
  return (MlirOperation){NULL};
}

/* Parses `text` (a script module named `source` in diagnostics), verifies
 * it and applies its named sequence @entry to payload; the script is
 * destroyed after. False when any step fails; the diagnostics go to the
 * context's handlers (a caller that wants the error captures them). */
bool stc__apply_script_text(MlirContext ctx, MlirOperation payload,
                            const char *text, const char *source,
                            const char *entry) {
  MlirOperation script =
      mlirOperationCreateParse(ctx, stc__str(text), stc__str(source));
  if (mlirOperationIsNull(script))
    return false;
  MlirOperation sequence = mlirOperationVerify(script)
                               ? stc__find_sequence(script, entry)
                               : (MlirOperation){NULL};
  bool ok = !mlirOperationIsNull(sequence) &&
            stc__apply_sequence(payload, sequence, script);
  mlirOperationDestroy(script);
  return ok;
}

/* Emits `message` as a remark at `at`: the C API has no mlirEmitRemark, the
 * transform dialect's debug op has. Best effort: a remark that cannot be
 * built is dropped (it never changes the IR). */
void stc__pass_remark(MlirContext ctx, MlirOperation at, const char *message) {
  stc_text text = {0};
  stc_text_appendf(&text,
                   "module attributes {transform.with_named_sequence} {\n"
                   "  transform.named_sequence @__stc_remark(%%op: "
                   "!transform.any_op {transform.readonly}) {\n"
                   "    transform.debug.emit_remark_at %%op, \"");
  stc_text_append_escaped(&text, message);
  stc_text_appendf(&text, "\" : !transform.any_op\n"
                          "    transform.yield\n  }\n}\n");
  if (text.out_of_memory) {
    stc_text_free(&text);
    return;
  }
  stc__apply_script_text(ctx, at, text.data, "stc-remark", "__stc_remark");
  stc_text_free(&text);
}

