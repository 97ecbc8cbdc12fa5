/* tune_pipeline.c - the --tune-hot-paths pipeline (DESIGN.md section 4), in
 * one function, stc_tune_pipeline_add, used by stc-opt and stc-run.
 * In:  a pass manager on builtin.module, an optional hot-path profile.
 * Out: the passes appended; after a run the module is LLVM dialect only
 *      (stc_tune_check_lowered says so). */
#include "tune_pipeline.h"
#include "tune_pipeline_cuda.h"

#include "stc_passes.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void append_message(MlirStringRef part, void *user) {
  stc_error *err = user;
  size_t used = strlen(err->message);
  size_t room = sizeof err->message - 1 - used;
  size_t n = part.length < room ? part.length : room;
  memcpy(err->message + used, part.data, n);
  err->message[used + n] = 0;
}

/* Upstream passes, as mlir-opt pipeline text. */
static stc_status add_upstream(MlirOpPassManager pm, const char *text, stc_error *err) {
  stc_error_clear(err);
  if (mlirLogicalResultIsSuccess(mlirOpPassManagerAddPipeline(
          pm, mlirStringRefCreateFromCString(text), append_message, err)))
    return STC_OK;
  return STC_ERR_INVALID;
}

#define MAX_PASS_OPTIONS 16

/* An stc pass by name with `count` options. */
static stc_status add_stc_values(MlirOpPassManager pm, const char *name,
                                 const stc_pass_option_value *values,
                                 size_t count, stc_error *err) {
  const stc_pass_spec *spec = stc_pass_find(name);
  if (!spec) {
    stc_error_set(err, NULL, 0, 0, "internal error: no stc pass '%s'", name);
    return STC_ERR_INVALID;
  }
  MlirPass pass = spec->create(values, count, err);
  if (!pass.ptr)
    return STC_ERR_INVALID;
  mlirOpPassManagerAddOwnedPass(pm, pass);
  return STC_OK;
}

/* An stc pass by name, with at most one option. */
static stc_status add_stc(MlirOpPassManager pm, const char *name, const char *option,
                          const char *value, stc_error *err) {
  stc_pass_option_value values[1] = {{option, value}};
  return add_stc_values(pm, name, values, option ? 1 : 0, err);
}

/* stc-hot-path-schedule with a target's defaults (may be NULL), the
 * profile and the user's "k=v ..." options (later values win). The text is
 * split in a copy whose pieces the option values point into. */
