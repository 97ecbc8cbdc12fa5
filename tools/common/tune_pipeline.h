/* tune_pipeline.h - the --tune-hot-paths pipeline, shared by stc-opt and
 * stc-run: linalg on tensors in, a pure LLVM-dialect module out whose
 * tunable sites dispatch through libstc_rt (include/stc/rt_dispatch.h). */
#ifndef STC_TUNE_PIPELINE_H
#define STC_TUNE_PIPELINE_H

#include "stc/status.h"

#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>

/* Appends the whole pipeline to pm (anchored on builtin.module).
 * hot_path_profile: the profile for stc-hot-path-schedule, NULL = static
 * cost estimate. variant_library: a YAML file of extra schedules for
 * stc-multi-variant, NULL = built-in schedules only. STC_ERR_INVALID with
 * err set when a pass cannot be built. */
stc_status stc_tune_pipeline_add(MlirOpPassManager pm, const char *hot_path_profile,
                                 const char *variant_library, stc_error *err);

/* Checks that only llvm.* / omp.* ops (and the builtin.module) remain.
 * Otherwise STC_ERR_INVALID, err names the first offending op, and *blame
 * (may be NULL) is set to it, for its location. */
stc_status stc_tune_check_lowered(MlirOperation module, MlirOperation *blame,
                                  stc_error *err);

#endif /* STC_TUNE_PIPELINE_H */
