/* stc-hot-path-schedule: decides how much optimization effort each region
 * gets (DESIGN.md section 4).
 *
 * In:  a module (instrumented or not) and, optionally, a profile file.
 * Out: on every region op (region_id.h: computing linalg ops and function
 *      bodies) the attributes
 *        stc.hotness = "hot" | "warm" | "cold"
 *        stc.rank    = <i64, 1 = most time>
 *        stc.share   = <f64, share of all region time>
 *        stc.plan    = "variants:<k>" | "default"
 *      and, with budget-ms, stc.budget_ms on the module (stc-multi-variant
 *      measures its work against it);
 *      one remark per region, and a summary remark on the module. The pass
 *      never changes computation: it only adds attributes, so every plan is
 *      sound whatever the profile says (stale, empty, adversarial).
 *
 * Steps (one function each, called in order by run()):
 *   1. find the regions and their ids (stc.region, or computed the same way
 *      stc-instrument would: region_id.c);
 *   2. give each a record: from the profile (matched by id; entries with no
 *      region are stale and counted), or without a profile from a static
 *      estimate (FLOPs + bytes, as pseudo-nanoseconds);
 *   3. turn function bodies' inclusive times into self times (the regions
 *      nested in them are ranked on their own);
 *   4. classify with stc_classify (shares, min samples, max hot, or the
 *      absolute mean rule) and rank by total time;
 *   5. spend the variant budget in rank order: a hot tunable op
 *      (contraction, convolution, reduction; with variant-ops only the ops
 *      named there, the target's) asks variants-per-hot, a warm one
 *      variants-per-warm, no more than can fit it (variant-ops' name:N,
 *      dynamic-variants for a dynamic shape), capped by what is left;
 *      everything else, and every region after the budget ran out, keeps
 *      "default";
 *   6. write the attributes and the remarks.
 *
 * Remarks: the MLIR C API can emit only errors (mlirEmitError). Remarks go
 * through the transform dialect instead: a generated named sequence of
 * `transform.debug.emit_remark_at` (one per region, on a handle matched by
 * its stc.rank, plus the module-level ones) is verified and applied
 * with mlirTransformApplyNamedSequence. They reach the context's diagnostic
 * handler as real remarks at the ops' locations, so stc-opt prints them and
 * --verify-diagnostics checks them with expected-remark. */
#include "region_id.h"
#include "stc_passes.h"

#include "stc/hints.h"
#include "stc/profile.h"

#include <inttypes.h>
#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Linalg.h>
#include <mlir-c/Dialect/Transform.h>
#include <mlir-c/Dialect/Transform/Interpreter.h>
#include <mlir-c/IR.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS_NAME "stc-hot-path-schedule"

typedef struct schedule_options {
  char *profile; /* owned; NULL = static estimate */
  stc_classify_options classify;
  uint64_t budget;         /* variants in total */
  uint64_t budget_ms;      /* 0 = no compile-time budget */
  uint64_t ms_per_variant; /* cost model that turns budget_ms into variants */
  uint64_t variants_per_hot;
  uint64_t variants_per_warm;
  bool strict;
  /* variant-ops: the op names the target has variant schedules for (owned;
   * NULL = every tunable kind). Other tunable ops plan "default", so that
   * the budget goes to ops that can become sites (--target=cuda: matmul and
   * batch_matmul only). */
  char **variant_ops;
  size_t num_variant_ops;
  /* "name:N" in variant-ops: at most N variants fit that op (0 = no cap). */
  uint64_t *variant_caps;
  /* dynamic-variants: at most this many variants fit an op with a dynamic
   * dimension (0 = no cap). The budget is charged what can fit, not what
   * is asked for. */
  uint64_t dynamic_variants;
} schedule_options;

/* What the pass knows about one region. */
typedef struct region_info {
  const stc_region *region;
  bool tunable;
  bool matched;        /* profile mode: the profile has this id */
  bool dynamic;        /* static mode: some dim was counted as 1 */
  uint64_t flops;      /* static estimate */
  uint64_t bytes;      /* static estimate */
  stc_region_record record;
  const stc_ranked_region *ranked;
  char plan[32];
  bool budget_cut; /* wanted variants, got "default" because the budget ran out */
  bool no_variants; /* tunable, but not among variant-ops */
  /* The plan was capped to what can fit: by variant-ops' name:N (kind) or
   * by dynamic-variants (dynamic); 0 = not capped. */
  uint64_t capped;
  bool capped_dynamic;
} region_info;

typedef struct schedule_run {
  MlirContext ctx;
  MlirOperation module;
  const schedule_options *options;
  stc_region_list regions;
  region_info *infos;
  stc_hints_entry *entries;
  stc_ranked_region *ranked;
  region_info **by_rank; /* by_rank[r]: the info of ranked[r] */
  /* profile bookkeeping */
  size_t profile_entries, profile_matched;
  stc_text profile_warnings; /* one "file:line:col: message" per line */
  /* budget bookkeeping */
  uint64_t budget, spent;
  size_t budget_cut;
  size_t hot, warm, cold;
} schedule_run;


