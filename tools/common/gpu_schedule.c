/* gpu_schedule.c - register-tiled GPU schedules for matmul and
 * batch_matmul under --target=cuda (--gpu-schedule=BMxBN/TMxTN/kBK[/shared]),
 * in two passes around bufferization.
 *
 * stc-gpu-schedule (before bufferization, on tensors): each static-shaped
 * linalg.matmul / linalg.batch_matmul gets a transform script that
 *   - tiles the output to BM x BN block tiles (scf.forall mapped to
 *     #gpu.block<y, x>; batch_matmul: batch on #gpu.block<z>),
 *   - splits a block tile over (BM/TM) x (BN/TN) threads (scf.forall with
 *     num_threads, mapped to #gpu.thread<y, x>): each thread owns a TM x TN
 *     register tile (partial tiles at the edges get smaller ones),
 *   - tiles the reduction by BK (scf.for) and vectorizes each thread's
 *     TM x TN x BK step with masks (any shape), lowered to FMAs,
 *   - hoists the C tile's read and write out of the k loop
 *     (transform.loop.hoist_loop_invariant_subsets): the accumulators stay in
 *     registers for the whole reduction, C is read and written once.
 *   The enclosing function gets stc.gpu_tiles = [BM, BN, TM, TN, BK, shared,
 *   split, tf32] (read back by stc-gpu-map-forall) and stc.gpu_schedule (its
 *   name).
 * stc-gpu-map-forall (after bufferization): in each function carrying
 *   stc.gpu_tiles, the block forall becomes a gpu.launch
 *   (transform.gpu.map_forall_to_blocks generate_gpu_launch) and the thread
 *   forall its threads (map_nested_forall_to_threads); gpu-kernel-outlining
 *   then outlines it like the default kernels.
 *
 * Only ops whose M, N and K are multiples of BM, BN and BK are scheduled
 * (a remark says so for the others, which keep the default kernel): partial
 * tiles would give threads dynamically sized register tiles, which
 * bufferization turns into allocations inside the kernel. Operands are read
 * straight from global memory (L1/L2 serve the reuse across threads).
 *
 * /shared (linalg.matmul, f32): stage A only marks the function; after
 * bufferization each linalg.matmul on plain static f32 buffers whose N and K
 * the tiles divide (any M) is replaced by a generated kernel, written as
 * MLIR text (shared_kernel_text) and parsed: one gpu.launch of
 * (N/BN, ceil(M/BM)) blocks of (BM/TM)(BN/TN) threads, the A and B k-tiles
 * double-buffered in dynamic shared memory (A transposed and padded),
 * copied with 128-bit loads one k step ahead, TM x TN accumulators as
 * loop-carried vectors from 0 (C read, added to and written once, after
 * the k loop), 128-bit fragment loads from shared memory, one barrier per
 * k step.
 * This form was not reached with transform ops: tiling threads
 * outside the k loop leaves no place for the block's cooperative copies,
 * and tiling them inside keeps C in memory across the barriers.
 * The 128-bit global accesses assume 16-byte aligned buffers (every device
 * allocation is; an identity-layout memref has offset 0).
 *
 * /tf32 (BMxBN/WMxWN/kBK/tf32, only with --gpu-tf32=on): placed like /shared
 * (shared is set too), but the generated kernel is gpu_mma_kernel.c's TF32
 * tensor-core one (WMxWN: a warp's tile).
 *
 * Without --gpu-schedule nothing changes (the default one-thread-per-element
 * kernels).
 *
 * A schedule that does not apply (the interpreter fails, the result does not
 * verify) is an error at the op, never a crash. */
#include "tune_pipeline_cuda.h"

#include "stc_passes.h"
#include "kernel_text.h"
#include "transform_apply.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/GPU.h>
#include <mlir-c/Dialect/Linalg.h>
#include <mlir-c/Dialect/LLVM.h>
#include <mlir-c/Dialect/MemRef.h>
#include <mlir-c/Dialect/NVVM.h>
#include <mlir-c/Dialect/SCF.h>
#include <mlir-c/Dialect/Transform.h>
#include <mlir-c/Dialect/Vector.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEQUENCE "stc_gpu_schedule"

/* The largest of 4, 2, 1 that divides `extent` and splits `elements` into
 * pieces that `threads` threads share evenly; 0 when none does. */
static int copy_width(int extent, int elements, int threads) {
  for (int v = 4; v >= 1; v /= 2)
    if (extent % v == 0 && (elements / v) % threads == 0 && elements / v >= threads)
      return v;
  return 0;
}

/* The largest of 4, 2, 1 that divides n. */
static int vector_width(int n) { return n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1; }

/* Geometry of a /shared kernel; false with a reason when the tiles do not
 * allow one. */
typedef struct shared_geometry {
  int tx, ty, threads; /* threads per block: tx along N, ty along M */
  int vm, vn;          /* shared-memory fragment loads: A (along M), B (along N) */
  int va, vb;          /* global-memory copy widths: A (along K), B (along N) */
  int pa, pb;          /* copies per thread and k step */
  int bmp;             /* padded row of the transposed A tile */
  long b_offset;       /* of the B buffers in the workgroup memory, in bytes */
  long bytes;          /* workgroup memory (two buffers of each tile) */
} shared_geometry;

static bool shared_geometry_of(const stc_gpu_schedule *s, shared_geometry *g,
                               long max_bytes, char *why, size_t why_size) {
  g->ty = s->bm / s->tm, g->tx = s->bn / s->tn, g->threads = g->tx * g->ty;
  g->vm = vector_width(s->tm), g->vn = vector_width(s->tn);
  g->va = copy_width(s->bk, s->bm * s->bk, g->threads);
  g->vb = copy_width(s->bn, s->bk * s->bn, g->threads);
  g->bmp = s->bm + 4;
  g->b_offset = (2L * s->bk * g->bmp * 4 + 15) / 16 * 16;
  g->bytes = g->b_offset + 2L * s->bk * s->bn * 4;
  if (!g->va || !g->vb) {
    snprintf(why, why_size,
             "/shared: the %d threads must share the %dx%d A tile and the %dx%d B "
             "tile evenly", g->threads, s->bm, s->bk, s->bk, s->bn);
    return false;
  }
  g->pa = s->bm * s->bk / g->va / g->threads;
  g->pb = s->bk * s->bn / g->vb / g->threads;
  if (g->bytes > max_bytes) {
    snprintf(why, why_size, "/shared: %ld bytes of shared memory (at most %ld KiB%s)",
             g->bytes, max_bytes / 1024,
             max_bytes > 48 * 1024 ? " for a site variant" : "");
    return false;
  }
  return true;
}


