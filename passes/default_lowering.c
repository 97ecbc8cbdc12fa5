/* stc-default-lowering: the fast default lowering (DESIGN.md section 4).
 *
 * In:  a module on tensors (or memrefs) after stc-multi-variant: user
 *      functions, site references (stc.reference), variants
 *      (stc.variant_of) and dispatch functions.
 * Out: every linalg structured op outside the variants tiled and vectorized
 *      by one robust schedule per op kind, so that what cold code runs, and
 *      what every site's tuner measures candidates against, is fast code
 *      instead of scalar loops. Variants keep the schedule they were made
 *      with. An op no default schedule applies to is left alone: the rest
 *      of the pipeline lowers it to scalar loops (convert-linalg-to-loops),
 *      which are always correct; with remarks=true a remark says why.
 *
 * First, static NHWC convolutions with a 1x1 filter or input channels
 * not a multiple of 8 become im2col + a matmul-like generic, and an
 * elementwise generic writes its result over a dead input's buffer where
 * it can (reuse_input). Then the schedule of an op, first that applies:
 *   0. a static NHWC convolution or depthwise convolution: one output row
 *      and one filter row per tile, tile sizes that divide every static
 *      range (no padding), decomposed into 1-D convolutions and vectorized
 *      (window_script);
 *   1. a built-in schedule of its kind (passes/schedules/): convolutions,
 *      depthwise convolutions, pooling, matvec, vecmat — the kinds whose
 *      fast form needs more than tiling (decomposition, reduction tiling);
 *      one that is static-only is skipped for a dynamically shaped op;
 *      row reductions (a generic [parallel, reduction] contiguous along the
 *      reduction) get reduction_tile_reduction_vec;
 *   2. a schedule generated from the op's indexing maps:
 *      - a contraction with m, n and k dimensions (matmul, batch_matmul,
 *        transposed operands, linalg.generic contractions): cache blocks
 *        of at most 64 x 256 x 128 (m, n, k) that divide the static sizes
 *        where they can, register tiles 8 x 32 x 8 (1-7 x 128 x 4 for
 *        fewer than 8 rows) vectorized and lowered to outer products
 *        (FMAs); batch dimensions tiled by 1;
 *      - anything else (elementwise, broadcasts, transposes, fills,
 *        reductions): one tile level, 32 along the dimension most operands
 *        are contiguous in, 8 along the innermost other parallel dimension,
 *        1 elsewhere, vectorized with masks for partial tiles, reductions
 *        lowered to vector reductions.
 *      Static dimensions smaller than a tile get their own size (no mask).
 * Last, every math.exp on a vector of f32 becomes arithmetic (a
 * polynomial, expand_vector_exp) instead of an expf call per lane.
 *
 * Soundness: each schedule is applied to a clone of the op's function; the
 * clone replaces the function only if the interpreter succeeded and the
 * clone verifies. A failure can only leave the op as scalar loops. The
 * end-to-end suites compare this lowering with the scalar loops and with
 * upstream mlir-runner on every example and lit input program. */
#include "schedule_library.h"
#include "stc_passes.h"
#include "transform_apply.h"

#include <inttypes.h>
#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Arith.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/Linalg.h>
#include <mlir-c/Dialect/MemRef.h>
#include <mlir-c/Dialect/SCF.h>
#include <mlir-c/Dialect/Tensor.h>
#include <mlir-c/Dialect/Transform.h>
#include <mlir-c/Dialect/Vector.h>
#include <mlir-c/IR.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS_NAME "stc-default-lowering"
#define ATTR_TARGET "stc.default_target"
#define ATTR_KEPT "stc.default_kept" /* tried, left to scalar loops */
#define MAX_ROUNDS 3
#define MAX_LOOPS 12

/* Tile sizes of the generated schedules (see the file comment). */
enum {
  BLOCK_M = 64, BLOCK_N = 256, BLOCK_K = 128,
  REGISTER_M = 8, REGISTER_N = 32, REGISTER_K = 8,
  FEW_ROWS_N = 128, FEW_ROWS_K = 4, FEW_ROWS_BLOCK_N = 512, FEW_ROWS_BLOCK_K = 256,
  VECTOR_INNER = 32, VECTOR_OUTER = 8,
};

/* The built-in schedule of an op kind, by op name. `pads`: it pads every
 * partial tile to the full tile size, which on a dynamically shaped op is
 * every tile: the copies into and out of the padded tile go through the
 * generic strided memref copy, slower than the scalar loops (see
 * candidates()), so a dynamic op of such a kind keeps the loops. */
static const struct {
  const char *op;
  const char *schedule;
  bool pads;
} kind_defaults[] = {
    {"linalg.conv_2d_nhwc_hwcf", "conv_decompose_vec", true},
    {"linalg.conv_2d_nchw_fchw", "conv_nchw_decompose_vec", true},
    {"linalg.depthwise_conv_2d_nhwc_hwc", "depthwise_conv_decompose_vec", true},
    {"linalg.pooling_nhwc_max", "pooling_nhwc_max_rows_vec", false},
    {"linalg.pooling_nhwc_sum", "pooling_nhwc_sum_rows_vec", false},
    {"linalg.matvec", "matvec_tile_reduction_vec", false},
    {"linalg.vecmat", "vecmat_tile64x16_vec", false},
};

/* The built-in schedule of row reductions (see candidates()). */
#define ROW_REDUCTION_SCHEDULE "reduction_tile_reduction_vec"
#define MAX_CANDIDATES 4

typedef struct default_options {
  bool remarks;
} default_options;

/* A parsed, verified script, kept for the run (the same text recurs for
 * ops of the same shape class). */
typedef struct script_entry {
  char *text; /* owned; the key */
  MlirOperation module; /* owned; null when it failed to parse/verify */
  MlirOperation entry;
  stc_schedule_shapes shapes;
} script_entry;

typedef struct run_state {
  MlirContext ctx;
  const default_options *options;
  script_entry *scripts;
  size_t num_scripts, capacity;
  size_t applied, kept;
} run_state;

/* ---- scripts ---------------------------------------------------------------- */

/* The script for `text` (named sequence @name), parsed and verified once. */
static const script_entry *script_for(run_state *state, const char *text,
                                      const char *name,
                                      stc_schedule_shapes shapes) {
  for (size_t i = 0; i < state->num_scripts; i++)
    if (strcmp(state->scripts[i].text, text) == 0)
      return &state->scripts[i];
  if (state->num_scripts == state->capacity) {
    size_t capacity = state->capacity ? 2 * state->capacity : 16;
    script_entry *grown = realloc(state->scripts, capacity * sizeof *grown);
    if (!grown)
      return NULL;
    state->scripts = grown;
    state->capacity = capacity;
  }
  script_entry *e = &state->scripts[state->num_scripts];
  memset(e, 0, sizeof *e);
  if (!(e->text = strdup(text)))
    return NULL;
  e->shapes = shapes;
  stc_diag_capture capture;
  MlirDiagnosticHandlerID handler = stc__capture_begin(state->ctx, &capture);
  e->module = mlirOperationCreateParse(state->ctx, stc__str(text),
                                       stc__str(PASS_NAME "-script"));
  if (!mlirOperationIsNull(e->module) && mlirOperationVerify(e->module))
    e->entry = stc__find_sequence(e->module, name);
  stc__capture_end(state->ctx, handler);
  stc_text_free(&capture.message);
  if (!mlirOperationIsNull(e->module) && mlirOperationIsNull(e->entry)) {
    mlirOperationDestroy(e->module);
    e->module = (MlirOperation){NULL};
  }
  state->num_scripts++;
  return e;
}

static void scripts_free(run_state *state) {
  for (size_t i = 0; i < state->num_scripts; i++) {
    free(state->scripts[i].text);
    if (!mlirOperationIsNull(state->scripts[i].module))
      mlirOperationDestroy(state->scripts[i].module);
  }
  free(state->scripts);
}