static void emit_error(MlirOperation op, const char *message) {
  mlirEmitError(mlirOperationGetLocation(op), message);
}

/* ---- static estimate ------------------------------------------------------ */

/* The extent of loop `dim`: the size of the first operand dimension indexed
 * by exactly that loop; 0 when no static size says it. */
static uint64_t loop_extent(MlirOperation op, MlirAttribute maps, intptr_t dim) {
  intptr_t num_maps = mlirArrayAttrGetNumElements(maps);
  intptr_t num_operands = mlirOperationGetNumOperands(op);
  for (intptr_t i = 0; i < num_maps && i < num_operands; i++) {
    MlirType type = mlirValueGetType(mlirOperationGetOperand(op, i));
    if (!mlirTypeIsAShaped(type) || !mlirShapedTypeHasRank(type))
      continue;
    MlirAffineMap map = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, i));
    intptr_t rank = mlirShapedTypeGetRank(type);
    for (intptr_t r = 0, n = mlirAffineMapGetNumResults(map); r < n && r < rank; r++) {
      MlirAffineExpr expr = mlirAffineMapGetResult(map, r);
      if (!mlirAffineExprIsADim(expr) || mlirAffineDimExprGetPosition(expr) != dim)
        continue;
      if (!mlirShapedTypeIsDynamicDim(type, r))
        return (uint64_t)mlirShapedTypeGetDimSize(type, r);
    }
  }
  return 0;
}

/* Number of init (output) operands: the last operand segment. */
static intptr_t num_inits(MlirOperation op) {
  MlirAttribute segments =
      mlirOperationGetAttributeByName(op, stc__str("operandSegmentSizes"));
  if (!mlirAttributeIsNull(segments) && mlirAttributeIsADenseI32Array(segments)) {
    intptr_t n = mlirDenseArrayGetNumElements(segments);
    if (n > 0)
      return mlirDenseI32ArrayGetElement(segments, n - 1);
  }
  return 1;
}

/* A loop that no output map uses is a reduction loop. */
static bool has_reduction_loop(MlirOperation op, MlirAttribute maps) {
  intptr_t num_maps = mlirArrayAttrGetNumElements(maps);
  intptr_t inits = num_inits(op);
  if (num_maps == 0 || inits <= 0 || inits > num_maps)
    return false;
  intptr_t num_dims =
      mlirAffineMapGetNumDims(mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, 0)));
  for (intptr_t dim = 0; dim < num_dims; dim++) {
    bool used = false;
    for (intptr_t i = num_maps - inits; i < num_maps && !used; i++) {
      MlirAffineMap map = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, i));
      for (intptr_t r = 0, n = mlirAffineMapGetNumResults(map); r < n && !used; r++)
        used = mlirAffineExprIsFunctionOfDim(mlirAffineMapGetResult(map, r), dim);
    }
    if (!used)
      return true;
  }
  return false;
}

/* FLOPs = 2 x iteration domain for contractions and convolutions (a multiply
 * and an add per point), the iteration domain for everything else; bytes of
 * every operand and result. Dynamic sizes count as 1. */
static void estimate_op(region_info *info) {
  MlirOperation op = info->region->op;
  MlirAttribute maps = mlirLinalgGetIndexingMapsAttribute(op);
  bool contraction = mlirLinalgIsAContractionOp(op) || mlirLinalgIsAConvolutionOp(op);
  uint64_t domain = 1;
  if (!mlirAttributeIsNull(maps) && mlirArrayAttrGetNumElements(maps) > 0) {
    intptr_t num_dims = mlirAffineMapGetNumDims(
        mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, 0)));
    for (intptr_t dim = 0; dim < num_dims; dim++) {
      uint64_t extent = loop_extent(op, maps, dim);
      if (extent == 0) {
        info->dynamic = true;
        extent = 1;
      }
      domain = stc__saturating_mul(domain, extent);
    }
    info->tunable = contraction || has_reduction_loop(op, maps);
  }
  info->flops = contraction ? stc__saturating_mul(domain, 2) : domain;
  info->bytes = stc_op_bytes(op, &info->dynamic);
}

static void estimate_all(schedule_run *run) {
  for (size_t i = 0; i < run->regions.count; i++) {
    region_info *info = &run->infos[i];
    if (info->region->kind == STC_REGION_OP)
      estimate_op(info);
    /* A function body's own work (outside its op regions) is taken as 0:
     * its ops are ranked on their own. */
    info->record.dispatch_count = 1;
    info->record.total_ns = stc__saturating_add(info->flops, info->bytes);
    info->record.max_ns = info->record.total_ns;
    info->record.bytes_total = info->bytes;
  }
}

/* ---- profile ---------------------------------------------------------------- */

static void collect_warning(void *user, const char *file, unsigned line,
                            unsigned column, const char *message) {
  stc_text *warnings = user;
  stc_text_appendf(warnings, "%s:%u:%u: %s\n", file ? file : "", line, column,
                   message ? message : "");
}