/* A spec whose /shared kernel needs at most max_shared bytes. */
static bool parse_spec(const char *text, stc_gpu_schedule *out, long max_shared,
                       char *why, size_t why_size) {
  stc_gpu_schedule s = {0};
  int used = -1;
  int split_used = -1;
  if (text && sscanf(text, "%dx%d/%dx%d/k%d%n", &s.bm, &s.bn, &s.tm, &s.tn, &s.bk, &used) == 5 &&
      used >= 0 && strcmp(text + used, "/tf32") == 0) {
    /* The TF32 tensor-core kernel: tm x tn is a warp's tile. */
    s.shared = s.tf32 = true;
    if (s.bm <= 0 || s.bn <= 0 || s.tm <= 0 || s.tn <= 0 || s.bk <= 0 || s.bm > 1024 ||
        s.bn > 1024 || s.bk > 256) {
      snprintf(why, why_size, "sizes must be positive (block tiles and k at most "
                              "1024 and 256)");
      return false;
    }
    if (!stc_gpu_mma_check(&s, why, why_size))
      return false;
    *out = s;
    return true;
  }
  used = -1;
  if (!text || sscanf(text, "%dx%d/%dx%d/k%d%n", &s.bm, &s.bn, &s.tm, &s.tn, &s.bk,
                      &used) != 5 || used < 0 ||
      (text[used] && strncmp(text + used, "/shared", 7) != 0) ||
      (text[used] && text[used + 7] &&
       (sscanf(text + used + 7, "/split%d%n", &s.split, &split_used) != 1 ||
        split_used < 0 || text[used + 7 + split_used]))) {
    snprintf(why, why_size,
             "expected BMxBN/TMxTN/kBK[/shared[/splitS]], e.g. 64x64/4x4/k8");
    return false;
  }
  s.shared = text[used] != 0;
  if (split_used >= 0 && (s.split < 2 || s.split > 64)) {
    snprintf(why, why_size, "/split%d: the split must be 2 to 64", s.split);
    return false;
  }
  if (s.bm <= 0 || s.bn <= 0 || s.tm <= 0 || s.tn <= 0 || s.bk <= 0 ||
      s.bm > 1024 || s.bn > 1024 || s.bk > 256) {
    snprintf(why, why_size, "sizes must be positive (block tiles and k at most "
                            "1024 and 256)");
    return false;
  }
  if (s.bm % s.tm || s.bn % s.tn) {
    snprintf(why, why_size, "the thread tile %dx%d must divide the block tile %dx%d",
             s.tm, s.tn, s.bm, s.bn);
    return false;
  }
  if (s.tm * s.tn > 256) {
    snprintf(why, why_size, "a %dx%d thread tile needs more than 256 accumulator "
                            "registers", s.tm, s.tn);
    return false;
  }
  if ((s.bm / s.tm) * (s.bn / s.tn) > 1024) {
    snprintf(why, why_size, "%d threads per block (at most 1024)",
             (s.bm / s.tm) * (s.bn / s.tn));
    return false;
  }
  shared_geometry geo;
  if (s.shared && !shared_geometry_of(&s, &geo, max_shared, why, why_size))
    return false;
  *out = s;
  return true;
}

bool stc_gpu_schedule_parse(const char *text, stc_gpu_schedule *out, char *why,
                            size_t why_size) {
  return parse_spec(text, out, 48 * 1024, why, why_size);
}

bool stc_gpu_schedule_parse_site(const char *text, stc_gpu_schedule *out, char *why,
                                 size_t why_size) {
  return parse_spec(text, out, STC_GPU_SITE_MAX_SHARED, why, why_size);
}

void stc_gpu_schedule_name(const stc_gpu_schedule *s, char *out, size_t size) {
  char split[24] = "";
  if (s->tf32) {
    snprintf(out, size, "gpu_b%dx%d_w%dx%d_k%d_tf32", s->bm, s->bn, s->tm, s->tn, s->bk);
    return;
  }
  if (s->split > 1)
    snprintf(split, sizeof split, "_split%d", s->split);
  snprintf(out, size, "gpu_b%dx%d_t%dx%d_k%d%s%s", s->bm, s->bn, s->tm, s->tn, s->bk,
           s->shared ? "_shared" : "", split);
}

/* ---- stage A: tiling and vectorization on tensors --------------------- */

/* The op's M, N, K (batch_matmul: of each batch). */
static void op_sizes(MlirOperation op, bool batch, int64_t *m, int64_t *n, int64_t *k) {
  MlirType a = mlirValueGetType(mlirOperationGetOperand(op, 0));
  MlirType b = mlirValueGetType(mlirOperationGetOperand(op, 1));
  intptr_t o = batch ? 1 : 0;
  *m = mlirShapedTypeGetDimSize(a, o);
  *k = mlirShapedTypeGetDimSize(a, o + 1);
  *n = mlirShapedTypeGetDimSize(b, o + 1);
}

/* linalg.matmul / batch_matmul with the default indexing maps (no
 * transposed or broadcast operands). */
static bool default_maps(MlirOperation op, bool *batch) {
  *batch = stc__op_is(op, "linalg.batch_matmul");
  if (!*batch && !stc__op_is(op, "linalg.matmul"))
    return false;
  MlirAttribute maps = mlirOperationGetAttributeByName(op, stc__str("indexing_maps"));
  if (!mlirAttributeIsNull(maps)) {
    MlirAttribute want = mlirAttributeParseGet(
        mlirOperationGetContext(op),
        stc__str(*batch ? "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, "
                          "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
                          "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]"
                        : "[affine_map<(d0, d1, d2) -> (d0, d2)>, "
                          "affine_map<(d0, d1, d2) -> (d2, d1)>, "
                          "affine_map<(d0, d1, d2) -> (d0, d1)>]"));
    if (mlirAttributeIsNull(want) || !mlirAttributeEqual(maps, want))
      return false;
  }
  return true;
}

static bool is_scheduled_op(MlirOperation op, bool *batch) {
  if (!default_maps(op, batch))
    return false;
  /* Static tensors. */
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
    MlirType t = mlirValueGetType(mlirOperationGetOperand(op, i));
    if (!mlirTypeIsARankedTensor(t) || !mlirShapedTypeHasStaticShape(t))
      return false;
  }
  return mlirOperationGetNumResults(op) == 1;
}

/* Every operand's element type is f32. */
static bool shared_f32(MlirOperation op) {
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++)
    if (!mlirTypeIsAF32(mlirShapedTypeGetElementType(
            mlirValueGetType(mlirOperationGetOperand(op, i)))))
      return false;
  return true;
}

typedef struct op_list {
  MlirOperation *ops;
  size_t count, capacity;
  bool out_of_memory;
} op_list;

/* Appends op; interrupts the walk when out of memory. */
static MlirWalkResult op_list_push(op_list *list, MlirOperation op) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? 2 * list->capacity : 16;
    MlirOperation *grown = realloc(list->ops, capacity * sizeof *grown);
    if (!grown) {
      list->out_of_memory = true;
      return MlirWalkResultInterrupt;
    }
    list->ops = grown, list->capacity = capacity;
  }
  list->ops[list->count++] = op;
  return MlirWalkResultAdvance;
}

