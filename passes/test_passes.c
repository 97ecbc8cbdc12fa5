/* test_passes.c - TEST-ONLY passes that let stc-opt's pipeline splicer,
 * option parser and diagnostics be tested without depending on the real stc
 * passes. They are not part of any real pipeline.
 *
 * In:  parsed {k=v} options from stc-opt's pipeline parser.
 * Out: stc-test-annotate: sets the discardable string attribute key=value on
 *      each op it is anchored on (any op; module or func by nesting).
 *      stc-test-fail: emits an error at each anchored func.func's location
 *      (unless silent=true) and signals pass failure. */
#include "stc_passes.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>
#include <stdlib.h>
#include <string.h>

/* The option values of one pass instance: owned copies, because a pass
 * outlives the pipeline text it was parsed from. */
typedef struct stc_test_pass_state {
  char *key;
  char *value;
} stc_test_pass_state;

static void state_free(stc_test_pass_state *state) {
  if (!state)
    return;
  free(state->key);
  free(state->value);
  free(state);
}

static stc_test_pass_state *state_create(const char *key, const char *value) {
  stc_test_pass_state *state = calloc(1, sizeof *state);
  if (!state)
    return NULL;
  state->key = strdup(key);
  state->value = strdup(value);
  if (!state->key || !state->value) {
    state_free(state);
    return NULL;
  }
  return state;
}

static void state_destruct(void *user_data) { state_free(user_data); }
static void *state_clone(void *user_data) {
  const stc_test_pass_state *state = user_data;
  return state_create(state->key, state->value);
}

/* Looks option `name` up in values (last one wins, as in MLIR); returns
 * fallback when absent. */
static const char *option_value(const stc_pass_option_value *values,
                                size_t count, const char *name,
                                const char *fallback) {
  const char *found = fallback;
  for (size_t i = 0; i < count; i++)
    if (strcmp(values[i].name, name) == 0)
      found = values[i].value;
  return found;
}

/* Rejects option names the spec does not list, so that a factory called
 * without stc-opt's own check still honours the stc_pass_spec contract. */
static int check_option_names(const stc_pass_spec *spec,
                              const stc_pass_option_value *values,
                              size_t count, stc_error *err) {
  for (size_t i = 0; i < count; i++) {
    size_t k = 0;
    while (k < spec->num_options &&
           strcmp(spec->options[k].name, values[i].name) != 0)
      k++;
    if (k == spec->num_options) {
      stc_error_set(err, NULL, 0, 0, "unknown option '%s' for pass '%s'",
                    values[i].name, spec->argument);
      return 0;
    }
  }
  return 1;
}

static MlirPass make_pass(const stc_pass_spec *spec, const void *type_anchor,
                          const char *name, stc_test_pass_state *state,
                          void (*run)(MlirOperation, MlirExternalPass, void *),
                          stc_error *err) {
  if (!state) {
    stc_error_set(err, NULL, 0, 0, "out of memory creating '%s'",
                  spec->argument);
    return (MlirPass){NULL};
  }
  stc_pass_def def = {spec, name, type_anchor, NULL, 0, run, state_clone,
                      state_destruct};
  return stc__create_pass(&def, state);
}

/* ---- stc-test-annotate ---------------------------------------------- */

/* TypeID anchors must be unique, static and 8-byte aligned. */
static _Alignas(8) const char annotate_type_anchor = 0;

static void annotate_run(MlirOperation op, MlirExternalPass pass,
                         void *user_data) {
  (void)pass;
  const stc_test_pass_state *state = user_data;
  MlirContext ctx = mlirOperationGetContext(op);
  MlirAttribute attr =
      mlirStringAttrGet(ctx, mlirStringRefCreateFromCString(state->value));
  mlirOperationSetDiscardableAttributeByName(
      op, mlirStringRefCreateFromCString(state->key), attr);
}

static const stc_pass_option_spec annotate_options[] = {
    {"key", "name of the discardable attribute to set", "stc.test"},
    {"value", "string value of the attribute", "annotated"},
};

static MlirPass annotate_create(const stc_pass_option_value *values,
                                size_t count, stc_error *err) {
  const stc_pass_spec *spec = &stc_test_annotate_pass_spec;
  if (!check_option_names(spec, values, count, err))
    return (MlirPass){NULL};
  const char *key = option_value(values, count, "key", "stc.test");
  const char *value = option_value(values, count, "value", "annotated");
  if (key[0] == '\0') {
    stc_error_set(err, NULL, 0, 0,
                  "bad value for option 'key' of '%s': must not be empty",
                  spec->argument);
    return (MlirPass){NULL};
  }
  return make_pass(spec, &annotate_type_anchor, "StcTestAnnotate",
                   state_create(key, value), annotate_run, err);
}

const stc_pass_spec stc_test_annotate_pass_spec = {
    "stc-test-annotate",
    "[test only] set a discardable string attribute on each anchored op",
    "", /* any op: anchors wherever the pipeline nests it */
    annotate_options,
    sizeof annotate_options / sizeof annotate_options[0],
    annotate_create,
};

/* ---- stc-test-fail -------------------------------------------------- */

static _Alignas(8) const char fail_type_anchor = 0;

/* state->key holds "silent" or "loud"; state->value the message. */
static void fail_run(MlirOperation op, MlirExternalPass pass,
                     void *user_data) {
  const stc_test_pass_state *state = user_data;
  if (strcmp(state->key, "silent") != 0)
    mlirEmitError(mlirOperationGetLocation(op), state->value);
  mlirExternalPassSignalFailure(pass);
}

static const stc_pass_option_spec fail_options[] = {
    {"message", "text of the error emitted at each function",
     "stc-test-fail: failure requested"},
    {"silent", "fail without emitting any diagnostic (true|false)", "false"},
};

static MlirPass fail_create(const stc_pass_option_value *values, size_t count,
                            stc_error *err) {
  const stc_pass_spec *spec = &stc_test_fail_pass_spec;
  if (!check_option_names(spec, values, count, err))
    return (MlirPass){NULL};
  const char *message = option_value(values, count, "message",
                                     "stc-test-fail: failure requested");
  const char *silent = option_value(values, count, "silent", "false");
  if (strcmp(silent, "true") != 0 && strcmp(silent, "false") != 0) {
    stc_error_set(err, NULL, 0, 0,
                  "bad value '%s' for option 'silent' of '%s': expected true "
                  "or false",
                  silent, spec->argument);
    return (MlirPass){NULL};
  }
  return make_pass(spec, &fail_type_anchor, "StcTestFail",
                   state_create(strcmp(silent, "true") == 0 ? "silent" : "loud",
                                message),
                   fail_run, err);
}

const stc_pass_spec stc_test_fail_pass_spec = {
    "stc-test-fail",
    "[test only] emit an error at each function and fail the pass",
    "func.func",
    fail_options,
    sizeof fail_options / sizeof fail_options[0],
    fail_create,
};