stc_status stc_tune_pipeline_add_schedule(MlirOpPassManager pm,
                                          const stc_tune_pipeline_options *options,
                                          const stc_pass_option_value *defaults,
                                          size_t num_defaults, stc_error *err) {
  stc_pass_option_value values[2 * MAX_PASS_OPTIONS + 1];
  size_t count = 0;
  for (size_t i = 0; i < num_defaults && count < MAX_PASS_OPTIONS; i++)
    values[count++] = defaults[i];
  if (options->hot_path_profile)
    values[count++] = (stc_pass_option_value){"profile", options->hot_path_profile};
  char *copy = strdup(options->schedule_options ? options->schedule_options : "");
  if (!copy) {
    stc_error_set(err, NULL, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  stc_status s = STC_OK;
  char *save = NULL;
  for (char *item = strtok_r(copy, " \t", &save); item && s == STC_OK;
       item = strtok_r(NULL, " \t", &save)) {
    char *eq = strchr(item, '=');
    if (!eq || eq == item) {
      stc_error_set(err, NULL, 0, 0,
                    "schedule option '%s' is not of the form name=value", item);
      s = STC_ERR_INVALID;
    } else if (count == 2 * MAX_PASS_OPTIONS) {
      stc_error_set(err, NULL, 0, 0, "too many schedule options");
      s = STC_ERR_INVALID;
    } else {
      *eq = 0;
      if (strcmp(item, "profile") == 0) {
        stc_error_set(err, NULL, 0, 0,
                      "give the profile with --hot-path-profile, not as a "
                      "schedule option");
        s = STC_ERR_INVALID;
      }
      values[count++] = (stc_pass_option_value){item, eq + 1};
    }
  }
  if (s == STC_OK)
    s = add_stc_values(pm, "stc-hot-path-schedule", values, count, err);
  free(copy);
  return s;
}

stc_status stc_tune_pipeline_add(MlirOpPassManager pm,
                                 const stc_tune_pipeline_options *options,
                                 stc_error *err) {
  static const stc_tune_pipeline_options defaults = {0};
  if (!options)
    options = &defaults;
  /* 0. Input dialects: linalg on tensors (or memrefs) as is; TOSA, what
   *    model front ends emit, becomes linalg on tensors first. Only the
   *    conversion passes, none with greedy rewriting (canonicalization would
   *    reorder a linalg program's constants): they touch tosa.* ops alone.
   *    A TOSA op they cannot convert is a located error. */
  stc_status s = add_upstream(pm,
                              "func.func(tosa-infer-shapes,tosa-to-linalg-named,"
                              "tosa-to-linalg,tosa-to-arith,tosa-to-tensor,"
                              "tosa-to-scf)",
                              err);
  /* 0b. linalg.pack / linalg.unpack, which MLIR 22 cannot bufferize,
   *     become pad / reshape / transpose / slice ops
   *     (passes/lower_pack_unpack.c); a program without them is untouched. */
  if (s == STC_OK)
    s = add_stc(pm, "stc-lower-pack-unpack", NULL, NULL, err);
  if (s != STC_OK)
    return s;
  if (options->target && strcmp(options->target, "cuda") == 0)
    return stc_tune_pipeline_add_cuda(pm, options, err);
  /* 1. Plan: hot regions get variants (by profile, else static cost). */
  s = stc_tune_pipeline_add_schedule(pm, options, NULL, 0, err);
  /* 2. Sites: @S__ref + @S__<schedule> variants behind a dispatch @S. */
  if (s == STC_OK)
    s = add_stc(pm, "stc-multi-variant",
                options->variant_library ? "variant-library" : NULL,
                options->variant_library, err);
  /* 2b. The default lowering: elementwise producers fused into their
   *     consumers, then every op outside the variants - each site's
   *     reference included - tiled and vectorized (passes/default_lowering.c).
   *     "loops" skips it: everything not in a variant becomes scalar loops
   *     in step 5. */
  bool loops = options->default_lowering &&
               strcmp(options->default_lowering, "loops") == 0;
  if (s == STC_OK && !loops)
    s = add_upstream(pm, "func.func(linalg-fuse-elementwise-ops)", err);
  if (s == STC_OK && !loops)
    s = add_stc(pm, "stc-default-lowering", NULL, NULL, err);
  /* 3. Bufferize, then give every function of a site one signature,
   *    `void f(memrefs...)`: variants whose loops computed out of place copy
   *    their results into their init arguments (stc-site-results-in-place),
   *    so reference, variants and dispatch all return arguments, and those
   *    results are dropped. Out-params cannot be made for dynamically shaped
   *    results, and in-place decisions differ between schedules: this is
   *    what works for both. Public functions keep their results. The drop
   *    pass walks functions in module order and a dispatch @S comes before
   *    the @S__ref whose result it returns, so @S's result is an argument
   *    only once @S__ref's is dropped: a second run drops it. */
  if (s == STC_OK)
    s = add_upstream(pm,
                     "func.func(lower-vector-mask),"
                     "one-shot-bufferize{bufferize-function-boundaries "
                     "function-boundary-type-conversion=identity-layout-map},"
                     "canonicalize",
                     err);
  if (s == STC_OK)
    s = add_stc(pm, "stc-site-results-in-place", NULL, NULL, err);
  if (s == STC_OK)
    s = add_upstream(pm,
                     "drop-equivalent-buffer-results,drop-equivalent-buffer-results",
                     err);
  /* 4. A site result that is still returned (an op whose results are not
   *    tied to its operands) becomes an out-param (callers rewritten). Only
   *    site functions: other private helpers may return dynamically shaped
   *    buffers, which the upstream pass refuses, so they are hidden from it
   *    meanwhile. */
  if (s == STC_OK)
    s = add_stc(pm, "stc-out-params-scope", NULL, NULL, err);
  if (s == STC_OK)
    s = add_upstream(pm, "buffer-results-to-out-params", err);
  if (s == STC_OK)
    s = add_stc(pm, "stc-out-params-scope", "restore", "true", err);
  /* 4b. BLAS variants: their marked op becomes a call of libstc_rt's
   *     vendor-BLAS entry point (passes/lower_blas.c), on the buffers
   *     bufferization chose. */
  if (s == STC_OK)
    s = add_stc(pm, "stc-lower-blas", NULL, NULL, err);
  /* 5. The rest of passes/schedules/lowering-pipeline.txt: deallocation
   *    (upstream's, unless the program frees memory itself:
   *    passes/buffer_deallocation.c), vector, OpenMP, memref, scf, cf,
   *    everything to LLVM. */
  if (s == STC_OK)
    s = add_stc(pm, "stc-buffer-deallocation", NULL, NULL, err);
  /* 5a. Accumulators stay in registers across their k loop
   *     (passes/hoist_accumulators.c): views folded into the accesses
   *     first (upstream hoists no transfer on a view), equal indices made
   *     one value by cse. */
  if (s == STC_OK)
    s = add_upstream(pm,
                     "convert-bufferization-to-memref,cse,canonicalize,"
                     "fold-memref-alias-ops,cse",
                     err);
  if (s == STC_OK)
    s = add_stc(pm, "stc-hoist-accumulators", NULL, NULL, err);
  if (s == STC_OK)
    s = add_upstream(pm,
                     "convert-vector-to-scf{full-unroll=true},"
                     "convert-linalg-to-loops,scf-forall-to-parallel,"
                     "convert-scf-to-openmp,expand-strided-metadata,lower-affine,"
                     "finalize-memref-to-llvm,convert-scf-to-cf,"
                     "convert-vector-to-llvm,convert-to-llvm",
                     err);
  /* 6. The runtime dispatch (rt_dispatch.h), then the last casts. */
  if (s == STC_OK)
    s = add_stc(pm, "stc-lower-dispatch", NULL, NULL, err);
  if (s == STC_OK)
    s = add_upstream(pm, "reconcile-unrealized-casts", err);
  return s;
}

typedef struct foreign_walk {
  MlirOperation op;
  bool found;
} foreign_walk;

static bool dialect_is(MlirStringRef name, const char *prefix) {
  size_t n = strlen(prefix);
  return name.length > n && memcmp(name.data, prefix, n) == 0;
}

static MlirWalkResult find_foreign(MlirOperation op, void *user) {
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (dialect_is(name, "llvm.") || dialect_is(name, "omp.") ||
      /* --target=cuda: kernels and launches, for the LLVM translation */
      (name.length == 10 && memcmp(name.data, "gpu.binary", 10) == 0) ||
      (name.length == 15 && memcmp(name.data, "gpu.launch_func", 15) == 0) ||
      (name.length == 14 && memcmp(name.data, "builtin.module", 14) == 0))
    return MlirWalkResultAdvance;
  foreign_walk *walk = user;
  walk->op = op;
  walk->found = true;
  return MlirWalkResultInterrupt;
}

stc_status stc_tune_check_lowered(MlirOperation module, MlirOperation *blame,
                                  stc_error *err) {
  foreign_walk walk = {.found = false};
  mlirOperationWalk(module, find_foreign, &walk, MlirWalkPreOrder);
  if (!walk.found)
    return STC_OK;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(walk.op));
  MlirLocation loc = mlirOperationGetLocation(walk.op);
  const char *file = NULL;
  char file_buf[512] = "";
  unsigned line = 0, column = 0;
  if (mlirLocationIsAFileLineColRange(loc)) {
    MlirStringRef f = mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc));
    snprintf(file_buf, sizeof file_buf, "%.*s", (int)f.length, f.data);
    file = file_buf;
    line = (unsigned)mlirLocationFileLineColRangeGetStartLine(loc);
    column = (unsigned)mlirLocationFileLineColRangeGetStartColumn(loc);
  }
  stc_error_set(err, file, line, column,
                "'%.*s' is not lowered to the LLVM dialect by --tune-hot-paths",
                (int)name.length, name.data);
  if (blame)
    *blame = walk.op;
  return STC_ERR_INVALID;
}
