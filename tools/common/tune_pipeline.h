/* tune_pipeline.h - the --tune-hot-paths pipeline, shared by stc-opt and
 * stc-run: linalg on tensors in, a pure LLVM-dialect module out whose
 * tunable sites dispatch through libstc_rt (include/stc/rt_dispatch.h). */
#ifndef STC_TUNE_PIPELINE_H
#define STC_TUNE_PIPELINE_H

#include "stc/status.h"
#include "tune_pipeline_facts.h"

#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <stdbool.h>

/* What a user can set on the pipeline; every field may be NULL. */
typedef struct stc_tune_pipeline_options {
  /* The profile for stc-hot-path-schedule; NULL = static cost estimate. */
  const char *hot_path_profile;
  /* More stc-hot-path-schedule options, "k=v k2=v2" (e.g. "min-samples=2
   * variants-per-warm=0"); NULL = the pass's defaults. */
  const char *schedule_options;
  /* A YAML file of extra schedules for stc-multi-variant; NULL = built-ins. */
  const char *variant_library;
  /* What ops get that no variant plan gives more, and what every site's
   * reference is: "fast" (NULL: tiled + vectorized, stc-default-lowering)
   * or "loops" (scalar loops: the test oracle, and a way to tell a
   * miscompile of the default schedules from one elsewhere). */
  const char *default_lowering;
  /* --target: NULL or "cpu", or "cuda" (tools/common/tune_pipeline_cuda.c,
   * which reads the gpu_* fields: chip, NULL = sm_90; binary format, NULL =
   * isa (PTX), bin (cubin) or fatbin; block tile, NULL = "16,16"). */
  const char *target;
  const char *gpu_chip;
  const char *gpu_format;
  const char *gpu_block;
  const char *gpu_mapping; /* "inner-x" (NULL) or "outer-x" */
  /* NULL, or BMxBN/TMxTN/kBK: register-tiled matmul / batch_matmul kernels
   * (tools/common/gpu_schedule.c) instead of one thread per element. */
  const char *gpu_schedule;
  /* Without gpu_schedule: GPU dispatch sites for matmul / batch_matmul, with
   * these variants: "off" (none), a comma-separated list of schedules
   * (BMxBN/TMxTN/kBK[/shared]) and "cublas", or NULL (the built-in family,
   * tune_pipeline_cuda.c). */
  const char *gpu_sites;
  /* --gpu-tf32=on: TF32 tensor-core variants (".../tf32") are allowed in
   * gpu_sites and gpu_schedule and added to the built-in family; false:
   * such a schedule is an error (f32 results stay f32-exact). */
  bool gpu_tf32;
} stc_tune_pipeline_options;

/* Appends the whole pipeline to pm (anchored on builtin.module).
 * STC_ERR_INVALID with err set when a pass cannot be built (e.g. a bad
 * schedule option). options may be NULL. */
stc_status stc_tune_pipeline_add(MlirOpPassManager pm,
                                 const stc_tune_pipeline_options *options,
                                 stc_error *err);

/* Checks that only llvm.* / omp.* ops (and the builtin.module) remain.
 * Otherwise STC_ERR_INVALID, err names the first offending op, and *blame
 * (may be NULL) is set to it, for its location. */
stc_status stc_tune_check_lowered(MlirOperation module, MlirOperation *blame,
                                  stc_error *err);

#endif /* STC_TUNE_PIPELINE_H */
