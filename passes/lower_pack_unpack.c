/* stc-lower-pack-unpack: rewrites linalg.pack and linalg.unpack into ops
 * that bufferize (issue 11).
 *
 * In:  linalg on tensors, before scheduling and bufferization.
 * Out: no linalg.pack / linalg.unpack left:
 *      - a pack with static inner tiles becomes tensor.pad + expand_shape +
 *        linalg.transpose (transform.structured.lower_pack);
 *      - a pack with a dynamic inner tile, which lower_pack refuses, is
 *        tiled to one outer element per iteration and decomposed into
 *        tensor.pad / insert_slice / transpose (upstream's decomposition
 *        patterns, as upstream's own pack-dynamic-inner-tile test does);
 *      - an unpack becomes tensor.empty + linalg.transpose + collapse_shape
 *        + extract_slice (transform.structured.lower_unpack).
 *      An op none of these lowers is a located error naming it.
 *
 * Why: MLIR 22 cannot bufferize linalg.pack / linalg.unpack ("op was not
 * bufferized", no location), and upstream's tests lower them with a
 * transform script first. The ops this makes are ordinary linalg/tensor ops:
 * the default lowering tiles and vectorizes the transposes like any other.
 *
 * One op per round, found afresh each time: the decomposition patterns act
 * on the whole function and may rewrite other packs of it, so handles taken
 * before a rewrite cannot be trusted after it. */
#include "stc_passes.h"
#include "transform_apply.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <stdint.h>
#include <stdio.h>

#define PASS_NAME "stc-lower-pack-unpack"

/* No program holds more packs than this; a bound on rounds all the same, so
 * that a rewrite that leaves its op in place cannot loop forever. */
#define MAX_ROUNDS 4096

