/* gpu_conv_schedule.c - generated GPU kernels for convolutions and row
 * reductions, as variants of GPU dispatch sites under --target=cuda
 * (--gpu-sites items conv:PxF, red:warp, red:warp/v4, red:block).
 *
 * Like the /shared matmul kernel (gpu_schedule.c), each kernel is written as
 * MLIR text and parsed after bufferization: the site script only marks the
 * variant function (stc.gpu_kernel = "<item>"), stc-gpu-map-forall calls
 * stc_gpu_kernel_replace, which replaces the function's op by one gpu.launch
 * on its buffers. Before that, stc-multi-variant asks
 * stc_gpu_kernel_accepts whether the kernel is correct for the op; a
 * declined op gets a remark and no such variant (the site's reference, the
 * default kernel, computes it).
 *
 * conv:PxF (linalg.conv_2d_nhwc_hwcf, f32, static, any strides and
 * dilations): an implicit GEMM without im2col. Output pixels
 * (n, oh, ow flattened, N*OH*OW of them) times output channels: each thread
 * owns P consecutive pixels and F (even) channels, in groups of V = 4 (or 2)
 * channels interleaved over the block's TX threads along x (a warp's filter
 * loads are contiguous). 256 threads per block: TX = the largest divisor of
 * FO/F that is at most 32, TY = 256/TX along y. Per (kh, kw, c) the thread
 * loads F/V filter vectors and P input scalars (128-bit input loads of 4
 * channels when C is a multiple of 4) and does P*F FMAs. The accumulators
 * start from the output's values and add the products in the reference's
 * order (kh, kw, c), so the result is the reference's up to FMA
 * contraction. A partial last pixel group reads the last pixel and writes
 * nothing. Declined: FO not a multiple of F, more than 65535 block rows.
 *
 * red:* (linalg.generic whose only reduction dimension is the innermost,
 * f32, static, inputs indexed either like the iteration space or like the
 * output, the output by the outer dimensions in order, a body
 * `m = f(inputs); r = combine(m, acc)` with combine addf / mulf / maximumf
 * / minimumf / maxnumf / minnumf and acc used only there): rows = the
 * product of the outer dimensions, L = the innermost. red:warp: one warp
 * per row (8 rows per 256-thread block), lane l combines elements
 * l, l+32, ..., then a butterfly of 5 xor shuffles; red:warp/v4 the same
 * with 128-bit loads (L a multiple of 4); red:block: one 256-thread block
 * per row, warp butterflies, the 8 warp results through shared memory, a
 * last butterfly in warp 0. f is the generic's own body, cloned into the
 * kernel (every lane computes it on its elements). The output's value is
 * combined with the row's total at the end. Max/min are exact; sums and
 * products are reassociated (a tree over 32 or 256 partial results instead
 * of the reference's left-to-right order): for a sum of L terms the
 * difference is within about log2(L) * 2^-24 * sum |terms| (for positive
 * terms, e.g. softmax's sum of exponentials, a relative 1e-6 at L = 128),
 * inside the trial runner's default tolerance |a - b| <= 1e-4 + 1e-3 |b|
 * unless the row sum cancels to far below its terms; a variant that misses
 * it is rejected as a wrong result by the trials, never served. */
#include "tune_pipeline_cuda.h"

#include "stc_passes.h"
#include "kernel_text.h"
#include "transform_apply.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 256
#define MAX_ACC 64
#define MAX_BODY 64

/* ---- items and names --------------------------------------------------- */

bool stc_gpu_kernel_parse(const char *item, stc_gpu_kernel *out, bool *is_kernel, char *why,
                          size_t why_size) {
  stc_gpu_kernel k = {0};
  *is_kernel = false;
  if (strncmp(item, "conv:", 5) == 0) {
    *is_kernel = true;
    int used = -1;
    k.kind = STC_GPU_KERNEL_CONV;
    if (sscanf(item + 5, "%dx%d%n", &k.pixels, &k.channels, &used) != 2 || used < 0 ||
        item[5 + used]) {
      snprintf(why, why_size, "expected conv:PxF, e.g. conv:4x4");
      return false;
    }
    /* Accumulators: P times F/V vectors of V = 4 or 2 channels. */
    int v = k.channels % 4 == 0 ? 4 : 2;
    if (k.pixels < 1 || k.channels < 2 || k.channels % 2 || k.pixels > 16 ||
        k.channels > 32 || k.pixels * (k.channels / v) > MAX_ACC) {
      snprintf(why, why_size,
               "conv:%dx%d: P from 1 to 16 pixels, F even, from 2 to 32 channels, at most "
               "%d accumulators (P times F/4 or F/2)",
               k.pixels, k.channels, MAX_ACC);
      return false;
    }
    *out = k;
    return true;
  }
  if (strncmp(item, "red:", 4) == 0) {
    *is_kernel = true;
    k.kind = STC_GPU_KERNEL_ROWS;
    const char *rest = item + 4;
    if (strcmp(rest, "warp") == 0)
      k.vector = 1;
    else if (strcmp(rest, "warp/v4") == 0)
      k.vector = 4;
    else if (strcmp(rest, "block") == 0)
      k.block = true, k.vector = 1;
    else {
      snprintf(why, why_size, "expected red:warp, red:warp/v4 or red:block");
      return false;
    }
    *out = k;
    return true;
  }
  return false;
}

void stc_gpu_kernel_name(const stc_gpu_kernel *k, char *out, size_t size) {
  if (k->kind == STC_GPU_KERNEL_CONV)
    snprintf(out, size, "gpu_conv_p%d_f%d", k->pixels, k->channels);
  else
    snprintf(out, size, "gpu_red_%s%s", k->block ? "block" : "warp",
             k->vector == 4 ? "_v4" : "");
}