static MlirWalkResult collect(MlirOperation op, void *user) {
  op_list *list = user;
  bool batch;
  if (stc__op_is(op, "gpu.module"))
    return MlirWalkResultSkip;
  if (!is_scheduled_op(op, &batch))
    return MlirWalkResultAdvance;
  return op_list_push(list, op);
}

static void stage_a_script(const stc_gpu_schedule *s, bool batch, stc_text *t) {
  int ty = s->bm / s->tm, tx = s->bn / s->tn;
  stc_text_appendf(
      t,
      "module attributes {transform.with_named_sequence} {\n"
      "  transform.named_sequence @" SEQUENCE "(%%op: !transform.any_op {transform.consumed}) {\n"
      "    %%func = transform.get_parent_op %%op {isolated_from_above} : (!transform.any_op) -> !transform.any_op\n");
  if (batch)
    stc_text_appendf(
        t,
        "    %%t1, %%f1 = transform.structured.tile_using_forall %%op tile_sizes [1, %d, %d] "
        "(mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
        "    %%t2, %%f2 = transform.structured.tile_using_forall %%t1 num_threads [1, %d, %d] "
        "(mapping = [#gpu.thread<z>, #gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
        "    %%t3, %%l3 = transform.structured.tile_using_for %%t2 tile_sizes [0, 0, 0, %d] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
        "    transform.structured.vectorize %%t3 vector_sizes [1, %d, %d, %d] : !transform.any_op\n",
        s->bm, s->bn, ty, tx, s->bk, s->tm, s->tn, s->bk);
  else
    stc_text_appendf(
        t,
        "    %%t1, %%f1 = transform.structured.tile_using_forall %%op tile_sizes [%d, %d] "
        "(mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
        "    %%t2, %%f2 = transform.structured.tile_using_forall %%t1 num_threads [%d, %d] "
        "(mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
        "    %%t3, %%l3 = transform.structured.tile_using_for %%t2 tile_sizes [0, 0, %d] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
        "    transform.structured.vectorize %%t3 vector_sizes [%d, %d, %d] : !transform.any_op\n",
        s->bm, s->bn, ty, tx, s->bk, s->tm, s->tn, s->bk);
  stc_text_appendf(
      t,
      "    transform.apply_patterns to %%func {\n"
      "      transform.apply_patterns.vector.lower_masked_transfers\n"
      "    } : !transform.any_op\n"
      "    transform.apply_patterns to %%func {\n"
      "      transform.apply_patterns.vector.reduction_to_contract\n"
      "      transform.apply_patterns.vector.transfer_permutation_patterns\n"
      "      transform.apply_patterns.canonicalization\n"
      "    } : !transform.any_op\n"
      "    transform.apply_patterns to %%func {\n"
      "      transform.apply_patterns.vector.lower_contraction lowering_strategy = \"outerproduct\"\n"
      "      transform.apply_patterns.vector.lower_outerproduct\n"
      "      transform.apply_patterns.canonicalization\n"
      "    } : !transform.any_op\n"
      "    %%loops = transform.structured.match ops{[\"scf.for\"]} in %%func : (!transform.any_op) -> !transform.any_op\n"
      "    transform.loop.hoist_loop_invariant_subsets %%loops : !transform.any_op\n"
      "    transform.yield\n"
      "  }\n"
      "}\n");
}

/* Parses and verifies `text`; the sequence in *entry. Null on failure (the
 * scripts are generated: a failure here is a bug, reported as such). */
static MlirOperation parse_script(MlirContext ctx, const char *text, MlirOperation *entry) {
  stc_diag_capture capture;
  MlirDiagnosticHandlerID handler = stc__capture_begin(ctx, &capture);
  MlirOperation module = mlirOperationCreateParse(ctx, stc__str(text),
                                                  stc__str("stc-gpu-schedule-script"));
  *entry = (MlirOperation){NULL};
  if (!mlirOperationIsNull(module) && mlirOperationVerify(module))
    *entry = stc__find_sequence(module, SEQUENCE);
  stc__capture_end(ctx, handler);
  stc_text_free(&capture.message);
  if (!mlirOperationIsNull(module) && mlirOperationIsNull(*entry)) {
    mlirOperationDestroy(module);
    module = (MlirOperation){NULL};
  }
  return module;
}

/* Applies the sequence to `target`; on failure emits an error at `at` with
 * the interpreter's first message. */
static bool apply(MlirOperation target, MlirOperation entry, MlirOperation script,
                  MlirOperation root, MlirLocation at, const char *what) {
  MlirContext ctx = mlirOperationGetContext(root);
  stc_diag_capture capture;
  MlirDiagnosticHandlerID handler = stc__capture_begin(ctx, &capture);
  bool ok = stc__apply_sequence(target, entry, script) && mlirOperationVerify(root);
  stc__capture_end(ctx, handler);
  if (!ok) {
    char message[1024];
    snprintf(message, sizeof message, "%s failed: %s", what, stc__capture_text(&capture));
    mlirEmitError(at, message);
  }
  stc_text_free(&capture.message);
  return ok;
}