/* The built-in schedule `name` as a script entry; NULL when it is missing. */
static const script_entry *builtin_script(run_state *state, const char *name) {
  for (size_t i = 0; i < stc_num_builtin_schedules; i++) {
    if (strcmp(stc_builtin_schedules[i].name, name) != 0)
      continue;
    const char *text = stc_builtin_schedules[i].script;
    const char *dynamic = strstr(text, "stc.dynamic = \"");
    stc_schedule_shapes shapes = STC_SCHEDULE_SHAPES_UNKNOWN;
    if (dynamic) {
      char value[32] = "";
      sscanf(dynamic + strlen("stc.dynamic = \""), "%31[^\"]", value);
      if (!stc_schedule_shapes_parse(value, &shapes))
        shapes = STC_SCHEDULE_SHAPES_UNKNOWN;
    }
    return script_for(state, text, name, shapes);
  }
  return NULL;
}

static void append_sizes(stc_text *text, const int64_t *sizes, size_t count) {
  stc_text_appendf(text, "[");
  for (size_t i = 0; i < count; i++)
    stc_text_appendf(text, "%s%" PRId64, i ? ", " : "", sizes[i]);
  stc_text_appendf(text, "]");
}

/* `%<out>, %<loops>:<count> = tile_using_for %<in> tile_sizes [...]`. */
static void append_tiling(stc_text *text, const char *out, const char *loops,
                          const char *in, const int64_t *sizes, size_t count) {
  stc_text_appendf(text, "    %%%s, %%%s:%zu = transform.structured.tile_using_for %%%s tile_sizes ",
                   out, loops, count, in);
  append_sizes(text, sizes, count);
  stc_text_appendf(text, "\n        : (!transform.any_op) -> (!transform.any_op");
  for (size_t i = 0; i < count; i++)
    stc_text_appendf(text, ", !transform.any_op");
  stc_text_appendf(text, ")\n");
}

/* A generated schedule: optional cache blocks, then tiles vectorized with
 * `vector` sizes, then the vector lowering the LLVM conversion needs. */
/* Vector contractions (from vectorized matmuls and convolutions) to
 * outer products and FMAs. */
static void append_contraction_lowering(stc_text *text) {
  stc_text_appendf(text,
                   "    transform.apply_patterns to %%func {\n"
                   "      transform.apply_patterns.vector.reduction_to_contract\n"
                   "      transform.apply_patterns.vector.transfer_permutation_patterns\n"
                   "      transform.apply_patterns.canonicalization\n"
                   "    } : !transform.any_op\n"
                   "    transform.apply_patterns to %%func {\n"
                   "      transform.apply_patterns.vector.lower_contraction "
                   "lowering_strategy = \"outerproduct\"\n"
                   "      transform.apply_patterns.vector.lower_outerproduct\n"
                   "      transform.apply_patterns.canonicalization\n"
                   "    } : !transform.any_op\n");
}

static void generated_script(stc_text *text, const int64_t *blocks,
                             const int64_t *vector, size_t loops,
                             bool contraction) {
  stc_text_appendf(text,
                   "module attributes {transform.with_named_sequence} {\n"
                   "  transform.named_sequence @stc_default(%%op: !transform.any_op "
                   "{transform.consumed}) {\n"
                   "    %%func = transform.get_parent_op %%op {isolated_from_above}\n"
                   "        : (!transform.any_op) -> !transform.any_op\n");
  const char *tile_input = "op";
  if (blocks) {
    append_tiling(text, "blocked", "blocks", "op", blocks, loops);
    tile_input = "blocked";
  }
  append_tiling(text, "tiled", "loops", tile_input, vector, loops);
  stc_text_appendf(text, "    transform.structured.vectorize %%tiled vector_sizes ");
  append_sizes(text, vector, loops);
  /* Masked transfers become transfers with a mask operand at once: when a
   * tile loop folds away, canonicalization would otherwise fold a cast into
   * a vector.mask body that then fails to verify (schedules/README.md). */
  stc_text_appendf(text,
                   " : !transform.any_op\n"
                   "    transform.apply_patterns to %%func {\n"
                   "      transform.apply_patterns.vector.lower_masked_transfers\n"
                   "    } : !transform.any_op\n");
  if (contraction)
    append_contraction_lowering(text);
  else
    stc_text_appendf(text,
                     "    transform.apply_patterns to %%func {\n"
                     "      transform.apply_patterns.vector.transfer_permutation_patterns\n"
                     "      transform.apply_patterns.vector.lower_multi_reduction "
                     "lowering_strategy = \"innerreduction\"\n"
                     "      transform.apply_patterns.canonicalization\n"
                     "    } : !transform.any_op\n");
  stc_text_appendf(text, "    transform.yield\n  }\n}\n");
}

/* ---- what an op looks like ---------------------------------------------------- */

typedef struct op_shape {
  size_t loops;
  bool permutations;          /* every map a projected permutation */
  int64_t size[MAX_LOOPS];    /* static loop range, -1 = dynamic/unknown */
  bool reduction[MAX_LOOPS];  /* not indexed by any output */
  int innermost[MAX_LOOPS];   /* operands whose last index is this loop */
  int inputs_innermost[MAX_LOOPS]; /* the same, inputs only */
  bool dynamic;               /* some loop range is not static */
} op_shape;

static bool dim_position(MlirAffineExpr expr, intptr_t *position) {
  if (!mlirAffineExprIsADim(expr))
    return false;
  *position = mlirAffineDimExprGetPosition(expr);
  return true;
}

/* The number of DPS outputs (inits) of a linalg op. */
static intptr_t num_outputs(MlirOperation op) {
  MlirAttribute segments =
      mlirOperationGetAttributeByName(op, stc__str("operandSegmentSizes"));
  if (!mlirAttributeIsNull(segments) && mlirAttributeIsADenseI32Array(segments) &&
      mlirDenseArrayGetNumElements(segments) >= 2)
    return mlirDenseI32ArrayGetElement(segments, 1);
  return 1;
}

/* Loop count, static loop ranges, reduction loops and contiguity from the
 * indexing maps and operand types; false when the op is not a structured op
 * with one map per operand. */
static bool read_shape(MlirOperation op, op_shape *shape) {
  memset(shape, 0, sizeof *shape);
  MlirAttribute maps = mlirLinalgGetIndexingMapsAttribute(op);
  if (mlirAttributeIsNull(maps) || !mlirAttributeIsAArray(maps))
    return false;
  intptr_t count = mlirArrayAttrGetNumElements(maps);
  if (count != mlirOperationGetNumOperands(op) || count == 0)
    return false;
  intptr_t outputs = num_outputs(op);
  for (intptr_t i = 0; i < count; i++) {
    MlirAttribute attr = mlirArrayAttrGetElement(maps, i);
    if (!mlirAttributeIsAAffineMap(attr))
      return false;
    MlirAffineMap map = mlirAffineMapAttrGetValue(attr);
    intptr_t dims = mlirAffineMapGetNumDims(map);
    if (i == 0) {
      if (dims <= 0 || dims > MAX_LOOPS)
        return false;
      shape->loops = (size_t)dims;
      for (size_t d = 0; d < shape->loops; d++) {
        shape->size[d] = -1;
        shape->reduction[d] = true;
      }
    } else if ((size_t)dims != shape->loops) {
      return false;
    }
  }
  shape->permutations = true;
  for (intptr_t i = 0; i < count; i++) {
    MlirAffineMap map = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, i));
    shape->permutations = shape->permutations && mlirAffineMapIsProjectedPermutation(map);
    MlirType type = mlirValueGetType(mlirOperationGetOperand(op, i));
    bool shaped = mlirTypeIsAShaped(type) && mlirShapedTypeHasRank(type);
    intptr_t results = mlirAffineMapGetNumResults(map);
    bool output = i >= count - outputs;
    for (intptr_t r = 0; r < results; r++) {
      intptr_t d;
      if (!dim_position(mlirAffineMapGetResult(map, r), &d))
        continue;
      if (output)
        shape->reduction[d] = false;
      if (r == results - 1) {
        shape->innermost[d]++;
        if (!output)
          shape->inputs_innermost[d]++;
      }
      if (shaped && r < mlirShapedTypeGetRank(type) &&
          !mlirShapedTypeIsDynamicDim(type, r))
        shape->size[d] = mlirShapedTypeGetDimSize(type, r);
    }
  }
  for (size_t d = 0; d < shape->loops; d++)
    shape->dynamic = shape->dynamic || shape->size[d] < 0;
  return true;
}