static int compare_info_ids(const void *a, const void *b) {
  const region_info *const *x = a, *const *y = b;
  return strcmp((*x)->region->id, (*y)->region->id);
}

/* Reads the profile and gives each region its record. false: error emitted. */
static bool load_profile(schedule_run *run) {
  stc_profile *profile = NULL;
  stc_error err;
  stc_error_clear(&err);
  stc_status status = stc_profile_read_file(run->options->profile, &profile, &err,
                                            collect_warning, &run->profile_warnings);
  if (status != STC_OK) {
    char where[1600], message[2048];
    stc_error_format(&err, where, sizeof where);
    snprintf(message, sizeof message, PASS_NAME ": cannot load profile '%s': %s",
             run->options->profile, where);
    emit_error(run->module, message);
    stc_profile_destroy(profile);
    return false;
  }
  size_t count = run->regions.count;
  region_info **by_id = malloc((count + 1) * sizeof *by_id);
  if (!by_id) {
    stc_profile_destroy(profile);
    emit_error(run->module, PASS_NAME ": out of memory matching the profile");
    return false;
  }
  for (size_t i = 0; i < count; i++) {
    by_id[i] = &run->infos[i];
    run->infos[i].record = (stc_region_record){0};
  }
  qsort(by_id, count, sizeof *by_id, compare_info_ids);
  run->profile_entries = profile->num_regions;
  for (size_t p = 0; p < profile->num_regions; p++) {
    const stc_profile_region *entry = &profile->regions[p];
    stc_region key_region = {.id = entry->id};
    region_info key_info = {.region = &key_region};
    region_info *key = &key_info;
    region_info **found = bsearch(&key, by_id, count, sizeof *by_id, compare_info_ids);
    if (!found)
      continue; /* stale: its region no longer exists */
    (*found)->matched = true;
    (*found)->record = (stc_region_record){
        .dispatch_count = entry->count,
        .total_ns = entry->total_ns,
        .max_ns = entry->max_ns,
        .bytes_total = entry->bytes,
    };
    run->profile_matched++;
  }
  free(by_id);
  stc_profile_destroy(profile);
  if (run->options->strict && run->profile_matched * 2 < run->profile_entries) {
    char message[1400];
    snprintf(message, sizeof message,
             PASS_NAME ": profile '%s' matches only %zu of its %zu entries "
                       "(strict: at least half must match this program)",
             run->options->profile, run->profile_matched, run->profile_entries);
    emit_error(run->module, message);
    return false;
  }
  return true;
}

/* ---- function self time ------------------------------------------------------ */

static bool same_symbol(MlirOperation op, MlirStringRef name) {
  MlirAttribute sym = mlirOperationGetAttributeByName(op, stc__str("sym_name"));
  if (mlirAttributeIsNull(sym) || !mlirAttributeIsAString(sym))
    return false;
  MlirStringRef value = mlirStringAttrGetValue(sym);
  return value.length == name.length && memcmp(value.data, name.data, name.length) == 0;
}

static bool same_parent(MlirOperation a, MlirOperation b) {
  return mlirOperationEqual(mlirOperationGetParentOperation(a),
                            mlirOperationGetParentOperation(b));
}

typedef struct call_walk {
  schedule_run *run;
  size_t caller;  /* index of the function region */
  uint64_t *nested_ns; /* out: time of regions reached by direct calls */
  size_t *callers; /* per region: number of call sites naming it (pass 1) */
  bool count_only;
} call_walk;

/* For one func.call in a function body: the regions the callee stands for are
 * a function region of that name (its time is split between its call sites)
 * or an outlined region function (the op region inside it). */
static MlirWalkResult visit_call(MlirOperation op, void *user) {
  call_walk *walk = user;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (name.length != 9 || memcmp(name.data, "func.call", 9) != 0)
    return MlirWalkResultAdvance;
  MlirAttribute callee = mlirOperationGetAttributeByName(op, stc__str("callee"));
  if (mlirAttributeIsNull(callee) || !mlirAttributeIsAFlatSymbolRef(callee))
    return MlirWalkResultAdvance;
  MlirStringRef target = mlirFlatSymbolRefAttrGetValue(callee);
  schedule_run *run = walk->run;
  MlirOperation caller = run->regions.items[walk->caller].op;
  for (size_t i = 0; i < run->regions.count; i++) {
    const stc_region *region = &run->regions.items[i];
    bool function_target = region->kind == STC_REGION_FUNCTION &&
                           same_symbol(region->op, target) &&
                           same_parent(region->op, caller);
    bool outlined_target = region->kind == STC_REGION_OP &&
                           !mlirAttributeIsNull(mlirOperationGetAttributeByName(
                               region->func, stc__str(STC_OUTLINED_ATTR))) &&
                           same_symbol(region->func, target) &&
                           same_parent(region->func, caller);
    if (walk->count_only) {
      if (function_target)
        walk->callers[i]++;
      continue;
    }
    uint64_t total = run->infos[i].record.total_ns;
    if (function_target)
      *walk->nested_ns = stc__saturating_add(*walk->nested_ns,
                                        total / (walk->callers[i] ? walk->callers[i] : 1));
    else if (outlined_target)
      *walk->nested_ns = stc__saturating_add(*walk->nested_ns, total);
  }
  return MlirWalkResultAdvance;
}