static void run_schedule(MlirOperation module, MlirExternalPass pass, void *user) {
  const stc_gpu_schedule *s = user;
  MlirContext ctx = mlirOperationGetContext(module);
  op_list list = {0};
  mlirOperationWalk(module, collect, &list, MlirWalkPreOrder);
  if (list.out_of_memory) {
    mlirEmitError(mlirOperationGetLocation(module), "out of memory");
    mlirExternalPassSignalFailure(pass);
    free(list.ops);
    return;
  }
  char name[96], dims[96], what[160];
  stc_gpu_schedule_name(s, name, sizeof name);
  snprintf(dims, sizeof dims, "array<i64: %d, %d, %d, %d, %d, %d, %d, %d>", s->bm, s->bn,
           s->tm, s->tn, s->bk, s->shared, s->split > 1 ? s->split : 1, s->tf32);
  int64_t k_step = (int64_t)s->bk * (s->split > 1 ? s->split : 1);
  snprintf(what, sizeof what, "--gpu-schedule %s", name);
  MlirAttribute dims_attr = mlirAttributeParseGet(ctx, stc__str(dims));
  for (size_t i = 0; i < list.count; i++) {
    MlirOperation op = list.ops[i];
    bool batch;
    is_scheduled_op(op, &batch);
    MlirLocation loc = mlirOperationGetLocation(op);
    /* Whole tiles only: a partial block tile gives threads dynamically
     * sized register tiles, which bufferize to allocations inside the
     * kernel. Such an op keeps the default kernel. */
    int64_t m, n, k;
    op_sizes(op, batch, &m, &n, &k);
    if (batch && s->shared) {
      stc__pass_remark(ctx, op, "--gpu-schedule: /shared is for linalg.matmul only: "
                                "the default kernel");
      continue;
    }
    if (s->shared && !shared_f32(op)) {
      stc__pass_remark(ctx, op, "--gpu-schedule: /shared is for f32 operands only: "
                                "the default kernel");
      continue;
    }
    /* /shared handles a partial last block row (any M). */
    if ((!s->shared && m % s->bm) || n % s->bn || k % k_step) {
      char message[256];
      if (s->shared)
        snprintf(message, sizeof message,
                 "--gpu-schedule %s: N=%lld, K=%lld are not multiples of %d, %lld: the "
                 "default kernel",
                 name, (long long)n, (long long)k, s->bn, (long long)k_step);
      else
        snprintf(message, sizeof message,
                 "--gpu-schedule %s: M=%lld, N=%lld, K=%lld are not multiples of "
                 "%d, %d, %d: the default kernel",
                 name, (long long)m, (long long)n, (long long)k, s->bm, s->bn, s->bk);
      stc__pass_remark(ctx, op, message);
      continue;
    }
    MlirOperation func = mlirOperationGetParentOperation(op);
    while (!mlirOperationIsNull(func) && !stc__op_is(func, "func.func"))
      func = mlirOperationGetParentOperation(func);
    if (mlirOperationIsNull(func)) {
      mlirEmitError(loc, "--gpu-schedule: a matmul outside a func.func");
      mlirExternalPassSignalFailure(pass);
      break;
    }
    if (s->shared) {
      /* Marked only: stc-gpu-map-forall replaces every eligible matmul of
       * the function by the generated kernel after bufferization. */
      mlirOperationSetAttributeByName(func, stc__str("stc.gpu_tiles"), dims_attr);
      mlirOperationSetAttributeByName(func, stc__str("stc.gpu_schedule"),
                                      mlirStringAttrGet(ctx, stc__str(name)));
      continue;
    }
    if (!mlirAttributeIsNull(mlirOperationGetAttributeByName(func, stc__str("stc.gpu_tiles")))) {
      /* One launch per function: map_forall_to_blocks maps the unique
       * top-level forall. A second op keeps the default kernel. */
      continue;
    }
    stc_text text = {0};
    stage_a_script(s, batch, &text);
    MlirOperation entry;
    MlirOperation script = text.out_of_memory ? (MlirOperation){NULL}
                                              : parse_script(ctx, text.data, &entry);
    stc_text_free(&text);
    if (mlirOperationIsNull(script)) {
      mlirEmitError(loc, "internal error: the --gpu-schedule script does not parse");
      mlirExternalPassSignalFailure(pass);
      break;
    }
    bool ok = apply(op, entry, script, module, loc, what);
    mlirOperationDestroy(script);
    if (!ok) {
      mlirExternalPassSignalFailure(pass);
      break;
    }
    mlirOperationSetAttributeByName(func, stc__str("stc.gpu_tiles"), dims_attr);
    mlirOperationSetAttributeByName(func, stc__str("stc.gpu_schedule"),
                                    mlirStringAttrGet(ctx, stc__str(name)));
  }
  free(list.ops);
}

static void destroy_schedule(void *state) { free(state); }

static void *copy_schedule(void *state) {
  stc_gpu_schedule *c = malloc(sizeof *c);
  if (c)
    *c = *(stc_gpu_schedule *)state;
  return c;
}

static const stc_pass_spec schedule_spec = {
    "stc-gpu-schedule",
    "--target=cuda --gpu-schedule: block, thread and register tiles for "
    "matmul / batch_matmul (on tensors)",
    "builtin.module", NULL, 0, NULL};

static _Alignas(8) const char schedule_anchor[8];

MlirPass stc_gpu_schedule_pass_create(const stc_gpu_schedule *schedule) {
  MlirDialectHandle dialects[] = {
      mlirGetDialectHandle__func__(),   mlirGetDialectHandle__transform__(),
      mlirGetDialectHandle__linalg__(), mlirGetDialectHandle__scf__(),
      mlirGetDialectHandle__vector__(), mlirGetDialectHandle__gpu__(),
  };
  stc_gpu_schedule *state = malloc(sizeof *state);
  if (!state)
    return (MlirPass){NULL};
  *state = *schedule;
  stc_pass_def def = {&schedule_spec, "StcGpuSchedule", schedule_anchor,
                      dialects, sizeof dialects / sizeof dialects[0],
                      run_schedule, copy_schedule, destroy_schedule};
  return stc__create_pass(&def, state);
}

/* ---- stage B: foralls to gpu.launch ------------------------------------ */

/* ---- /shared: a generated block-cooperative kernel --------------------- */

/* The kernel is written as text and parsed: a private function with the
 * matmul's operands as arguments, whose body (one gpu.launch) replaces the
 * linalg.matmul. Values are %v<N>, numbered in order of definition. */
#define KT_MAX_COPIES 64
#define KT_MAX_ACC 256

typedef struct kernel_indices {
  int tid, row0, col0, mlast;
  int a_row[KT_MAX_COPIES], a_col[KT_MAX_COPIES][4], a_grow[KT_MAX_COPIES];
  int b_row[KT_MAX_COPIES], b_col[KT_MAX_COPIES], b_gcol[KT_MAX_COPIES];
} kernel_indices;

/* Global -> registers: the A and B pieces this thread copies for the k
 * step starting at row/column %v<k0>. Values in va[], vb[]. */
static void kt_tile_loads(stc_kernel_text *g, const shared_geometry *geo, const kernel_indices *x,
                          int64_t m, int64_t n, int64_t k, int k0, int *va, int *vb) {
  for (int p = 0; p < geo->pa; p++) {
    int col = stc_kt_bin(g, "addi", k0, x->a_col[p][0]);
    va[p] = stc_kt_def(g, "vector.load %%A[%%v%d, %%v%d] {alignment = %d} : memref<%lldx%lldxf32>, vector<%dxf32>",
                   x->a_grow[p], col, 4 * geo->va, (long long)m, (long long)k, geo->va);
  }
  for (int p = 0; p < geo->pb; p++) {
    int row = stc_kt_bin(g, "addi", k0, x->b_row[p]);
    vb[p] = stc_kt_def(g, "vector.load %%B[%%v%d, %%v%d] {alignment = %d} : memref<%lldx%lldxf32>, vector<%dxf32>",
                   row, x->b_gcol[p], 4 * geo->vb, (long long)k, (long long)n, geo->vb);
  }
}

