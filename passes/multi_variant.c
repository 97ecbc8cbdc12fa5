/* stc-multi-variant: turns each tunable op planned for variants into a
 * "site": a reference function, K variant functions (one schedule each,
 * applied with the transform dialect) and a dispatch function that replaces
 * the op (DESIGN.md section 4, docs/dispatch-abi.md).
 *
 * In:  a module on tensors whose computing ops may carry stc.plan (from
 *      stc-hot-path-schedule) and stc.region (from stc-instrument).
 * Out: for each tunable op (linalg contractions: matmul, batch_matmul,
 *      matvec, vecmat, batch_matvec, contract, matmul_transpose_*;
 *      convolutions: every linalg *conv*; pooling: every linalg.pooling_*;
 *      reductions: linalg.generic with a reduction iterator) with all operands and results ranked tensors and
 *      stc.plan = "variants:<k>" (or every one with all=true), site S =
 *      "__stc_site_<region id made symbol-safe>" gets
 *        @S__ref         private; the op alone; stc.reference,
 *                        llvm.emit_c_interface
 *        @S__<schedule>  one per schedule that applied (at most k, capped by
 *                        max-variants): a clone of @S__ref with the script
 *                        applied to its op; stc.variant_of = @S,
 *                        stc.schedule = "<name>", llvm.emit_c_interface
 *        @S              private dispatch with the same signature;
 *                        stc.site = "<region id>", stc.site_descriptor =
 *                        {op, args [{role, element, rank}], variants [{name,
 *                        revision, symbol, workspace_bytes, eligibility}],
 *                        results [{element, rank}], static_shape, reference};
 *                        variants[0] is the reference. func-to-llvm keeps
 *                        it on the llvm.func, where stc-lower-dispatch reads
 *                        it.
 *      and the op becomes `func.call @S(operands) {stc.site = "<region id>"}`.
 *      The copies of the op in @S__ref and the variants lose the original's
 *      stc.* attributes (stc.region, stc.plan, ...).
 *
 * @S's body calls @S__ref. The runtime dispatch of include/stc/rt_dispatch.h
 * (slot load, stc_rt_site_enter) replaces it once the module is in the LLVM
 * dialect (stc-lower-dispatch, passes/lower_dispatch.c).
 *
 * Schedules are data (schedule_library.h): the built-in scripts embedded at
 * build time, plus variant-library=<file.yaml>. Every script is parsed and
 * VERIFIED once per run before any use (an invalid script crashes the
 * interpreter). A schedule applies to a site when its kind matches the op's
 * kind and, for a site with a dynamic dimension, it is safe for dynamic
 * shapes (stc.dynamic = "yes"); a schedule with stc.requires = "blas" (a
 * vendor-BLAS variant, lowered by stc-lower-blas) applies only to ops the
 * runtime's BLAS entry points compute exactly, and its variant gets
 * eligibility "blas". It is applied to a detached clone of the
 * reference; if the interpreter fails or the result does not verify, the
 * clone is destroyed and a remark says so: never a crash, never a
 * half-transformed variant. A site where no schedule applied still gets its
 * reference and dispatch (the descriptor then lists only the reference).
 *
 * Remarks: the C API can only emit errors, so remarks are emitted through a
 * generated transform.debug.emit_remark_at script, as stc-hot-path-schedule
 * does. Ops inside functions this pass made (reference, variants, dispatch)
 * are never sites again: a second run changes nothing. */
#include "outline.h"
#include "region_id.h"
#include "schedule_library.h"
#include "transform_apply.h"
#include "stc_passes.h"

#include <inttypes.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Arith.h>
#include <mlir-c/Dialect/Bufferization.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/Linalg.h>
#include <mlir-c/Dialect/MemRef.h>
#include <mlir-c/Dialect/SCF.h>
#include <mlir-c/Dialect/Tensor.h>
#include <mlir-c/Dialect/Transform.h>
#include <mlir-c/Dialect/Transform/Interpreter.h>
#include <mlir-c/Dialect/Vector.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/IR.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PASS_NAME "stc-multi-variant"

#define ATTR_PLAN "stc.plan"
#define ATTR_REFERENCE "stc.reference"
#define ATTR_VARIANT_OF "stc.variant_of"
#define ATTR_SCHEDULE "stc.schedule"
#define ATTR_SITE "stc.site"
#define ATTR_DESCRIPTOR "stc.site_descriptor"
#define ATTR_C_INTERFACE "llvm.emit_c_interface"

typedef struct multi_variant_options {
  bool all;
  uint64_t max_variants; /* 0 = no cap */
  char *library;         /* owned; NULL = none */
  char **schedules;      /* owned; NULL = every schedule */
  size_t num_schedules;
  /* Compile-time budget in ms, measured; 0 = the module's stc.budget_ms
   * (written by stc-hot-path-schedule from its budget-ms), else none. */
  uint64_t budget_ms;
  /* Another target's schedules (stc_multi_variant_pass_create_for_target):
   * used instead of the CPU built-ins and the variant library. */
  char *target;              /* owned; NULL = the CPU */
  stc_schedule_text *scripts; /* owned, strings too */
  size_t num_scripts;
} multi_variant_options;

static void options_free(multi_variant_options *options) {
  if (!options)
    return;
  for (size_t i = 0; i < options->num_scripts; i++) {
    free((char *)options->scripts[i].name);
    free((char *)options->scripts[i].script);
  }
  free(options->scripts);
  free(options->target);
  free(options->library);
  stc__string_list_free(options->schedules, options->num_schedules);
  free(options);
}

/* ---- small IR helpers ------------------------------------------------------- */



static bool has_attr(MlirOperation op, const char *name) {
  return !mlirAttributeIsNull(mlirOperationGetAttributeByName(op, stc__str(name)));
}

/* ---- diagnostics ---------------------------------------------------------- */

static void emit_error(MlirLocation loc, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void emit_error(MlirLocation loc, const char *format, ...) {
  char message[2048];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  mlirEmitError(loc, message);
}

static void emit_remark(MlirContext ctx, MlirOperation at, const char *message) {
  stc__pass_remark(ctx, at, message);
}

/* ---- schedules ------------------------------------------------------------ */

/* A schedule ready to apply: its script parsed and verified once per run. */
typedef struct prepared_schedule {
  const stc_schedule *schedule;
  MlirOperation module; /* owned; null when not selected */
  MlirOperation entry;  /* the named sequence inside module */
  bool blas;            /* stc.requires = "blas": a vendor-BLAS variant */
  bool cublas;          /* stc.requires = "cublas": a cuBLAS variant */
  bool tf32;            /* stc.requires = "tf32": a TF32 tensor-core variant
                           (eligible only where the policy allows TF32) */
  int tier;             /* stc.tier: static cost class, 0 = most promising */
  /* stc.divides = [BM, BN, BK] (GPU schedules): only for static matmul /
   * batch_matmul ops with default maps whose M, N, K these divide. */
  bool has_divides;
  int64_t divides[3];
  /* stc.element_type (GPU schedules): only for ops whose operands and
   * result all have this element type (null: any). */
  MlirType element;
  /* --target=cuda: the script's shape check (stc_schedule_text.accepts). */
  stc_site_accepts_fn accepts;
} prepared_schedule;

/* Static cost classes (stc.tier, optional on any schedule): 0 vendor
 * library, 1 parallel or register-blocked vectorized code, 2 other
 * vectorized code (the default), 3 scalar code. A site planned for k
 * variants gets the k most promising that apply (a variant library's
 * schedules without stc.tier count as tier 0), and the descriptor lists
 * them in this order, which the runtime tuner takes as the static cost
 * order: scalar schedules, which the vectorized default lowering (the
 * reference) always beats, are only offered when every schedule is asked
 * for. */
enum { TIER_DEFAULT = 2, TIER_LAST = 3 };

/* Reports a script problem at the best place: inside the YAML file at the
 * script's line, or at the module for a built-in (a build error). */
static void script_error(MlirContext ctx, MlirOperation module,
                         const stc_schedule *s, unsigned script_line,
                         unsigned script_column, const char *what,
                         const char *detail) {
  if (s->builtin) {
    emit_error(mlirOperationGetLocation(module),
               PASS_NAME ": built-in schedule '%s': %s%s", s->name, what, detail);
    return;
  }
  unsigned line, column;
  stc_schedule_locate(s, script_line, script_column, &line, &column);
  emit_error(mlirLocationFileLineColGet(ctx, stc__str(s->file), line, column),
             PASS_NAME ": schedule '%s': %s%s", s->name, what, detail);
}

/* Reads stc.kind / stc.dynamic of a built-in from its named sequence. */
static bool read_builtin_fields(MlirContext ctx, MlirOperation module,
                                stc_schedule *s, MlirOperation entry) {
  MlirAttribute kind = mlirOperationGetAttributeByName(entry, stc__str("stc.kind"));
  MlirAttribute dynamic = mlirOperationGetAttributeByName(entry, stc__str("stc.dynamic"));
  if (mlirAttributeIsNull(kind) || !mlirAttributeIsAString(kind) ||
      mlirAttributeIsNull(dynamic) || !mlirAttributeIsAString(dynamic)) {
    script_error(ctx, module, s, 0, 0,
                 "the named sequence lacks the string attributes stc.kind "
                 "and stc.dynamic", "");
    return false;
  }
  MlirStringRef k = mlirStringAttrGetValue(kind);
  MlirStringRef d = mlirStringAttrGetValue(dynamic);
  char dynamic_text[32];
  snprintf(dynamic_text, sizeof dynamic_text, "%.*s", (int)d.length, d.data);
  s->kind = strndup(k.data, k.length);
  if (!s->kind || !stc_schedule_shapes_parse(dynamic_text, &s->shapes)) {
    script_error(ctx, module, s, 0, 0, "bad stc.dynamic value ", dynamic_text);
    return false;
  }
  return true;
}

/* The interpreter binds the site's op to the sequence's one argument; a
 * declaration, or a sequence taking anything else, can never apply. */
static bool entry_takes_one_op(MlirOperation entry) {
  if (mlirOperationGetNumRegions(entry) != 1)
    return false;
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(entry, 0));
  if (mlirBlockIsNull(body) || mlirBlockGetNumArguments(body) != 1)
    return false;
  MlirType type = mlirValueGetType(mlirBlockGetArgument(body, 0));
  return mlirTypeIsATransformAnyOpType(type) ||
         mlirTypeIsATransformOperationType(type);
}