/* A tile of `wanted` along loop d: the static range when it is smaller. */
static int64_t clamp(const op_shape *shape, size_t d, int64_t wanted) {
  return shape->size[d] >= 0 && shape->size[d] < wanted ? shape->size[d] : wanted;
}

/* A register tile of `wanted` rows along loop d, or fewer (down to half)
 * when that divides the static range and `wanted` does not: 7 x 32 tiles
 * over the 49 rows of a 7x7 convolution output, where 8-row tiles would
 * all be masked (bench/regret.sh, rn50_c5_3x3). */
static int64_t register_rows(const op_shape *shape, size_t d, int64_t wanted) {
  int64_t size = shape->size[d];
  if (size < 0 || size <= wanted || size % wanted == 0)
    return clamp(shape, d, wanted);
  for (int64_t r = wanted - 1; r >= wanted / 2; r--)
    if (size % r == 0)
      return r;
  return wanted;
}

/* A cache block along loop d of at most `wanted`: the largest multiple of
 * `step` that divides the static range. A block that does not divide its
 * range makes every tile inside it dynamic, hence masked: 2.6x slower on a
 * 64x384x512 matmul with 256-wide blocks than with 192-wide ones. */
static int64_t block(const op_shape *shape, size_t d, int64_t wanted, int64_t step) {
  int64_t size = shape->size[d];
  if (size < 0)
    return wanted;
  if (size <= wanted)
    return size;
  for (int64_t b = wanted - wanted % step; b >= step; b -= step)
    if (size % b == 0)
      return b;
  return wanted;
}

/* The last entry of a contraction dimension group (a DenseI32Array), or -1
 * when the group is empty. */
static int last_dim(MlirAttribute group) {
  if (mlirAttributeIsNull(group) || !mlirAttributeIsADenseI32Array(group))
    return -1;
  intptr_t n = mlirDenseArrayGetNumElements(group);
  return n > 0 ? mlirDenseI32ArrayGetElement(group, n - 1) : -1;
}

/* The two-level contraction schedule; false when the op is not a
 * contraction with m, n and k dimensions. */
static bool contraction_script(MlirOperation op, const op_shape *shape,
                               stc_text *text) {
  if (!mlirLinalgIsAContractionOp(op))
    return false;
  MlirLinalgContractionDimensions dims = mlirLinalgInferContractionDimensions(op);
  int m = last_dim(dims.m), n = last_dim(dims.n), k = last_dim(dims.k);
  if (m < 0 || n < 0 || k < 0 || (size_t)m >= shape->loops ||
      (size_t)n >= shape->loops || (size_t)k >= shape->loops)
    return false;
  int64_t blocks[MAX_LOOPS], vector[MAX_LOOPS];
  for (size_t d = 0; d < shape->loops; d++)
    blocks[d] = vector[d] = 1;
  /* Fewer rows than a register tile (a decode step's 1 x K x N): wider
   * and shallower tiles keep as many accumulators busy (measured on
   * 1x768x3072: 2.6x the 8x32x8 tiles). */
  bool few_rows = shape->size[m] >= 0 && shape->size[m] < REGISTER_M;
  int64_t register_n = few_rows ? FEW_ROWS_N : REGISTER_N;
  int64_t register_k = few_rows ? FEW_ROWS_K : REGISTER_K;
  vector[m] = register_rows(shape, (size_t)m, REGISTER_M);
  vector[n] = clamp(shape, (size_t)n, register_n);
  vector[k] = clamp(shape, (size_t)k, register_k);
  blocks[m] = block(shape, (size_t)m, BLOCK_M, vector[m]);
  blocks[n] = block(shape, (size_t)n, few_rows ? FEW_ROWS_BLOCK_N : BLOCK_N, vector[n]);
  blocks[k] = block(shape, (size_t)k, few_rows ? FEW_ROWS_BLOCK_K : BLOCK_K, vector[k]);
  generated_script(text, blocks, vector, shape->loops, true);
  return true;
}

/* The largest divisor of `size` that is at most `wanted` (1 at worst). */
static int64_t divisor_at_most(int64_t size, int64_t wanted) {
  for (int64_t d = wanted < size ? wanted : size; d > 1; d--)
    if (size % d == 0)
      return d;
  return 1;
}

/* A vector tile along a channel-like loop of static `size`: 16 lanes (one
 * AVX-512 register) when they divide it, the whole range up to 32, then 8
 * lanes, then the largest divisor up to 32. Never a partial tile. */
static int64_t channel_tile(int64_t size) {
  if (size % 16 == 0)
    return 16;
  if (size <= 32)
    return size;
  if (size % 8 == 0)
    return 8;
  return divisor_at_most(size, 32);
}

/* True when a static NHWC convolution (loops n, oh, ow, f, kh, kw, c) runs
 * faster decomposed into rows (window_script) than as im2col + a matmul:
 * a filter wider than 1x1 over channels in multiples of 8. Measured on
 * ResNet-50 layers (CPU time, one thread, bench/defaults.py shapes):
 * 56x56x64 3x3 180 vs 68 GFLOP/s, 28x28x128 3x3 stride 2 211 vs 103,
 * 14x14x256 and 7x7x512 3x3 143 vs 150 (a tie); 1x1 filters are plain
 * matmuls to im2col (56x56 64->256: 159 vs 222) and 3 input channels
 * make 3-lane vectors (the 7x7/2 stem: 1.7 vs 32). */
static bool conv_by_rows(const op_shape *shape) {
  return !shape->dynamic && shape->loops == 7 && shape->size[6] > 0 &&
         shape->size[6] % 8 == 0 && shape->size[4] * shape->size[5] > 1;
}

/* The schedule of an NHWC convolution (static or dynamic) or a static
 * depthwise convolution: one output row and one filter row per tile (the
 * 1-row tile decomposes into a 1-D convolution), up to 8 output columns by
 * a vector of channels, vectorized: FMAs (depthwise) or outer products
 * (convolution) into a block of outputs held in registers. The built-in
 * schedules pad partial tiles, and a padded tile is copied by the generic
 * strided memref copy twice per filter tap (a 28x28x256 depthwise
 * convolution ran at 0.2 GFLOP/s, scalar loops at 60), so no tile here is
 * partial: along a static range the tile divides it; along a dynamic one
 * (output columns, filters, input channels) the tile loop is peeled into
 * full tiles, vectorized, and a remainder of partial tiles left to scalar
 * loops (marked ATTR_KEPT, so no later round tiles it again). Dynamic
 * 28x28 64->64 3x3: 30 GFLOP/s, scalar loops 2.5. A dynamic depthwise
 * convolution peeled the same way measured no faster than its loops (3.5-4.3
 * against 4.0-4.5 GFLOP/s on 28x28x256 3x3), so it keeps them. False when
 * the op is not one of these or a static range is empty. */
