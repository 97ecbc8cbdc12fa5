/* The table of stc passes that stc-opt's pipeline parser and --help use.
 * Adding a pass: write passes/<name>.c exporting an stc_pass_spec, declare
 * it in stc_passes.h, list it here and in passes/CMakeLists.txt. */
#include "stc_passes.h"

#include <string.h>

static const stc_pass_spec *const specs[] = {
    &stc_instrument_pass_spec,
    &stc_hot_path_schedule_pass_spec,
    &stc_multi_variant_pass_spec,
    &stc_out_params_scope_pass_spec,
    &stc_lower_blas_pass_spec,
    &stc_lower_dispatch_pass_spec,
    /* test only (passes/test_passes.c): exercise stc-opt's pipeline code */
    &stc_test_annotate_pass_spec,
    &stc_test_fail_pass_spec,
};

const stc_pass_spec *const *stc_pass_specs(size_t *count) {
  *count = sizeof specs / sizeof specs[0];
  return specs;
}

const stc_pass_spec *stc_pass_find(const char *argument) {
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    if (strcmp(specs[i]->argument, argument) == 0)
      return specs[i];
  return NULL;
}
