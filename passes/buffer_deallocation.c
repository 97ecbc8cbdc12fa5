/* stc-buffer-deallocation: frees the buffers bufferization made, unless the
 * program frees memory itself (issue 11).
 *
 * In:  a bufferized module (memrefs), before memref lowering.
 * Out: a program without memref.dealloc gets upstream's deallocation
 *      (ownership-based-buffer-deallocation, canonicalize,
 *      buffer-deallocation-simplification, bufferization-lower-deallocations),
 *      run by a pass manager of its own on the module; a program with a
 *      memref.dealloc is left as it is.
 *
 * Why: upstream's ownership-based deallocation refuses a program with its
 * own deallocations ("memory free side-effect on MemRef value not
 * supported!"), and marking them bufferization.manual_deallocation is not
 * enough: a function returning a buffer it allocated by hand then returns a
 * clone, which its caller frees as well as the program does (a double free
 * seen on test/e2e/Inputs/manual-dealloc-program.mlir). Upstream's own
 * pipelines for such programs (the Linalg CPU integration tests) free
 * nothing: so here a program that frees memory itself manages all of its
 * memory, and the buffers bufferization makes for its tensor code, if any,
 * are not freed (README, "The tools"). Which case holds
 * is known only once the module is parsed, hence a pass that decides. */
#include "stc_passes.h"

#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <stdio.h>
#include <string.h>

#define PASS_NAME "stc-buffer-deallocation"
#define DEALLOCATION_PIPELINE                                                 \
  "ownership-based-buffer-deallocation,canonicalize,"                        \
  "buffer-deallocation-simplification,bufferization-lower-deallocations"

static MlirWalkResult find_dealloc(MlirOperation op, void *user) {
  if (!stc__op_is(op, "memref.dealloc"))
    return MlirWalkResultAdvance;
  *(bool *)user = true;
  return MlirWalkResultInterrupt;
}

typedef struct pipeline_error {
  char message[512];
} pipeline_error;

static void pipeline_message(MlirStringRef part, void *user) {
  pipeline_error *e = user;
  size_t used = strlen(e->message);
  size_t room = sizeof e->message - 1 - used;
  size_t n = part.length < room ? part.length : room;
  memcpy(e->message + used, part.data, n);
  e->message[used + n] = 0;
}

static void run(MlirOperation module, MlirExternalPass pass, void *user) {
  (void)user;
  bool frees = false;
  mlirOperationWalk(module, find_dealloc, &frees, MlirWalkPreOrder);
  if (frees)
    return;
  MlirContext ctx = mlirOperationGetContext(module);
  MlirPassManager pm = mlirPassManagerCreateOnOperation(ctx, stc__str("builtin.module"));
  pipeline_error e = {""};
  bool ok = mlirLogicalResultIsSuccess(mlirOpPassManagerAddPipeline(
                mlirPassManagerGetAsOpPassManager(pm), stc__str(DEALLOCATION_PIPELINE),
                pipeline_message, &e)) &&
            mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, module));
  mlirPassManagerDestroy(pm);
  if (!ok) {
    /* The passes' own diagnostics say why; e.message only for a pipeline
     * that did not parse (a build problem). */
    if (e.message[0]) {
      char text[700];
      snprintf(text, sizeof text, PASS_NAME ": %s", e.message);
      mlirEmitError(mlirOperationGetLocation(module), text);
    }
    mlirExternalPassSignalFailure(pass);
  }
}

static _Alignas(8) char pass_type_anchor;

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  if (!stc__no_options(PASS_NAME, values, count, err))
    return (MlirPass){NULL};
  stc_pass_def def = {&stc_buffer_deallocation_pass_spec, "StcBufferDeallocation",
                      &pass_type_anchor, NULL, 0, run, NULL, NULL};
  return stc__create_pass(&def, NULL);
}

const stc_pass_spec stc_buffer_deallocation_pass_spec = {
    PASS_NAME,
    "free the buffers bufferization made (upstream's ownership-based "
    "deallocation), unless the program frees memory itself (memref.dealloc): "
    "then it manages all of its memory",
    "builtin.module",
    NULL,
    0,
    create,
};