static bool window_script(MlirOperation op, const op_shape *shape, stc_text *text) {
  bool depthwise = stc__op_is(op, "linalg.depthwise_conv_2d_nhwc_hwc");
  bool conv = stc__op_is(op, "linalg.conv_2d_nhwc_hwcf");
  if ((!depthwise && !conv) || shape->loops != (depthwise ? 6u : 7u) ||
      (conv && !shape->dynamic && !conv_by_rows(shape)) || (depthwise && shape->dynamic))
    return false;
  /* A dynamic convolution whose static sizes already say that rows lose
   * (conv_by_rows: a 1x1 filter, input channels not a multiple of 8)
   * keeps the loops. */
  if (conv && shape->dynamic &&
      ((shape->size[6] > 0 && shape->size[6] % 8 != 0) ||
       (shape->size[4] == 1 && shape->size[5] == 1)))
    return false;
  for (size_t d = 0; d < shape->loops; d++)
    if (shape->size[d] == 0)
      return false;
  const int64_t *size = shape->size;
  /* Loops: depthwise n, oh, ow, c, kh, kw; convolution n, oh, ow, f, kh,
   * kw, c. Depthwise: 8 x 16 blocks of outputs, every filter column of a row
   * (85-93 GFLOP/s on 56x56x128 3x3 where 8 x 32 gave 65 and 8 x 64 37);
   * convolution: 8 x 32 outputs (16 vector accumulators) per filter tap, 8
   * input channels (7x7x512 3x3: 143 GFLOP/s where 8 x 16 gave 80). */
  int64_t tiles[MAX_LOOPS] = {1, 1, size[2] < 0 ? REGISTER_M : divisor_at_most(size[2], REGISTER_M),
                              size[3] < 0 ? 32 : channel_tile(size[3]), 1, depthwise ? 0 : 1};
  if (conv) {
    if (size[3] < 0 || size[3] % 32 == 0)
      tiles[3] = 32;
    tiles[6] = size[6] < 0 || size[6] % 8 == 0 ? 8 : divisor_at_most(size[6], 8);
  }
  /* The dynamic ranges to peel: output columns, filters, input channels. */
  size_t peel_dims[3], peels = 0;
  const size_t peelable[3] = {2, 3, 6};
  for (size_t i = 0; i < (conv ? 3u : 2u); i++)
    if (size[peelable[i]] < 0)
      peel_dims[peels++] = peelable[i];
  /* With peeling, the filter taps are tiled (by 1) only in the full part:
   * a partial tile then stays one small convolution over every tap instead
   * of one per tap (odd 17x15 5->7 3x3, all partial: 0.8x the loops with
   * the taps tiled first). */
  int64_t first[MAX_LOOPS];
  memcpy(first, tiles, sizeof first);
  if (peels > 0)
    first[4] = first[5] = 0;
  size_t loops = 0;
  for (size_t d = 0; d < shape->loops; d++)
    loops += first[d] != 0;
  const char *name = depthwise ? "linalg.depthwise_conv_2d_nhwc_hwc" : "linalg.conv_2d_nhwc_hwcf";
  stc_text_appendf(text,
                   "module attributes {transform.with_named_sequence} {\n"
                   "  transform.named_sequence @stc_default(%%op: !transform.any_op "
                   "{transform.consumed}) {\n"
                   "    %%func = transform.get_parent_op %%op {isolated_from_above}\n"
                   "        : (!transform.any_op) -> !transform.any_op\n"
                   "    %%tiled, %%loops:%zu = transform.structured.tile_using_for %%op tile_sizes ",
                   loops);
  append_sizes(text, first, shape->loops);
  stc_text_appendf(text, "\n        : (!transform.any_op) -> (!transform.any_op");
  for (size_t i = 0; i < loops; i++)
    stc_text_appendf(text, ", !transform.any_op");
  stc_text_appendf(text, ")\n");
  /* Peel outermost first: peeling a loop invalidates the handles inside
   * it, so each next loop is found again from the tiled op in the full
   * part (nth_parent counts the tile loops between). */
  const char *target = "tiled";
  for (size_t p = 0; p < peels; p++) {
    size_t d = peel_dims[p];
    if (p == 0) {
      size_t index = 0;
      for (size_t e = 0; e < d; e++)
        index += first[e] != 0;
      stc_text_appendf(text,
                       "    %%l0 = transform.cast %%loops#%zu : !transform.any_op to "
                       "!transform.op<\"scf.for\">\n",
                       index);
    } else {
      size_t nth = 0;
      for (size_t e = d; e < shape->loops; e++)
        nth += first[e] != 0;
      stc_text_appendf(text,
                       "    %%l%zu = transform.get_parent_op %%in%zu {op_name = \"scf.for\", "
                       "nth_parent = %zu} : (!transform.any_op) -> !transform.op<\"scf.for\">\n",
                       p, p - 1, nth);
    }
    stc_text_appendf(text,
                     "    %%main%zu, %%rest%zu = transform.loop.peel %%l%zu "
                     ": (!transform.op<\"scf.for\">) -> (!transform.any_op, !transform.any_op)\n"
                     "    %%in%zu = transform.structured.match ops{[\"%s\"]} in %%main%zu "
                     ": (!transform.any_op) -> !transform.any_op\n",
                     p, p, p, p, name, p);
  }
  if (peels > 0) {
    /* Full tiles get static sizes by canonicalization (the peeled loop's
     * affine.min folds to the tile size); the remainders keep the loops. */
    stc_text_appendf(text,
                     "    transform.apply_patterns to %%func {\n"
                     "      transform.apply_patterns.canonicalization\n"
                     "    } : !transform.any_op\n");
    for (size_t p = 0; p < peels; p++)
      stc_text_appendf(text,
                       "    %%partial%zu = transform.structured.match ops{[\"%s\"]} in %%rest%zu "
                       ": (!transform.any_op) -> !transform.any_op\n"
                       "    transform.annotate %%partial%zu \"" ATTR_KEPT "\" : !transform.any_op\n",
                       p, name, p, p);
    stc_text_appendf(text,
                     "    %%full = transform.structured.match ops{[\"%s\"]} in %%main%zu "
                     ": (!transform.any_op) -> !transform.any_op\n"
                     "    %%taps, %%tap_loops:2 = transform.structured.tile_using_for %%full "
                     "tile_sizes ",
                     name, peels - 1);
    int64_t taps[MAX_LOOPS] = {0};
    taps[4] = tiles[4];
    taps[5] = tiles[5];
    append_sizes(text, taps, shape->loops);
    stc_text_appendf(text, "\n        : (!transform.any_op) -> (!transform.any_op, "
                           "!transform.any_op, !transform.any_op)\n");
    target = "taps";
  }
  stc_text_appendf(text,
                   "    %%row = transform.structured.decompose %%%s "
                   ": (!transform.any_op) -> !transform.any_op\n"
                   "    transform.structured.vectorize %%row : !transform.any_op\n",
                   target);
  if (conv)
    append_contraction_lowering(text);
  else
    stc_text_appendf(text,
                     "    transform.apply_patterns to %%func {\n"
                     "      transform.apply_patterns.vector.transfer_permutation_patterns\n"
                     "      transform.apply_patterns.canonicalization\n"
                     "    } : !transform.any_op\n");
  stc_text_appendf(text, "    transform.yield\n  }\n}\n");
  return true;
}

/* The one-level schedule for any other structured op. */
static bool generic_script(const op_shape *shape, stc_text *text) {
  int64_t vector[MAX_LOOPS];
  size_t inner = 0;
  for (size_t d = 0; d < shape->loops; d++) {
    vector[d] = 1;
    if (shape->innermost[d] >= shape->innermost[inner])
      inner = d;
  }
  vector[inner] = clamp(shape, inner, VECTOR_INNER);
  for (size_t d = shape->loops; d-- > 0;)
    if (d != inner && !shape->reduction[d]) {
      vector[d] = clamp(shape, d, VECTOR_OUTER);
      break;
    }
  for (size_t d = 0; d < shape->loops; d++)
    if (vector[d] <= 0)
      return false; /* an empty static range: nothing to run */
  generated_script(text, NULL, vector, shape->loops, false);
  return true;
}