/* The inverse of stc_gpu_kernel_name; false for another name. */
static bool kernel_of_name(const char *name, stc_gpu_kernel *k) {
  memset(k, 0, sizeof *k);
  int used = -1;
  if (sscanf(name, "gpu_conv_p%d_f%d%n", &k->pixels, &k->channels, &used) == 2 && used > 0 &&
      !name[used] && k->pixels > 0 && k->channels > 0) {
    k->kind = STC_GPU_KERNEL_CONV;
    return true;
  }
  k->kind = STC_GPU_KERNEL_ROWS;
  k->vector = 1;
  if (strcmp(name, "gpu_red_warp") == 0)
    return true;
  if (strcmp(name, "gpu_red_warp_v4") == 0)
    return (k->vector = 4), true;
  if (strcmp(name, "gpu_red_block") == 0)
    return (k->block = true), true;
  return false;
}

char *stc_gpu_kernel_site_script(const stc_gpu_kernel *k, int tier) {
  char name[64];
  stc_gpu_kernel_name(k, name, sizeof name);
  stc_text out = {0};
  stc_text_appendf(
      &out,
      "module attributes {transform.with_named_sequence} {\n"
      "  transform.named_sequence @%s(%%op: !transform.any_op {transform.readonly}) "
      "attributes {stc.kind = \"%s\", stc.dynamic = \"static\", stc.tier = %d : i64, "
      "stc.element_type = f32} {\n"
      "    %%func = transform.get_parent_op %%op {isolated_from_above} : (!transform.any_op) -> !transform.any_op\n"
      "    %%p = transform.param.constant \"%s\" -> !transform.any_param\n"
      "    transform.annotate %%func \"stc.gpu_kernel\" = %%p : !transform.any_op, !transform.any_param\n"
      "    transform.yield\n  }\n}\n",
      name, k->kind == STC_GPU_KERNEL_CONV ? "conv_2d_nhwc_hwcf" : "reduction", tier, name);
  if (out.out_of_memory) {
    stc_text_free(&out);
    return NULL;
  }
  return out.data;
}

/* ---- what the kernels accept ------------------------------------------- */

static bool static_f32(MlirType t) {
  return mlirTypeIsAShaped(t) && mlirShapedTypeHasRank(t) && mlirShapedTypeHasStaticShape(t) &&
         mlirTypeIsAF32(mlirShapedTypeGetElementType(t));
}

/* After bufferization: a static f32 memref with the identity layout in the
 * default memory space. */
static bool plain_memref(MlirType t) {
  if (!mlirTypeIsAMemRef(t) || !static_f32(t) ||
      !mlirAttributeIsNull(mlirMemRefTypeGetMemorySpace(t)))
    return false;
  MlirAttribute layout = mlirMemRefTypeGetLayout(t);
  return mlirAttributeIsNull(layout) ||
         (mlirAttributeIsAAffineMap(layout) &&
          mlirAffineMapIsIdentity(mlirAffineMapAttrGetValue(layout)));
}

/* Every operand (and result) static f32; after bufferization also plain. */
static bool operands_ok(MlirOperation op, bool memrefs, char *why, size_t why_size) {
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
    MlirType t = mlirValueGetType(mlirOperationGetOperand(op, i));
    if (!static_f32(t)) {
      snprintf(why, why_size, "operand %ld is not a static f32 tensor", (long)i);
      return false;
    }
    if (memrefs && !plain_memref(t)) {
      snprintf(why, why_size, "operand %ld is not a plain f32 buffer", (long)i);
      return false;
    }
  }
  return true;
}

typedef struct conv_shape {
  int64_t n, h, w, c, kh, kw, fo, oh, ow;
  int64_t sh, sw, dh, dw;
  int tx, ty, vf; /* threads along channels / pixels; channel vector width */
  int64_t gx, gy; /* grid */
} conv_shape;

static int64_t attr_element(MlirOperation op, const char *name, intptr_t i) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, stc__str(name));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseElements(a) ||
      mlirElementsAttrGetNumElements(a) != 2)
    return 1;
  return mlirDenseElementsAttrGetInt64Value(a, i);
}

static bool conv_accepts(MlirOperation op, const stc_gpu_kernel *k, bool memrefs,
                         conv_shape *s, char *why, size_t why_size) {
  if (!stc__op_is(op, "linalg.conv_2d_nhwc_hwcf") || mlirOperationGetNumOperands(op) != 3) {
    snprintf(why, why_size, "not a linalg.conv_2d_nhwc_hwcf with 3 operands");
    return false;
  }
  if (!operands_ok(op, memrefs, why, why_size))
    return false;
  MlirType ti = mlirValueGetType(mlirOperationGetOperand(op, 0));
  MlirType tf = mlirValueGetType(mlirOperationGetOperand(op, 1));
  MlirType to = mlirValueGetType(mlirOperationGetOperand(op, 2));
  s->n = mlirShapedTypeGetDimSize(ti, 0), s->h = mlirShapedTypeGetDimSize(ti, 1);
  s->w = mlirShapedTypeGetDimSize(ti, 2), s->c = mlirShapedTypeGetDimSize(ti, 3);
  s->kh = mlirShapedTypeGetDimSize(tf, 0), s->kw = mlirShapedTypeGetDimSize(tf, 1);
  s->fo = mlirShapedTypeGetDimSize(tf, 3);
  s->oh = mlirShapedTypeGetDimSize(to, 1), s->ow = mlirShapedTypeGetDimSize(to, 2);
  s->sh = attr_element(op, "strides", 0), s->sw = attr_element(op, "strides", 1);
  s->dh = attr_element(op, "dilations", 0), s->dw = attr_element(op, "dilations", 1);
  if (s->fo % k->channels) {
    snprintf(why, why_size,
             "%lld output channels are not a multiple of the %d channels per thread",
             (long long)s->fo, k->channels);
    return false;
  }
  if (!s->n || !s->oh || !s->ow || !s->fo || !s->kh || !s->kw || !s->c) {
    snprintf(why, why_size, "an empty dimension");
    return false;
  }
  s->vf = k->channels % 4 == 0 ? 4 : 2; /* F is even (stc_gpu_kernel_parse) */
  int64_t groups = s->fo / k->channels;
  s->tx = 1;
  for (int t = groups < 32 ? (int)groups : 32; t >= 1; t--)
    if (groups % t == 0) {
      s->tx = t;
      break;
    }
  s->ty = THREADS / s->tx;
  s->gx = groups / s->tx;
  int64_t pixels = s->n * s->oh * s->ow;
  int64_t pixel_groups = (pixels + k->pixels - 1) / k->pixels;
  s->gy = (pixel_groups + s->ty - 1) / s->ty;
  if (s->gy > 65535) {
    snprintf(why, why_size, "%lld block rows (at most 65535)", (long long)s->gy);
    return false;
  }
  return true;
}

