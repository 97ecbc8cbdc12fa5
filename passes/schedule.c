/* placeholder: to be written */
#include "stc_passes.h"
static MlirPass create(const stc_pass_option_value *v, size_t n, stc_error *err) {
  (void)v, (void)n;
  stc_error_set(err, NULL, 0, 0, "not implemented");
  return (MlirPass){NULL};
}
const stc_pass_spec stc_hot_path_schedule_pass_spec = {"stc-hot-path-schedule", "placeholder", "builtin.module", NULL, 0, create};