/* ---- applying ------------------------------------------------------------------ */

typedef struct find_target {
  int64_t index;
  MlirOperation found;
} find_target;

static MlirWalkResult find_tagged(MlirOperation op, void *user) {
  find_target *f = user;
  MlirAttribute tag = mlirOperationGetAttributeByName(op, stc__str(ATTR_TARGET));
  if (!mlirAttributeIsNull(tag) && mlirAttributeIsAInteger(tag) &&
      mlirIntegerAttrGetValueInt(tag) == f->index) {
    f->found = op;
    return MlirWalkResultInterrupt;
  }
  return MlirWalkResultAdvance;
}

static MlirOperation tagged(MlirOperation func, int64_t index) {
  find_target f = {index, {NULL}};
  mlirOperationWalk(func, find_tagged, &f, MlirWalkPreOrder);
  return f.found;
}

static MlirWalkResult untag(MlirOperation op, void *user) {
  (void)user;
  mlirOperationRemoveAttributeByName(op, stc__str(ATTR_TARGET));
  return MlirWalkResultAdvance;
}

static MlirWalkResult unmark_kept(MlirOperation op, void *user) {
  (void)user;
  mlirOperationRemoveAttributeByName(op, stc__str(ATTR_KEPT));
  return MlirWalkResultAdvance;
}

static void mark_kept(run_state *state, MlirOperation op) {
  if (!mlirOperationIsNull(op))
    mlirOperationSetAttributeByName(op, stc__str(ATTR_KEPT), mlirUnitAttrGet(state->ctx));
}

/* The default schedules that may apply to `op`, most specific first (at
 * most MAX_CANDIDATES: the by-rows one of a static convolution, its kind's
 * built-in, the row-reduction one, then the generated one). *why gets the
 * reasons for skipping one. */
static size_t candidates(run_state *state, MlirOperation op,
                         const script_entry *out[MAX_CANDIDATES], stc_text *why) {
  size_t count = 0;
  op_shape shape;
  if (!read_shape(op, &shape)) {
    stc_text_appendf(why, "its indexing maps are not one per operand");
    return 0;
  }
  stc_text window = {0};
  if (window_script(op, &shape, &window) && !window.out_of_memory) {
    const script_entry *s = script_for(state, window.data, "stc_default",
                                       shape.dynamic ? STC_SCHEDULE_SHAPES_ANY
                                                     : STC_SCHEDULE_SHAPES_STATIC);
    if (s && !mlirOperationIsNull(s->module))
      out[count++] = s;
  }
  stc_text_free(&window);
  for (size_t i = 0; i < sizeof kind_defaults / sizeof kind_defaults[0]; i++) {
    if (!stc__op_is(op, kind_defaults[i].op))
      continue;
    const script_entry *s = builtin_script(state, kind_defaults[i].schedule);
    if (!s || mlirOperationIsNull(s->module))
      continue;
    /* A dynamically shaped convolution or depthwise convolution that
     * window_script did not take (or could not apply to): the built-in
     * pads each tile (the convolution vectorizer takes static sizes only),
     * and its padded copies made it 3x (NHWC and NCHW, 28x28 64->64 3x3)
     * and 20x (depthwise, 28x28x256 3x3) slower than the scalar loops
     * (bench/defaults.py conv_dyn, conv_nchw_dyn, depthwise_dyn). */
    if (shape.dynamic && s->shapes != STC_SCHEDULE_SHAPES_ANY)
      stc_text_appendf(why, "%s handles static shapes only; ", kind_defaults[i].schedule);
    else if (shape.dynamic && kind_defaults[i].pads)
      stc_text_appendf(why, "%s pads every tile of a dynamic shape (slower than the loops); ",
                       kind_defaults[i].schedule);
    else
      out[count++] = s;
    break;
  }
  /* The vectorizer turns a map that is not a projected permutation (an
   * im2col gather, a convolution written as a generic) into gathers or
   * fails: scalar loops are faster. */
  if (!shape.permutations) {
    stc_text_appendf(why, "an indexing map is not a projected permutation");
    return count;
  }
  /* A row reduction (a generic [parallel, reduction] reducing along the
   * dimension its operands are contiguous in: sums, maxima, softmax's
   * denominators): partial results accumulated elementwise across the row,
   * one horizontal reduction per row at the end, where the generated
   * schedule reduces each 32-wide piece horizontally (1.7-1.9x slower on
   * 1024x4096 row sums, bench/defaults.sh). Not for contractions (those
   * get theirs below) nor for maps with constant results (the
   * projected-permutation check above: partial-reduction tiling crashes on
   * them). A payload it cannot tile (no recognisable combiner) fails, and
   * the generated schedule follows. */
  if (stc__op_is(op, "linalg.generic") && shape.loops == 2 && !shape.reduction[0] &&
      shape.reduction[1] && shape.inputs_innermost[1] > 0 &&
      shape.inputs_innermost[0] == 0 &&
      num_outputs(op) == 1 && !mlirLinalgIsAContractionOp(op)) {
    const script_entry *s = builtin_script(state, ROW_REDUCTION_SCHEDULE);
    if (s && !mlirOperationIsNull(s->module))
      out[count++] = s;
  }
  stc_text text = {0};
  if ((contraction_script(op, &shape, &text) || generic_script(&shape, &text)) &&
      !text.out_of_memory) {
    const script_entry *s = script_for(state, text.data, "stc_default",
                                       STC_SCHEDULE_SHAPES_ANY);
    if (s && !mlirOperationIsNull(s->module))
      out[count++] = s;
  }
  stc_text_free(&text);
  return count;
}

/* Applies `script` to `target` (inside `root`); true when the interpreter
 * succeeded and root still verifies. The first error goes to *why. */
static bool apply_checked(run_state *state, MlirOperation root,
                          MlirOperation target, const script_entry *script,
                          stc_text *why) {
  stc_diag_capture capture;
  MlirDiagnosticHandlerID handler = stc__capture_begin(state->ctx, &capture);
  bool ok = stc__apply_sequence(target, script->entry, script->module) &&
            mlirOperationVerify(root);
  stc__capture_end(state->ctx, handler);
  if (!ok)
    stc_text_appendf(why, "%s%s", why->data && why->data[0] ? "; " : "",
                     stc__capture_text(&capture));
  stc_text_free(&capture.message);
  return ok;
}

/* *func's place goes to `clone`. */
static void replace_function(MlirOperation *func, MlirOperation clone) {
  mlirBlockInsertOwnedOperationAfter(mlirOperationGetBlock(*func), *func, clone);
  mlirOperationRemoveFromParent(*func);
  mlirOperationDestroy(*func);
  *func = clone;
}

static void remark_kept(run_state *state, MlirOperation op, const stc_text *why) {
  if (!state->options->remarks || mlirOperationIsNull(op))
    return;
  stc_text message = {0};
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  stc_text_appendf(&message, PASS_NAME ": '%.*s' keeps the scalar-loop lowering: %s",
                   (int)name.length, name.data,
                   why->data && why->data[0] ? why->data : "no default schedule applies");
  if (!message.out_of_memory)
    stc__pass_remark(state->ctx, op, message.data);
  stc_text_free(&message);
}

/* The careful path: the op tagged `index` gets the first of its schedules
 * that applies to a clone of *func, which then replaces *func. */