typedef struct row_shape {
  int rank;          /* of the iteration space */
  int64_t rows, len; /* product of the outer dims, the innermost */
  int inputs;
  bool full[16];     /* input i indexed like the iteration space (else like the output) */
  MlirOperation combiner;
  const char *combine; /* arith op name without "arith." */
  const char *neutral; /* its neutral element */
} row_shape;

/* The map's results are d0, ..., d(count-1) over `dims` dimensions. */
static bool prefix_map(MlirAttribute attr, intptr_t dims, intptr_t count) {
  if (!mlirAttributeIsAAffineMap(attr))
    return false;
  MlirAffineMap map = mlirAffineMapAttrGetValue(attr);
  if (mlirAffineMapGetNumDims(map) != dims || mlirAffineMapGetNumResults(map) != count)
    return false;
  for (intptr_t i = 0; i < count; i++) {
    MlirAffineExpr e = mlirAffineMapGetResult(map, i);
    if (!mlirAffineExprIsADim(e) || mlirAffineDimExprGetPosition(e) != i)
      return false;
  }
  return true;
}

static int num_inputs(MlirOperation op) {
  MlirAttribute segments = mlirOperationGetAttributeByName(op, stc__str("operandSegmentSizes"));
  if (mlirAttributeIsNull(segments) || !mlirAttributeIsADenseI32Array(segments) ||
      mlirDenseArrayGetNumElements(segments) < 1)
    return -1;
  return mlirDenseI32ArrayGetElement(segments, 0);
}

static const struct {
  const char *op, *combine, *neutral;
} combiners[] = {
    {"arith.addf", "addf", "0.0"},           {"arith.mulf", "mulf", "1.0"},
    {"arith.maximumf", "maximumf", "0xFF800000"}, {"arith.maxnumf", "maxnumf", "0xFF800000"},
    {"arith.minimumf", "minimumf", "0x7F800000"}, {"arith.minnumf", "minnumf", "0x7F800000"},
};

static bool rows_accept(MlirOperation op, const stc_gpu_kernel *k, bool memrefs, row_shape *s,
                        char *why, size_t why_size) {
  memset(s, 0, sizeof *s);
  if (!stc__op_is(op, "linalg.generic")) {
    snprintf(why, why_size, "not a linalg.generic");
    return false;
  }
  int ins = num_inputs(op);
  if (ins < 0 || mlirOperationGetNumOperands(op) != ins + 1 || ins > 16) {
    snprintf(why, why_size, "not one output and at most 16 inputs");
    return false;
  }
  if (!operands_ok(op, memrefs, why, why_size))
    return false;
  s->inputs = ins;
  MlirAttribute iterators = mlirOperationGetAttributeByName(op, stc__str("iterator_types"));
  MlirAttribute maps = mlirOperationGetAttributeByName(op, stc__str("indexing_maps"));
  if (mlirAttributeIsNull(iterators) || !mlirAttributeIsAArray(iterators) ||
      mlirAttributeIsNull(maps) || !mlirAttributeIsAArray(maps)) {
    snprintf(why, why_size, "no iterator types or indexing maps");
    return false;
  }
  s->rank = (int)mlirArrayAttrGetNumElements(iterators);
  for (int d = 0; d < s->rank; d++) {
    stc_text text = {0};
    mlirAttributePrint(mlirArrayAttrGetElement(iterators, d), stc_text_callback, &text);
    bool reduction = text.data && strstr(text.data, "reduction");
    stc_text_free(&text);
    if (reduction != (d == s->rank - 1)) {
      snprintf(why, why_size, "the innermost dimension is not the only reduction dimension");
      return false;
    }
  }
  if (s->rank < 2) {
    snprintf(why, why_size, "a reduction of all dimensions (no rows)");
    return false;
  }
  if (!prefix_map(mlirArrayAttrGetElement(maps, ins), s->rank, s->rank - 1)) {
    snprintf(why, why_size, "the output is not indexed by the outer dimensions in order");
    return false;
  }
  for (int i = 0; i < ins; i++) {
    MlirAttribute map = mlirArrayAttrGetElement(maps, i);
    s->full[i] = prefix_map(map, s->rank, s->rank);
    if (!s->full[i] && !prefix_map(map, s->rank, s->rank - 1)) {
      snprintf(why, why_size,
               "input %d is indexed neither like the iteration space nor like the output", i);
      return false;
    }
  }
  MlirType out = mlirValueGetType(mlirOperationGetOperand(op, ins));
  s->rows = 1;
  for (int d = 0; d + 1 < s->rank; d++)
    s->rows *= mlirShapedTypeGetDimSize(out, d);
  s->len = 0;
  for (int i = 0; i < ins && !s->len; i++)
    if (s->full[i])
      s->len = mlirShapedTypeGetDimSize(mlirValueGetType(mlirOperationGetOperand(op, i)),
                                        s->rank - 1);
  if (!s->len) {
    snprintf(why, why_size, "no input spans the reduced dimension");
    return false;
  }
  /* The body: ops without regions, no linalg.index, the accumulator used
   * only by the combiner that the yield returns. */
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
  MlirValue acc = mlirBlockGetArgument(body, ins);
  MlirOperation yield = mlirBlockGetTerminator(body);
  int count = 0;
  for (MlirOperation o = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o), count++)
    if (mlirOperationGetNumRegions(o) || stc__op_is(o, "linalg.index")) {
      snprintf(why, why_size, "the body has an op with regions or linalg.index");
      return false;
    }
  if (count > MAX_BODY || mlirOperationGetNumOperands(yield) != 1 ||
      !mlirValueIsAOpResult(mlirOperationGetOperand(yield, 0))) {
    snprintf(why, why_size, "the body does not yield one combined value");
    return false;
  }
  MlirOperation comb = mlirOpResultGetOwner(mlirOperationGetOperand(yield, 0));
  for (size_t c = 0; c < sizeof combiners / sizeof *combiners && !s->combine; c++)
    if (stc__op_is(comb, combiners[c].op))
      s->combine = combiners[c].combine, s->neutral = combiners[c].neutral;
  MlirOpOperand use = mlirValueGetFirstUse(acc);
  bool acc_once = !mlirOpOperandIsNull(use) &&
                  mlirOperationEqual(mlirOpOperandGetOwner(use), comb) &&
                  mlirOpOperandIsNull(mlirOpOperandGetNextUse(use));
  if (!s->combine || mlirOperationGetNumOperands(comb) != 2 || !acc_once ||
      mlirValueEqual(mlirOperationGetOperand(comb, 0), mlirOperationGetOperand(comb, 1))) {
    snprintf(why, why_size,
             "the body's result is not addf/mulf/maximumf/minimumf/maxnumf/minnumf of the "
             "accumulator (used only there) and a value of the inputs");
    return false;
  }
  s->combiner = comb;
  if (k->vector == 4 && s->len % 4) {
    snprintf(why, why_size, "the reduced dimension (%lld) is not a multiple of 4",
             (long long)s->len);
    return false;
  }
  if (!s->rows) {
    snprintf(why, why_size, "no rows (an empty dimension)");
    return false;
  }
  if ((k->block ? s->rows : (s->rows + 7) / 8) > 0x7fffffffLL) {
    snprintf(why, why_size, "too many rows");
    return false;
  }
  return true;
}