/* Profiles record inclusive time (rt_region.h): a function body's time holds
 * the op regions in it and the functions it calls. Ranking that next to its
 * own ops would count the same nanoseconds twice, so a function body keeps
 * only its self time: minus its op regions (in place or outlined), minus the
 * functions it calls (a callee's time split evenly between its call sites). */
static bool derive_self_times(schedule_run *run) {
  size_t count = run->regions.count;
  size_t *callers = calloc(count + 1, sizeof *callers);
  uint64_t *self = calloc(count + 1, sizeof *self);
  if (!callers || !self) {
    free(callers);
    free(self);
    emit_error(run->module, PASS_NAME ": out of memory");
    return false;
  }
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < count; i++) {
      const stc_region *region = &run->regions.items[i];
      if (region->kind != STC_REGION_FUNCTION)
        continue;
      uint64_t nested = 0;
      call_walk walk = {run, i, &nested, callers, pass == 0};
      mlirOperationWalk(region->op, visit_call, &walk, MlirWalkPreOrder);
      if (pass == 0)
        continue;
      for (size_t k = 0; k < count; k++)
        if (run->regions.items[k].kind == STC_REGION_OP &&
            mlirOperationEqual(run->regions.items[k].func, region->op))
          nested = stc__saturating_add(nested, run->infos[k].record.total_ns);
      uint64_t total = run->infos[i].record.total_ns;
      self[i] = total > nested ? total - nested : 0;
    }
  }
  /* Applied after every subtraction read the inclusive times. */
  for (size_t i = 0; i < count; i++)
    if (run->regions.items[i].kind == STC_REGION_FUNCTION)
      run->infos[i].record.total_ns = self[i];
  free(callers);
  free(self);
  return true;
}

/* ---- classification and budget ---------------------------------------------- */

static int compare_info_pointer(const void *a, const void *b) {
  const region_info *const *x = a, *const *y = b;
  uintptr_t p = (uintptr_t)(*x)->region->id, q = (uintptr_t)(*y)->region->id;
  return (p > q) - (p < q);
}

/* The info whose id string is exactly `id` (stc_classify hands back our own
 * pointers), via a sorted array: bsearch by pointer. */
static region_info *info_for(region_info **by_pointer, size_t count, const char *id) {
  stc_region key_region = {.id = (char *)id};
  region_info key_info = {.region = &key_region};
  region_info *key = &key_info;
  region_info **found =
      bsearch(&key, by_pointer, count, sizeof *by_pointer, compare_info_pointer);
  return found ? *found : NULL;
}

/* True when op's name is among variant-ops (or there is no such list);
 * *cap: at most that many variants fit it (0 = no cap). */
static bool has_variant_ops(const schedule_options *options, MlirOperation op,
                            uint64_t *cap) {
  *cap = 0;
  if (!options->variant_ops)
    return true;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  for (size_t i = 0; i < options->num_variant_ops; i++)
    if (strlen(options->variant_ops[i]) == name.length &&
        memcmp(options->variant_ops[i], name.data, name.length) == 0) {
      *cap = options->variant_caps[i];
      return true;
    }
  return false;
}