static unsigned op_line(MlirOperation op) {
  MlirLocation loc = mlirOperationGetLocation(op);
  return mlirLocationIsAFileLineColRange(loc)
             ? (unsigned)mlirLocationFileLineColRangeGetStartLine(loc)
             : 0;
}

static unsigned op_column(MlirOperation op) {
  MlirLocation loc = mlirOperationGetLocation(op);
  return mlirLocationIsAFileLineColRange(loc)
             ? (unsigned)mlirLocationFileLineColRangeGetStartColumn(loc)
             : 0;
}

/* Reads the optional stc.requires of a schedule's named sequence (built-in
 * or user): "blas" makes its variants vendor-BLAS variants (eligible only
 * where the runtime loads a BLAS, offered only for ops BLAS computes, and
 * lowered by stc-lower-blas). Anything else is an error: a requirement the
 * compiler does not know must not be dropped silently. */
static bool read_requirement(MlirContext ctx, MlirOperation module,
                             stc_schedule *s, prepared_schedule *out) {
  MlirAttribute requires =
      mlirOperationGetAttributeByName(out->entry, stc__str("stc.requires"));
  if (mlirAttributeIsNull(requires))
    return true;
  MlirStringRef value = mlirAttributeIsAString(requires)
                            ? mlirStringAttrGetValue(requires)
                            : (MlirStringRef){"", 0};
  if (value.length == 4 && memcmp(value.data, "blas", 4) == 0) {
    out->blas = true;
    return true;
  }
  if (s->builtin && value.length == 6 && memcmp(value.data, "cublas", 6) == 0) {
    out->blas = out->cublas = true; /* generated (--target=cuda) only */
    return true;
  }
  if (s->builtin && value.length == 4 && memcmp(value.data, "tf32", 4) == 0) {
    out->tf32 = true; /* generated (--target=cuda --gpu-tf32=on) only */
    return true;
  }
  script_error(ctx, module, s, op_line(out->entry), op_column(out->entry),
               "stc.requires must be the string \"blas\"", "");
  return false;
}

/* Parses, verifies and finds the entry of one schedule; false with an error
 * emitted (located in the YAML file for user schedules). */
static bool prepare_schedule(MlirContext ctx, MlirOperation module,
                             stc_schedule *s, prepared_schedule *out) {
  stc_diag_capture capture;
  MlirDiagnosticHandlerID handler = stc__capture_begin(ctx, &capture);
  MlirOperation script = mlirOperationCreateParse(
      ctx, stc__str(s->script), stc__str(s->builtin ? s->name : s->file));
  bool verified = !mlirOperationIsNull(script) && mlirOperationVerify(script);
  stc__capture_end(ctx, handler);
  bool ok = false;
  if (mlirOperationIsNull(script)) {
    script_error(ctx, module, s, capture.line, capture.column,
                 "script is invalid: ", stc__capture_text(&capture));
  } else if (!stc__op_is(script, "builtin.module")) {
    script_error(ctx, module, s, 1, 1, "script must be a builtin.module", "");
  } else if (!verified) {
    script_error(ctx, module, s, capture.line, capture.column,
                 "script does not verify: ", stc__capture_text(&capture));
  } else {
    out->entry = stc__find_sequence(script, s->name);
    if (mlirOperationIsNull(out->entry))
      script_error(ctx, module, s, 1, 1,
                   "script has no transform.named_sequence @", s->name);
    else if (!entry_takes_one_op(out->entry))
      script_error(ctx, module, s, op_line(out->entry), op_column(out->entry),
                   "the named sequence must have a body and take exactly one "
                   "op handle (!transform.any_op or !transform.op<...>): the "
                   "site's op", "");
    else
      ok = (!s->builtin || read_builtin_fields(ctx, module, s, out->entry)) &&
           read_requirement(ctx, module, s, out);
  }
  stc_text_free(&capture.message);
  if (!ok) {
    if (!mlirOperationIsNull(script))
      mlirOperationDestroy(script);
    return false;
  }
  out->schedule = s;
  out->module = script;
  MlirAttribute divides =
      mlirOperationGetAttributeByName(out->entry, stc__str("stc.divides"));
  if (!mlirAttributeIsNull(divides) && mlirAttributeIsADenseI64Array(divides) &&
      mlirDenseArrayGetNumElements(divides) == 3) {
    out->has_divides = true;
    for (intptr_t i = 0; i < 3; i++)
      out->divides[i] = mlirDenseI64ArrayGetElement(divides, i);
  }
  MlirAttribute element =
      mlirOperationGetAttributeByName(out->entry, stc__str("stc.element_type"));
  out->element = (MlirType){NULL};
  if (!mlirAttributeIsNull(element) && mlirAttributeIsAType(element))
    out->element = mlirTypeAttrGetValue(element);
  /* A user's schedules come first unless they say otherwise: they were
   * written for this program. */
  out->tier = s->builtin ? TIER_DEFAULT : 0;
  MlirAttribute tier = mlirOperationGetAttributeByName(out->entry, stc__str("stc.tier"));
  if (!mlirAttributeIsNull(tier) && mlirAttributeIsAInteger(tier)) {
    int64_t value = mlirIntegerAttrGetValueInt(tier);
    out->tier = value < 0 ? 0 : value > TIER_LAST ? TIER_LAST : (int)value;
  }
  return true;
}

static bool schedule_selected(const multi_variant_options *options,
                              const char *name) {
  if (!options->schedules)
    return true;
  for (size_t i = 0; i < options->num_schedules; i++)
    if (strcmp(options->schedules[i], name) == 0)
      return true;
  return false;
}

/* Loads the user library, then the built-ins, and prepares every selected
 * schedule. User schedules come first: a site's variant count is capped by
 * its plan, and a schedule the user asked for should not be crowded out by
 * built-ins. False with an error emitted. */
