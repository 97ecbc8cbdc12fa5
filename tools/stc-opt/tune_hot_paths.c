/* tune_hot_paths.c - stc-opt's --tune-hot-paths.
 * In:  --tune-hot-paths, --hot-path-profile=, --target=, --emit= (validated
 *      by options.c).
 * Out: the pipeline of tools/common/tune_pipeline.c appended to pm (linalg
 *      on tensors -> LLVM dialect with runtime dispatch, DESIGN.md section
 *      4); after the run, stc_opt_tune_finish checks that only LLVM
 *      remains and, for --emit=llvm|obj, writes the translation through
 *      tools/common/stc_emit. */
#include "stc_opt.h"

#include "stc_emit.h"
#include "tune_pipeline.h"

#include <string.h>

stc_status stc_opt_tune_hot_paths(MlirOpPassManager pm,
                                  const stc_opt_tune_options *tune,
                                  stc_error *err) {
  stc_tune_pipeline_options options = {
      .hot_path_profile = tune->hot_path_profile,
      .schedule_options = tune->schedule_options,
      .variant_library = tune->variant_library,
      .default_lowering = tune->default_lowering,
  };
  options.target = tune->target;
  options.gpu_chip = tune->gpu_chip;
  options.gpu_format = tune->gpu_format;
  options.gpu_block = tune->gpu_block;
  options.gpu_mapping = tune->gpu_mapping;
  options.gpu_schedule = tune->gpu_schedule;
  options.gpu_sites = tune->gpu_sites;
  options.gpu_tf32 = tune->gpu_tf32 && strcmp(tune->gpu_tf32, "on") == 0;
  return stc_tune_pipeline_add(pm, &options, err);
}

bool stc_opt_emit_available(const char *kind, stc_error *err) {
  stc_emit_kind parsed;
  if (stc_emit_kind_parse(kind, &parsed) == STC_OK)
    return true;
  stc_error_set(err, NULL, 0, 0, "--emit=%s is not supported", kind);
  return false;
}

int stc_opt_tune_finish(MlirOperation module, const stc_opt_options *options,
                        bool *printed) {
  *printed = false;
  if (!options->tune.requested)
    return STC_OPT_EXIT_OK;
  stc_error err;
  stc_error_clear(&err);
  MlirOperation blame = {NULL};
  if (stc_tune_check_lowered(module, &blame, &err) != STC_OK) {
    char text[2048];
    stc_error_format(&err, text, sizeof text);
    stc_opt_error("%s", text);
    return STC_OPT_EXIT_FAILURE;
  }
  stc_emit_kind kind = STC_EMIT_MLIR;
  if (options->tune.emit)
    stc_emit_kind_parse(options->tune.emit, &kind);
  if (kind == STC_EMIT_MLIR)
    return STC_OPT_EXIT_OK;
  if (kind == STC_EMIT_OBJ && strcmp(options->output, "-") == 0) {
    stc_opt_error("--emit=obj needs an output file (-o FILE)");
    return STC_OPT_EXIT_USAGE;
  }
  *printed = true;
  if (stc_emit_module(module, kind, 3, options->output, &err) != STC_OK) {
    char text[2048];
    stc_error_format(&err, text, sizeof text);
    stc_opt_error("%s", text);
    return STC_OPT_EXIT_INPUT;
  }
  return STC_OPT_EXIT_OK;
}
