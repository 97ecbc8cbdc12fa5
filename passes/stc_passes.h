/* stc_passes.h - how stc-opt finds stc's passes.
 *
 * MLIR's C API cannot register a pass by name, so every stc pass describes
 * itself with an stc_pass_spec: its pipeline argument, anchor op, options
 * and a factory that builds an external pass from parsed {k=v} options.
 * stc-opt's pipeline parser looks passes up with stc_pass_find. */
#ifndef STC_PASSES_H
#define STC_PASSES_H

#include "stc/status.h"

#include <mlir-c/Pass.h>
#include <stdbool.h>
#include <string.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stc_pass_option_spec {
  const char *name;          /* "profile", "hot-share", ... */
  const char *help;          /* one line for --help */
  const char *default_value; /* shown by --help; NULL = none */
} stc_pass_option_spec;

/* One parsed `name=value` of a pipeline element; borrowed strings. */
typedef struct stc_pass_option_value {
  const char *name;
  const char *value;
} stc_pass_option_value;

typedef struct stc_pass_spec {
  const char *argument;    /* pipeline name, e.g. "stc-instrument" */
  const char *description; /* one line for --help */
  const char *op_name;     /* anchor op, e.g. "builtin.module"; "" = any op */
  const stc_pass_option_spec *options;
  size_t num_options;
  /* Builds a pass. On an unknown option or a bad value returns a null
   * MlirPass (mlirPassIsNull... ptr == NULL) with the reason in err. The
   * returned pass is owned by the caller until added to a pass manager. */
  MlirPass (*create)(const stc_pass_option_value *values, size_t count,
                     stc_error *err);
} stc_pass_spec;

/* Every stc pass, in --help order; static storage. */
const stc_pass_spec *const *stc_pass_specs(size_t *count);
/* The pass whose argument is `argument`, or NULL. */
const stc_pass_spec *stc_pass_find(const char *argument);

/* The specs, one per file in passes/. */
extern const stc_pass_spec stc_instrument_pass_spec;
extern const stc_pass_spec stc_hot_path_schedule_pass_spec;
extern const stc_pass_spec stc_multi_variant_pass_spec;

/* stc-multi-variant for another target (--target=cuda): the sites' schedules
 * are exactly `scripts` (name = the named sequence, script = a transform
 * module whose sequence carries stc.kind / stc.dynamic like a built-in),
 * not the CPU built-ins or a variant library; the site descriptors say
 * target = "<target>". values as for the pass spec's create. Strings are
 * copied. NULL pass with err set on a bad option or out of memory. */
/* accepts (optional, NULL = every op the sequence's stc.* fields admit),
 * called with the site's op and the schedule's name: false with a reason in why when the schedule's variant would not be
 * correct for this op (e.g. a shape its generated kernel does not handle);
 * the site then gets no such variant and a remark says why. */
typedef bool (*stc_site_accepts_fn)(MlirOperation op, const char *schedule, char *why,
                                    size_t why_size);
typedef struct stc_schedule_text {
  const char *name;
  const char *script;
  stc_site_accepts_fn accepts;
} stc_schedule_text;
MlirPass stc_multi_variant_pass_create_for_target(
    const stc_pass_option_value *values, size_t count, const char *target,
    const stc_schedule_text *scripts, size_t num_scripts, stc_error *err);
extern const stc_pass_spec stc_out_params_scope_pass_spec;
extern const stc_pass_spec stc_lower_dispatch_pass_spec;
extern const stc_pass_spec stc_lower_blas_pass_spec;
extern const stc_pass_spec stc_site_results_in_place_pass_spec;
extern const stc_pass_spec stc_default_lowering_pass_spec;
extern const stc_pass_spec stc_buffer_deallocation_pass_spec;
extern const stc_pass_spec stc_hoist_accumulators_pass_spec;
extern const stc_pass_spec stc_lower_pack_unpack_pass_spec;

/* How one stc pass is made: each pass's factory parses its options into
 * a state and ends in stc__create_pass. */
typedef struct stc_pass_def {
  const stc_pass_spec *spec; /* argument, description, anchor op */
  const char *type_name;     /* e.g. "StcLowerBlas" */
  /* Address of a static, 8-byte aligned object of the pass's own file: the
   * pass's TypeID. */
  const void *type_id_anchor;
  const MlirDialectHandle *dialects; /* dialects the pass creates ops of */
  size_t num_dialects;
  void (*run)(MlirOperation op, MlirExternalPass pass, void *state);
  /* The state's copy (for pass clones; MLIR's clone cannot fail, so a copy
   * may return NULL and the run reports it) and destructor. NULL for both:
   * the state is immutable (or NULL) and clones share it. */
  void *(*copy)(void *state);
  void (*destroy)(void *state);
} stc_pass_def;

/* The external pass of `def`; it owns `state` from here on. */
MlirPass stc__create_pass(const stc_pass_def *def, void *state);

/* For passes without options: false with err set when count > 0. */
bool stc__no_options(const char *pass, const stc_pass_option_value *values,
                     size_t count, stc_error *err);

/* Small IR helpers every pass uses. */
static inline MlirStringRef stc__str(const char *text) {
  return mlirStringRefCreateFromCString(text);
}
/* True when op's name is exactly `name` ("linalg.matmul"). */
static inline bool stc__op_is(MlirOperation op, const char *name) {
  MlirStringRef have = mlirIdentifierStr(mlirOperationGetName(op));
  return strlen(name) == have.length && memcmp(name, have.data, have.length) == 0;
}

/* passes/lower_blas.c: whether the vendor-BLAS entry points compute a
 * linalg.matmul / batch_matmul with its indexing maps - the default ones,
 * or A and/or B read transposed in their last two dims (C as is) -, and
 * which operands are transposed. matvec / vecmat (fixed maps): true. */
bool stc__blas_maps(MlirOperation op, bool transposed[3]);

/* Test-only passes (passes/test_passes.c), named stc-test-*. */
extern const stc_pass_spec stc_test_annotate_pass_spec;
extern const stc_pass_spec stc_test_fail_pass_spec;

#ifdef __cplusplus
}
#endif

#endif /* STC_PASSES_H */