static bool load_schedules(MlirContext ctx, MlirOperation module,
                           const multi_variant_options *options,
                           stc_schedule_list *list, prepared_schedule **out) {
  stc_error err;
  stc_error_clear(&err);
  stc_status status = STC_OK;
  if (options->target) {
    for (size_t i = 0; i < options->num_scripts && status == STC_OK; i++)
      status = stc_schedule_list_add_text(list, options->scripts[i].name,
                                          options->scripts[i].script, &err);
  } else {
    if (options->library)
      status = stc_schedule_list_load_yaml(list, options->library, &err);
    if (status == STC_OK)
      status = stc_schedule_list_add_builtins(list, &err);
  }
  if (status != STC_OK) {
    MlirLocation loc =
        err.file[0] && err.line
            ? mlirLocationFileLineColGet(ctx, stc__str(err.file), err.line, err.column)
            : mlirOperationGetLocation(module);
    emit_error(loc, PASS_NAME ": %s%s%s", err.line ? "" : err.file,
               err.line || !err.file[0] ? "" : ": ", err.message);
    return false;
  }
  for (size_t i = 0; i < options->num_schedules; i++) {
    bool known = false;
    for (size_t k = 0; k < list->count && !known; k++)
      known = strcmp(list->items[k].name, options->schedules[i]) == 0;
    if (!known) {
      emit_error(mlirOperationGetLocation(module),
                 PASS_NAME ": option 'schedules': unknown schedule '%s'",
                 options->schedules[i]);
      return false;
    }
  }
  *out = calloc(list->count + 1, sizeof **out);
  if (!*out) {
    emit_error(mlirOperationGetLocation(module), PASS_NAME ": out of memory");
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < list->count; i++) {
    /* A user library's scripts are all checked, selected or not: a broken
     * file is an error whatever the selection. */
    if (!schedule_selected(options, list->items[i].name) &&
        list->items[i].builtin)
      continue;
    if (!prepare_schedule(ctx, module, &list->items[i], &(*out)[i]))
      ok = false;
    else if (options->target && i < options->num_scripts)
      (*out)[i].accepts = options->scripts[i].accepts;
  }
  return ok;
}

static void prepared_free(prepared_schedule *prepared, size_t count) {
  if (!prepared)
    return;
  for (size_t i = 0; i < count; i++)
    if (!mlirOperationIsNull(prepared[i].module))
      mlirOperationDestroy(prepared[i].module);
  free(prepared);
}

/* ---- which ops are sites ---------------------------------------------------- */

static const char *const contraction_ops[] = {
    "linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat",
    "linalg.batch_matvec", "linalg.batch_vecmat", "linalg.contract",
    "linalg.batch_reduce_matmul", "linalg.matmul_transpose_a",
    "linalg.matmul_transpose_b", "linalg.batch_matmul_transpose_a",
    "linalg.batch_matmul_transpose_b",
};

static bool has_reduction_iterator(MlirOperation op) {
  MlirAttribute iterators = mlirOperationGetAttributeByName(op, stc__str("iterator_types"));
  if (mlirAttributeIsNull(iterators))
    return false;
  stc_text text = {0};
  mlirAttributePrint(iterators, stc_text_callback, &text);
  bool found = text.data && strstr(text.data, "reduction");
  stc_text_free(&text);
  return found;
}

/* True when every indexing map of a linalg.generic is a projected
 * permutation. The reduction schedules tile the reduction with partial
 * results, and MLIR 22's partial-reduction tiling crashes (it does not fail)
 * on a map with a constant result such as (d0, d1) -> (d0, 0); such a
 * generic keeps its default lowering. */
static bool maps_are_projected_permutations(MlirOperation op) {
  MlirAttribute maps = mlirOperationGetAttributeByName(op, stc__str("indexing_maps"));
  if (mlirAttributeIsNull(maps) || !mlirAttributeIsAArray(maps))
    return false;
  for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(maps); i++) {
    MlirAttribute map = mlirArrayAttrGetElement(maps, i);
    if (!mlirAttributeIsAAffineMap(map) ||
        !mlirAffineMapIsProjectedPermutation(mlirAffineMapAttrGetValue(map)))
      return false;
  }
  return true;
}

/* The op's schedule kind ("matmul", "conv_2d_nhwc_hwcf", "reduction", ...)
 * written into kind, or false when the op is not tunable. */
static bool tunable_kind(MlirOperation op, char *kind, size_t size) {
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  char full[128];
  if (name.length >= sizeof full)
    return false;
  memcpy(full, name.data, name.length);
  full[name.length] = 0;
  if (strncmp(full, "linalg.", 7) != 0)
    return false;
  bool tunable = false;
  if (strcmp(full, "linalg.generic") == 0) {
    if (!has_reduction_iterator(op) || !maps_are_projected_permutations(op))
      return false;
    snprintf(kind, size, "reduction");
    return true;
  }
  for (size_t i = 0; i < sizeof contraction_ops / sizeof contraction_ops[0]; i++)
    tunable = tunable || strcmp(full, contraction_ops[i]) == 0;
  tunable = tunable || strstr(full + 7, "conv") != NULL ||
            strncmp(full + 7, "pooling_", 8) == 0;
  if (tunable)
    snprintf(kind, size, "%s", full + 7);
  return tunable;
}

/* True when every operand and result is a ranked tensor; *dynamic when one
 * has a dynamic dimension. */
static bool on_ranked_tensors(MlirOperation op, bool *dynamic) {
  *dynamic = false;
  intptr_t num_operands = mlirOperationGetNumOperands(op);
  intptr_t num_results = mlirOperationGetNumResults(op);
  if (num_results == 0)
    return false;
  for (intptr_t i = 0; i < num_operands + num_results; i++) {
    MlirType type = i < num_operands
                        ? mlirValueGetType(mlirOperationGetOperand(op, i))
                        : mlirValueGetType(mlirOperationGetResult(op, i - num_operands));
    if (!mlirTypeIsARankedTensor(type))
      return false;
    if (!mlirShapedTypeHasStaticShape(type))
      *dynamic = true;
  }
  return true;
}

/* Variants the plan asks for (all=true: as many as apply, whatever the
 * plan): 0 = none, SIZE_MAX = as many as apply; capped by max-variants. */
static size_t planned_variants(const multi_variant_options *options,
                               MlirOperation op) {
  size_t wanted = options->all ? SIZE_MAX : 0;
  MlirAttribute plan = mlirOperationGetAttributeByName(op, stc__str(ATTR_PLAN));
  if (!options->all && !mlirAttributeIsNull(plan) && mlirAttributeIsAString(plan)) {
    MlirStringRef text = mlirStringAttrGetValue(plan);
    char buffer[64];
    if (text.length < sizeof buffer) {
      memcpy(buffer, text.data, text.length);
      buffer[text.length] = 0;
      char *end = NULL;
      if (strncmp(buffer, "variants:", 9) == 0) {
        unsigned long long k = strtoull(buffer + 9, &end, 10);
        if (end && !*end && end != buffer + 9)
          wanted = k > SIZE_MAX ? SIZE_MAX : (size_t)k;
      }
    }
  }
  if (options->max_variants && wanted > options->max_variants)
    wanted = (size_t)options->max_variants;
  return wanted;
}

/* Functions this pass made are never searched for sites again. */
static bool made_by_this_pass(MlirOperation func) {
  return has_attr(func, ATTR_REFERENCE) || has_attr(func, ATTR_VARIANT_OF) ||
         has_attr(func, ATTR_SITE);
}

/* ---- building a site ------------------------------------------------------- */

typedef struct run_state {
  MlirContext ctx;
  MlirOperation module;
  const multi_variant_options *options;
  const stc_schedule_list *schedules;
  prepared_schedule *prepared;
  MlirSymbolTable table; /* of the module */
  uint64_t budget_ms;    /* 0 = none */
  struct timespec start; /* of the pass, for budget_ms */
} run_state;

typedef struct site {
  MlirOperation op;
  MlirOperation func; /* the function holding op */
  const char *id;
  char kind[128];
  bool dynamic;
  size_t wanted;
  char name[600]; /* the dispatch symbol */
} site;

/* "main/linalg.matmul#9f2c41d0.1" -> "__stc_site_main_linalg_matmul_9f2c41d0_1",
 * plus "_<n>" when the name (or its __ref) is taken. */
static void site_name(run_state *state, site *s) {
  char base[560];
  size_t at = (size_t)snprintf(base, sizeof base, "__stc_site_");
  for (const char *p = s->id; *p && at + 1 < sizeof base; p++) {
    char c = *p;
    bool safe = c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                (c >= 'A' && c <= 'Z');
    base[at++] = safe ? c : '_';
  }
  base[at] = 0;
  for (unsigned n = 0;; n++) {
    if (n == 0)
      snprintf(s->name, sizeof s->name, "%s", base);
    else
      snprintf(s->name, sizeof s->name, "%s_%u", base, n);
    char ref[640];
    snprintf(ref, sizeof ref, "%s__ref", s->name);
    if (mlirOperationIsNull(mlirSymbolTableLookup(state->table, stc__str(s->name))) &&
        mlirOperationIsNull(mlirSymbolTableLookup(state->table, stc__str(ref))))
      return;
  }
}

/* A value the payload uses from outside can be copied into the reference
 * only when a constant-like op (no operands, no regions) defines it. */
