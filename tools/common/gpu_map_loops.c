/* gpu_map_loops.c - the --target=cuda pass that maps tiled scf.parallel
 * loops to GPU blocks and threads, innermost dimension on x.
 *
 * In:  func.func bodies after scf-parallel-loop-tiling: an outer
 *      scf.parallel over tiles holding an inner one over a tile's elements.
 * Out: a `mapping` attribute on each scf.parallel, which
 *      convert-parallel-loops-to-gpu reads: nesting level 0 -> blocks,
 *      level 1 -> threads, deeper -> sequential; within a loop the LAST
 *      dimension goes to x, the one before to y, the one before that to z,
 *      the rest sequential.
 *
 * Why not upstream gpu-map-parallel-loops: it gives the FIRST dimension x.
 * For row-major buffers the last dimension is the contiguous one, so with
 * the first on x the 32 threads of a warp touch 32 different rows (32
 * memory transactions per load/store); with the last on x they touch one
 * row (one or two transactions). "outer-x" keeps the upstream order (for
 * comparison). */
#include "tune_pipeline_cuda.h"

#include "stc_passes.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Diagnostics.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct map_state {
  bool inner_x;
} map_state;

static int nesting_level(MlirOperation op) {
  int level = 0;
  for (MlirOperation p = mlirOperationGetParentOperation(op); !mlirOperationIsNull(p);
       p = mlirOperationGetParentOperation(p))
    if (stc__op_is(p, "scf.parallel"))
      level++;
  return level;
}

static MlirWalkResult map_loop(MlirOperation op, void *user) {
  if (stc__op_is(op, "gpu.module"))
    return MlirWalkResultSkip;
  if (!stc__op_is(op, "scf.parallel"))
    return MlirWalkResultAdvance;
  const map_state *state = user;
  int level = nesting_level(op);
  /* scf.parallel operands: lower bounds, upper bounds, steps, inits. */
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
  intptr_t rank = mlirBlockGetNumArguments(body);
  static const char *const processors[2][3] = {{"block_x", "block_y", "block_z"},
                                               {"thread_x", "thread_y", "thread_z"}};
  char text[4096] = "[";
  for (intptr_t d = 0; d < rank; d++) {
    intptr_t order = state->inner_x ? rank - 1 - d : d; /* 0 = x */
    const char *processor =
        level < 2 && order < 3 ? processors[level][order] : "sequential";
    size_t used = strlen(text);
    snprintf(text + used, sizeof text - used,
             "%s#gpu.loop_dim_map<processor = %s, map = (d0) -> (d0), bound = "
             "(d0) -> (d0)>",
             d ? ", " : "", processor);
  }
  strncat(text, "]", sizeof text - strlen(text) - 1);
  MlirContext ctx = mlirOperationGetContext(op);
  MlirAttribute mapping = mlirAttributeParseGet(ctx, stc__str(text));
  if (!mlirAttributeIsNull(mapping))
    mlirOperationSetAttributeByName(op, stc__str("mapping"), mapping);
  return MlirWalkResultAdvance;
}

static void run(MlirOperation module, MlirExternalPass pass, void *state) {
  if (!state) { /* a clone's copy failed */
    mlirEmitError(mlirOperationGetLocation(module), "out of memory");
    mlirExternalPassSignalFailure(pass);
    return;
  }
  mlirOperationWalk(module, map_loop, state, MlirWalkPreOrder);
}

static void destroy(void *state) { free(state); }

static void *copy(void *state) {
  map_state *c = malloc(sizeof *c);
  if (c)
    *c = *(map_state *)state;
  return c;
}

static const stc_pass_spec spec = {
    "stc-gpu-map-loops",
    "--target=cuda: map tiled scf.parallel loops to blocks and threads",
    "builtin.module", NULL, 0, NULL};

static _Alignas(8) const char type_id_anchor[8];

MlirPass stc_gpu_map_loops_pass_create(bool inner_x) {
  static const stc_pass_def def = {&spec, "StcGpuMapLoops", type_id_anchor,
                                   NULL, 0, run, copy, destroy};
  map_state *state = malloc(sizeof *state);
  if (!state)
    return (MlirPass){NULL};
  state->inner_x = inner_x;
  return stc__create_pass(&def, state);
}
