/* gpu_schedule.c - register-tiled GPU schedules for matmul and
 * batch_matmul under --target=cuda (--gpu-schedule=BMxBN/TMxTN/kBK), in two
 * passes around bufferization.
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
 *   The enclosing function gets stc.gpu_tiles = [BN/TN, BM/TM, 1].
 * stc-gpu-map-forall (after bufferization): in each function carrying
 *   stc.gpu_tiles, the block forall becomes a gpu.launch
 *   (transform.gpu.map_forall_to_blocks generate_gpu_launch) and the thread
 *   forall its threads (map_nested_forall_to_threads); gpu-kernel-outlining
 *   then outlines it like the default kernels.
 *
 * Only ops whose M, N and K are multiples of BM, BN and BK are scheduled
 * (a remark says so for the others, which keep the default kernel): partial
 * tiles would give threads dynamically sized register tiles, which
 * bufferization turns into allocations inside the kernel.
 *
 * Without --gpu-schedule nothing changes (the default one-thread-per-element
 * kernels). Operands are read straight from global memory (L1/L2 serve the
 * reuse across threads); no shared-memory staging yet.
 *
 * A schedule that does not apply (the interpreter fails, the result does not
 * verify) is an error at the op, never a crash. */
#include "tune_pipeline_cuda.h"

#include "stc_passes.h"
#include "transform_apply.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/GPU.h>
#include <mlir-c/Dialect/Linalg.h>
#include <mlir-c/Dialect/MemRef.h>
#include <mlir-c/Dialect/SCF.h>
#include <mlir-c/Dialect/Transform.h>
#include <mlir-c/Dialect/Vector.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEQUENCE "stc_gpu_schedule"

bool stc_gpu_schedule_parse(const char *text, stc_gpu_schedule *out, char *why,
                            size_t why_size) {
  stc_gpu_schedule s = {0};
  int used = -1;
  if (!text || sscanf(text, "%dx%d/%dx%d/k%d%n", &s.bm, &s.bn, &s.tm, &s.tn, &s.bk,
                      &used) != 5 || used < 0 ||
      (text[used] && strcmp(text + used, "/shared") != 0)) {
    snprintf(why, why_size, "expected BMxBN/TMxTN/kBK[/shared], e.g. 64x64/4x4/k8");
    return false;
  }
  s.shared = text[used] != 0;
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
  *out = s;
  return true;
}

void stc_gpu_schedule_name(const stc_gpu_schedule *s, char *out, size_t size) {
  snprintf(out, size, "gpu_b%dx%d_t%dx%d_k%d%s", s->bm, s->bn, s->tm, s->tn, s->bk,
           s->shared ? "_shared" : "");
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

static bool is_scheduled_op(MlirOperation op, bool *batch) {
  *batch = stc__op_is(op, "linalg.batch_matmul");
  if (!*batch && !stc__op_is(op, "linalg.matmul"))
    return false;
  /* Default indexing maps only (no transposed or broadcast operands). */
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
  /* Static tensors. */
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
    MlirType t = mlirValueGetType(mlirOperationGetOperand(op, i));
    if (!mlirTypeIsARankedTensor(t) || !mlirShapedTypeHasStaticShape(t))
      return false;
  }
  return mlirOperationGetNumResults(op) == 1;
}

typedef struct op_list {
  MlirOperation *ops;
  size_t count, capacity;
  bool out_of_memory;
} op_list;