static bool copyable_capture(MlirValue value) {
  if (mlirValueIsABlockArgument(value))
    return false;
  MlirOperation owner = mlirOpResultGetOwner(value);
  return mlirOperationGetNumOperands(owner) == 0 &&
         mlirOperationGetNumRegions(owner) == 0 &&
         mlirOperationGetNumResults(owner) == 1;
}

static MlirType site_function_type(run_state *state, MlirOperation op) {
  intptr_t num_inputs = mlirOperationGetNumOperands(op);
  intptr_t num_results = mlirOperationGetNumResults(op);
  MlirType *types = malloc(sizeof(MlirType) * (size_t)(num_inputs + num_results + 1));
  if (!types)
    return (MlirType){NULL};
  for (intptr_t i = 0; i < num_inputs; i++)
    types[i] = mlirValueGetType(mlirOperationGetOperand(op, i));
  for (intptr_t i = 0; i < num_results; i++)
    types[num_inputs + i] = mlirValueGetType(mlirOperationGetResult(op, i));
  MlirType type = mlirFunctionTypeGet(state->ctx, num_inputs, types, num_results,
                                      types + num_inputs);
  free(types);
  return type;
}

/* The reference's copy of the op loses the stc.* attributes of the
 * original (stc.region, stc.plan, ...): the site keeps the id (stc.site),
 * and a copy in the reference and in every variant would give several ops
 * the same stc.region, which region_id.c rightly rejects. */
static void drop_stc_attributes(MlirOperation op) {
  for (intptr_t i = mlirOperationGetNumDiscardableAttributes(op) - 1; i >= 0; i--) {
    MlirNamedAttribute attribute = mlirOperationGetDiscardableAttribute(op, i);
    MlirStringRef name = mlirIdentifierStr(attribute.name);
    if (name.length >= strlen(STC_ATTR_PREFIX) &&
        memcmp(name.data, STC_ATTR_PREFIX, strlen(STC_ATTR_PREFIX)) == 0)
      mlirOperationRemoveDiscardableAttributeByName(op, name);
  }
}

/* @S__ref: the op (a clone, operands rewired to the arguments, constants
 * its payload uses copied in) and a return. */
static MlirOperation build_reference(run_state *state, const site *s,
                                     MlirType type, const stc_value_list *captured) {
  MlirLocation loc = mlirOperationGetLocation(s->op);
  char name[640];
  snprintf(name, sizeof name, "%s__ref", s->name);
  MlirBlock body;
  MlirOperation func = stc__build_private_function(state->ctx, loc, name, type, &body);
  if (mlirOperationIsNull(func))
    return func;
  MlirOperation clone = mlirOperationClone(s->op);
  drop_stc_attributes(clone);
  for (size_t i = 0; i < captured->count; i++) {
    MlirOperation constant = mlirOperationClone(mlirOpResultGetOwner(captured->items[i]));
    mlirBlockAppendOwnedOperation(body, constant);
    stc__rewire_inside(captured->items[i], clone, mlirOperationGetResult(constant, 0));
  }
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(clone); i < n; i++)
    mlirOperationSetOperand(clone, i, mlirBlockGetArgument(body, i));
  mlirBlockAppendOwnedOperation(body, clone);
  if (!stc__append_return(body, loc, clone)) {
    mlirOperationDestroy(func);
    return (MlirOperation){NULL};
  }
  mlirOperationSetAttributeByName(func, stc__str(ATTR_REFERENCE), mlirUnitAttrGet(state->ctx));
  mlirOperationSetAttributeByName(func, stc__str(ATTR_C_INTERFACE), mlirUnitAttrGet(state->ctx));
  return func;
}

/* The op a schedule targets inside a reference or its clone: the last op
 * before the return (constants copied in come first). */
static MlirOperation target_in(MlirOperation func) {
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  MlirOperation ret = mlirBlockGetTerminator(body);
  MlirOperation target = {NULL};
  for (MlirOperation op = mlirBlockGetFirstOperation(body);
       !mlirOperationIsNull(op) && !mlirOperationEqual(op, ret);
       op = mlirOperationGetNextInBlock(op))
    target = op;
  return target;
}

typedef struct workspace_walk {
  uint64_t bytes;
  bool unknown;
} workspace_walk;

static MlirWalkResult workspace_visit(MlirOperation op, void *user) {
  workspace_walk *walk = user;
  if (stc__op_is(op, "tensor.empty") || stc__op_is(op, "bufferization.alloc_tensor") ||
      stc__op_is(op, "memref.alloc") || stc__op_is(op, "memref.alloca")) {
    bool dynamic = false;
    uint64_t bytes = stc_type_bytes(mlirValueGetType(mlirOperationGetResult(op, 0)), &dynamic);
    walk->unknown = walk->unknown || dynamic;
    walk->bytes = stc__saturating_add(walk->bytes, bytes);
  }
  return MlirWalkResultAdvance;
}

/* Temporary bytes a variant allocates (packed copies, padded tiles), by the
 * static sizes of the buffers it creates; -1 when a size is dynamic. The
 * runtime uses it as a hint, never for correctness. */
static int64_t workspace_bytes(MlirOperation func) {
  workspace_walk walk = {0, false};
  mlirOperationWalk(func, workspace_visit, &walk, MlirWalkPreOrder);
  if (walk.unknown || walk.bytes > INT64_MAX)
    return -1;
  return (int64_t)walk.bytes;
}

static const char *eligibility(stc_schedule_shapes shapes, bool blas, bool cublas,
                               bool tf32) {
  if (tf32)
    return "tf32"; /* only where the policy allows TF32 results */
  if (cublas)
    return "cublas"; /* only where cuBLAS loads and a device is usable */
  if (blas)
    return "blas"; /* every shape: the entry points read them at run time */
  switch (shapes) {
  case STC_SCHEDULE_SHAPES_STATIC:
    return "static-shape";
  case STC_SCHEDULE_SHAPES_DIVISIBLE:
    return "divisible";
  default:
    return "always";
  }
}

/* One variant built for a site, for the descriptor. */
typedef struct built_variant {
  const stc_schedule *schedule;
  bool blas, cublas, tf32;
  char symbol[700];
  int64_t workspace;
} built_variant;

/* Clones the reference, applies schedule `p` to the clone's op, and keeps
 * the clone (inserted after *place_after) only if it applied and verifies. */
static bool try_variant(run_state *state, const site *s, MlirOperation ref,
                        const prepared_schedule *p, MlirOperation *place_after,
                        built_variant *out) {
  MlirContext ctx = state->ctx;
  const stc_schedule *schedule = p->schedule;
  snprintf(out->symbol, sizeof out->symbol, "%s__%s", s->name, schedule->name);
  if (!mlirOperationIsNull(mlirSymbolTableLookup(state->table, stc__str(out->symbol)))) {
    char message[900];
    snprintf(message, sizeof message,
             PASS_NAME ": schedule '%s' dropped for site '%s': symbol @%s exists",
             schedule->name, s->id, out->symbol);
    emit_remark(ctx, s->op, message);
    return false;
  }
  MlirOperation variant = mlirOperationClone(ref);
  mlirOperationSetAttributeByName(variant, stc__str("sym_name"),
                                  mlirStringAttrGet(ctx, stc__str(out->symbol)));
  mlirOperationRemoveAttributeByName(variant, stc__str(ATTR_REFERENCE));
  mlirOperationSetAttributeByName(variant, stc__str(ATTR_VARIANT_OF),
                                  mlirFlatSymbolRefAttrGet(ctx, stc__str(s->name)));
  mlirOperationSetAttributeByName(variant, stc__str(ATTR_SCHEDULE),
                                  mlirStringAttrGet(ctx, stc__str(schedule->name)));
  MlirOperation target = target_in(variant);
  stc_diag_capture capture;
  MlirDiagnosticHandlerID handler = stc__capture_begin(ctx, &capture);
  bool ok = !mlirOperationIsNull(target) &&
            stc__apply_sequence(target, p->entry, p->module) &&
            mlirOperationVerify(variant);
  stc__capture_end(ctx, handler);
  if (!ok) {
    mlirOperationDestroy(variant);
    stc_text message = {0};
    stc_text_appendf(&message,
                     PASS_NAME ": schedule '%s' does not apply to site '%s' "
                               "(dropped): %s",
                     schedule->name, s->id, stc__capture_text(&capture));
    if (!message.out_of_memory)
      emit_remark(ctx, s->op, message.data);
    stc_text_free(&message);
    stc_text_free(&capture.message);
    return false;
  }
  stc_text_free(&capture.message);
  mlirSymbolTableInsert(state->table, variant);
  mlirOperationMoveAfter(variant, *place_after);
  *place_after = variant;
  out->schedule = schedule;
  out->blas = p->blas;
  out->cublas = p->cublas;
  out->tf32 = p->tf32;
  out->workspace = workspace_bytes(variant);
  return true;
}

