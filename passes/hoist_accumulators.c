/* stc-hoist-accumulators: keeps a register tile's accumulator in registers
 * across its reduction loop.
 *
 * In:  a bufferized module whose memref views are folded into their
 *      accesses (fold-memref-alias-ops, then cse so that equal indices are
 *      one value): the pipeline runs both just before this pass.
 * Out: in every function, each vector.transfer_read / transfer_write pair
 *      of one memref at the same loop-invariant indices inside a loop (the
 *      8x32 accumulator of a contraction's k loop) becomes a read before
 *      the loop, a loop-carried vector, and a write after it: upstream's
 *      transform.structured.hoist_redundant_vector_transfers.
 *
 * Why: the contraction schedules (the default lowering's and the reg8x32
 * variants) read and write their accumulator tile in the k loop; LLVM turns
 * the reads into phis but keeps the 16 64-byte stores of every k step,
 * because the tile's pointer (an inttoptr of the aligned allocation, or a
 * function argument in a site's functions) may alias A or B. One store per
 * 8 FMAs: without them the default lowering's 1024^3 matmul runs 18-23%
 * faster (passes/schedules/README.md, "Accumulators in registers").
 *
 * Soundness: upstream hoists a pair only when no other op in the loop
 * touches that memref, and takes two different memrefs as not aliasing -
 * what linalg's ops on buffers assume of their operands too (a matmul whose
 * output overlaps an input has no defined result); bufferization never
 * makes an output overlap an input it reads. The views must be folded
 * first: upstream leaves any transfer on a view (memref.subview) in place.
 * A script that fails to apply leaves the module as it was and is an
 * error (it cannot, short of a broken build). */
#include "stc_passes.h"
#include "transform_apply.h"

#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/SCF.h>
#include <mlir-c/Dialect/Transform.h>
#include <mlir-c/Dialect/Vector.h>
#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <stdio.h>

#define PASS_NAME "stc-hoist-accumulators"

static const char script_text[] =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @__stc_hoist_accumulators(\n"
    "      %module: !transform.any_op {transform.readonly}) {\n"
    "    %funcs = transform.structured.match ops{[\"func.func\"]} in %module\n"
    "        : (!transform.any_op) -> !transform.any_op\n"
    "    transform.foreach %funcs : !transform.any_op {\n"
    "    ^bb0(%f: !transform.any_op):\n"
    "      %h = transform.structured.hoist_redundant_vector_transfers %f\n"
    "          : (!transform.any_op) -> !transform.any_op\n"
    "    }\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

static void run(MlirOperation module, MlirExternalPass pass, void *user) {
  (void)user;
  MlirContext ctx = mlirOperationGetContext(module);
  stc_diag_capture capture;
  MlirDiagnosticHandlerID handler = stc__capture_begin(ctx, &capture);
  bool ok = stc__apply_script_text(ctx, module, script_text, PASS_NAME,
                                   "__stc_hoist_accumulators");
  stc__capture_end(ctx, handler);
  if (!ok) {
    char text[700];
    snprintf(text, sizeof text, PASS_NAME ": %s", stc__capture_text(&capture));
    mlirEmitError(mlirOperationGetLocation(module), text);
    mlirExternalPassSignalFailure(pass);
  }
  stc_text_free(&capture.message);
}

static _Alignas(8) char pass_type_anchor;

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  if (!stc__no_options(PASS_NAME, values, count, err))
    return (MlirPass){NULL};
  MlirDialectHandle dialects[] = {
      mlirGetDialectHandle__transform__(), mlirGetDialectHandle__scf__(),
      mlirGetDialectHandle__vector__(), mlirGetDialectHandle__func__()};
  stc_pass_def def = {&stc_hoist_accumulators_pass_spec, "StcHoistAccumulators",
                      &pass_type_anchor, dialects,
                      sizeof dialects / sizeof dialects[0], run, NULL, NULL};
  return stc__create_pass(&def, NULL);
}

const stc_pass_spec stc_hoist_accumulators_pass_spec = {
    PASS_NAME,
    "keep a loop's accumulator tile in registers: a vector.transfer_read / "
    "transfer_write pair of one memref at loop-invariant indices becomes a "
    "read before the loop and a write after it (run after "
    "fold-memref-alias-ops and cse)",
    "builtin.module",
    NULL,
    0,
    create,
};