static bool classify_and_plan(schedule_run *run) {
  size_t count = run->regions.count;
  if (count == 0)
    return true;
  run->entries = calloc(count, sizeof *run->entries);
  run->ranked = calloc(count, sizeof *run->ranked);
  run->by_rank = calloc(count, sizeof *run->by_rank);
  region_info **by_pointer = malloc(count * sizeof *by_pointer);
  if (!run->entries || !run->ranked || !run->by_rank || !by_pointer) {
    free(by_pointer);
    emit_error(run->module, PASS_NAME ": out of memory");
    return false;
  }
  for (size_t i = 0; i < count; i++) {
    run->entries[i].region = run->infos[i].region->id; /* borrowed */
    run->entries[i].record = run->infos[i].record;
    by_pointer[i] = &run->infos[i];
  }
  qsort(by_pointer, count, sizeof *by_pointer, compare_info_pointer);
  stc_error err;
  stc_error_clear(&err);
  if (stc_classify(run->entries, count, &run->options->classify, run->ranked, &err) !=
      STC_OK) {
    char message[1200];
    snprintf(message, sizeof message, PASS_NAME ": cannot classify regions: %s",
             err.message);
    emit_error(run->module, message);
    free(by_pointer);
    return false;
  }
  const schedule_options *options = run->options;
  run->budget = options->budget;
  if (options->budget_ms != 0 && options->ms_per_variant != 0 &&
      options->budget_ms / options->ms_per_variant < run->budget)
    run->budget = options->budget_ms / options->ms_per_variant;
  uint64_t left = run->budget;
  for (size_t r = 0; r < count; r++) {
    region_info *info = info_for(by_pointer, count, run->ranked[r].region);
    if (!info)
      continue; /* cannot happen: classify returns our pointers */
    info->ranked = &run->ranked[r];
    run->by_rank[r] = info;
    stc_hotness hotness = run->ranked[r].hotness;
    run->hot += hotness == STC_HOTNESS_HOT;
    run->warm += hotness == STC_HOTNESS_WARM;
    run->cold += hotness == STC_HOTNESS_COLD;
    uint64_t want = 0, cap = 0;
    if (info->region->kind == STC_REGION_OP && info->tunable &&
        !has_variant_ops(options, info->region->op, &cap)) {
      info->tunable = false;
      info->no_variants = true;
    }
    if (info->region->kind == STC_REGION_OP && info->tunable)
      want = hotness == STC_HOTNESS_HOT    ? options->variants_per_hot
             : hotness == STC_HOTNESS_WARM ? options->variants_per_warm
                                           : 0;
    /* Ask (and charge the budget) only for what can fit the op. */
    if (cap != 0 && want > cap)
      want = info->capped = cap;
    if (options->dynamic_variants != 0 && want > options->dynamic_variants &&
        info->dynamic) {
      want = info->capped = options->dynamic_variants;
      info->capped_dynamic = true;
    }
    if (want == 0) {
      snprintf(info->plan, sizeof info->plan, "default");
    } else if (left == 0) {
      snprintf(info->plan, sizeof info->plan, "default");
      info->budget_cut = true;
      run->budget_cut++;
    } else {
      uint64_t k = want < left ? want : left;
      left -= k;
      run->spent += k;
      snprintf(info->plan, sizeof info->plan, "variants:%" PRIu64, k);
    }
  }
  free(by_pointer);
  return true;
}

/* ---- attributes and remarks ----------------------------------------------------- */

static void set_attributes(schedule_run *run) {
  MlirContext ctx = run->ctx;
  for (size_t i = 0; i < run->regions.count; i++) {
    const region_info *info = &run->infos[i];
    if (!info->ranked)
      continue;
    MlirOperation op = info->region->op;
    mlirOperationSetDiscardableAttributeByName(
        op, stc__str("stc.hotness"),
        mlirStringAttrGet(ctx, stc__str(stc_hotness_str(info->ranked->hotness))));
    mlirOperationSetDiscardableAttributeByName(
        op, stc__str("stc.rank"),
        mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), (int64_t)info->ranked->rank));
    mlirOperationSetDiscardableAttributeByName(
        op, stc__str("stc.share"),
        mlirFloatAttrDoubleGet(ctx, mlirF64TypeGet(ctx), info->ranked->share));
    mlirOperationSetDiscardableAttributeByName(
        op, stc__str("stc.plan"), mlirStringAttrGet(ctx, stc__str(info->plan)));
  }
  /* The plan was cut to budget-ms by an estimate (ms-per-variant each);
   * stc-multi-variant measures what it really spends against the same
   * budget. */
  if (run->options->budget_ms != 0)
    mlirOperationSetDiscardableAttributeByName(
        run->module, stc__str("stc.budget_ms"),
        mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64),
                           run->options->budget_ms > INT64_MAX
                               ? INT64_MAX
                               : (int64_t)run->options->budget_ms));
}

/* The text of one region's remark. */
static void region_remark(const schedule_run *run, const region_info *info,
                          stc_text *out) {
  const stc_ranked_region *ranked = info->ranked;
  stc_text_appendf(out, "%s: region '%s': rank %zu of %zu, %s, %.1f%% of ",
                   PASS_NAME, info->region->id, ranked->rank, run->regions.count,
                   stc_hotness_str(ranked->hotness), ranked->share * 100.0);
  if (run->options->profile) {
    if (info->matched)
      stc_text_appendf(out, "profiled time (%" PRIu64 " call%s, %" PRIu64 " ns%s)",
                       info->record.dispatch_count,
                       info->record.dispatch_count == 1 ? "" : "s", ranked->record.total_ns,
                       info->region->kind == STC_REGION_FUNCTION ? " self" : "");
    else
      stc_text_appendf(out, "profiled time (not in the profile)");
  } else {
    stc_text_appendf(out, "estimated cost (%" PRIu64 " FLOPs + %" PRIu64 " bytes%s)",
                     info->flops, info->bytes,
                     info->dynamic ? ", dynamic dims counted as 1" : "");
  }
  stc_text_appendf(out, ", plan %s", info->plan);
  if (info->capped && !info->budget_cut)
    stc_text_appendf(out, " (at most %" PRIu64 " variant%s fit%s %s)", info->capped,
                     info->capped == 1 ? "" : "s", info->capped == 1 ? "s" : "",
                     info->capped_dynamic ? "a dynamic shape" : "this op kind");
  if (info->budget_cut)
    stc_text_appendf(out, " (variant budget exhausted)");
  else if (info->region->kind == STC_REGION_FUNCTION)
    stc_text_appendf(out, " (function body)");
  else if (info->no_variants)
    stc_text_appendf(out, " (no variants for this op kind on the target: variant-ops)");
  else if (!info->tunable)
    stc_text_appendf(out, " (not a tunable op)");
}