/* The role of operand i: ins are read, outs are written and also read when
 * the payload uses their block argument (an accumulator). */
static const char *operand_role(MlirOperation op, intptr_t i) {
  intptr_t num_inputs = mlirOperationGetNumOperands(op);
  MlirAttribute segments =
      mlirOperationGetAttributeByName(op, stc__str("operandSegmentSizes"));
  if (!mlirAttributeIsNull(segments) && mlirAttributeIsADenseI32Array(segments) &&
      mlirDenseArrayGetNumElements(segments) >= 1)
    num_inputs = mlirDenseI32ArrayGetElement(segments, 0);
  if (i < num_inputs)
    return "input";
  if (mlirOperationGetNumRegions(op) == 0)
    return "output";
  MlirBlock block = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
  if (mlirBlockIsNull(block) || i >= mlirBlockGetNumArguments(block))
    return "output";
  MlirValue arg = mlirBlockGetArgument(block, i);
  return mlirOpOperandIsNull(mlirValueGetFirstUse(arg)) ? "output" : "both";
}

static void append_symbol(stc_text *text, const char *symbol) {
  stc_text_append(text, "@\"", 2);
  stc_text_append_escaped(text, symbol);
  stc_text_append(text, "\"", 1);
}

/* The end of an argument or result entry of the descriptor, after its
 * opening `element = "`: the escaped element type of the shaped `type`,
 * then its rank. */
static void append_element_and_rank(stc_text *text, MlirType type) {
  stc_text element = {0};
  mlirTypePrint(mlirShapedTypeGetElementType(type), stc_text_callback, &element);
  stc_text_append_escaped(text, element.data ? element.data : "");
  stc_text_free(&element);
  stc_text_appendf(text, "\", rank = %" PRId64 " : i64}",
                   mlirShapedTypeGetRank(type));
}

/* The site descriptor as a dictionary attribute (see the file comment). */
static MlirAttribute descriptor(run_state *state, const site *s,
                                const char *ref_symbol,
                                const built_variant *variants, size_t count) {
  stc_text text = {0};
  stc_text_appendf(&text, "{op = \"");
  MlirStringRef op_name = mlirIdentifierStr(mlirOperationGetName(s->op));
  stc_text_append(&text, op_name.data, op_name.length);
  stc_text_appendf(&text, "\", args = [");
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(s->op); i < n; i++) {
    MlirType type = mlirValueGetType(mlirOperationGetOperand(s->op, i));
    stc_text_appendf(&text, "%s{role = \"%s\", element = \"", i ? ", " : "",
                     operand_role(s->op, i));
    append_element_and_rank(&text, type);
  }
  stc_text_appendf(&text, "], variants = [{name = \"reference\", revision = "
                          "\"1\", symbol = ");
  append_symbol(&text, ref_symbol);
  stc_text_appendf(&text, ", workspace_bytes = 0 : i64, eligibility = \"always\"}");
  for (size_t i = 0; i < count; i++) {
    stc_text_appendf(&text, ", {name = \"");
    stc_text_append_escaped(&text, variants[i].schedule->name);
    stc_text_appendf(&text, "\", revision = \"1\", symbol = ");
    append_symbol(&text, variants[i].symbol);
    stc_text_appendf(&text,
                     ", workspace_bytes = %" PRId64 " : i64, eligibility = \"%s\"}",
                     variants[i].workspace,
                     eligibility(variants[i].schedule->shapes, variants[i].blas,
                                 variants[i].cublas, variants[i].tf32));
  }
  /* The results, for the out-params buffer-results-to-out-params may add
   * (stc-lower-dispatch gives them role output), and whether every shape is
   * static (only then does the site get a slot). */
  stc_text_appendf(&text, "], results = [");
  for (intptr_t i = 0, n = mlirOperationGetNumResults(s->op); i < n; i++) {
    MlirType type = mlirValueGetType(mlirOperationGetResult(s->op, i));
    stc_text_appendf(&text, "%s{element = \"", i ? ", " : "");
    append_element_and_rank(&text, type);
  }
  stc_text_appendf(&text, "], static_shape = %s, reference = 0 : i64",
                   s->dynamic ? "false" : "true");
  /* Another target: its arguments are device memory (stc-lower-dispatch
   * tells the runtime, which tunes with that target's trial runner). */
  if (state->options->target) {
    stc_text_appendf(&text, ", target = \"");
    stc_text_append_escaped(&text, state->options->target);
    stc_text_appendf(&text, "\"");
  }
  stc_text_appendf(&text, "}");
  MlirAttribute attr = {NULL};
  if (!text.out_of_memory)
    attr = mlirAttributeParseGet(state->ctx, stc__str(text.data));
  stc_text_free(&text);
  return attr;
}

/* @S: calls the reference for now (file comment), carries the site's id
 * and descriptor. */
static MlirOperation build_dispatch(run_state *state, const site *s,
                                    MlirType type, const char *ref_symbol,
                                    MlirAttribute desc) {
  MlirLocation loc = mlirOperationGetLocation(s->op);
  MlirBlock body;
  MlirOperation func = stc__build_private_function(state->ctx, loc, s->name, type, &body);
  if (mlirOperationIsNull(func))
    return func;
  intptr_t num_inputs = mlirFunctionTypeGetNumInputs(type);
  intptr_t num_results = mlirFunctionTypeGetNumResults(type);
  MlirValue *args = malloc(sizeof(MlirValue) * (size_t)(num_inputs + 1));
  MlirType *results = malloc(sizeof(MlirType) * (size_t)(num_results + 1));
  if (!args || !results) {
    free(args);
    free(results);
    mlirOperationDestroy(func);
    return (MlirOperation){NULL};
  }
  for (intptr_t i = 0; i < num_inputs; i++)
    args[i] = mlirBlockGetArgument(body, i);
  for (intptr_t i = 0; i < num_results; i++)
    results[i] = mlirFunctionTypeGetResult(type, i);
  MlirOperation call = stc__build_call(state->ctx, loc, stc__str(ref_symbol), num_inputs,
                                       args, num_results, results, false);
  free(args);
  free(results);
  mlirBlockAppendOwnedOperation(body, call);
  if (!stc__append_return(body, loc, call)) {
    mlirOperationDestroy(func);
    return (MlirOperation){NULL};
  }
  mlirOperationSetAttributeByName(func, stc__str(ATTR_SITE),
                                  mlirStringAttrGet(state->ctx, stc__str(s->id)));
  mlirOperationSetAttributeByName(func, stc__str(ATTR_DESCRIPTOR), desc);
  return func;
}

/* Replaces the op by `func.call @S(operands)` and destroys it. */
static bool replace_with_call(run_state *state, const site *s, MlirType type) {
  MlirOperation op = s->op;
  intptr_t num_operands = mlirOperationGetNumOperands(op);
  intptr_t num_results = mlirOperationGetNumResults(op);
  MlirValue *operands = malloc(sizeof(MlirValue) * (size_t)(num_operands + 1));
  if (!operands)
    return false;
  for (intptr_t i = 0; i < num_operands; i++)
    operands[i] = mlirOperationGetOperand(op, i);
  MlirType *results = malloc(sizeof(MlirType) * (size_t)(num_results + 1));
  if (!results) {
    free(operands);
    return false;
  }
  for (intptr_t i = 0; i < num_results; i++)
    results[i] = mlirFunctionTypeGetResult(type, i);
  MlirOperation call =
      stc__build_call(state->ctx, mlirOperationGetLocation(op), stc__str(s->name),
                      num_operands, operands, num_results, results, false);
  free(operands);
  free(results);
  if (mlirOperationIsNull(call))
    return false;
  mlirOperationSetDiscardableAttributeByName(
      call, stc__str(ATTR_SITE), mlirStringAttrGet(state->ctx, stc__str(s->id)));
  stc__replace_op_uses(op, call);
  mlirOperationDestroy(op);
  return true;
}

static const char *const blas_op_names[] = {"linalg.matmul", "linalg.batch_matmul",
                                           "linalg.matvec", "linalg.vecmat"};

static bool is_f32_or_f64(MlirType t) { return mlirTypeIsAF32(t) || mlirTypeIsAF64(t); }