static const char lower_pack_script[] =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @stc_lower(%op: !transform.any_op {transform.consumed}) {\n"
    "    %p = transform.cast %op : !transform.any_op to !transform.op<\"linalg.pack\">\n"
    "    %pad, %expand, %transpose = transform.structured.lower_pack %p\n"
    "        : (!transform.op<\"linalg.pack\">) -> (!transform.op<\"tensor.pad\">,\n"
    "           !transform.op<\"tensor.expand_shape\">, !transform.op<\"linalg.transpose\">)\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

/* %tiles: one 1 per source dimension, filled in by decompose_script. */
static const char decompose_pack_format[] =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @stc_lower(%%op: !transform.any_op {transform.consumed}) {\n"
    "    %%tiled, %%loops:%d = transform.structured.tile_using_for %%op tile_sizes [%s]\n"
    "        : (!transform.any_op) -> (!transform.any_op%s)\n"
    "    %%f = transform.get_parent_op %%tiled {isolated_from_above}\n"
    "        : (!transform.any_op) -> !transform.any_op\n"
    "    transform.apply_patterns to %%f {\n"
    "      transform.apply_patterns.linalg.decompose_pack_unpack\n"
    "      transform.apply_patterns.linalg.decompose_pad\n"
    "    } : !transform.any_op\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

static const char lower_unpack_script[] =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @stc_lower(%op: !transform.any_op {transform.consumed}) {\n"
    "    %u = transform.cast %op : !transform.any_op to !transform.op<\"linalg.unpack\">\n"
    "    %empty, %transpose, %collapse, %slice = transform.structured.lower_unpack %u\n"
    "        : (!transform.op<\"linalg.unpack\">) -> (!transform.op<\"tensor.empty\">,\n"
    "           !transform.op<\"linalg.transpose\">, !transform.op<\"tensor.collapse_shape\">,\n"
    "           !transform.op<\"tensor.extract_slice\">)\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

static MlirWalkResult find_pack_or_unpack(MlirOperation op, void *user) {
  if (!stc__op_is(op, "linalg.pack") && !stc__op_is(op, "linalg.unpack"))
    return MlirWalkResultAdvance;
  *(MlirOperation *)user = op;
  return MlirWalkResultInterrupt;
}

/* Whether every inner tile size of a pack is a constant of the op (its
 * static_inner_tiles holds no dynamic marker). */
static bool static_inner_tiles(MlirOperation pack) {
  MlirAttribute tiles =
      mlirOperationGetAttributeByName(pack, stc__str("static_inner_tiles"));
  if (mlirAttributeIsNull(tiles) || !mlirAttributeIsADenseI64Array(tiles))
    return false;
  for (intptr_t i = 0; i < mlirDenseArrayGetNumElements(tiles); i++)
    if (mlirDenseI64ArrayGetElement(tiles, i) == INT64_MIN)
      return false;
  return true;
}

/* Rank of the pack's source: the tiled loops of the decomposition. */
static intptr_t source_rank(MlirOperation pack) {
  MlirType type = mlirValueGetType(mlirOperationGetOperand(pack, 0));
  return mlirTypeIsARankedTensor(type) ? mlirShapedTypeGetRank(type) : -1;
}

/* The script that lowers `op` into `text` (size `size`); false when none
 * can (an unranked or rank-0 source, which a verified pack never has). */
static bool script_for(MlirOperation op, char *text, size_t size) {
  if (stc__op_is(op, "linalg.unpack"))
    return snprintf(text, size, "%s", lower_unpack_script) < (int)size;
  if (static_inner_tiles(op))
    return snprintf(text, size, "%s", lower_pack_script) < (int)size;
  intptr_t rank = source_rank(op);
  if (rank < 1 || rank > 16)
    return false;
  char tiles[64] = "", handles[256] = "";
  for (intptr_t i = 0; i < rank; i++) {
    size_t t = strlen(tiles), h = strlen(handles);
    snprintf(tiles + t, sizeof tiles - t, "%s1", i ? ", " : "");
    snprintf(handles + h, sizeof handles - h, ", !transform.any_op");
  }
  int n = snprintf(text, size, decompose_pack_format, (int)rank, tiles, handles);
  return n > 0 && n < (int)size;
}

/* Lowers `op`; false, with the first error in *capture, when that fails. */
static bool lower_one(MlirContext ctx, MlirOperation module, MlirOperation op,
                      stc_diag_capture *capture) {
  char text[2048];
  if (!script_for(op, text, sizeof text))
    return false;
  MlirDiagnosticHandlerID handler = stc__capture_begin(ctx, capture);
  bool ok = stc__apply_script_text(ctx, op, text, PASS_NAME "-script",
                                   "stc_lower") &&
            mlirOperationVerify(module);
  stc__capture_end(ctx, handler);
  return ok;
}

static void run(MlirOperation module, MlirExternalPass pass, void *user) {
  (void)user;
  MlirContext ctx = mlirOperationGetContext(module);
  for (int round = 0;; round++) {
    MlirOperation op = {NULL};
    mlirOperationWalk(module, find_pack_or_unpack, &op, MlirWalkPreOrder);
    if (mlirOperationIsNull(op))
      return;
    MlirLocation loc = mlirOperationGetLocation(op);
    MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
    char op_name[32];
    snprintf(op_name, sizeof op_name, "%.*s", (int)name.length, name.data);
    stc_diag_capture capture;
    memset(&capture, 0, sizeof capture);
    bool ok = round < MAX_ROUNDS && lower_one(ctx, module, op, &capture);
    if (!ok) {
      char message[1024];
      snprintf(message, sizeof message,
               PASS_NAME ": cannot lower this '%s' into ops that bufferize: %s",
               op_name,
               round >= MAX_ROUNDS ? "too many rounds"
                                   : stc__capture_text(&capture));
      stc_text_free(&capture.message);
      mlirEmitError(loc, message);
      mlirExternalPassSignalFailure(pass);
      return;
    }
    stc_text_free(&capture.message);
  }
}

static _Alignas(8) char pass_type_anchor;

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  if (!stc__no_options(PASS_NAME, values, count, err))
    return (MlirPass){NULL};
  stc_pass_def def = {&stc_lower_pack_unpack_pass_spec, "StcLowerPackUnpack",
                      &pass_type_anchor, NULL, 0, run, NULL, NULL};
  return stc__create_pass(&def, NULL);
}

const stc_pass_spec stc_lower_pack_unpack_pass_spec = {
    PASS_NAME,
    "lower linalg.pack / linalg.unpack into pad, reshape, transpose and "
    "slice ops, which bufferize (MLIR 22 cannot bufferize pack/unpack)",
    "builtin.module",
    NULL,
    0,
    create,
};