bool stc_gpu_kernel_accepts(MlirOperation op, const char *schedule, char *why,
                            size_t why_size) {
  stc_gpu_kernel k;
  if (!kernel_of_name(schedule, &k)) {
    snprintf(why, why_size, "unknown generated kernel '%s'", schedule);
    return false;
  }
  if (k.kind == STC_GPU_KERNEL_CONV) {
    conv_shape s;
    return conv_accepts(op, &k, false, &s, why, why_size);
  }
  row_shape s;
  return rows_accept(op, &k, false, &s, why, why_size);
}

/* ---- kernel text -------------------------------------------------------- */

static void type_text(MlirType t, char *out, size_t size) {
  stc_text text = {0};
  mlirTypePrint(t, stc_text_callback, &text);
  snprintf(out, size, "%s", text.data ? text.data : "");
  stc_text_free(&text);
}

/* "vector<Nxf32>" or "f32". */
static const char *vec_type(int n, char *buf, size_t size) {
  if (n == 1)
    return "f32";
  snprintf(buf, size, "vector<%dxf32>", n);
  return buf;
}

/* The conv kernel (file comment). */
static bool conv_text(const stc_gpu_kernel *k, const conv_shape *s, stc_text *t) {
  int tp = k->pixels, vf = s->vf, groups = k->channels / vf, nacc = tp * groups;
  if (nacc > MAX_ACC)
    return false;
  char vt[32], it[160], ft[160], ot[160];
  vec_type(vf, vt, sizeof vt);
  snprintf(it, sizeof it, "memref<%lldx%lldx%lldx%lldxf32>", (long long)s->n, (long long)s->h,
           (long long)s->w, (long long)s->c);
  snprintf(ft, sizeof ft, "memref<%lldx%lldx%lldx%lldxf32>", (long long)s->kh,
           (long long)s->kw, (long long)s->c, (long long)s->fo);
  snprintf(ot, sizeof ot, "memref<%lldx%lldx%lldx%lldxf32>", (long long)s->n,
           (long long)s->oh, (long long)s->ow, (long long)s->fo);
  stc_kernel_text gg = {t, 0}, *g = &gg;
  stc_text_appendf(t,
                   "module {\n"
                   "  func.func private @stc_gpu_conv_kernel(%%I: %s, %%F: %s, %%O: %s) {\n"
                   "    %%gx = arith.constant %lld : index\n"
                   "    %%gy = arith.constant %lld : index\n"
                   "    %%one = arith.constant 1 : index\n"
                   "    %%nt = arith.constant %d : index\n"
                   "    gpu.launch blocks(%%bx, %%by, %%bz) in (%%gsx = %%gx, %%gsy = %%gy, %%gsz = %%one) "
                   "threads(%%tid, %%tidy, %%tidz) in (%%bsx = %%nt, %%bsy = %%one, %%bsz = %%one) {\n",
                   it, ft, ot, (long long)s->gx, (long long)s->gy, s->tx * s->ty);
  int c0 = stc_kt_index(g, 0), c1 = stc_kt_index(g, 1);
  int tid = stc_kt_def(g, "arith.addi %%tid, %%v%d : index", c0);
  int tx = stc_kt_bin_const(g, "remui", tid, s->tx), ty = stc_kt_bin_const(g, "divui", tid, s->tx);
  /* Channels: block bx covers TX*F of them; thread tx's group j is
   * bx*TX*F + j*TX*V + tx*V. */
  int fbase = stc_kt_bin(g, "addi", stc_kt_def(g, "arith.muli %%bx, %%v%d : index", stc_kt_index(g, (long long)s->tx * k->channels)),
                  stc_kt_bin_const(g, "muli", tx, vf));
  int fch[MAX_ACC];
  for (int j = 0; j < groups; j++)
    fch[j] = stc_kt_bin_const(g, "addi", fbase, (long long)j * s->tx * vf);
  /* Pixels: (by*TY + ty)*P + i, clamped to the last one for loads. */
  long long pixels = s->n * s->oh * s->ow;
  int pg = stc_kt_bin(g, "addi", stc_kt_def(g, "arith.muli %%by, %%v%d : index", stc_kt_index(g, s->ty)), ty);
  int p0 = stc_kt_bin_const(g, "muli", pg, tp);
  int last = stc_kt_index(g, pixels - 1), cpix = stc_kt_index(g, pixels);
  int pix[16], pn[16], poh[16], pow_[16], ih0[16], iw0[16], inside[16];
  for (int i = 0; i < tp; i++) {
    pix[i] = stc_kt_bin_const(g, "addi", p0, i);
    inside[i] = stc_kt_def(g, "arith.cmpi ult, %%v%d, %%v%d : index", pix[i], cpix);
    int pc = stc_kt_bin(g, "minui", pix[i], last);
    pow_[i] = stc_kt_bin_const(g, "remui", pc, s->ow);
    int r = stc_kt_bin_const(g, "divui", pc, s->ow);
    poh[i] = stc_kt_bin_const(g, "remui", r, s->oh);
    pn[i] = stc_kt_bin_const(g, "divui", r, s->oh);
    ih0[i] = stc_kt_bin_const(g, "muli", poh[i], s->sh);
    iw0[i] = stc_kt_bin_const(g, "muli", pow_[i], s->sw);
  }
  /* Accumulators from the output's values (the reference's order). */
  int acc[MAX_ACC];
  for (int i = 0; i < tp; i++)
    for (int j = 0; j < groups; j++)
      acc[i * groups + j] =
          stc_kt_def(g, "vector.load %%O[%%v%d, %%v%d, %%v%d, %%v%d] {alignment = %d} : %s, %s",
                        pn[i], poh[i], pow_[i], fch[j], 4 * vf, ot, vt);
  int ckh = stc_kt_index(g, s->kh), ckw = stc_kt_index(g, s->kw), cc = stc_kt_index(g, s->c);
  int cvec = s->c % 4 == 0 ? 4 : 1;
  int cstep = stc_kt_index(g, cvec);
  /* Three loops carrying the accumulators: %v<loop result>#a. */
  char types[MAX_ACC * 20] = "", list[MAX_ACC * 40];
  for (int a = 0; a < nacc; a++)
    snprintf(types + strlen(types), sizeof types - strlen(types), "%s%s", a ? ", " : "", vt);
  int loop_kh = g->next++;
  list[0] = 0;
  for (int a = 0; a < nacc; a++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%%kh%d = %%v%d", a ? ", " : "",
             a, acc[a]);
  stc_text_appendf(t, "      %%v%d:%d = scf.for %%kh = %%v%d to %%v%d step %%v%d iter_args(%s) -> (%s) {\n",
                   loop_kh, nacc, c0, ckh, c1, list, types);
  int loop_kw = g->next++;
  list[0] = 0;
  for (int a = 0; a < nacc; a++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%%kw%d = %%kh%d", a ? ", " : "",
             a, a);
  stc_text_appendf(t, "      %%v%d:%d = scf.for %%kw = %%v%d to %%v%d step %%v%d iter_args(%s) -> (%s) {\n",
                   loop_kw, nacc, c0, ckw, c1, list, types);
  int ih[16], iw[16];
  int dkh = stc_kt_def(g, "arith.muli %%kh, %%v%d : index", stc_kt_index(g, s->dh));
  int dkw = stc_kt_def(g, "arith.muli %%kw, %%v%d : index", stc_kt_index(g, s->dw));
  for (int i = 0; i < tp; i++) {
    ih[i] = stc_kt_bin(g, "addi", ih0[i], dkh);
    iw[i] = stc_kt_bin(g, "addi", iw0[i], dkw);
  }
  int loop_c = g->next++;
  list[0] = 0;
  for (int a = 0; a < nacc; a++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%%ac%d = %%kw%d", a ? ", " : "",
             a, a);
  stc_text_appendf(t, "      %%v%d:%d = scf.for %%c = %%v%d to %%v%d step %%v%d iter_args(%s) -> (%s) {\n",
                   loop_c, nacc, c0, cc, cstep, list, types);
  int cur[MAX_ACC];
  for (int a = 0; a < nacc; a++)
    cur[a] = -1 - a; /* %ac<a> */
  int xin[16];
  for (int i = 0; i < tp; i++)
    xin[i] = cvec == 1 ? stc_kt_def(g, "memref.load %%I[%%v%d, %%v%d, %%v%d, %%c] : %s", pn[i], ih[i],
                             iw[i], it)
                       : stc_kt_def(g, "vector.load %%I[%%v%d, %%v%d, %%v%d, %%c] {alignment = 16} : %s, vector<4xf32>",
                             pn[i], ih[i], iw[i], it);
  for (int cc4 = 0; cc4 < cvec; cc4++) {
    int crow = cc4 ? stc_kt_def(g, "arith.addi %%c, %%v%d : index", stc_kt_index(g, cc4))
                   : stc_kt_def(g, "arith.addi %%c, %%v%d : index", c0);
    int fv[MAX_ACC];
    for (int j = 0; j < groups; j++)
      fv[j] = stc_kt_def(g, "vector.load %%F[%%kh, %%kw, %%v%d, %%v%d] {alignment = %d} : %s, %s",
                            crow, fch[j], 4 * vf, ft, vt);
    for (int i = 0; i < tp; i++) {
      int x = cvec == 1 ? xin[i]
                        : stc_kt_def(g, "vector.extract %%v%d[%d] : f32 from vector<4xf32>", xin[i], cc4);
      int xb = stc_kt_def(g, "vector.broadcast %%v%d : f32 to %s", x, vt);
      for (int j = 0; j < groups; j++) {
        int a = i * groups + j;
        char accname[24];
        if (cur[a] < 0)
          snprintf(accname, sizeof accname, "%%ac%d", -1 - cur[a]);
        else
          snprintf(accname, sizeof accname, "%%v%d", cur[a]);
        cur[a] = stc_kt_def(g, "vector.fma %%v%d, %%v%d, %s : %s", xb, fv[j], accname, vt);
      }
    }
  }
  stc_text_appendf(t, "      scf.yield ");
  for (int a = 0; a < nacc; a++)
    stc_text_appendf(t, "%s%%v%d", a ? ", " : "", cur[a]);
  stc_text_appendf(t, " : %s\n      }\n      scf.yield ", types);
  for (int a = 0; a < nacc; a++)
    stc_text_appendf(t, "%s%%v%d#%d", a ? ", " : "", loop_c, a);
  stc_text_appendf(t, " : %s\n      }\n      scf.yield ", types);
  for (int a = 0; a < nacc; a++)
    stc_text_appendf(t, "%s%%v%d#%d", a ? ", " : "", loop_kw, a);
  stc_text_appendf(t, " : %s\n      }\n", types);
  for (int i = 0; i < tp; i++) {
    stc_text_appendf(t, "      scf.if %%v%d {\n", inside[i]);
    for (int j = 0; j < groups; j++) {
      stc_text_appendf(t,
                         "      vector.store %%v%d#%d, %%O[%%v%d, %%v%d, %%v%d, %%v%d] {alignment = %d} : %s, %s\n",
                         loop_kh, i * groups + j, pn[i], poh[i], pow_[i], fch[j], 4 * vf, ot, vt);
    }
    stc_text_appendf(t, "      }\n");
  }
  stc_text_appendf(t, "      gpu.terminator\n    }\n    return\n  }\n}\n");
  return !t->out_of_memory;
}

