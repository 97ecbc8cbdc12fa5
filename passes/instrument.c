/* placeholder: to be written */
#include "stc_passes.h"
static MlirPass create(const stc_pass_option_value *v, size_t n, stc_error *err) {
  (void)v, (void)n;
  stc_error_set(err, NULL, 0, 0, "not implemented");
  return (MlirPass){NULL};
}
const stc_pass_spec stc_instrument_pass_spec = {"stc-instrument", "placeholder", "builtin.module", NULL, 0, create};