static MlirWalkResult collect(MlirOperation op, void *user) {
  op_list *list = user;
  bool batch;
  if (stc__op_is(op, "gpu.module"))
    return MlirWalkResultSkip;
  if (!is_scheduled_op(op, &batch))
    return MlirWalkResultAdvance;
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

static void stage_a_script(const stc_gpu_schedule *s, bool batch, stc_text *t) {
  int ty = s->bm / s->tm, tx = s->bn / s->tn;
  stc_text_appendf(
      t,
      "module attributes {transform.with_named_sequence} {\n"
      "  transform.named_sequence @" SEQUENCE "(%%op: !transform.any_op {transform.consumed}) {\n"
      "    %%func = transform.get_parent_op %%op {isolated_from_above} : (!transform.any_op) -> !transform.any_op\n");
  if (s->shared) { /* the rest after bufferization: shared_script */
    stc_text_appendf(
        t,
        "    %%t1, %%f1 = transform.structured.tile_using_forall %%op tile_sizes [%d, %d] "
        "(mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
        "    %%t2, %%l2 = transform.structured.tile_using_for %%t1 tile_sizes [0, 0, %d] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
        "    transform.yield\n  }\n}\n",
        s->bm, s->bn, s->bk);
    return;
  }
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
  snprintf(dims, sizeof dims, "array<i64: %d, %d, %d, %d, %d, %d>", s->bm, s->bn, s->tm,
           s->tn, s->bk, s->shared);
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
    if (m % s->bm || n % s->bn || k % s->bk) {
      char message[256];
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

/* /shared, after bufferization: A's BMxBK and B's BKxBN tiles of each k
 * step promoted to workgroup memory, each copy spread over the block's
 * threads (a thread copies a ceil(BM/ty) x ceil(BK/tx) piece of A and a
 * ceil(BK/ty) x ceil(BN/tx) piece of B: B's rows are read coalesced), then
 * each thread's TM x TN x BK step from shared memory (map_nested_forall_
 * to_threads puts a barrier after each distributed step). C is read and
 * written once per k step. */
static void shared_script(const stc_gpu_schedule *s, stc_text *t) {
  int ty = s->bm / s->tm, tx = s->bn / s->tn;
  int a0 = (s->bm + ty - 1) / ty, a1 = (s->bk + tx - 1) / tx;
  int b0 = (s->bk + ty - 1) / ty, b1 = (s->bn + tx - 1) / tx;
  stc_text_appendf(
      t,
      "    %%mm = transform.structured.match ops{[\"linalg.matmul\"]} in %%func : (!transform.any_op) -> !transform.any_op\n"
      "    %%p = transform.structured.promote %%mm { operands_to_promote = [0, 1], memory_space = #gpu.address_space<workgroup> } : (!transform.any_op) -> !transform.any_op\n"
      "    %%copies = transform.structured.match ops{[\"linalg.copy\"]} in %%func : (!transform.any_op) -> !transform.any_op\n"
      "    %%ca, %%cb = transform.split_handle %%copies : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
      "    %%cat, %%caf = transform.structured.tile_using_forall %%ca num_threads [%d, %d] (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
      "    %%cbt, %%cbf = transform.structured.tile_using_forall %%cb num_threads [%d, %d] (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
      "    transform.structured.vectorize %%cat vector_sizes [%d, %d] : !transform.any_op\n"
      "    transform.structured.vectorize %%cbt vector_sizes [%d, %d] : !transform.any_op\n"
      "    %%t3, %%f3 = transform.structured.tile_using_forall %%p num_threads [%d, %d] (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
      "    transform.structured.vectorize %%t3 vector_sizes [%d, %d, %d] : !transform.any_op\n"
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
      "    } : !transform.any_op\n",
      ty, tx, ty, tx, a0, a1, b0, b1, ty, tx, s->tm, s->tn, s->bk);
}

/* Workgroup-memory allocations inside a gpu.launch become the launch's
 * workgroup attributions (the NVVM lowering has no allocator for them);
 * their deallocations go. */
static MlirWalkResult find_launch(MlirOperation op, void *user) {
  if (stc__op_is(op, "gpu.launch")) {
    *(MlirOperation *)user = op;
    return MlirWalkResultInterrupt;
  }
  return MlirWalkResultAdvance;
}

typedef struct alloc_list {
  MlirOperation ops[16];
  size_t count;
  bool too_many;
} alloc_list;

static MlirWalkResult find_workgroup_alloc(MlirOperation op, void *user) {
  alloc_list *list = user;
  if (!stc__op_is(op, "memref.alloc") || mlirOperationGetNumOperands(op) != 0)
    return MlirWalkResultAdvance;
  MlirType type = mlirValueGetType(mlirOperationGetResult(op, 0));
  MlirAttribute space = mlirMemRefTypeGetMemorySpace(type);
  if (mlirAttributeIsNull(space) ||
      !mlirAttributeEqual(space, mlirAttributeParseGet(mlirOperationGetContext(op),
                                                       stc__str("#gpu.address_space<workgroup>"))))
    return MlirWalkResultAdvance;
  if (list->count == 16) {
    list->too_many = true;
    return MlirWalkResultInterrupt;
  }
  list->ops[list->count++] = op;
  return MlirWalkResultAdvance;
}

static bool attribute_workgroup_memory(MlirOperation func) {
  MlirOperation launch = {NULL};
  mlirOperationWalk(func, find_launch, &launch, MlirWalkPreOrder);
  if (mlirOperationIsNull(launch))
    return false;
  alloc_list list = {0};
  mlirOperationWalk(launch, find_workgroup_alloc, &list, MlirWalkPreOrder);
  if (list.too_many)
    return false;
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(launch, 0));
  MlirContext ctx = mlirOperationGetContext(func);
  for (size_t i = 0; i < list.count; i++) {
    MlirValue buffer = mlirOperationGetResult(list.ops[i], 0);
    /* Deallocations first (they are uses). */
    for (;;) {
      MlirOpOperand use = mlirValueGetFirstUse(buffer);
      MlirOperation user = {NULL};
      for (; !mlirOpOperandIsNull(use); use = mlirOpOperandGetNextUse(use))
        if (stc__op_is(mlirOpOperandGetOwner(use), "memref.dealloc")) {
          user = mlirOpOperandGetOwner(use);
          break;
        }
      if (mlirOperationIsNull(user))
        break;
      mlirOperationDestroy(user);
    }
    MlirValue argument = mlirBlockInsertArgument(body, (intptr_t)(12 + i),
                                                 mlirValueGetType(buffer),
                                                 mlirOperationGetLocation(list.ops[i]));
    mlirValueReplaceAllUsesOfWith(buffer, argument);
    mlirOperationDestroy(list.ops[i]);
  }
  mlirOperationSetAttributeByName(
      launch, stc__str("workgroup_attributions"),
      mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), (int64_t)list.count));
  return true;
}