/* Registers -> workgroup buffer %v<buf>: A transposed (As[buf][k][m]), B as is. */
static void kt_tile_stores(stc_kernel_text *g, const stc_gpu_schedule *s, const shared_geometry *geo,
                           const kernel_indices *x, int buf, const int *va, const int *vb) {
  for (int p = 0; p < geo->pa; p++)
    for (int j = 0; j < geo->va; j++) {
      int e = stc_kt_def(g, "vector.extract %%v%d[%d] : f32 from vector<%dxf32>", va[p], j, geo->va);
      stc_text_appendf(g->t,
                       "      memref.store %%v%d, %%As[%%v%d, %%v%d, %%v%d] : "
                       "memref<2x%dx%dxf32, #gpu.address_space<workgroup>>\n",
                       e, buf, x->a_col[p][j], x->a_row[p], s->bk, geo->bmp);
    }
  for (int p = 0; p < geo->pb; p++)
    stc_text_appendf(g->t,
                     "      vector.store %%v%d, %%Bs[%%v%d, %%v%d, %%v%d] {alignment = %d} : "
                     "memref<2x%dx%dxf32, #gpu.address_space<workgroup>>, vector<%dxf32>\n",
                     vb[p], buf, x->b_row[p], x->b_col[p], 4 * geo->vb, s->bk, s->bn, geo->vb);
}

/* The whole kernel for C(MxN) += A(MxK) B(KxN). Block (bx, by) computes
 * C[by*BM.., bx*BN..]; thread t = ty*TX + tx owns rows by*BM + ty*TM + i
 * (i < TM) and, in groups of VN, columns bx*BN + g*TX*VN + tx*VN + j
 * (interleaved: a warp's B fragment loads and C accesses are contiguous).
 * Per k step of BK: the next step's A and B pieces are loaded into
 * registers (128-bit where the tiles allow), the current step's TM x TN x
 * BK FMAs run from shared memory (A stored transposed and padded, so each
 * fragment is TM/VM + TN/VN vector loads), the loaded pieces are stored
 * into the other buffer, one barrier. The accumulators are loop-carried
 * vectors starting at 0; C += them after the k loop (loading C first would
 * keep its addresses live across the loop: 128 instead of 172 registers
 * for 128x128/8x8/k8, two blocks per SM instead of one). A rows past M (a
 * partial last block row) are read from row M-1; their C rows are neither
 * read nor written. */