/* Butterfly over a warp: 5 xor shuffles, the combiner after each. */
static int butterfly(stc_kernel_text *g, const row_shape *s, int value) {
  int width = stc_kt_def(g, "arith.constant 32 : i32");
  for (int off = 16; off >= 1; off /= 2) {
    int o = stc_kt_def(g, "arith.constant %d : i32", off);
    int sh = g->next++;
    stc_text_appendf(g->t, "      %%v%d, %%ok%d = gpu.shuffle xor %%v%d, %%v%d, %%v%d : f32\n", sh,
                     sh, value, o, width);
    value = stc_kt_def(g, "arith.%s %%v%d, %%v%d : f32", s->combine, value, sh);
  }
  return value;
}

/* The reduction kernel (file comment). Operands %a0 .. %a<ins> (the last
 * is the output); the per-element function is a placeholder
 * `unrealized_conversion_cast {stc.red_map}` of the row's input values,
 * replaced by the generic's body afterwards. */
static bool rows_text(MlirOperation op, const stc_gpu_kernel *k, const row_shape *s,
                      stc_text *t) {
  stc_kernel_text gg = {t, 0}, *g = &gg;
  int ins = s->inputs;
  char types[17][160];
  for (int i = 0; i <= ins; i++)
    type_text(mlirValueGetType(mlirOperationGetOperand(op, i)), types[i], sizeof types[i]);
  stc_text_appendf(t, "module {\n  func.func private @stc_gpu_rows_kernel(");
  for (int i = 0; i <= ins; i++)
    stc_text_appendf(t, "%s%%a%d: %s", i ? ", " : "", i, types[i]);
  stc_text_appendf(t, ") {\n");
  /* 2-D (rows x L) and 1-D (rows) views. */
  char row2[96], row1[96], reassoc2[256] = "[[", reassoc1[256] = "[[";
  snprintf(row2, sizeof row2, "memref<%lldx%lldxf32>", (long long)s->rows, (long long)s->len);
  snprintf(row1, sizeof row1, "memref<%lldxf32>", (long long)s->rows);
  for (int d = 0; d + 1 < s->rank; d++) {
    snprintf(reassoc2 + strlen(reassoc2), sizeof reassoc2 - strlen(reassoc2), "%s%d",
             d ? ", " : "", d);
    snprintf(reassoc1 + strlen(reassoc1), sizeof reassoc1 - strlen(reassoc1), "%s%d",
             d ? ", " : "", d);
  }
  snprintf(reassoc2 + strlen(reassoc2), sizeof reassoc2 - strlen(reassoc2), "], [%d]]",
           s->rank - 1);
  snprintf(reassoc1 + strlen(reassoc1), sizeof reassoc1 - strlen(reassoc1), "]]");
  /* %x<i>: operand i as rows (collapsed where it has more dimensions;
   * with two dimensions the operands are rows already). */
  char x[17][16];
  for (int i = 0; i <= ins; i++) {
    bool full = i < ins && s->full[i];
    snprintf(x[i], sizeof x[i], "%s%d", s->rank == 2 ? "a" : "x", i);
    if (s->rank > 2)
      stc_text_appendf(t, "    %%x%d = memref.collapse_shape %%a%d %s : %s into %s\n", i, i,
                       full ? reassoc2 : reassoc1, types[i], full ? row2 : row1);
  }
  long long grid = k->block ? s->rows : (s->rows + 7) / 8;
  stc_text_appendf(t,
                   "    %%gx = arith.constant %lld : index\n"
                   "    %%one = arith.constant 1 : index\n"
                   "    %%nt = arith.constant %d : index\n"
                   "    gpu.launch blocks(%%bx, %%by, %%bz) in (%%gsx = %%gx, %%gsy = %%one, %%gsz = %%one) "
                   "threads(%%tid, %%tidy, %%tidz) in (%%bsx = %%nt, %%bsy = %%one, %%bsz = %%one)%s {\n",
                   grid, THREADS,
                   k->block ? " workgroup(%sm : memref<8xf32, #gpu.address_space<workgroup>>)" : "");
  int c0 = stc_kt_index(g, 0);
  int tid = stc_kt_def(g, "arith.addi %%tid, %%v%d : index", c0);
  int lane = stc_kt_bin_const(g, "remui", tid, 32), warp = stc_kt_bin_const(g, "divui", tid, 32);
  int row, start, step;
  if (k->block) {
    row = stc_kt_def(g, "arith.addi %%bx, %%v%d : index", c0);
    start = stc_kt_bin_const(g, "muli", tid, k->vector);
    step = stc_kt_index(g, (long long)THREADS * k->vector);
  } else {
    row = stc_kt_bin(g, "addi", stc_kt_def(g, "arith.muli %%bx, %%v%d : index", stc_kt_index(g, 8)), warp);
    start = stc_kt_bin_const(g, "muli", lane, k->vector);
    step = stc_kt_index(g, 32LL * k->vector);
    /* A warp past the last row has nothing to do (the whole warp: the
     * shuffles need every lane of the warp). */
    int in_rows = stc_kt_def(g, "arith.cmpi ult, %%v%d, %%v%d : index", row, stc_kt_index(g, s->rows));
    stc_text_appendf(t, "      scf.if %%v%d {\n", in_rows);
  }
  int row_value[17];
  for (int i = 0; i < ins; i++)
    if (!s->full[i])
      row_value[i] = stc_kt_def(g, "memref.load %%%s[%%v%d] : %s", x[i], row, row1);
  int neutral = stc_kt_def(g, "arith.constant %s : f32", s->neutral);
  int len = stc_kt_index(g, s->len);
  int loop = g->next++;
  stc_text_appendf(t, "      %%v%d = scf.for %%j = %%v%d to %%v%d step %%v%d iter_args(%%acc = %%v%d) -> (f32) {\n",
                   loop, start, len, step, neutral);
  int elem[17];
  if (k->vector == 4)
    for (int i = 0; i < ins; i++)
      if (s->full[i])
        elem[i] = stc_kt_def(g, "vector.load %%%s[%%v%d, %%j] {alignment = 16} : %s, vector<4xf32>",
                      x[i], row, row2);
  int acc = -1;
  for (int e = 0; e < k->vector; e++) {
    int args[17];
    for (int i = 0; i < ins; i++)
      args[i] = !s->full[i]     ? row_value[i]
                : k->vector == 1 ? stc_kt_def(g, "memref.load %%%s[%%v%d, %%j] : %s", x[i], row, row2)
                                 : stc_kt_def(g, "vector.extract %%v%d[%d] : f32 from vector<4xf32>",
                                       elem[i], e);
    int m = g->next++;
    stc_text_appendf(t, "      %%v%d = \"builtin.unrealized_conversion_cast\"(", m);
    for (int i = 0; i < ins; i++)
      stc_text_appendf(t, "%s%%v%d", i ? ", " : "", args[i]);
    stc_text_appendf(t, ") {stc.red_map} : (");
    for (int i = 0; i < ins; i++)
      stc_text_appendf(t, "%sf32", i ? ", " : "");
    stc_text_appendf(t, ") -> f32\n");
    if (acc < 0)
      acc = stc_kt_def(g, "arith.%s %%v%d, %%acc : f32", s->combine, m);
    else
      acc = stc_kt_def(g, "arith.%s %%v%d, %%v%d : f32", s->combine, m, acc);
  }
  stc_text_appendf(t, "      scf.yield %%v%d : f32\n      }\n", acc);
  int total = butterfly(g, s, loop);
  int lane0 = stc_kt_def(g, "arith.cmpi eq, %%v%d, %%v%d : index", lane, c0);
  if (k->block) {
    /* Warp totals through shared memory; warp 0 combines them. */
    stc_text_appendf(t, "      scf.if %%v%d {\n      memref.store %%v%d, %%sm[%%v%d] : memref<8xf32, #gpu.address_space<workgroup>>\n      }\n      gpu.barrier\n",
                     lane0, total, warp);
    int warp0 = stc_kt_def(g, "arith.cmpi eq, %%v%d, %%v%d : index", warp, c0);
    stc_text_appendf(t, "      scf.if %%v%d {\n", warp0);
    int idx = stc_kt_bin(g, "minui", lane, stc_kt_index(g, 7));
    int v = stc_kt_def(g, "memref.load %%sm[%%v%d] : memref<8xf32, #gpu.address_space<workgroup>>", idx);
    int real = stc_kt_def(g, "arith.cmpi ult, %%v%d, %%v%d : index", lane, stc_kt_index(g, 8));
    int part = stc_kt_def(g, "arith.select %%v%d, %%v%d, %%v%d : f32", real, v, neutral);
    total = butterfly(g, s, part);
  }
  stc_text_appendf(t, "      scf.if %%v%d {\n", lane0);
  int old = stc_kt_def(g, "memref.load %%%s[%%v%d] : %s", x[ins], row, row1);
  int sum = stc_kt_def(g, "arith.%s %%v%d, %%v%d : f32", s->combine, total, old);
  stc_text_appendf(t, "      memref.store %%v%d, %%%s[%%v%d] : %s\n      }\n", sum, x[ins], row,
                   row1);
  if (k->block)
    stc_text_appendf(t, "      }\n");
  else
    stc_text_appendf(t, "      }\n");
  stc_text_appendf(t, "      gpu.terminator\n    }\n    return\n  }\n}\n");
  return !t->out_of_memory;
}