static void lower_one(run_state *state, MlirOperation *func, int64_t index) {
  MlirOperation op = tagged(*func, index);
  if (mlirOperationIsNull(op))
    return; /* an earlier schedule's clean-up folded it away */
  stc_text why = {0};
  const script_entry *scripts[MAX_CANDIDATES];
  size_t count = candidates(state, op, scripts, &why);
  bool done = false;
  for (size_t i = 0; i < count && !done; i++) {
    MlirOperation clone = mlirOperationClone(*func);
    MlirOperation target = tagged(clone, index);
    done = !mlirOperationIsNull(target) &&
           apply_checked(state, clone, target, scripts[i], &why);
    if (done)
      replace_function(func, clone);
    else
      mlirOperationDestroy(clone);
  }
  if (done)
    state->applied++;
  else {
    state->kept++;
    remark_kept(state, tagged(*func, index), &why);
    mark_kept(state, tagged(*func, index));
  }
  stc_text_free(&why);
}

/* The fast path: every op of one clone of *func gets its first schedule; the
 * clone replaces *func only if all of them applied. False (and *func
 * untouched) otherwise: then each op goes through lower_one. */
static bool lower_all_at_once(run_state *state, MlirOperation *func, int64_t count) {
  /* Ops no default schedule is for; their remarks wait for the outcome (a
   * failed batch goes op by op, which remarks itself). */
  bool *kept = calloc((size_t)count, sizeof *kept);
  if (!kept)
    return false;
  MlirOperation clone = mlirOperationClone(*func);
  bool ok = true;
  size_t applied = 0, num_kept = 0;
  for (int64_t i = 0; i < count && ok; i++) {
    MlirOperation op = tagged(clone, i);
    if (mlirOperationIsNull(op))
      continue;
    stc_text why = {0};
    const script_entry *scripts[MAX_CANDIDATES];
    if (candidates(state, op, scripts, &why) == 0) {
      kept[i] = true;
      num_kept++;
    } else {
      ok = apply_checked(state, clone, op, scripts[0], &why);
      applied++;
    }
    stc_text_free(&why);
  }
  if (ok) {
    replace_function(func, clone);
    state->applied += applied;
    state->kept += num_kept;
    for (int64_t i = 0; i < count; i++) {
      MlirOperation op = kept[i] ? tagged(*func, i) : (MlirOperation){NULL};
      if (mlirOperationIsNull(op))
        continue;
      stc_text why = {0};
      const script_entry *scripts[MAX_CANDIDATES];
      candidates(state, op, scripts, &why);
      remark_kept(state, op, &why);
      mark_kept(state, op);
      stc_text_free(&why);
    }
  } else {
    mlirOperationDestroy(clone);
  }
  free(kept);
  return ok;
}

typedef struct collect_targets {
  MlirContext ctx;
  int64_t count;
} collect_targets;

/* Tags each linalg structured op (one body region and indexing maps). */
static MlirWalkResult tag_target(MlirOperation op, void *user) {
  collect_targets *c = user;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (name.length > 7 && memcmp(name.data, "linalg.", 7) == 0 &&
      mlirOperationGetNumRegions(op) == 1 &&
      mlirAttributeIsNull(mlirOperationGetAttributeByName(op, stc__str(ATTR_KEPT))) &&
      !mlirAttributeIsNull(mlirLinalgGetIndexingMapsAttribute(op))) {
    MlirType i64 = mlirIntegerTypeGet(c->ctx, 64);
    mlirOperationSetAttributeByName(op, stc__str(ATTR_TARGET),
                                    mlirIntegerAttrGet(i64, c->count++));
  }
  return MlirWalkResultAdvance;
}

/* The im2col rewrite of a convolution: a gather (the patches, left to
 * scalar loops: a vectorized gather is slower) and a matmul-like generic,
 * which then gets the contraction schedule like any other. */
static const char im2col_script[] =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @stc_im2col(%op: !transform.any_op {transform.consumed}) {\n"
    "    %patches, %product = transform.structured.convert_conv2d_to_img2col %op\n"
    "        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

static MlirWalkResult tag_convolution(MlirOperation op, void *user) {
  collect_targets *c = user;
  if (!stc__op_is(op, "linalg.conv_2d_nhwc_hwcf"))
    return MlirWalkResultAdvance;
  op_shape shape;
  if (read_shape(op, &shape) && !shape.dynamic && !conv_by_rows(&shape)) {
    MlirType i64 = mlirIntegerTypeGet(c->ctx, 64);
    mlirOperationSetAttributeByName(op, stc__str(ATTR_TARGET),
                                    mlirIntegerAttrGet(i64, c->count++));
  }
  return MlirWalkResultAdvance;
}

/* Static NHWC convolutions that window_script does not take (1x1 filters,
 * input channels not a multiple of 8) become im2col + a matmul first: the
 * decomposition schedule (the dynamic-shape default) pads and copies a tile
 * per 8 input channels, 30x slower than im2col on ResNet-50's 3x3 layers
 * with 128-512 channels (the regret benchmark). */
static void rewrite_convolutions(run_state *state, MlirOperation *func) {
  collect_targets c = {state->ctx, 0};
  mlirOperationWalk(*func, tag_convolution, &c, MlirWalkPreOrder);
  const script_entry *script = c.count ? script_for(state, im2col_script, "stc_im2col",
                                                    STC_SCHEDULE_SHAPES_STATIC)
                                       : NULL;
  for (int64_t i = 0; script && !mlirOperationIsNull(script->module) && i < c.count; i++) {
    MlirOperation clone = mlirOperationClone(*func);
    MlirOperation target = tagged(clone, i);
    stc_text why = {0};
    if (!mlirOperationIsNull(target) && apply_checked(state, clone, target, script, &why))
      replace_function(func, clone);
    else
      mlirOperationDestroy(clone);
    stc_text_free(&why);
  }
  mlirOperationWalk(*func, untag, NULL, MlirWalkPreOrder);
}

/* ---- elementwise results in place --------------------------------------------- */

/* True when the op's iterator_types has only parallel loops. */
static bool all_parallel(MlirOperation op) {
  MlirAttribute iterators = mlirOperationGetAttributeByName(op, stc__str("iterator_types"));
  if (mlirAttributeIsNull(iterators) || !mlirAttributeIsAArray(iterators))
    return false;
  stc_text text = {0};
  mlirAttributePrint(iterators, stc_text_callback, &text);
  bool parallel = text.data && !text.out_of_memory && !strstr(text.data, "reduction");
  stc_text_free(&text);
  return parallel;
}

/* The ancestor of `op` (or op itself) whose block is `block`; null when
 * there is none. */
static MlirOperation ancestor_in(MlirOperation op, MlirBlock block) {
  while (!mlirOperationIsNull(op) && !mlirBlockEqual(mlirOperationGetBlock(op), block))
    op = mlirOperationGetParentOperation(op);
  return op;
}

/* True when every use of `value` other than by `op` is in an op before `op`
 * in op's block (nested uses count at their ancestor there). */
static bool last_use(MlirValue value, MlirOperation op) {
  MlirBlock block = mlirOperationGetBlock(op);
  for (MlirOpOperand use = mlirValueGetFirstUse(value); !mlirOpOperandIsNull(use);
       use = mlirOpOperandGetNextUse(use)) {
    MlirOperation user = ancestor_in(mlirOpOperandGetOwner(use), block);
    if (mlirOperationIsNull(user))
      return false;
    if (!mlirOperationEqual(user, op) && !mlirOperationIsBeforeInBlock(user, op))
      return false;
  }
  return true;
}

/* An elementwise linalg.generic whose init is a tensor.empty it never reads
 * writes its result into the buffer of an input instead, when that input
 * has the init's type and indexing map (a permutation: each iteration reads
 * the element it writes), is made by an op of the same block and is not
 * used after it: the payload reads the element from the init and the input
 * goes unused. Upstream bufferization writes an untiled elementwise op over
 * such an input by itself; once tiled into loops of slices it cannot prove
 * that safe and allocates a new result (softmax's exp and divide each got
 * a buffer of the whole tensor, and the page faults of the second made it
 * slower than scalar loops). On tensors the rewrite means the same thing;
 * bufferization still copies wherever a write in place would be wrong. */
static MlirWalkResult reuse_input(MlirOperation op, void *user) {
  (void)user;
  if (!stc__op_is(op, "linalg.generic") || num_outputs(op) != 1 || !all_parallel(op))
    return MlirWalkResultAdvance;
  intptr_t count = mlirOperationGetNumOperands(op);
  MlirAttribute maps = mlirLinalgGetIndexingMapsAttribute(op);
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
  if (count < 2 || mlirAttributeIsNull(maps) || !mlirAttributeIsAArray(maps) ||
      mlirArrayAttrGetNumElements(maps) != count || mlirBlockIsNull(body) ||
      mlirBlockGetNumArguments(body) != count)
    return MlirWalkResultAdvance;
  MlirValue init = mlirOperationGetOperand(op, count - 1);
  MlirValue init_arg = mlirBlockGetArgument(body, count - 1);
  MlirAffineMap init_map = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, count - 1));
  if (!mlirValueIsAOpResult(init) ||
      !stc__op_is(mlirOpResultGetOwner(init), "tensor.empty") ||
      !mlirOpOperandIsNull(mlirValueGetFirstUse(init_arg)) ||
      !mlirAffineMapIsPermutation(init_map))
    return MlirWalkResultAdvance;
  for (intptr_t i = 0; i < count - 1; i++) {
    MlirValue input = mlirOperationGetOperand(op, i);
    if (!mlirValueIsAOpResult(input) || !mlirTypeEqual(mlirValueGetType(input),
                                                       mlirValueGetType(init)) ||
        !mlirAffineMapEqual(mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, i)),
                            init_map) ||
        !mlirBlockEqual(mlirOperationGetBlock(mlirOpResultGetOwner(input)),
                        mlirOperationGetBlock(op)) ||
        !last_use(input, op))
      continue;
    bool repeated = false;
    for (intptr_t j = 0; j < count - 1; j++)
      repeated = repeated || (j != i && mlirValueEqual(mlirOperationGetOperand(op, j), input));
    if (repeated)
      continue;
    mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(body, i), init_arg);
    mlirOperationSetOperand(op, count - 1, input);
    break;
  }
  return MlirWalkResultAdvance;
}