static bool shared_kernel_text(const stc_gpu_schedule *s, const shared_geometry *geo,
                               int64_t m, int64_t n, int64_t k, stc_text *t) {
  int tm = s->tm, vm = geo->vm, vn = geo->vn, gn = s->tn / vn, nacc = tm * gn;
  int split = s->split > 1 ? s->split : 1;
  int64_t k_part = k / split; /* each block z's share of K */
  bool partial = m % s->bm != 0;
  if (geo->pa > KT_MAX_COPIES || geo->pb > KT_MAX_COPIES || nacc > KT_MAX_ACC ||
      tm / vm > 64 || gn > 64)
    return false;
  kernel_indices *x = calloc(1, sizeof *x);
  int *acc = malloc(sizeof(int) * (size_t)nacc * 2), *row = malloc(sizeof(int) * (size_t)tm),
      *col = malloc(sizeof(int) * (size_t)gn);
  if (!x || !acc || !row || !col) {
    free(x), free(acc), free(row), free(col);
    return false;
  }
  int *next_acc = acc + nacc;
  stc_kernel_text gen = {t, 0}, *g = &gen;
  char wa[96], wb[96];
  snprintf(wa, sizeof wa, "memref<2x%dx%dxf32, #gpu.address_space<workgroup>>", s->bk, geo->bmp);
  snprintf(wb, sizeof wb, "memref<2x%dx%dxf32, #gpu.address_space<workgroup>>", s->bk, s->bn);
  stc_text_appendf(
      t,
      "module {\n"
      "  func.func private @stc_gpu_shared_kernel(%%A: memref<%lldx%lldxf32>, "
      "%%B: memref<%lldx%lldxf32>, %%C: memref<%lldx%lldxf32>) {\n"
      "    %%gx = arith.constant %lld : index\n"
      "    %%gy = arith.constant %lld : index\n"
      "    %%gz = arith.constant %d : index\n"
      "    %%one = arith.constant 1 : index\n"
      "    %%nt = arith.constant %d : index\n"
      "    %%smem = arith.constant %ld : i32\n"
      "    gpu.launch blocks(%%bx, %%by, %%bz) in (%%gsx = %%gx, %%gsy = %%gy, %%gsz = %%gz) "
      "threads(%%tid, %%tidy, %%tidz) in (%%bsx = %%nt, %%bsy = %%one, %%bsz = %%one) "
      "dynamic_shared_memory_size %%smem {\n",
      (long long)m, (long long)k, (long long)k, (long long)n, (long long)m, (long long)n,
      (long long)(n / s->bn), (long long)((m + s->bm - 1) / s->bm), split, geo->threads,
      geo->bytes);
  /* Dynamic shared memory: the NVVM lowering aligns it to 16 bytes (static
   * workgroup attributions get their element type's 4), which the 128-bit
   * accesses need. */
  int c0 = stc_kt_index(g, 0), c1 = stc_kt_index(g, 1);
  stc_text_appendf(t,
                   "      %%dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>\n"
                   "      %%As = memref.view %%dyn[%%v%d][] : memref<?xi8, #gpu.address_space<workgroup>> to %s\n",
                   c0, wa);
  int b_offset = stc_kt_index(g, geo->b_offset);
  stc_text_appendf(t,
                   "      %%Bs = memref.view %%dyn[%%v%d][] : memref<?xi8, #gpu.address_space<workgroup>> to %s\n",
                   b_offset, wb);
  x->tid = stc_kt_def(g, "arith.addi %%tid, %%v%d : index", c0);
  int tx = stc_kt_bin_const(g, "remui", x->tid, geo->tx);
  int ty = stc_kt_bin_const(g, "divui", x->tid, geo->tx);
  x->row0 = stc_kt_def(g, "arith.muli %%by, %%v%d : index", stc_kt_index(g, s->bm));
  x->col0 = stc_kt_def(g, "arith.muli %%bx, %%v%d : index", stc_kt_index(g, s->bn));
  x->mlast = stc_kt_index(g, (long)(m - 1));
  int frag_row = stc_kt_bin_const(g, "muli", ty, tm);   /* in the block tile */
  int frag_col = stc_kt_bin_const(g, "muli", tx, vn);
  /* The accumulators start at 0 (C is added after the k loop: its
   * addresses are not live across the loop). */
  int zero = stc_kt_def(g, "arith.constant dense<0.0> : vector<%dxf32>", vn);
  for (int a = 0; a < nacc; a++)
    acc[a] = zero;
  /* Fragment offsets in the shared tiles. */
  int fa[64], fb[64];
  for (int f = 0; f < tm / vm; f++)
    fa[f] = stc_kt_bin_const(g, "addi", frag_row, (long)f * vm);
  for (int c = 0; c < gn; c++)
    fb[c] = stc_kt_bin_const(g, "addi", frag_col, (long)c * geo->tx * vn);
  /* Copy indices (loop-invariant). */
  for (int p = 0; p < geo->pa; p++) {
    int q = stc_kt_bin_const(g, "addi", x->tid, (long)p * geo->threads);
    x->a_row[p] = stc_kt_bin_const(g, "divui", q, s->bk / geo->va);
    int ac = stc_kt_bin_const(g, "remui", q, s->bk / geo->va);
    x->a_col[p][0] = stc_kt_bin_const(g, "muli", ac, geo->va);
    for (int j = 1; j < geo->va; j++)
      x->a_col[p][j] = stc_kt_bin_const(g, "addi", x->a_col[p][0], j);
    int grow = stc_kt_bin(g, "addi", x->row0, x->a_row[p]);
    x->a_grow[p] = partial ? stc_kt_bin(g, "minui", grow, x->mlast) : grow;
  }
  for (int p = 0; p < geo->pb; p++) {
    int q = stc_kt_bin_const(g, "addi", x->tid, (long)p * geo->threads);
    x->b_row[p] = stc_kt_bin_const(g, "divui", q, s->bn / geo->vb);
    int bc = stc_kt_bin_const(g, "remui", q, s->bn / geo->vb);
    x->b_col[p] = stc_kt_bin_const(g, "muli", bc, geo->vb);
    x->b_gcol[p] = stc_kt_bin(g, "addi", x->col0, x->b_col[p]);
  }
  int va[KT_MAX_COPIES], vb[KT_MAX_COPIES];
  /* Prologue: the first k step into buffer 0. */
  int k_base = split > 1 ? stc_kt_def(g, "arith.muli %%bz, %%v%d : index", stc_kt_index(g, (long)k_part))
                         : c0;
  kt_tile_loads(g, geo, x, m, n, k, k_base, va, vb);
  kt_tile_stores(g, s, geo, x, c0, va, vb);
  stc_text_appendf(t, "      gpu.barrier\n");
  int steps = stc_kt_index(g, (long)(k_part / s->bk)),
      last = stc_kt_index(g, (long)(k_part / s->bk - 1));
  int c2 = stc_kt_index(g, 2), cbk = stc_kt_index(g, s->bk);
  /* The k loop. */
  int result = g->next++, kidx = g->next++;
  stc_text_appendf(t, "      %%v%d:%d = scf.for %%v%d = %%v%d to %%v%d step %%v%d iter_args(",
                   result, nacc, kidx, c0, steps, c1);
  for (int a = 0; a < nacc; a++) {
    int arg = g->next++;
    stc_text_appendf(t, "%s%%v%d = %%v%d", a ? ", " : "", arg, acc[a]);
    acc[a] = arg;
  }
  stc_text_appendf(t, ") -> (");
  for (int a = 0; a < nacc; a++)
    stc_text_appendf(t, "%svector<%dxf32>", a ? ", " : "", vn);
  stc_text_appendf(t, ") {\n");
  int cur = stc_kt_bin(g, "remui", kidx, c2);
  int other = stc_kt_bin(g, "subi", c1, cur);
  /* The next step's pieces (the last step loads itself again: harmless,
   * into the buffer nobody reads any more, and branch-free). */
  int following = stc_kt_bin(g, "minui", stc_kt_bin(g, "addi", kidx, c1), last);
  int k0 = stc_kt_bin(g, "addi", k_base, stc_kt_bin(g, "muli", following, cbk));
  kt_tile_loads(g, geo, x, m, n, k, k0, va, vb);
  for (int kk = 0; kk < s->bk; kk++) {
    int ck = stc_kt_index(g, kk);
    int a_frag[64], b_frag[64];
    for (int f = 0; f < tm / vm; f++)
      a_frag[f] = stc_kt_def(g, "vector.load %%As[%%v%d, %%v%d, %%v%d] {alignment = %d} : %s, vector<%dxf32>",
                         cur, ck, fa[f], 4 * vm, wa, vm);
    for (int c = 0; c < gn; c++)
      b_frag[c] = stc_kt_def(g, "vector.load %%Bs[%%v%d, %%v%d, %%v%d] {alignment = %d} : %s, vector<%dxf32>",
                         cur, ck, fb[c], 4 * vn, wb, vn);
    for (int i = 0; i < tm; i++) {
      int e = stc_kt_def(g, "vector.extract %%v%d[%d] : f32 from vector<%dxf32>", a_frag[i / vm],
                     i % vm, vm);
      int splat = stc_kt_def(g, "vector.broadcast %%v%d : f32 to vector<%dxf32>", e, vn);
      for (int c = 0; c < gn; c++)
        next_acc[i * gn + c] = stc_kt_def(g, "vector.fma %%v%d, %%v%d, %%v%d : vector<%dxf32>", splat,
                                      b_frag[c], acc[i * gn + c], vn);
    }
    memcpy(acc, next_acc, sizeof(int) * (size_t)nacc);
  }
  kt_tile_stores(g, s, geo, x, other, va, vb);
  stc_text_appendf(t, "      gpu.barrier\n      scf.yield ");
  for (int a = 0; a < nacc; a++)
    stc_text_appendf(t, "%s%%v%d", a ? ", " : "", acc[a]);
  stc_text_appendf(t, " : ");
  for (int a = 0; a < nacc; a++)
    stc_text_appendf(t, "%svector<%dxf32>", a ? ", " : "", vn);
  stc_text_appendf(t, "\n      }\n");
  /* C += the accumulators. */
  int row_base = stc_kt_bin(g, "addi", x->row0, frag_row);
  int col_base = stc_kt_bin(g, "addi", x->col0, frag_col);
  for (int c = 0; c < gn; c++)
    col[c] = stc_kt_bin_const(g, "addi", col_base, (long)c * geo->tx * vn);
  int cm = partial ? stc_kt_index(g, (long)m) : -1;
  for (int i = 0; i < tm; i++) {
    row[i] = stc_kt_bin_const(g, "addi", row_base, i);
    if (partial) {
      int inside = stc_kt_def(g, "arith.cmpi ult, %%v%d, %%v%d : index", row[i], cm);
      stc_text_appendf(t, "      scf.if %%v%d {\n", inside);
    }
    for (int c = 0; c < gn && split > 1; c++)
      for (int j = 0; j < vn; j++) {
        /* Split K: the blocks of one tile add their partial sums. */
        int e = stc_kt_def(g, "vector.extract %%v%d#%d[%d] : f32 from vector<%dxf32>", result,
                       i * gn + c, j, vn);
        int cj = stc_kt_bin_const(g, "addi", col[c], j);
        stc_kt_def(g, "memref.atomic_rmw addf %%v%d, %%C[%%v%d, %%v%d] : (f32, memref<%lldx%lldxf32>) -> f32",
               e, row[i], cj, (long long)m, (long long)n);
      }
    for (int c = 0; c < gn && split == 1; c++) {
      int old_c = stc_kt_def(g, "vector.load %%C[%%v%d, %%v%d] {alignment = %d} : memref<%lldx%lldxf32>, vector<%dxf32>",
                         row[i], col[c], 4 * vn, (long long)m, (long long)n, vn);
      int sum = stc_kt_def(g, "arith.addf %%v%d, %%v%d#%d : vector<%dxf32>", old_c, result,
                       i * gn + c, vn);
      stc_text_appendf(t,
                       "      vector.store %%v%d, %%C[%%v%d, %%v%d] {alignment = %d} : "
                       "memref<%lldx%lldxf32>, vector<%dxf32>\n",
                       sum, row[i], col[c], 4 * vn, (long long)m, (long long)n, vn);
    }
    if (partial)
      stc_text_appendf(t, "      }\n");
  }
  stc_text_appendf(t, "      gpu.terminator\n    }\n    return\n  }\n}\n");
  free(x), free(acc), free(row), free(col);
  return !t->out_of_memory;
}
/* A static f32 memref with the identity layout in the default memory space
 * (what bufferization gives function arguments and allocations). */