/* ---- replacing the op --------------------------------------------------- */

typedef struct op_vec {
  MlirOperation items[256];
  size_t count;
} op_vec;

static MlirWalkResult collect_placeholders(MlirOperation op, void *user) {
  op_vec *v = user;
  if (stc__op_is(op, "builtin.unrealized_conversion_cast") &&
      !mlirAttributeIsNull(mlirOperationGetAttributeByName(op, stc__str("stc.red_map")))) {
    if (v->count == sizeof v->items / sizeof *v->items)
      return MlirWalkResultInterrupt;
    v->items[v->count++] = op;
  }
  return MlirWalkResultAdvance;
}

/* Replaces a placeholder by a copy of the generic's per-element function
 * (its body without the combiner and the yield), the placeholder's
 * operands standing for the body's input arguments. */
static void expand_placeholder(MlirOperation generic, const row_shape *s, MlirOperation ph) {
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(generic, 0));
  MlirBlock at = mlirOperationGetBlock(ph);
  MlirOperation from[MAX_BODY], to[MAX_BODY];
  int count = 0;
  /* The mapped value: the combiner's operand that is not the accumulator. */
  MlirValue acc = mlirBlockGetArgument(body, s->inputs);
  MlirValue mapped = mlirOperationGetOperand(s->combiner, 0);
  if (mlirValueEqual(mapped, acc))
    mapped = mlirOperationGetOperand(s->combiner, 1);
  for (MlirOperation o = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o)) {
    if (mlirOperationEqual(o, s->combiner) || stc__op_is(o, "linalg.yield"))
      continue;
    MlirOperation c = mlirOperationClone(o);
    for (intptr_t i = 0; i < mlirOperationGetNumOperands(c); i++) {
      MlirValue v = mlirOperationGetOperand(c, i);
      if (mlirValueIsABlockArgument(v) && mlirBlockEqual(mlirBlockArgumentGetOwner(v), body))
        mlirOperationSetOperand(
            c, i, mlirOperationGetOperand(ph, mlirBlockArgumentGetArgNumber(v)));
      else if (mlirValueIsAOpResult(v))
        for (int k = 0; k < count; k++)
          if (mlirOperationEqual(mlirOpResultGetOwner(v), from[k]))
            mlirOperationSetOperand(c, i,
                                    mlirOperationGetResult(to[k], mlirOpResultGetResultNumber(v)));
    }
    mlirBlockInsertOwnedOperationBefore(at, ph, c);
    from[count] = o, to[count] = c, count++;
  }
  MlirValue value = mapped;
  if (mlirValueIsABlockArgument(mapped) && mlirBlockEqual(mlirBlockArgumentGetOwner(mapped), body))
    value = mlirOperationGetOperand(ph, mlirBlockArgumentGetArgNumber(mapped));
  else if (mlirValueIsAOpResult(mapped))
    for (int k = 0; k < count; k++)
      if (mlirOperationEqual(mlirOpResultGetOwner(mapped), from[k]))
        value = mlirOperationGetResult(to[k], mlirOpResultGetResultNumber(mapped));
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(ph, 0), value);
  mlirOperationDestroy(ph);
}