/* ---- vector exp -------------------------------------------------------------- */

/* exp on a vector of f32 without a call per lane: LLVM scalarizes
 * llvm.exp on vectors into one expf call per element, which was 40% of
 * softmax's time. Cephes' expf: x clamped to [-104, 89] (NaN kept),
 * n = floor(x log2(e) + 1/2), r = x - n ln(2) in two parts, a degree-5
 * polynomial, times 2^n as two powers of two of half the exponent each
 * (so that 2^128 and the subnormal results below 2^-126 come out right:
 * overflow to inf and gradual underflow happen in the last multiply);
 * NaN in, NaN out. Within 2 ulp of expf. %1$s is the vector type, %2$s
 * the same shape of i32. */
static const char vector_exp_text[] =
    "module {\n"
    "func.func @exp(%%x: %1$s) -> %1$s {\n"
    "  %%lo = arith.constant dense<-104.0> : %1$s\n"
    "  %%hi = arith.constant dense<89.0> : %1$s\n"
    "  %%log2e = arith.constant dense<1.44269504088896341> : %1$s\n"
    "  %%half = arith.constant dense<0.5> : %1$s\n"
    "  %%ln2hi = arith.constant dense<-0.693359375> : %1$s\n"
    "  %%ln2lo = arith.constant dense<2.12194440e-4> : %1$s\n"
    "  %%p0 = arith.constant dense<1.9875691500e-4> : %1$s\n"
    "  %%p1 = arith.constant dense<1.3981999507e-3> : %1$s\n"
    "  %%p2 = arith.constant dense<8.3334519073e-3> : %1$s\n"
    "  %%p3 = arith.constant dense<4.1665795894e-2> : %1$s\n"
    "  %%p4 = arith.constant dense<1.6666665459e-1> : %1$s\n"
    "  %%p5 = arith.constant dense<5.0000001201e-1> : %1$s\n"
    "  %%one = arith.constant dense<1.0> : %1$s\n"
    "  %%bias = arith.constant dense<127> : %2$s\n"
    "  %%c23 = arith.constant dense<23> : %2$s\n"
    "  %%c1 = arith.constant dense<1> : %2$s\n"
    "  %%x0 = arith.maximumf %%x, %%lo : %1$s\n"
    "  %%xc = arith.minimumf %%x0, %%hi : %1$s\n"
    "  %%t = math.fma %%xc, %%log2e, %%half : %1$s\n"
    "  %%n = math.floor %%t : %1$s\n"
    "  %%r0 = math.fma %%n, %%ln2hi, %%xc : %1$s\n"
    "  %%r = math.fma %%n, %%ln2lo, %%r0 : %1$s\n"
    "  %%r2 = arith.mulf %%r, %%r : %1$s\n"
    "  %%y0 = math.fma %%p0, %%r, %%p1 : %1$s\n"
    "  %%y1 = math.fma %%y0, %%r, %%p2 : %1$s\n"
    "  %%y2 = math.fma %%y1, %%r, %%p3 : %1$s\n"
    "  %%y3 = math.fma %%y2, %%r, %%p4 : %1$s\n"
    "  %%y4 = math.fma %%y3, %%r, %%p5 : %1$s\n"
    "  %%y5 = math.fma %%y4, %%r2, %%r : %1$s\n"
    "  %%y = arith.addf %%y5, %%one : %1$s\n"
    "  %%ni = arith.fptosi %%n : %1$s to %2$s\n"
    "  %%n1 = arith.shrsi %%ni, %%c1 : %2$s\n"
    "  %%n2 = arith.subi %%ni, %%n1 : %2$s\n"
    "  %%e1 = arith.addi %%n1, %%bias : %2$s\n"
    "  %%b1 = arith.shli %%e1, %%c23 : %2$s\n"
    "  %%s1 = arith.bitcast %%b1 : %2$s to %1$s\n"
    "  %%e2 = arith.addi %%n2, %%bias : %2$s\n"
    "  %%b2 = arith.shli %%e2, %%c23 : %2$s\n"
    "  %%s2 = arith.bitcast %%b2 : %2$s to %1$s\n"
    "  %%z0 = arith.mulf %%y, %%s1 : %1$s\n"
    "  %%z = arith.mulf %%z0, %%s2 : %1$s\n"
    "  %%nan = arith.cmpf uno, %%x, %%x : %1$s\n"
    "  %%res = arith.select %%nan, %%x, %%z : %3$s, %1$s\n"
    "  return %%res : %1$s\n"
    "}\n"
    "}\n";

typedef struct exp_ops {
  MlirOperation *ops;
  size_t count, capacity;
  bool out_of_memory;
} exp_ops;

static MlirWalkResult find_vector_exp(MlirOperation op, void *user) {
  exp_ops *found = user;
  if (!stc__op_is(op, "math.exp") || mlirOperationGetNumResults(op) != 1)
    return MlirWalkResultAdvance;
  MlirType type = mlirValueGetType(mlirOperationGetResult(op, 0));
  if (!mlirTypeIsAVector(type) || !mlirTypeIsAF32(mlirShapedTypeGetElementType(type)))
    return MlirWalkResultAdvance;
  if (found->count == found->capacity) {
    size_t capacity = found->capacity ? 2 * found->capacity : 8;
    MlirOperation *grown = realloc(found->ops, capacity * sizeof *grown);
    if (!grown) {
      found->out_of_memory = true;
      return MlirWalkResultInterrupt;
    }
    found->ops = grown;
    found->capacity = capacity;
  }
  found->ops[found->count++] = op;
  return MlirWalkResultAdvance;
}

/* The body of vector_exp_text for `exp`'s type, cloned in front of it with
 * its argument mapped to exp's operand; then exp goes. Left alone when the
 * type is not one the text handles (a scalable vector). */