static bool plain_f32_memref(MlirType t) {
  if (!mlirTypeIsAMemRef(t) || !mlirShapedTypeHasStaticShape(t) ||
      !mlirTypeIsAF32(mlirShapedTypeGetElementType(t)) ||
      !mlirAttributeIsNull(mlirMemRefTypeGetMemorySpace(t)))
    return false;
  MlirAttribute layout = mlirMemRefTypeGetLayout(t);
  return mlirAttributeIsNull(layout) ||
         (mlirAttributeIsAAffineMap(layout) &&
          mlirAffineMapIsIdentity(mlirAffineMapAttrGetValue(layout)));
}

static MlirWalkResult collect_memref_matmul(MlirOperation op, void *user) {
  op_list *list = user;
  if (!stc__op_is(op, "linalg.matmul"))
    return MlirWalkResultAdvance;
  return op_list_push(list, op);
}

/* /shared after bufferization: each linalg.matmul of `func` on plain
 * memrefs whose N and K the tiles divide becomes the generated kernel's
 * gpu.launch (any M: a partial last block row). Others keep the default
 * kernel, with a remark. False after an error. */
static bool replace_with_shared_kernels(MlirOperation func, const stc_gpu_schedule *s) {
  MlirContext ctx = mlirOperationGetContext(func);
  char why[256];
  shared_geometry geo;
  if (s->tf32 ? !stc_gpu_mma_check(s, why, sizeof why)
              : !shared_geometry_of(s, &geo, STC_GPU_SITE_MAX_SHARED, why, sizeof why)) {
    mlirEmitError(mlirOperationGetLocation(func), why);
    return false;
  }
  op_list list = {0};
  mlirOperationWalk(func, collect_memref_matmul, &list, MlirWalkPreOrder);
  bool ok = !list.out_of_memory;
  for (size_t i = 0; ok && i < list.count; i++) {
    MlirOperation op = list.ops[i];
    bool batch;
    MlirType ta = mlirValueGetType(mlirOperationGetOperand(op, 0));
    MlirType tb = mlirValueGetType(mlirOperationGetOperand(op, 1));
    if (mlirOperationGetNumOperands(op) != 3 || mlirOperationGetNumResults(op) != 0 ||
        !plain_f32_memref(ta) || !plain_f32_memref(tb) ||
        !plain_f32_memref(mlirValueGetType(mlirOperationGetOperand(op, 2))) ||
        !default_maps(op, &batch) || batch) {
      stc__pass_remark(ctx, op, "--gpu-schedule /shared: operands are not plain static f32 "
                                "buffers: the default kernel");
      continue;
    }
    int64_t m = mlirShapedTypeGetDimSize(ta, 0), k = mlirShapedTypeGetDimSize(ta, 1),
            n = mlirShapedTypeGetDimSize(tb, 1);
    if (n % s->bn || k % ((int64_t)s->bk * (s->split > 1 ? s->split : 1)))
      continue; /* stage A said so */
    stc_text text = {0};
    bool written = s->tf32 ? stc_gpu_mma_kernel_text(s, m, n, k, &text)
                           : shared_kernel_text(s, &geo, m, n, k, &text);
    MlirModule kernel = written ? mlirModuleCreateParse(ctx, stc__str(text.data))
                                : (MlirModule){NULL};
    stc_text_free(&text);
    if (mlirModuleIsNull(kernel)) {
      mlirEmitError(mlirOperationGetLocation(op),
                    "internal error: the --gpu-schedule /shared kernel does not parse");
      ok = false;
      break;
    }
    stc_kt_inline_before(kernel, op, 3);
    mlirOperationDestroy(op);
  }
  free(list.ops);
  return ok;
}