/* True when the runtime's BLAS entry points compute op exactly: a matmul,
 * batch_matmul, matvec or vecmat whose maps BLAS takes (stc__blas_maps:
 * default, or A / B transposed), every operand and result of one element
 * type, f32 or f64 (no mixed-precision accumulation in BLAS), no extra
 * operands. */
static bool blas_computes(MlirOperation op) {
  bool known = false;
  for (size_t i = 0; i < sizeof blas_op_names / sizeof *blas_op_names; i++)
    known = known || stc__op_is(op, blas_op_names[i]);
  if (!known || mlirOperationGetNumOperands(op) != 3 || mlirOperationGetNumResults(op) != 1)
    return false;
  MlirType element = mlirShapedTypeGetElementType(
      mlirValueGetType(mlirOperationGetResult(op, 0)));
  if (!is_f32_or_f64(element))
    return false;
  for (intptr_t i = 0; i < 3; i++)
    if (!mlirTypeEqual(mlirShapedTypeGetElementType(
                           mlirValueGetType(mlirOperationGetOperand(op, i))),
                       element))
      return false;
  bool transposed[3];
  return stc__blas_maps(op, transposed);
}

/* stc.divides: a static op with default maps (no transposed operand) whose
 * M, N, K (the last two dims of A and of B) the schedule's tiles divide. */
static bool tiles_divide(MlirOperation op, const int64_t divides[3]) {
  bool transposed[3];
  if (mlirOperationGetNumOperands(op) != 3 || !stc__blas_maps(op, transposed) ||
      transposed[0] || transposed[1] || transposed[2])
    return false;
  MlirType a = mlirValueGetType(mlirOperationGetOperand(op, 0));
  MlirType b = mlirValueGetType(mlirOperationGetOperand(op, 1));
  if (!mlirShapedTypeHasStaticShape(a) || !mlirShapedTypeHasStaticShape(b))
    return false;
  intptr_t ra = mlirShapedTypeGetRank(a), rb = mlirShapedTypeGetRank(b);
  if (ra < 2 || rb < 2)
    return false;
  int64_t m = mlirShapedTypeGetDimSize(a, ra - 2), k = mlirShapedTypeGetDimSize(a, ra - 1),
          n = mlirShapedTypeGetDimSize(b, rb - 1);
  return divides[0] > 0 && divides[1] > 0 && divides[2] > 0 && m % divides[0] == 0 &&
         n % divides[1] == 0 && k % divides[2] == 0;
}

static bool schedule_fits(const site *s, const prepared_schedule *p) {
  const stc_schedule *schedule = p->schedule;
  if (!schedule->kind || strcmp(schedule->kind, s->kind) != 0)
    return false;
  if (p->blas && !blas_computes(s->op))
    return false;
  /* cuBLAS entry points: f32 only. */
  if (p->cublas && !mlirTypeIsAF32(mlirShapedTypeGetElementType(
                       mlirValueGetType(mlirOperationGetResult(s->op, 0)))))
    return false;
  if (p->has_divides && !tiles_divide(s->op, p->divides))
    return false;
  if (!mlirTypeIsNull(p->element))
    for (intptr_t i = 0; i < mlirOperationGetNumOperands(s->op); i++)
      if (!mlirTypeEqual(mlirShapedTypeGetElementType(
                             mlirValueGetType(mlirOperationGetOperand(s->op, i))),
                         p->element))
        return false;
  return !s->dynamic || schedule->shapes == STC_SCHEDULE_SHAPES_ANY;
}

/* The schedule's own check of the op (another target's generated
 * kernels); with remark, a declined op gets a remark saying why. */
static bool schedule_accepts(run_state *state, const site *s, const prepared_schedule *p,
                             bool remark) {
  char why[512] = "";
  if (!p->accepts || p->accepts(s->op, p->schedule->name, why, sizeof why))
    return true;
  if (remark) {
    char message[1200];
    snprintf(message, sizeof message,
             PASS_NAME ": schedule '%s' declines site '%s': %s", p->schedule->name, s->id,
             why);
    emit_remark(state->ctx, s->op, message);
  }
  return false;
}

/* ---- another target's sites: what the plan gave them ----------------------
 * stc-hot-path-schedule's remarks say how many variants each region is
 * planned for and why; these say what that became on the target: which
 * variants, of how many that fit the op, or why none. */

/* Schedules of the target that fit s (each applies to one op kind, so a
 * name counts once). */
static size_t target_fitting(run_state *state, const site *s) {
  size_t n = 0;
  for (size_t i = 0; i < state->schedules->count; i++)
    n += !mlirOperationIsNull(state->prepared[i].module) &&
         schedule_selected(state->options, state->prepared[i].schedule->name) &&
         schedule_fits(s, &state->prepared[i]) &&
         schedule_accepts(state, s, &state->prepared[i], false);
  return n;
}

/* stc.hotness of the op ("hot", "warm", "cold"), or "" without a plan. */
static void op_hotness(MlirOperation op, char *out, size_t size) {
  MlirAttribute hotness = mlirOperationGetAttributeByName(op, stc__str("stc.hotness"));
  out[0] = 0;
  if (!mlirAttributeIsNull(hotness) && mlirAttributeIsAString(hotness)) {
    MlirStringRef text = mlirStringAttrGetValue(hotness);
    snprintf(out, size, "%.*s", (int)text.length, text.data);
  }
}

static void target_no_fit_remark(run_state *state, const site *s) {
  char message[1200], hotness[32];
  op_hotness(s->op, hotness, sizeof hotness);
  snprintf(message, sizeof message,
           PASS_NAME ": '%s'%s%s is planned for variants:%zu but is not a %s site: "
                     "no %s variant fits it (cuBLAS and the /shared kernels take f32 "
                     "only, the generated kernels static shapes whose tiles divide "
                     "M, N and K); it keeps the default kernel",
           s->id, hotness[0] ? ", " : "", hotness, s->wanted, state->options->target,
           state->options->target);
  emit_remark(state->ctx, s->op, message);
}

/* One remark per site: its variants (descriptor order = tier order), out
 * of how many fit, and why that many. */
static void target_site_remark(run_state *state, const site *s,
                               const built_variant *variants, size_t built) {
  size_t fitting = target_fitting(state, s);
  stc_text message = {0}, names = {0};
  for (size_t i = 0; i < built; i++)
    stc_text_appendf(&names, "%s%s", i ? ", " : "", variants[i].schedule->name);
  char hotness[32];
  op_hotness(s->op, hotness, sizeof hotness);
  stc_text_appendf(&message, PASS_NAME ": '%s': %s site with %zu of the %zu variants "
                             "that fit (",
                   s->id, state->options->target, built, fitting);
  if (state->options->all)
    stc_text_appendf(&message, "no hot-path plan: all=true, every op a variant fits "
                               "(--target=cuda: an explicit --gpu-sites list alone)");
  else
    stc_text_appendf(&message, "%s%splan variants:%zu%s", hotness, hotness[0] ? ", " : "",
                     s->wanted,
                     s->wanted < fitting ? ", the most promising first" : "");
  stc_text_appendf(&message, "): %s", names.data ? names.data : "reference only");
  if (s->dynamic)
    stc_text_appendf(&message, "; dynamic shape: only cuBLAS and the reference (the "
                               "generated kernels need static M, N and K)");
  if (!message.out_of_memory && !names.out_of_memory)
    emit_remark(state->ctx, s->op, message.data);
  stc_text_free(&message);
  stc_text_free(&names);
}

/* Builds one site; *place_after is where its functions go (advanced). False
 * with an error emitted when the IR cannot be built (the pass fails). */