static void summary_remark(const schedule_run *run, stc_text *out) {
  if (run->options->profile)
    stc_text_appendf(out, "%s: profile '%s': %zu entries, %zu matched, %zu stale; ",
                     PASS_NAME, run->options->profile, run->profile_entries,
                     run->profile_matched, run->profile_entries - run->profile_matched);
  else
    stc_text_appendf(out, "%s: no profile: ranked by static cost estimate (FLOPs + bytes); ",
                     PASS_NAME);
  stc_text_appendf(out,
                   "%zu regions: %zu hot, %zu warm, %zu cold; %" PRIu64
                   " of %" PRIu64 " variants planned",
                   run->regions.count, run->hot, run->warm, run->cold, run->spent,
                   run->budget);
}

static void script_remark(stc_text *script, const char *handle, const char *message) {
  stc_text_appendf(script, "    transform.debug.emit_remark_at %s, \"", handle);
  stc_text_append_escaped(script, message);
  stc_text_appendf(script, "\" : !transform.any_op\n");
}

/* Builds the remark script and applies it. A region's remark finds its op by
 * the stc.rank just written (unique in this run); a stale copy of a region op
 * carrying the same stc.rank from an earlier run would get the remark too. */
static bool emit_remarks(schedule_run *run) {
  stc_text script = {0}, message = {0};
  stc_text_appendf(&script,
                   "module attributes {transform.with_named_sequence} {\n"
                   "  transform.named_sequence @__stc_schedule_remarks("
                   "%%root: !transform.any_op {transform.readonly}) {\n");
  const char *warnings = run->profile_warnings.data;
  while (warnings && *warnings) {
    const char *end = strchr(warnings, '\n');
    size_t length = end ? (size_t)(end - warnings) : strlen(warnings);
    message.length = 0;
    stc_text_appendf(&message, "%s: profile warning: %.*s", PASS_NAME, (int)length,
                     warnings);
    script_remark(&script, "%root", message.data ? message.data : "");
    warnings += length + (end ? 1 : 0);
  }
  for (size_t r = 0; r < run->regions.count; r++) {
    region_info *info = run->by_rank[r];
    if (!info)
      continue;
    stc_text_appendf(&script,
                     "    %%r%zu = transform.structured.match attributes {stc.rank = %zu : i64} "
                     "in %%root : (!transform.any_op) -> !transform.any_op\n",
                     r, info->ranked->rank);
    message.length = 0;
    region_remark(run, info, &message);
    char handle[32];
    snprintf(handle, sizeof handle, "%%r%zu", r);
    script_remark(&script, handle, message.data ? message.data : "");
  }
  if (run->budget_cut) {
    message.length = 0;
    stc_text_appendf(&message,
                     "%s: variant budget exhausted after %" PRIu64 " variants; %zu "
                     "later tunable regions keep the default plan",
                     PASS_NAME, run->spent, run->budget_cut);
    if (run->options->budget_ms != 0 && run->budget < run->options->budget)
      stc_text_appendf(&message, " (budget-ms=%" PRIu64 " at ~%" PRIu64 " ms per variant)",
                       run->options->budget_ms, run->options->ms_per_variant);
    script_remark(&script, "%root", message.data ? message.data : "");
  }
  message.length = 0;
  summary_remark(run, &message);
  script_remark(&script, "%root", message.data ? message.data : "");
  stc_text_appendf(&script, "    transform.yield\n  }\n}\n");

  bool ok = !script.out_of_memory && !message.out_of_memory;
  MlirOperation script_module = {NULL};
  if (ok) {
    script_module = mlirOperationCreateParse(run->ctx, stc__str(script.data),
                                             stc__str(PASS_NAME " remarks"));
    /* An invalid script can crash the interpreter: verify it first. */
    ok = !mlirOperationIsNull(script_module) && mlirOperationVerify(script_module);
  }
  if (ok) {
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(script_module, 0));
    MlirOperation sequence = mlirBlockGetFirstOperation(body);
    MlirTransformOptions transform_options = mlirTransformOptionsCreate();
    ok = mlirLogicalResultIsSuccess(mlirTransformApplyNamedSequence(
        run->module, sequence, script_module, transform_options));
    mlirTransformOptionsDestroy(transform_options);
  }
  if (!ok)
    emit_error(run->module, PASS_NAME ": cannot emit the scheduling remarks");
  if (!mlirOperationIsNull(script_module))
    mlirOperationDestroy(script_module);
  stc_text_free(&script);
  stc_text_free(&message);
  return ok;
}

/* ---- the pass ------------------------------------------------------------------- */