static void run_map(MlirOperation module, MlirExternalPass pass, void *user) {
  (void)user;
  MlirContext ctx = mlirOperationGetContext(module);
  MlirRegion body = mlirOperationGetRegion(module, 0);
  for (MlirOperation func = mlirBlockGetFirstOperation(mlirRegionGetFirstBlock(body));
       !mlirOperationIsNull(func); func = mlirOperationGetNextInBlock(func)) {
    /* Convolution and reduction variants (gpu_conv_schedule.c). */
    int replaced = stc_gpu_kernel_replace(func);
    if (replaced < 0) {
      mlirExternalPassSignalFailure(pass);
      return;
    }
    if (replaced)
      continue;
    MlirAttribute tiles = mlirOperationGetAttributeByName(func, stc__str("stc.gpu_tiles"));
    if (mlirAttributeIsNull(tiles) || !mlirAttributeIsADenseI64Array(tiles) ||
        mlirDenseArrayGetNumElements(tiles) < 6)
      continue;
    stc_gpu_schedule s = {(int)mlirDenseI64ArrayGetElement(tiles, 0),
                          (int)mlirDenseI64ArrayGetElement(tiles, 1),
                          (int)mlirDenseI64ArrayGetElement(tiles, 2),
                          (int)mlirDenseI64ArrayGetElement(tiles, 3),
                          (int)mlirDenseI64ArrayGetElement(tiles, 4),
                          mlirDenseI64ArrayGetElement(tiles, 5) != 0,
                          mlirDenseArrayGetNumElements(tiles) > 6
                              ? (int)mlirDenseI64ArrayGetElement(tiles, 6)
                              : 1,
                          mlirDenseArrayGetNumElements(tiles) > 7 &&
                              mlirDenseI64ArrayGetElement(tiles, 7) != 0};
    if (s.shared) {
      if (!replace_with_shared_kernels(func, &s)) {
        mlirExternalPassSignalFailure(pass);
        return;
      }
      mlirOperationRemoveAttributeByName(func, stc__str("stc.gpu_tiles"));
      continue;
    }
    stc_text text = {0};
    stc_text_appendf(
        &text,
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @" SEQUENCE "(%%func: !transform.any_op {transform.consumed}) {\n");
    /* Transfers to plain vector loads and stores (convert-gpu-to-nvvm
     * lowers those, in any address space). */
    stc_text_appendf(
        &text,
        "    transform.apply_patterns to %%func {\n"
        "      transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true\n"
        "    } : !transform.any_op\n"
        "    transform.apply_patterns to %%func {\n"
        "      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1\n"
        "      transform.apply_patterns.canonicalization\n"
        "    } : !transform.any_op\n");
    stc_text_appendf(
        &text,
        "    %%launch = transform.gpu.map_forall_to_blocks %%func generate_gpu_launch : (!transform.any_op) -> !transform.any_op\n"
        "    transform.gpu.map_nested_forall_to_threads %%launch block_dims = [%d, %d, 1] : (!transform.any_op) -> !transform.any_op\n"
        "    transform.yield\n"
        "  }\n"
        "}\n",
        s.bn / s.tn, s.bm / s.tm);
    MlirOperation entry;
    MlirOperation script = text.out_of_memory ? (MlirOperation){NULL}
                                              : parse_script(ctx, text.data, &entry);
    stc_text_free(&text);
    MlirLocation loc = mlirOperationGetLocation(func);
    if (mlirOperationIsNull(script)) {
      mlirEmitError(loc, "internal error: the --gpu-schedule mapping script does not parse");
      mlirExternalPassSignalFailure(pass);
      return;
    }
    bool ok = apply(func, entry, script, module, loc,
                    "--gpu-schedule: mapping to blocks and threads");
    mlirOperationDestroy(script);
    if (!ok) {
      mlirExternalPassSignalFailure(pass);
      return;
    }
    mlirOperationRemoveAttributeByName(func, stc__str("stc.gpu_tiles"));
  }
}

static const stc_pass_spec map_spec = {
    "stc-gpu-map-forall",
    "--target=cuda --gpu-schedule: block/thread foralls to gpu.launch (after "
    "bufferization)",
    "builtin.module", NULL, 0, NULL};

static _Alignas(8) const char map_anchor[8];

MlirPass stc_gpu_map_forall_pass_create(void) {
  MlirDialectHandle dialects[] = {
      mlirGetDialectHandle__transform__(), mlirGetDialectHandle__gpu__(),
      mlirGetDialectHandle__scf__(),       mlirGetDialectHandle__memref__(),
      mlirGetDialectHandle__nvvm__(),      mlirGetDialectHandle__llvm__(),
  };
  stc_pass_def def = {&map_spec, "StcGpuMapForall", map_anchor, dialects,
                      sizeof dialects / sizeof dialects[0], run_map, NULL, NULL};
  return stc__create_pass(&def, NULL);
}

/* ---- GPU variant sites: the schedule as a stc-multi-variant script ------ */

/* Replaces the first `from` in text by `to` (a fresh string in *out). */
static bool replace_first(const char *text, const char *from, const char *to,
                          stc_text *out) {
  const char *at = strstr(text, from);
  if (!at)
    return false;
  stc_text_append(out, text, (size_t)(at - text));
  stc_text_appendf(out, "%s%s", to, at + strlen(from));
  return !out->out_of_memory;
}

/* /shared as a site variant: the sequence only marks the variant function
 * (stc.gpu_tiles with the split); stc-gpu-map-forall replaces its
 * linalg.matmul by the generated kernel after bufferization, as for
 * --gpu-schedule. The op stays as it is (read only). */
static void shared_site_script(const stc_gpu_schedule *s, const char *name, int tier,
                               stc_text *out) {
  int split = s->split > 1 ? s->split : 1;
  stc_text_appendf(
      out,
      "module attributes {transform.with_named_sequence} {\n"
      "  transform.named_sequence @%s(%%op: !transform.any_op {transform.readonly}) "
      "attributes {stc.kind = \"matmul\", stc.dynamic = \"static\", stc.tier = %d : i64, "
      "stc.divides = array<i64: 1, %d, %d>, stc.element_type = f32%s} {\n"
      "    %%func = transform.get_parent_op %%op {isolated_from_above} : (!transform.any_op) -> !transform.any_op\n",
      name, tier, s->bn, s->bk * split, s->tf32 ? ", stc.requires = \"tf32\"" : "");
}

char *stc_gpu_schedule_site_script(const stc_gpu_schedule *s, bool batch, int tier) {
  stc_text result = {0}, *out = &result;
  char name[96], header[512], tail[1024];
  stc_gpu_schedule_name(s, name, sizeof name);
  /* The variant function carries its tiles for stc-gpu-map-forall, as
   * run_schedule sets them for --gpu-schedule. */
  snprintf(tail, sizeof tail,
           "    %%stc_tiles = transform.param.constant array<i64: %d, %d, %d, %d, %d, %d, %d, %d> -> !transform.any_param\n"
           "    transform.annotate %%func \"stc.gpu_tiles\" = %%stc_tiles : !transform.any_op, !transform.any_param\n"
           "    %%stc_name = transform.param.constant \"%s\" -> !transform.any_param\n"
           "    transform.annotate %%func \"stc.gpu_schedule\" = %%stc_name : !transform.any_op, !transform.any_param\n"
           "    transform.yield\n  }\n}\n",
           s->bm, s->bn, s->tm, s->tn, s->bk, s->shared, s->split > 1 ? s->split : 1, s->tf32,
           name);
  if (s->shared) {
    if (batch)
      return NULL; /* matmul only */
    shared_site_script(s, name, tier, out);
    stc_text_appendf(out, "%s", tail);
    if (out->out_of_memory) {
      stc_text_free(out);
      return NULL;
    }
    return result.data;
  }
  stc_text stage = {0};
  stage_a_script(s, batch, &stage);
  snprintf(header, sizeof header,
           "@%s(%%op: !transform.any_op {transform.consumed}) attributes "
           "{stc.kind = \"%s\", stc.dynamic = \"static\", stc.tier = %d : i64, "
           "stc.divides = array<i64: %d, %d, %d>} {",
           name, batch ? "batch_matmul" : "matmul", tier, s->bm, s->bn, s->bk);
  stc_text renamed = {0};
  bool ok = !stage.out_of_memory &&
            replace_first(stage.data,
                          "@" SEQUENCE "(%op: !transform.any_op {transform.consumed}) {",
                          header, &renamed);
  char *last = ok ? strstr(renamed.data, "    transform.yield\n  }\n}\n") : NULL;
  if (last) {
    stc_text_append(out, renamed.data, (size_t)(last - renamed.data));
    stc_text_appendf(out, "%s", tail);
  }
  ok = last && !out->out_of_memory;
  stc_text_free(&stage);
  stc_text_free(&renamed);
  if (!ok)
    stc_text_free(out);
  return ok ? result.data : NULL;
}