static bool build_site(run_state *state, site *s, MlirOperation *place_after) {
  MlirLocation loc = mlirOperationGetLocation(s->op);
  if (state->options->target) {
    /* Another target's site is only worth its dispatch with a variant: an
     * op no schedule fits keeps the target's default lowering. */
    bool any = false;
    for (size_t i = 0; i < state->schedules->count; i++)
      if (!mlirOperationIsNull(state->prepared[i].module) &&
          schedule_selected(state->options, state->prepared[i].schedule->name) &&
          schedule_fits(s, &state->prepared[i]) &&
          schedule_accepts(state, s, &state->prepared[i], true))
        any = true;
    if (!any) {
      if (!state->options->all)
        target_no_fit_remark(state, s);
      return true;
    }
  }
  stc_value_list captured = {0};
  if (!stc__capture_outside_values(s->op, &captured)) {
    free(captured.items);
    emit_error(loc, PASS_NAME ": out of memory");
    return false;
  }
  for (size_t i = 0; i < captured.count; i++)
    if (!copyable_capture(captured.items[i])) {
      free(captured.items);
      char message[900];
      snprintf(message, sizeof message,
               PASS_NAME ": site '%s' left alone: its payload uses a value "
                         "from outside that is not a constant",
               s->id);
      emit_remark(state->ctx, s->op, message);
      return true;
    }
  site_name(state, s);
  MlirType type = site_function_type(state, s->op);
  MlirOperation ref = mlirTypeIsNull(type)
                          ? (MlirOperation){NULL}
                          : build_reference(state, s, type, &captured);
  free(captured.items);
  if (mlirOperationIsNull(ref)) {
    emit_error(loc, PASS_NAME ": cannot build the reference of site '%s'", s->id);
    return false;
  }
  MlirAttribute ref_name = mlirSymbolTableInsert(state->table, ref);
  MlirStringRef ref_text = mlirStringAttrGetValue(ref_name);
  char ref_symbol[700];
  snprintf(ref_symbol, sizeof ref_symbol, "%.*s", (int)ref_text.length, ref_text.data);
  /* Order: caller, dispatch, reference, variants, next site. */
  mlirOperationMoveAfter(ref, *place_after);
  MlirOperation after = ref;

  built_variant *variants = NULL;
  size_t count = 0;
  size_t limit = s->wanted < state->schedules->count ? s->wanted : state->schedules->count;
  if (limit)
    variants = calloc(limit, sizeof *variants);
  if (limit && !variants) {
    emit_error(loc, PASS_NAME ": out of memory");
    return false;
  }
  for (size_t n = 0; n < (TIER_LAST + 1) * state->schedules->count && count < limit; n++) {
    const prepared_schedule *p = &state->prepared[n % state->schedules->count];
    if (p->tier != (int)(n / state->schedules->count) ||
        mlirOperationIsNull(p->module) ||
        !schedule_selected(state->options, p->schedule->name) ||
        !schedule_fits(s, p) || !schedule_accepts(state, s, p, false))
      continue;
    if (try_variant(state, s, ref, p, &after, &variants[count]))
      count++;
  }

  MlirAttribute desc = descriptor(state, s, ref_symbol, variants, count);
  if (state->options->target)
    target_site_remark(state, s, variants, count);
  free(variants);
  MlirOperation dispatch = mlirAttributeIsNull(desc)
                               ? (MlirOperation){NULL}
                               : build_dispatch(state, s, type, ref_symbol, desc);
  if (mlirOperationIsNull(dispatch)) {
    emit_error(loc, PASS_NAME ": cannot build the dispatch of site '%s'", s->id);
    return false;
  }
  mlirSymbolTableInsert(state->table, dispatch);
  mlirOperationMoveBefore(dispatch, ref);
  *place_after = after;
  if (!replace_with_call(state, s, type)) {
    emit_error(loc, PASS_NAME ": cannot build the call of site '%s'", s->id);
    return false;
  }
  return true;
}

/* ---- the pass --------------------------------------------------------------- */

/* ---- the compile-time budget -------------------------------------------------
 * Measured, not estimated: before each site the time this pass has spent is
 * compared with the budget; once it is spent, the sites left keep the
 * default lowering (a remark names each). With a budget, sites are built
 * hottest first (stc.rank), so the time goes to the hot regions; without
 * one, in module order. */

static int64_t region_rank(MlirOperation op) {
  MlirAttribute rank = mlirOperationGetAttributeByName(op, stc__str("stc.rank"));
  if (mlirAttributeIsNull(rank) || !mlirAttributeIsAInteger(rank))
    return INT64_MAX;
  return mlirIntegerAttrGetValueInt(rank);
}

static uint64_t elapsed_ms(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  int64_t ns = (int64_t)(now.tv_sec - start->tv_sec) * 1000000000 +
               (now.tv_nsec - start->tv_nsec);
  return ns > 0 ? (uint64_t)ns / 1000000 : 0;
}

static bool budget_spent(run_state *state, const site *s) {
  if (state->budget_ms == 0)
    return false;
  uint64_t spent = elapsed_ms(&state->start);
  if (spent < state->budget_ms)
    return false;
  char message[900];
  snprintf(message, sizeof message,
           PASS_NAME ": '%s' is planned for variants but is not a site: the "
                     "compile-time budget of %" PRIu64 " ms is spent (%" PRIu64
                     " ms measured); it keeps the default lowering",
           s->id, state->budget_ms, spent);
  emit_remark(state->ctx, s->op, message);
  return true;
}

/* Where the next site of `func` goes: after the last one built in it, or
 * after func itself. Sites built out of module order (hottest first) still
 * land next to their function. */
typedef struct placement {
  MlirOperation func, after;
} placement;

static MlirOperation *place_for(placement *places, size_t *count, MlirOperation func) {
  for (size_t i = 0; i < *count; i++)
    if (mlirOperationEqual(places[i].func, func))
      return &places[i].after;
  places[*count] = (placement){func, func};
  return &places[(*count)++].after;
}

static int compare_rank(const void *a, const void *b) {
  const size_t *x = a, *y = b;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

static bool multi_variant_module(run_state *state, const stc_region_list *regions) {
  /* The build order: pairs (region index, rank), sorted by rank when there
   * is a budget. Ranks are unique per run (stc-hot-path-schedule numbers
   * every region); unranked regions sort last, in any order. */
  size_t n = regions->count;
  size_t (*order)[2] = calloc(n ? n : 1, sizeof *order);
  placement *places = calloc(n ? n : 1, sizeof *places);
  size_t num_places = 0;
  if (!order || !places) {
    free(order);
    free(places);
    emit_error(mlirOperationGetLocation(state->module), PASS_NAME ": out of memory");
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    order[i][0] = i;
    order[i][1] = i;
    if (state->budget_ms) {
      int64_t rank = region_rank(regions->items[i].op);
      order[i][1] = rank == INT64_MAX ? SIZE_MAX : (size_t)rank;
    }
  }
  if (state->budget_ms)
    qsort(order, n, sizeof *order, compare_rank);
  bool ok = true;
  for (size_t k = 0; ok && k < n; k++) {
    const stc_region *region = &regions->items[order[k][0]];
    if (region->kind != STC_REGION_OP)
      continue;
    site s = {0};
    s.op = region->op;
    s.func = region->func;
    s.id = region->id;
    if (made_by_this_pass(s.func))
      continue;
    if (!tunable_kind(s.op, s.kind, sizeof s.kind)) {
      /* The scheduling pass plans by static cost, not by what has
       * schedules: a planned op of another kind (linalg.mmt4d, linalg.dot)
       * gets a remark rather than silence. */
      if (!state->options->all && planned_variants(state->options, s.op) > 0) {
        MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(s.op));
        char message[900];
        snprintf(message, sizeof message,
                 PASS_NAME ": '%s' (%.*s) is planned for variants but is not a "
                           "site: stc has variant schedules for matmul-like "
                           "contractions, convolutions, pooling and reductions "
                           "only; it keeps the default lowering",
                 s.id, (int)name.length, name.data);
        emit_remark(state->ctx, s.op, message);
      }
      continue;
    }
    s.wanted = planned_variants(state->options, s.op);
    if (s.wanted == 0)
      continue;
    if (!on_ranked_tensors(s.op, &s.dynamic)) {
      /* Planned, yet no site: say so instead of dropping the plan. */
      char message[900];
      snprintf(message, sizeof message,
               PASS_NAME ": '%s' is planned for variants but is not a site: a "
                         "site is made from an op whose operands and results "
                         "are all ranked tensors (this one has a memref or "
                         "scalar operand, or no result); it keeps the default "
                         "lowering",
               s.id);
      emit_remark(state->ctx, s.op, message);
      continue;
    }
    /* Only functions directly in the module: their symbols are what the
     * site functions can be placed next to and called from. */
    if (!mlirOperationEqual(mlirOperationGetParentOperation(s.func), state->module))
      continue;
    if (budget_spent(state, &s))
      continue;
    ok = build_site(state, &s, place_for(places, &num_places, s.func));
  }
  free(order);
  free(places);
  return ok;
}