static void expand_vector_exp(run_state *state, MlirOperation exp) {
  MlirType type = mlirValueGetType(mlirOperationGetResult(exp, 0));
  stc_text name = {0}, text = {0};
  mlirTypePrint(type, stc_text_callback, &name);
  size_t length = name.data ? strlen(name.data) : 0;
  if (name.out_of_memory || length < 9 || strchr(name.data, '[') ||
      strcmp(name.data + length - 4, "f32>") != 0) {
    stc_text_free(&name);
    return;
  }
  /* vector<...xf32> -> vector<...xi32>, vector<...xi1> */
  char ints[256], bools[256];
  if (length + 1 > sizeof ints) {
    stc_text_free(&name);
    return;
  }
  snprintf(ints, sizeof ints, "%.*si32>", (int)(length - 4), name.data);
  snprintf(bools, sizeof bools, "%.*si1>", (int)(length - 4), name.data);
  stc_text_appendf(&text, vector_exp_text, name.data, ints, bools);
  stc_text_free(&name);
  if (text.out_of_memory) {
    stc_text_free(&text);
    return;
  }
  stc_diag_capture capture;
  MlirDiagnosticHandlerID handler = stc__capture_begin(state->ctx, &capture);
  MlirOperation module = mlirOperationCreateParse(state->ctx, stc__str(text.data),
                                                  stc__str(PASS_NAME "-exp"));
  stc__capture_end(state->ctx, handler);
  stc_text_free(&capture.message);
  stc_text_free(&text);
  if (mlirOperationIsNull(module))
    return;
  MlirOperation func = mlirBlockGetFirstOperation(
      mlirRegionGetFirstBlock(mlirOperationGetRegion(module, 0)));
  if (mlirOperationIsNull(func) || !stc__op_is(func, "func.func")) {
    mlirOperationDestroy(module);
    return;
  }
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  /* Values of the parsed body and their counterparts in front of exp. */
  enum { MAX_VALUES = 64 };
  MlirValue from[MAX_VALUES], to[MAX_VALUES];
  size_t mapped = 0;
  from[mapped] = mlirBlockGetArgument(body, 0);
  to[mapped++] = mlirOperationGetOperand(exp, 0);
  MlirBlock block = mlirOperationGetBlock(exp);
  MlirValue result = {NULL};
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    bool is_return = stc__op_is(op, "func.return");
    MlirValue operands[3];
    intptr_t num = mlirOperationGetNumOperands(op);
    for (intptr_t i = 0; i < num && i < 3; i++) {
      MlirValue v = mlirOperationGetOperand(op, i);
      operands[i] = v;
      for (size_t j = 0; j < mapped; j++)
        if (mlirValueEqual(from[j], v))
          operands[i] = to[j];
    }
    if (is_return) {
      result = operands[0];
      break;
    }
    MlirOperation clone = mlirOperationClone(op);
    mlirBlockInsertOwnedOperationBefore(block, exp, clone);
    for (intptr_t i = 0; i < num && i < 3; i++)
      mlirOperationSetOperand(clone, i, operands[i]);
    if (mapped < MAX_VALUES) {
      from[mapped] = mlirOperationGetResult(op, 0);
      to[mapped++] = mlirOperationGetResult(clone, 0);
    }
  }
  if (!mlirValueIsNull(result)) {
    mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(exp, 0), result);
    mlirOperationRemoveFromParent(exp);
    mlirOperationDestroy(exp);
  }
  mlirOperationDestroy(module);
}

/* Every vector exp of `func` expanded (expand_vector_exp). */
static void expand_vector_exps(run_state *state, MlirOperation func) {
  exp_ops found = {0};
  mlirOperationWalk(func, find_vector_exp, &found, MlirWalkPostOrder);
  if (!found.out_of_memory)
    for (size_t i = 0; i < found.count; i++)
      expand_vector_exp(state, found.ops[i]);
  free(found.ops);
}

/* A schedule's clean-up patterns act on the whole function and may make new
 * linalg ops (canonicalization folds a collapse_shape of a fill into a fill
 * of the collapsed tensor): those get their schedule in a later round. */
static void lower_function(run_state *state, MlirOperation func) {
  rewrite_convolutions(state, &func);
  mlirOperationWalk(func, reuse_input, NULL, MlirWalkPostOrder);
  for (int round = 0; round < MAX_ROUNDS; round++) {
    collect_targets c = {state->ctx, 0};
    mlirOperationWalk(func, tag_target, &c, MlirWalkPreOrder);
    if (c.count == 0)
      break;
    if (!lower_all_at_once(state, &func, c.count))
      for (int64_t i = 0; i < c.count; i++)
        lower_one(state, &func, i);
    mlirOperationWalk(func, untag, NULL, MlirWalkPreOrder);
  }
  mlirOperationWalk(func, untag, NULL, MlirWalkPreOrder);
  mlirOperationWalk(func, unmark_kept, NULL, MlirWalkPreOrder);
  expand_vector_exps(state, func);
}

static void run(MlirOperation module, MlirExternalPass pass, void *user) {
  (void)pass;
  run_state state = {0};
  state.ctx = mlirOperationGetContext(module);
  state.options = user;
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(module, 0));
  /* Functions are replaced by their transformed clones as we go: take the
   * next one before lowering the current one. */
  MlirOperation next = {NULL};
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = next) {
    next = mlirOperationGetNextInBlock(op);
    if (!stc__op_is(op, "func.func") || mlirOperationGetNumRegions(op) != 1 ||
        mlirRegionIsNull(mlirOperationGetRegion(op, 0)) ||
        mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0))))
      continue;
    /* Variants keep the schedule they were made with. */
    if (!mlirAttributeIsNull(
            mlirOperationGetAttributeByName(op, stc__str("stc.variant_of"))))
      continue;
    lower_function(&state, op);
  }
  scripts_free(&state);
}

/* ---- pass object and options ------------------------------------------------- */

static const stc_pass_option_spec option_specs[] = {
    {"remarks", "a remark at each op that keeps the scalar-loop lowering, "
                "saying why (true|false)", "false"},
};

static _Alignas(8) char pass_type_anchor;
static default_options default_state = {false};
static default_options remarks_state = {true};

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  bool remarks = false;
  for (size_t i = 0; i < count; i++) {
    const char *name = values[i].name ? values[i].name : "";
    if (strcmp(name, "remarks") != 0) {
      stc_error_set(err, NULL, 0, 0, PASS_NAME ": unknown option '%s' (known: remarks)",
                    name);
      return (MlirPass){NULL};
    }
    if (!stc__option_bool(PASS_NAME, name, values[i].value ? values[i].value : "",
                          &remarks, err))
      return (MlirPass){NULL};
  }
  MlirDialectHandle dialects[] = {
      mlirGetDialectHandle__func__(),   mlirGetDialectHandle__transform__(),
      mlirGetDialectHandle__linalg__(), mlirGetDialectHandle__scf__(),
      mlirGetDialectHandle__vector__(), mlirGetDialectHandle__tensor__(),
      mlirGetDialectHandle__arith__(),  mlirGetDialectHandle__memref__(),
  };
  /* The state is immutable: clones share it (no copy, no destructor). */
  stc_pass_def def = {&stc_default_lowering_pass_spec, "StcDefaultLowering",
                      &pass_type_anchor, dialects,
                      sizeof dialects / sizeof dialects[0], run, NULL, NULL};
  return stc__create_pass(&def, remarks ? &remarks_state : &default_state);
}

const stc_pass_spec stc_default_lowering_pass_spec = {
    PASS_NAME,
    "tile and vectorize every linalg op outside the variants with one robust "
    "schedule per op kind: the default lowering, and every site's reference",
    "builtin.module",
    option_specs,
    sizeof option_specs / sizeof option_specs[0],
    create,
};