typedef struct find_op {
  const char *name;
  MlirOperation found[64];
  size_t count;
} find_op;

static MlirWalkResult find_ops(MlirOperation op, void *user) {
  find_op *f = user;
  if (stc__op_is(op, f->name) && f->count < 64)
    f->found[f->count++] = op;
  return MlirWalkResultAdvance;
}

int stc_gpu_kernel_replace(MlirOperation func) {
  MlirAttribute mark = mlirOperationGetAttributeByName(func, stc__str("stc.gpu_kernel"));
  if (mlirAttributeIsNull(mark))
    return 0;
  MlirContext ctx = mlirOperationGetContext(func);
  char name[96] = "";
  if (mlirAttributeIsAString(mark)) {
    MlirStringRef v = mlirStringAttrGetValue(mark);
    snprintf(name, sizeof name, "%.*s", (int)v.length, v.data);
  }
  stc_gpu_kernel k;
  if (!kernel_of_name(name, &k)) {
    mlirEmitError(mlirOperationGetLocation(func),
                  "internal error: stc.gpu_kernel names no generated kernel");
    return -1;
  }
  mlirOperationRemoveAttributeByName(func, stc__str("stc.gpu_kernel"));
  find_op f = {k.kind == STC_GPU_KERNEL_CONV ? "linalg.conv_2d_nhwc_hwcf" : "linalg.generic",
               {{NULL}}, 0};
  mlirOperationWalk(func, find_ops, &f, MlirWalkPreOrder);
  for (size_t i = 0; i < f.count; i++) {
    MlirOperation op = f.found[i];
    char why[256], message[512];
    conv_shape cs;
    row_shape rs;
    bool ok = k.kind == STC_GPU_KERNEL_CONV ? conv_accepts(op, &k, true, &cs, why, sizeof why)
                                            : rows_accept(op, &k, true, &rs, why, sizeof why);
    if (!ok) {
      /* Accepted on tensors, not on these buffers: still correct (the
       * default kernel), but say so. */
      snprintf(message, sizeof message, "%s: %s: the default kernel", name, why);
      stc__pass_remark(ctx, op, message);
      continue;
    }
    stc_text text = {0};
    bool written = k.kind == STC_GPU_KERNEL_CONV ? conv_text(&k, &cs, &text)
                                                 : rows_text(op, &k, &rs, &text);
    MlirModule kernel = written ? mlirModuleCreateParse(ctx, stc__str(text.data))
                                : (MlirModule){NULL};
    stc_text_free(&text);
    if (mlirModuleIsNull(kernel)) {
      snprintf(message, sizeof message, "internal error: the %s kernel does not parse", name);
      mlirEmitError(mlirOperationGetLocation(op), message);
      return -1;
    }
    stc_kt_inline_before(kernel, op, mlirOperationGetNumOperands(op));
    if (k.kind == STC_GPU_KERNEL_ROWS) {
      op_vec *v = calloc(1, sizeof *v);
      if (!v) {
        mlirEmitError(mlirOperationGetLocation(op), "out of memory");
        return -1;
      }
      mlirOperationWalk(func, collect_placeholders, v, MlirWalkPreOrder);
      for (size_t p = 0; p < v->count; p++)
        expand_placeholder(op, &rs, v->items[p]);
      free(v);
    }
    mlirOperationDestroy(op);
  }
  return 1;
}