static void run_map(MlirOperation module, MlirExternalPass pass, void *user) {
  (void)user;
  MlirContext ctx = mlirOperationGetContext(module);
  MlirRegion body = mlirOperationGetRegion(module, 0);
  for (MlirOperation func = mlirBlockGetFirstOperation(mlirRegionGetFirstBlock(body));
       !mlirOperationIsNull(func); func = mlirOperationGetNextInBlock(func)) {
    MlirAttribute tiles = mlirOperationGetAttributeByName(func, stc__str("stc.gpu_tiles"));
    if (mlirAttributeIsNull(tiles) || !mlirAttributeIsADenseI64Array(tiles) ||
        mlirDenseArrayGetNumElements(tiles) != 6)
      continue;
    stc_gpu_schedule s = {(int)mlirDenseI64ArrayGetElement(tiles, 0),
                          (int)mlirDenseI64ArrayGetElement(tiles, 1),
                          (int)mlirDenseI64ArrayGetElement(tiles, 2),
                          (int)mlirDenseI64ArrayGetElement(tiles, 3),
                          (int)mlirDenseI64ArrayGetElement(tiles, 4),
                          mlirDenseI64ArrayGetElement(tiles, 5) != 0};
    stc_text text = {0};
    stc_text_appendf(
        &text,
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @" SEQUENCE "(%%func: !transform.any_op {transform.consumed}) {\n");
    if (s.shared)
      shared_script(&s, &text);
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
    if (s.shared && !attribute_workgroup_memory(func)) {
      mlirEmitError(loc, "--gpu-schedule: the shared-memory tiles could not become "
                         "workgroup attributions");
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

char *stc_gpu_schedule_site_script(const stc_gpu_schedule *s, bool batch, int tier) {
  stc_text result = {0}, *out = &result;
  char name[96], header[512], tail[1024];
  stc_gpu_schedule_name(s, name, sizeof name);
  stc_text stage = {0};
  stage_a_script(s, batch, &stage);
  snprintf(header, sizeof header,
           "@%s(%%op: !transform.any_op {transform.consumed}) attributes "
           "{stc.kind = \"%s\", stc.dynamic = \"static\", stc.tier = %d : i64, "
           "stc.divides = array<i64: %d, %d, %d>} {",
           name, batch ? "batch_matmul" : "matmul", tier, s->bm, s->bn, s->bk);
  /* The variant function carries its tiles for stc-gpu-map-forall, as
   * run_schedule sets them for --gpu-schedule. */
  snprintf(tail, sizeof tail,
           "    %%stc_tiles = transform.param.constant array<i64: %d, %d, %d, %d, %d, %d> -> !transform.any_param\n"
           "    transform.annotate %%func \"stc.gpu_tiles\" = %%stc_tiles : !transform.any_op, !transform.any_param\n"
           "    %%stc_name = transform.param.constant \"%s\" -> !transform.any_param\n"
           "    transform.annotate %%func \"stc.gpu_schedule\" = %%stc_name : !transform.any_op, !transform.any_param\n"
           "    transform.yield\n  }\n}\n",
           s->bm, s->bn, s->tm, s->tn, s->bk, s->shared, name);
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