static void run(MlirOperation module, MlirExternalPass pass, void *user) {
  if (!user) {
    mlirEmitError(mlirOperationGetLocation(module),
                  PASS_NAME ": out of memory copying the pass options");
    mlirExternalPassSignalFailure(pass);
    return;
  }
  run_state state = {
      .ctx = mlirOperationGetContext(module),
      .module = module,
      .options = user,
  };
  clock_gettime(CLOCK_MONOTONIC, &state.start);
  state.budget_ms = state.options->budget_ms;
  if (state.budget_ms == 0) {
    MlirAttribute budget =
        mlirOperationGetAttributeByName(module, stc__str("stc.budget_ms"));
    if (!mlirAttributeIsNull(budget) && mlirAttributeIsAInteger(budget) &&
        mlirIntegerAttrGetValueInt(budget) > 0)
      state.budget_ms = (uint64_t)mlirIntegerAttrGetValueInt(budget);
  }
  stc_schedule_list schedules = {0};
  stc_region_list regions = {0};
  bool ok = load_schedules(state.ctx, module, state.options, &schedules,
                           &state.prepared);
  state.schedules = &schedules;
  if (ok) {
    stc_error err;
    stc_error_clear(&err);
    MlirOperation blame = {NULL};
    if (stc_region_collect(module, &regions, &err, &blame) != STC_OK) {
      emit_error(mlirOperationGetLocation(mlirOperationIsNull(blame) ? module : blame),
                 PASS_NAME ": %s", err.message);
      ok = false;
    }
  }
  if (ok) {
    state.table = mlirSymbolTableCreate(module);
    ok = !mlirSymbolTableIsNull(state.table) && multi_variant_module(&state, &regions);
    if (!mlirSymbolTableIsNull(state.table))
      mlirSymbolTableDestroy(state.table);
  }
  if (!ok)
    mlirExternalPassSignalFailure(pass);
  stc_region_list_free(&regions);
  prepared_free(state.prepared, schedules.count);
  stc_schedule_list_free(&schedules);
}

/* ---- pass object and options ------------------------------------------------- */

static multi_variant_options *options_copy(const multi_variant_options *from) {
  multi_variant_options *copy = calloc(1, sizeof *copy);
  if (!copy)
    return NULL;
  copy->all = from->all;
  copy->max_variants = from->max_variants;
  copy->budget_ms = from->budget_ms;
  bool ok = true;
  if (from->library)
    ok = (copy->library = strdup(from->library)) != NULL;
  if (ok && from->schedules) {
    ok = stc__string_list_copy(from->schedules, from->num_schedules, &copy->schedules);
    copy->num_schedules = from->num_schedules;
  }
  if (ok && from->target)
    ok = (copy->target = strdup(from->target)) &&
         (copy->scripts = calloc(from->num_scripts + 1, sizeof *copy->scripts));
  for (size_t i = 0; ok && from->target && i < from->num_scripts; i++) {
    copy->scripts[i].name = strdup(from->scripts[i].name);
    copy->scripts[i].script = strdup(from->scripts[i].script);
    copy->scripts[i].accepts = from->scripts[i].accepts;
    copy->num_scripts = i + 1;
    ok = copy->scripts[i].name && copy->scripts[i].script;
  }
  if (!ok) {
    options_free(copy);
    return NULL;
  }
  return copy;
}

static void destruct(void *user) { options_free(user); }
/* MLIR's clone callback cannot fail; a clone without options (NULL) reports
 * the allocation failure when it runs instead. */
static void *clone(void *user) { return user ? options_copy(user) : NULL; }

/* "a,b,c" into owned names; empty elements are errors. */
static bool parse_schedule_names(const char *value, multi_variant_options *options,
                                 stc_error *err) {
  if (!stc__option_list(PASS_NAME, "schedules", value, "schedule names",
                        &options->schedules, &options->num_schedules, err))
    return false;
  for (size_t i = 0; i < options->num_schedules; i++)
    if (!options->schedules[i][0]) {
      stc_error_set(err, NULL, 0, 0,
                    PASS_NAME ": option 'schedules': expected a comma-separated "
                              "list of schedule names, got '%s'", value);
      return false;
    }
  return true;
}

static const stc_pass_option_spec option_specs[] = {
    {"all", "make a site of every tunable op, ignoring stc.plan (true|false)", "false"},
    {"max-variants", "at most this many variants per site (0 = no cap)", "0"},
    {"variant-library",
     "YAML file of extra schedules: a list of {name, kind, dynamic, script}", NULL},
    {"schedules", "comma-separated schedule names to use (default: all)", NULL},
    {"budget-ms",
     "compile-time budget in ms, measured; sites hottest first until it is "
     "spent (0 = the module's stc.budget_ms from stc-hot-path-schedule, else none)",
     "0"},
};

static _Alignas(8) char pass_type_anchor;

#define PASS_DESCRIPTION                                                      \
  "outline each tunable op planned for variants into a reference and one "   \
  "function per schedule (transform dialect), behind a dispatch function "   \
  "that for now always calls the reference (runtime dispatch: later step)"

static MlirPass create_with(const stc_pass_option_value *values, size_t count,
                            multi_variant_options *options, stc_error *err);

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  return create_with(values, count, calloc(1, sizeof(multi_variant_options)), err);
}

MlirPass stc_multi_variant_pass_create_for_target(
    const stc_pass_option_value *values, size_t count, const char *target,
    const stc_schedule_text *scripts, size_t num_scripts, stc_error *err) {
  multi_variant_options *options = calloc(1, sizeof *options);
  bool ok = options && target && (options->target = strdup(target)) &&
            (options->scripts = calloc(num_scripts + 1, sizeof *options->scripts));
  for (size_t i = 0; ok && i < num_scripts; i++) {
    options->scripts[i].name = strdup(scripts[i].name);
    options->scripts[i].script = strdup(scripts[i].script);
    options->scripts[i].accepts = scripts[i].accepts;
    options->num_scripts = i + 1;
    ok = options->scripts[i].name && options->scripts[i].script;
  }
  if (!ok) {
    options_free(options);
    stc_error_set(err, NULL, 0, 0, PASS_NAME ": out of memory");
    return (MlirPass){NULL};
  }
  return create_with(values, count, options, err);
}

static MlirPass create_with(const stc_pass_option_value *values, size_t count,
                            multi_variant_options *options, stc_error *err) {
  if (!options) {
    stc_error_set(err, NULL, 0, 0, PASS_NAME ": out of memory");
    return (MlirPass){NULL};
  }
  for (size_t i = 0; i < count; i++) {
    const char *name = values[i].name ? values[i].name : "";
    const char *value = values[i].value ? values[i].value : "";
    bool ok;
    if (strcmp(name, "all") == 0) {
      ok = stc__option_bool(PASS_NAME, name, value, &options->all, err);
    } else if (strcmp(name, "max-variants") == 0) {
      ok = stc__option_u64(PASS_NAME, name, value, &options->max_variants, err);
    } else if (strcmp(name, "variant-library") == 0) {
      free(options->library);
      options->library = NULL;
      ok = *value != 0;
      if (!ok)
        stc_error_set(err, NULL, 0, 0,
                      PASS_NAME ": option 'variant-library': expected a file name");
      else if (!(options->library = strdup(value))) {
        stc_error_set(err, NULL, 0, 0, PASS_NAME ": out of memory");
        ok = false;
      }
    } else if (strcmp(name, "schedules") == 0) {
      ok = parse_schedule_names(value, options, err);
    } else if (strcmp(name, "budget-ms") == 0) {
      ok = stc__option_u64(PASS_NAME, name, value, &options->budget_ms, err);
    } else {
      stc_error_set(err, NULL, 0, 0,
                    PASS_NAME ": unknown option '%s' (known: all, max-variants, "
                              "variant-library, schedules, budget-ms)",
                    name);
      ok = false;
    }
    if (!ok) {
      options_free(options);
      return (MlirPass){NULL};
    }
  }
  MlirDialectHandle dialects[] = {
      mlirGetDialectHandle__func__(),   mlirGetDialectHandle__transform__(),
      mlirGetDialectHandle__linalg__(), mlirGetDialectHandle__scf__(),
      mlirGetDialectHandle__vector__(), mlirGetDialectHandle__tensor__(),
      mlirGetDialectHandle__arith__(),  mlirGetDialectHandle__memref__(),
      mlirGetDialectHandle__bufferization__(),
  };
  stc_pass_def def = {&stc_multi_variant_pass_spec, "StcMultiVariant",
                      &pass_type_anchor, dialects,
                      sizeof dialects / sizeof dialects[0], run, clone, destruct};
  return stc__create_pass(&def, options);
}

const stc_pass_spec stc_multi_variant_pass_spec = {
    PASS_NAME,
    PASS_DESCRIPTION,
    "builtin.module",
    option_specs,
    sizeof option_specs / sizeof option_specs[0],
    create,
};
