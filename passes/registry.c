/* The table of stc passes that stc-opt's pipeline parser and --help use.
 * Adding a pass: write passes/<name>.c exporting an stc_pass_spec, declare
 * it in stc_passes.h, list it here and in passes/CMakeLists.txt. */
#include "stc_passes.h"

#include <string.h>

static const stc_pass_spec *const specs[] = {
    &stc_instrument_pass_spec,
    &stc_lower_pack_unpack_pass_spec,
    &stc_hot_path_schedule_pass_spec,
    &stc_multi_variant_pass_spec,
    &stc_default_lowering_pass_spec,
    &stc_buffer_deallocation_pass_spec,
    &stc_hoist_accumulators_pass_spec,
    &stc_site_results_in_place_pass_spec,
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

/* ---- making passes ---- */

static void keep(void *state) { (void)state; }
static void *share(void *state) { return state; }

MlirPass stc__create_pass(const stc_pass_def *def, void *state) {
  MlirExternalPassCallbacks callbacks = {
      .construct = keep,
      .destruct = def->destroy ? def->destroy : keep,
      .initialize = NULL,
      .clone = def->copy ? def->copy : share,
      .run = def->run,
  };
  const stc_pass_spec *spec = def->spec;
  return mlirCreateExternalPass(
      mlirTypeIDCreate(def->type_id_anchor),
      mlirStringRefCreateFromCString(def->type_name),
      mlirStringRefCreateFromCString(spec->argument),
      mlirStringRefCreateFromCString(spec->description),
      mlirStringRefCreateFromCString(spec->op_name ? spec->op_name : ""),
      (intptr_t)def->num_dialects, (MlirDialectHandle *)def->dialects,
      callbacks, state);
}

bool stc__no_options(const char *pass, const stc_pass_option_value *values,
                     size_t count, stc_error *err) {
  if (count == 0)
    return true;
  stc_error_set(err, NULL, 0, 0, "%s: unknown option '%s' (it has none)", pass,
                values[0].name ? values[0].name : "");
  return false;
}

const stc_pass_spec *stc_pass_find(const char *argument) {
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    if (strcmp(specs[i]->argument, argument) == 0)
      return specs[i];
  return NULL;
}