static bool find_regions(schedule_run *run) {
  stc_error err;
  stc_error_clear(&err);
  MlirOperation blame;
  if (stc_region_collect(run->module, &run->regions, &err, &blame) != STC_OK) {
    char message[1200];
    snprintf(message, sizeof message, PASS_NAME ": %s", err.message);
    emit_error(mlirOperationIsNull(blame) ? run->module : blame, message);
    return false;
  }
  run->infos = calloc(run->regions.count + 1, sizeof *run->infos);
  if (!run->infos) {
    emit_error(run->module, PASS_NAME ": out of memory");
    return false;
  }
  for (size_t i = 0; i < run->regions.count; i++)
    run->infos[i].region = &run->regions.items[i];
  return true;
}

static void run_pass(MlirOperation module, MlirExternalPass pass, void *user) {
  schedule_run run = {
      .ctx = mlirOperationGetContext(module),
      .module = module,
      .options = user,
  };
  if (!user) {
    emit_error(module, PASS_NAME ": out of memory copying the pass options");
    mlirExternalPassSignalFailure(pass);
    return;
  }
  /* The estimate also decides which ops are tunable, so it runs either way;
   * a profile then replaces the records. */
  bool ok = find_regions(&run);
  if (ok) {
    estimate_all(&run);
    if (run.options->profile)
      ok = load_profile(&run) && derive_self_times(&run);
  }
  ok = ok && classify_and_plan(&run);
  if (ok) {
    set_attributes(&run);
    ok = emit_remarks(&run);
  }
  if (!ok)
    mlirExternalPassSignalFailure(pass);
  stc_region_list_free(&run.regions);
  free(run.infos);
  free(run.entries);
  free(run.ranked);
  free(run.by_rank);
  stc_text_free(&run.profile_warnings);
}

/* ---- pass object and options -------------------------------------------------------- */

static void options_free(schedule_options *options) {
  if (!options)
    return;
  free(options->profile);
  stc__string_list_free(options->variant_ops, options->num_variant_ops);
  free(options->variant_caps);
  free(options);
}

static schedule_options *options_copy(const schedule_options *from) {
  schedule_options *copy = malloc(sizeof *copy);
  if (!copy)
    return NULL;
  *copy = *from;
  copy->profile = NULL;
  copy->variant_ops = NULL;
  copy->variant_caps = NULL;
  copy->num_variant_ops = 0;
  bool ok = !from->profile || (copy->profile = strdup(from->profile)) != NULL;
  if (ok && from->variant_ops) {
    ok = stc__string_list_copy(from->variant_ops, from->num_variant_ops,
                               &copy->variant_ops);
    if (ok)
      copy->num_variant_ops = from->num_variant_ops;
    ok = ok && (copy->variant_caps =
                    malloc(from->num_variant_ops * sizeof *copy->variant_caps)) != NULL;
    if (ok)
      memcpy(copy->variant_caps, from->variant_caps,
             from->num_variant_ops * sizeof *copy->variant_caps);
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

static const stc_pass_option_spec option_specs[] = {
    {"profile", "profile YAML file (stc-profile: 1); without it regions are "
                "ranked by a static FLOPs + bytes estimate", NULL},
    {"hot-share", "hot = the smallest set of regions covering this share of time", "0.90"},
    {"cold-share", "regions beyond this cumulative share are cold", "0.999"},
    {"min-samples", "regions with fewer dispatches are cold", "1"},
    {"max-hot", "at most this many hot regions (0 = no cap)", "0"},
    {"hot-mean-ns", "non-zero: hot iff mean ns >= this (the original absolute rule)", "0"},
    {"budget", "variants to plan in total, hottest first", "16"},
    {"budget-ms", "compile-time budget in ms (0 = none), at ms-per-variant each", "0"},
    {"ms-per-variant", "estimated compile time of one variant, for budget-ms", "20"},
    {"variants-per-hot", "variants a hot tunable op asks for", "4"},
    {"variants-per-warm", "variants a warm tunable op asks for", "2"},
    {"strict", "fail when the profile matches fewer than half its entries", "false"},
    {"variant-ops", "comma-separated op names the target has variants for, each "
                    "optionally name:N (at most N variants fit it); others plan "
                    "default (default: every tunable op)", NULL},
    {"dynamic-variants", "at most this many variants fit an op with a dynamic "
                         "dimension (0 = no cap)", "0"},
};
#define NUM_OPTIONS (sizeof option_specs / sizeof option_specs[0])

static bool parse_option(schedule_options *options, const char *name,
                         const char *value, stc_error *err) {
  uint64_t number;
  if (strcmp(name, "profile") == 0) {
    if (!value || !*value) {
      stc_error_set(err, NULL, 0, 0, PASS_NAME ": option 'profile': expected a file name");
      return false;
    }
    free(options->profile);
    options->profile = strdup(value);
    if (!options->profile)
      stc_error_set(err, NULL, 0, 0, PASS_NAME ": out of memory");
    return options->profile != NULL;
  }
  if (strcmp(name, "hot-share") == 0)
    return stc__option_double(PASS_NAME, name, value, &options->classify.hot_share, err);
  if (strcmp(name, "cold-share") == 0)
    return stc__option_double(PASS_NAME, name, value, &options->classify.cold_share, err);
  if (strcmp(name, "strict") == 0)
    return stc__option_bool(PASS_NAME, name, value, &options->strict, err);
  if (strcmp(name, "variant-ops") == 0) {
    if (!stc__option_list(PASS_NAME, name, value ? value : "", "op names",
                          &options->variant_ops, &options->num_variant_ops, err))
      return false;
    free(options->variant_caps);
    options->variant_caps = calloc(options->num_variant_ops + 1, sizeof *options->variant_caps);
    if (!options->variant_caps) {
      stc_error_set(err, NULL, 0, 0, PASS_NAME ": out of memory");
      return false;
    }
    for (size_t i = 0; i < options->num_variant_ops; i++) {
      char *item = options->variant_ops[i], *colon = strchr(item, ':'), *end = NULL;
      bool ok = item[0] && item[0] != ':';
      if (ok && colon) {
        unsigned long long cap = strtoull(colon + 1, &end, 10);
        ok = colon[1] >= '0' && colon[1] <= '9' && end && !*end && cap > 0;
        options->variant_caps[i] = cap;
        *colon = 0;
      }
      if (!ok) {
        stc_error_set(err, NULL, 0, 0,
                      PASS_NAME ": option 'variant-ops': expected a comma-separated "
                                "list of op names, each optionally name:N with N > 0, "
                                "got '%s'", value ? value : "");
        return false;
      }
    }
    return true;
  }
  struct {
    const char *name;
    uint64_t *target;
  } integers[] = {
      {"min-samples", &options->classify.min_samples},
      {"hot-mean-ns", &options->classify.hot_mean_ns},
      {"budget", &options->budget},
      {"budget-ms", &options->budget_ms},
      {"ms-per-variant", &options->ms_per_variant},
      {"variants-per-hot", &options->variants_per_hot},
      {"variants-per-warm", &options->variants_per_warm},
      {"dynamic-variants", &options->dynamic_variants},
  };
  for (size_t i = 0; i < sizeof integers / sizeof integers[0]; i++)
    if (strcmp(name, integers[i].name) == 0)
      return stc__option_u64(PASS_NAME, name, value, integers[i].target, err);
  if (strcmp(name, "max-hot") == 0) {
    if (!stc__option_u64(PASS_NAME, name, value, &number, err))
      return false;
    options->classify.max_hot = number > SIZE_MAX ? SIZE_MAX : (size_t)number;
    return true;
  }
  stc_text known = {0};
  for (size_t i = 0; i < NUM_OPTIONS; i++)
    stc_text_appendf(&known, "%s%s", i ? ", " : "", option_specs[i].name);
  stc_error_set(err, NULL, 0, 0, PASS_NAME ": unknown option '%s' (known: %s)", name,
                known.data ? known.data : "");
  stc_text_free(&known);
  return false;
}

static _Alignas(8) char pass_type_anchor;

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  schedule_options *options = calloc(1, sizeof *options);
  if (!options) {
    stc_error_set(err, NULL, 0, 0, PASS_NAME ": out of memory");
    return (MlirPass){NULL};
  }
  stc_classify_options_init(&options->classify);
  options->budget = 16;
  options->ms_per_variant = 20;
  options->variants_per_hot = 4;
  options->variants_per_warm = 2;
  bool cold_share_given = false;
  for (size_t i = 0; i < count; i++) {
    const char *name = values[i].name ? values[i].name : "";
    cold_share_given = cold_share_given || strcmp(name, "cold-share") == 0;
    if (!parse_option(options, name, values[i].value, err)) {
      options_free(options);
      return (MlirPass){NULL};
    }
  }
  /* hot-share above the default cold-share (0.999) with no cold-share of
   * its own means "no warm band", not an error about an option never given. */
  if (!cold_share_given && options->classify.cold_share < options->classify.hot_share &&
      options->classify.hot_share <= 1.0)
    options->classify.cold_share = options->classify.hot_share;
  stc_error reason;
  stc_error_clear(&reason);
  if (stc_classify_options_validate(&options->classify, &reason) != STC_OK) {
    stc_error_set(err, NULL, 0, 0, PASS_NAME ": %s", reason.message);
    options_free(options);
    return (MlirPass){NULL};
  }
  MlirDialectHandle dialects[] = {mlirGetDialectHandle__transform__()};
  stc_pass_def def = {&stc_hot_path_schedule_pass_spec, "StcHotPathSchedule",
                      &pass_type_anchor, dialects, 1, run_pass, clone, destruct};
  return stc__create_pass(&def, options);
}

const stc_pass_spec stc_hot_path_schedule_pass_spec = {
    PASS_NAME,
    "classify regions hot/warm/cold from a profile (or a static estimate) and "
    "plan how many variants each gets",
    "builtin.module",
    option_specs,
    NUM_OPTIONS,
    create,
};
