/* stc-instrument: names every region and brackets it with the runtime's
 * region timer (DESIGN.md section 4; the ABI is include/stc/rt_region.h).
 *
 * In:  a module of func.func bodies with linalg ops (tensors or memrefs).
 * Out: the same computation, where
 *   - each computing linalg op (region_id.h says which) carries
 *     stc.region = "<id>" and lives alone in a new private function
 *     @<func>__stc_region_<n> (its operands and the values its payload uses
 *     from outside become arguments, its results are returned; the function
 *     carries stc.outlined_region = "<id>" and no_inline). The op's place
 *     holds a no_inline func.call to it, bracketed by
 *     stc_rt_region_begin / stc_rt_region_end. Timing an opaque call is the
 *     design's answer to "later passes may move a pure tensor op out of its
 *     brackets": nothing can hoist or sink work across a call with unknown
 *     side effects, and the callee keeps the work together.
 *   - each function body (functions=true) carries stc.region and begins its
 *     region at entry and ends it before every func.return.
 *   - each id is a NUL-terminated `llvm.mlir.global internal constant`
 *     @__stc_region_id_<hash of id>, passed by llvm.mlir.addressof.
 *   - @stc_rt_region_begin / @stc_rt_region_end are declared once per
 *     symbol table (private func.func declarations).
 * Idempotent: ops and functions that already carry stc.region, and outlined
 * functions, are left alone, so a second run changes nothing.
 *
 * Options: functions=true|false (bracket function bodies; default true),
 * ops=<name>,<name>... (only these computing ops; default all). */
#include "outline.h"
#include "region_id.h"
#include "stc_passes.h"

#include "stc/hash.h"
#include "stc/rt_region.h"

#include <inttypes.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Arith.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/LLVM.h>
#include <mlir-c/IR.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS_NAME "stc-instrument"

typedef struct instrument_options {
  bool functions;
  char **op_names; /* owned; NULL = every computing op */
  size_t num_op_names;
} instrument_options;

static void options_free(instrument_options *options) {
  if (!options)
    return;
  stc__string_list_free(options->op_names, options->num_op_names);
  free(options);
}

/* ---- IR building helpers ------------------------------------------------ */


static MlirNamedAttribute named(MlirContext ctx, const char *name,
                                MlirAttribute value) {
  return mlirNamedAttributeGet(mlirIdentifierGet(ctx, stc__str(name)), value);
}

static MlirOperation build(const char *name, MlirLocation loc,
                           intptr_t num_operands, const MlirValue *operands,
                           intptr_t num_results, const MlirType *results,
                           intptr_t num_attributes,
                           const MlirNamedAttribute *attributes) {
  MlirOperationState state = mlirOperationStateGet(stc__str(name), loc);
  mlirOperationStateAddOperands(&state, num_operands, operands);
  mlirOperationStateAddResults(&state, num_results, results);
  mlirOperationStateAddAttributes(&state, num_attributes, attributes);
  return mlirOperationCreate(&state);
}

static MlirOperation build_i64_constant(MlirContext ctx, MlirLocation loc,
                                        int64_t value) {
  MlirType i64 = mlirIntegerTypeGet(ctx, 64);
  MlirNamedAttribute attribute =
      named(ctx, "value", mlirIntegerAttrGet(i64, value));
  return build("arith.constant", loc, 0, NULL, 1, &i64, 1, &attribute);
}

/* ---- per-run state ------------------------------------------------------- */

/* Runtime declarations are made once per symbol table (usually one module). */
typedef struct table_entry {
  MlirOperation table_op;
  MlirSymbolTable table;
  bool declared;
} table_entry;

typedef struct run_state {
  MlirContext ctx;
  MlirOperation module;
  const instrument_options *options;
  table_entry *tables;
  size_t num_tables, cap_tables;
  MlirType ptr_type, i64_type;
} run_state;

static void fail_at(MlirOperation op, const char *format, const char *detail) {
  char message[1400]; /* room for a prefix and a full stc_error message */
  snprintf(message, sizeof message, format, detail);
  mlirEmitError(mlirOperationGetLocation(op), message);
}

static table_entry *table_for(run_state *state, MlirOperation func) {
  MlirOperation table_op = mlirOperationGetParentOperation(func);
  if (mlirOperationIsNull(table_op))
    return NULL;
  for (size_t i = 0; i < state->num_tables; i++)
    if (mlirOperationEqual(state->tables[i].table_op, table_op))
      return &state->tables[i];
  MlirSymbolTable table = mlirSymbolTableCreate(table_op);
  if (mlirSymbolTableIsNull(table))
    return NULL;
  if (state->num_tables == state->cap_tables) {
    size_t grown = state->cap_tables ? state->cap_tables * 2 : 4;
    table_entry *bigger = realloc(state->tables, grown * sizeof *bigger);
    if (!bigger) {
      mlirSymbolTableDestroy(table);
      return NULL;
    }
    state->tables = bigger;
    state->cap_tables = grown;
  }
  table_entry *entry = &state->tables[state->num_tables++];
  entry->table_op = table_op;
  entry->table = table;
  entry->declared = false;
  return entry;
}

static MlirOperation first_in_table(MlirOperation table_op) {
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(table_op, 0));
  return mlirBlockGetFirstOperation(body);
}

/* Makes sure @name is a func.func of the ABI's type: declares it at the top
 * of the table, or checks an existing symbol. */
static bool declare_runtime_function(run_state *state, table_entry *entry,
                                     const char *name, const char *type_text) {
  MlirOperation existing = mlirSymbolTableLookup(entry->table, stc__str(name));
  MlirType expected = mlirTypeParseGet(state->ctx, stc__str(type_text));
  if (!mlirOperationIsNull(existing)) {
    MlirAttribute type = mlirOperationGetAttributeByName(existing, stc__str("function_type"));
    MlirStringRef kind = mlirIdentifierStr(mlirOperationGetName(existing));
    bool is_func = kind.length == 9 && memcmp(kind.data, "func.func", 9) == 0;
    if (is_func && !mlirAttributeIsNull(type) && mlirAttributeIsAType(type) &&
        mlirTypeEqual(mlirTypeAttrGetValue(type), expected))
      return true;
    char message[512];
    snprintf(message, sizeof message,
             PASS_NAME ": symbol @%s already exists but is not the region "
                       "timer's func.func %s (include/stc/rt_region.h)",
             name, type_text);
    mlirEmitError(mlirOperationGetLocation(existing), message);
    return false;
  }
  char text[256];
  snprintf(text, sizeof text, "func.func private @%s%s", name, type_text);
  /* "(!llvm.ptr) -> i64" as a declaration's signature is "(!llvm.ptr) -> i64";
   * a "-> ()" result list is written as nothing. */
  char *no_results = strstr(text, " -> ()");
  if (no_results)
    *no_results = 0;
  MlirOperation decl = mlirOperationCreateParse(state->ctx, stc__str(text), stc__str(PASS_NAME));
  if (mlirOperationIsNull(decl)) {
    fail_at(state->module, PASS_NAME ": cannot build the declaration of @%s", name);
    return false;
  }
  MlirOperation first = first_in_table(entry->table_op);
  mlirSymbolTableInsert(entry->table, decl);
  if (!mlirOperationIsNull(first) && !mlirOperationEqual(first, decl))
    mlirOperationMoveBefore(decl, first);
  return true;
}

static bool declare_runtime(run_state *state, table_entry *entry) {
  if (entry->declared)
    return true;
  /* Declared in reverse so that begin ends up first. */
  if (!declare_runtime_function(state, entry, STC_RT_REGION_END_SYMBOL,
                                STC_RT_REGION_END_MLIR_TYPE) ||
      !declare_runtime_function(state, entry, STC_RT_REGION_BEGIN_SYMBOL,
                                STC_RT_REGION_BEGIN_MLIR_TYPE))
    return false;
  entry->declared = true;
  return true;
}

/* Creates the id's constant global right before `anchor` and returns a
 * FlatSymbolRefAttr to it (null on failure, with an error emitted). */
static MlirAttribute id_global(run_state *state, table_entry *entry,
                               MlirOperation anchor, const char *id) {
  stc_text text = {0};
  stc_text_appendf(&text,
                   "llvm.mlir.global internal constant "
                   "@__stc_region_id_%08" PRIx32 "(\"",
                   (uint32_t)stc_hash64_str(id, STC_HASH_SEED));
  stc_text_append_escaped(&text, id);
  stc_text_appendf(&text, "\\00\") {addr_space = 0 : i32}");
  MlirOperation global = {NULL};
  if (!text.out_of_memory)
    global = mlirOperationCreateParse(state->ctx, stc__str(text.data), stc__str(PASS_NAME));
  stc_text_free(&text);
  if (mlirOperationIsNull(global)) {
    fail_at(anchor, PASS_NAME ": cannot build the global for region id '%s'", id);
    return (MlirAttribute){NULL};
  }
  MlirAttribute name = mlirSymbolTableInsert(entry->table, global);
  mlirOperationMoveBefore(global, anchor);
  return mlirFlatSymbolRefAttrGet(state->ctx, mlirStringAttrGetValue(name));
}

/* Inserts `%p = llvm.mlir.addressof @id; %t = call @begin(%p)` before
 * `before`; returns false (error emitted) when an op cannot be built. */
static bool insert_begin(run_state *state, MlirOperation before,
                         MlirAttribute global, MlirValue *pointer,
                         MlirValue *token) {
  MlirLocation loc = mlirOperationGetLocation(before);
  MlirBlock block = mlirOperationGetBlock(before);
  MlirNamedAttribute name = named(state->ctx, "global_name", global);
  MlirOperation address =
      build("llvm.mlir.addressof", loc, 0, NULL, 1, &state->ptr_type, 1, &name);
  if (mlirOperationIsNull(address)) {
    fail_at(before, PASS_NAME ": cannot build %s", "llvm.mlir.addressof");
    return false;
  }
  mlirBlockInsertOwnedOperationBefore(block, before, address);
  *pointer = mlirOperationGetResult(address, 0);
  MlirOperation begin =
      stc__build_call(state->ctx, loc, stc__str(STC_RT_REGION_BEGIN_SYMBOL), 1,
                      pointer, 1, &state->i64_type, false);
  if (mlirOperationIsNull(begin)) {
    fail_at(before, PASS_NAME ": cannot build the call to @%s",
            STC_RT_REGION_BEGIN_SYMBOL);
    return false;
  }
  mlirBlockInsertOwnedOperationBefore(block, before, begin);
  *token = mlirOperationGetResult(begin, 0);
  return true;
}

/* Inserts `%n = arith.constant bytes; call @end(%p, %t, %n)` right after
 * `after` (when not null) or right before `before`. */
static bool insert_end(run_state *state, MlirOperation after,
                       MlirOperation before, MlirValue pointer, MlirValue token,
                       uint64_t bytes) {
  MlirOperation anchor = mlirOperationIsNull(after) ? before : after;
  MlirLocation loc = mlirOperationGetLocation(anchor);
  MlirBlock block = mlirOperationGetBlock(anchor);
  MlirOperation count = build_i64_constant(
      state->ctx, loc, bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes);
  MlirValue operands[3] = {pointer, token, {NULL}};
  MlirOperation end = {NULL};
  if (!mlirOperationIsNull(count)) {
    operands[2] = mlirOperationGetResult(count, 0);
    end = stc__build_call(state->ctx, loc, stc__str(STC_RT_REGION_END_SYMBOL), 3,
                          operands, 0, NULL, false);
  }
  if (mlirOperationIsNull(count) || mlirOperationIsNull(end)) {
    if (!mlirOperationIsNull(count))
      mlirOperationDestroy(count);
    fail_at(anchor, PASS_NAME ": cannot build the call to @%s",
            STC_RT_REGION_END_SYMBOL);
    return false;
  }
  if (mlirOperationIsNull(after)) {
    mlirBlockInsertOwnedOperationBefore(block, before, count);
    mlirBlockInsertOwnedOperationBefore(block, before, end);
  } else {
    mlirBlockInsertOwnedOperationAfter(block, after, count);
    mlirBlockInsertOwnedOperationAfter(block, count, end);
  }
  return true;
}

/* ---- function bodies ------------------------------------------------------ */

static uint64_t function_bytes(MlirOperation func) {
  MlirAttribute type_attr = mlirOperationGetAttributeByName(func, stc__str("function_type"));
  if (mlirAttributeIsNull(type_attr) || !mlirAttributeIsAType(type_attr))
    return 0;
  MlirType type = mlirTypeAttrGetValue(type_attr);
  bool dynamic = false;
  uint64_t total = 0;
  for (intptr_t i = 0, n = mlirFunctionTypeGetNumInputs(type); i < n; i++)
    total += stc_type_bytes(mlirFunctionTypeGetInput(type, i), &dynamic);
  for (intptr_t i = 0, n = mlirFunctionTypeGetNumResults(type); i < n; i++)
    total += stc_type_bytes(mlirFunctionTypeGetResult(type, i), &dynamic);
  return dynamic ? 0 : total;
}

static bool instrument_function(run_state *state, table_entry *entry,
                                const stc_region *region) {
  MlirOperation func = region->op;
  MlirAttribute global = id_global(state, entry, func, region->id);
  if (mlirAttributeIsNull(global))
    return false;
  mlirOperationSetDiscardableAttributeByName(
      func, stc__str(STC_REGION_ATTR), mlirStringAttrGet(state->ctx, stc__str(region->id)));
  MlirRegion body = mlirOperationGetRegion(func, 0);
  MlirBlock entry_block = mlirRegionGetFirstBlock(body);
  MlirOperation first = mlirBlockGetFirstOperation(entry_block);
  MlirValue pointer, token;
  if (!insert_begin(state, first, global, &pointer, &token))
    return false;
  uint64_t bytes = function_bytes(func);
  for (MlirBlock block = entry_block; !mlirBlockIsNull(block);
       block = mlirBlockGetNextInRegion(block)) {
    MlirOperation terminator = mlirBlockGetTerminator(block);
    if (mlirOperationIsNull(terminator))
      continue;
    MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(terminator));
    if (name.length != 11 || memcmp(name.data, "func.return", 11) != 0)
      continue;
    if (!insert_end(state, (MlirOperation){NULL}, terminator, pointer, token, bytes))
      return false;
  }
  return true;
}

/* ---- computing ops --------------------------------------------------------- */

/* The outlined function's arguments: the op's operands, then every value its
 * payload uses from outside (in walk order, so deterministic). */
static bool capture_values(MlirOperation op, stc_value_list *captured) {
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(op); i < n; i++)
    stc__value_list_add_unique(captured, mlirOperationGetOperand(op, i));
  return stc__capture_outside_values(op, captured);
}

/* A private no_inline function taking the captured values and returning
 * op's results, marked as the outlined region `id`. */
static MlirOperation build_outlined_function(run_state *state,
                                             MlirOperation op,
                                             const char *name,
                                             const char *id,
                                             const stc_value_list *captured,
                                             MlirBlock *body_out) {
  intptr_t num_inputs = (intptr_t)captured->count;
  intptr_t num_results = mlirOperationGetNumResults(op);
  MlirType *types = malloc(sizeof(MlirType) * (size_t)(num_inputs + num_results + 1));
  if (!types)
    return (MlirOperation){NULL};
  for (intptr_t i = 0; i < num_inputs; i++)
    types[i] = mlirValueGetType(captured->items[i]);
  for (intptr_t i = 0; i < num_results; i++)
    types[num_inputs + i] = mlirValueGetType(mlirOperationGetResult(op, i));
  MlirContext ctx = state->ctx;
  MlirType function_type = mlirFunctionTypeGet(ctx, num_inputs, types,
                                               num_results, types + num_inputs);
  free(types);
  MlirOperation func = stc__build_private_function(
      ctx, mlirOperationGetLocation(op), name, function_type, body_out);
  if (mlirOperationIsNull(func))
    return func;
  mlirOperationSetAttributeByName(func, stc__str("no_inline"), mlirUnitAttrGet(ctx));
  mlirOperationSetAttributeByName(func, stc__str(STC_OUTLINED_ATTR),
                                  mlirStringAttrGet(ctx, stc__str(id)));
  return func;
}

/* Moves `op` into a new private function and leaves a bracketed call in its
 * place. `place_after` is where the new function goes in the symbol table's
 * block (after the caller, after the caller's earlier outlined functions);
 * it is advanced to the new function. */
static bool instrument_op(run_state *state, table_entry *entry,
                          const stc_region *region, size_t index,
                          MlirOperation *place_after) {
  MlirOperation op = region->op;
  MlirContext ctx = state->ctx;
  stc_value_list captured = {0};
  if (!capture_values(op, &captured)) {
    free(captured.items);
    fail_at(op, PASS_NAME ": out of memory outlining region '%s'", region->id);
    return false;
  }
  MlirAttribute caller_name =
      mlirOperationGetAttributeByName(region->func, stc__str("sym_name"));
  MlirStringRef caller = mlirStringAttrGetValue(caller_name);
  char name[512];
  snprintf(name, sizeof name, "%.*s__stc_region_%zu", (int)caller.length,
           caller.data, index);

  MlirBlock body;
  MlirOperation func =
      build_outlined_function(state, op, name, region->id, &captured, &body);
  if (mlirOperationIsNull(func)) {
    free(captured.items);
    fail_at(op, PASS_NAME ": cannot build the outlined function of '%s'", region->id);
    return false;
  }
  MlirAttribute symbol = mlirSymbolTableInsert(entry->table, func);
  mlirOperationMoveAfter(func, *place_after);
  *place_after = func;

  intptr_t num_results = mlirOperationGetNumResults(op);
  MlirType *result_types = malloc(sizeof(MlirType) * (size_t)(num_results + 1));
  if (!result_types) {
    free(captured.items);
    fail_at(op, PASS_NAME ": out of memory outlining region '%s'", region->id);
    return false;
  }
  for (intptr_t i = 0; i < num_results; i++)
    result_types[i] = mlirValueGetType(mlirOperationGetResult(op, i));
  MlirOperation call = stc__build_call(
      ctx, mlirOperationGetLocation(op), mlirStringAttrGetValue(symbol),
      (intptr_t)captured.count, captured.items, num_results, result_types, true);
  free(result_types);
  if (mlirOperationIsNull(call)) {
    free(captured.items);
    fail_at(op, PASS_NAME ": cannot build the call of '%s'", region->id);
    return false;
  }
  stc__replace_op_uses(op, call);

  mlirOperationRemoveFromParent(op);
  mlirBlockAppendOwnedOperation(body, op);
  for (size_t i = 0; i < captured.count; i++)
    stc__rewire_inside(captured.items[i], op, mlirBlockGetArgument(body, (intptr_t)i));
  free(captured.items);
  if (!stc__append_return(body, mlirOperationGetLocation(op), op)) {
    fail_at(op, PASS_NAME ": cannot build the return of '%s'", region->id);
    return false;
  }
  mlirOperationSetDiscardableAttributeByName(op, stc__str(STC_REGION_ATTR),
                                             mlirStringAttrGet(ctx, stc__str(region->id)));

  bool dynamic = false;
  uint64_t bytes = stc_op_bytes(op, &dynamic);
  MlirAttribute global = id_global(state, entry, region->func, region->id);
  MlirValue pointer, token;
  return !mlirAttributeIsNull(global) &&
         insert_begin(state, call, global, &pointer, &token) &&
         insert_end(state, call, (MlirOperation){NULL}, pointer, token,
                    dynamic ? 0 : bytes);
}

/* ---- the pass --------------------------------------------------------------- */

static bool wanted_op(const instrument_options *options, MlirOperation op) {
  if (!options->op_names)
    return true;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  for (size_t i = 0; i < options->num_op_names; i++)
    if (strlen(options->op_names[i]) == name.length &&
        memcmp(options->op_names[i], name.data, name.length) == 0)
      return true;
  return false;
}

static bool instrument_module(run_state *state, stc_region_list *regions) {
  MlirOperation current_func = {NULL};
  MlirOperation place_after = {NULL};
  size_t outlined_in_func = 0;
  for (size_t i = 0; i < regions->count; i++) {
    const stc_region *region = &regions->items[i];
    if (!mlirOperationEqual(region->func, current_func)) {
      current_func = region->func;
      place_after = region->func;
      outlined_in_func = 0;
    }
    if (region->has_attr)
      continue;
    bool wanted = region->kind == STC_REGION_FUNCTION
                      ? state->options->functions
                      : wanted_op(state->options, region->op);
    if (!wanted)
      continue;
    table_entry *entry = table_for(state, region->func);
    if (!entry)
      continue; /* a function outside any symbol table cannot be called */
    if (!declare_runtime(state, entry))
      return false;
    bool ok = region->kind == STC_REGION_FUNCTION
                  ? instrument_function(state, entry, region)
                  : instrument_op(state, entry, region, outlined_in_func++,
                                  &place_after);
    if (!ok)
      return false;
  }
  return true;
}

static void run(MlirOperation module, MlirExternalPass pass, void *user) {
  run_state state = {
      .ctx = mlirOperationGetContext(module),
      .module = module,
      .options = user,
  };
  if (!user) {
    mlirEmitError(mlirOperationGetLocation(module),
                  PASS_NAME ": out of memory copying the pass options");
    mlirExternalPassSignalFailure(pass);
    return;
  }
  state.ptr_type = mlirLLVMPointerTypeGet(state.ctx, 0);
  state.i64_type = mlirIntegerTypeGet(state.ctx, 64);
  stc_region_list regions;
  stc_error err;
  stc_error_clear(&err);
  MlirOperation blame;
  if (stc_region_collect(module, &regions, &err, &blame) != STC_OK) {
    fail_at(mlirOperationIsNull(blame) ? module : blame, PASS_NAME ": %s",
            err.message);
    mlirExternalPassSignalFailure(pass);
  } else if (!instrument_module(&state, &regions)) {
    mlirExternalPassSignalFailure(pass);
  }
  stc_region_list_free(&regions);
  for (size_t i = 0; i < state.num_tables; i++)
    mlirSymbolTableDestroy(state.tables[i].table);
  free(state.tables);
}

/* ---- pass object and options ------------------------------------------------- */

static void destruct(void *user) { options_free(user); }

static instrument_options *options_copy(const instrument_options *from) {
  instrument_options *copy = calloc(1, sizeof *copy);
  if (!copy)
    return NULL;
  copy->functions = from->functions;
  if (!stc__string_list_copy(from->op_names, from->num_op_names, &copy->op_names)) {
    free(copy);
    return NULL;
  }
  copy->num_op_names = from->num_op_names;
  return copy;
}

/* MLIR's clone callback cannot fail; a clone without options (NULL) reports
 * the allocation failure when it runs instead. */
static void *clone(void *user) { return user ? options_copy(user) : NULL; }

/* Parses "a,b,c" into owned names (replacing earlier ones); empty elements
 * and names without a dialect prefix are errors. */
static bool parse_op_names(const char *value, instrument_options *options,
                           stc_error *err) {
  if (!stc__option_list(PASS_NAME, "ops", value, "op names", &options->op_names,
                        &options->num_op_names, err))
    return false;
  for (size_t i = 0; i < options->num_op_names; i++) {
    const char *name = options->op_names[i];
    const char *dot = strchr(name, '.');
    if (!dot || dot == name || dot[1] == 0) {
      stc_error_set(err, NULL, 0, 0,
                    PASS_NAME ": option 'ops': '%s' is not an op name "
                              "(expected <dialect>.<op>, e.g. linalg.matmul)",
                    name);
      return false;
    }
  }
  return true;
}

static const stc_pass_option_spec option_specs[] = {
    {"functions", "bracket each function body as a region (true|false)", "true"},
    {"ops", "comma-separated op names to instrument (default: every computing linalg op)",
     NULL},
};

static _Alignas(8) char pass_type_anchor;

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  instrument_options *options = calloc(1, sizeof *options);
  if (!options) {
    stc_error_set(err, NULL, 0, 0, PASS_NAME ": out of memory");
    return (MlirPass){NULL};
  }
  options->functions = true;
  for (size_t i = 0; i < count; i++) {
    const char *name = values[i].name ? values[i].name : "";
    bool ok;
    if (strcmp(name, "functions") == 0) {
      ok = stc__option_bool(PASS_NAME, name, values[i].value,
                            &options->functions, err);
    } else if (strcmp(name, "ops") == 0) {
      ok = parse_op_names(values[i].value, options, err);
    } else {
      stc_error_set(err, NULL, 0, 0,
                    PASS_NAME ": unknown option '%s' (known: functions, ops)",
                    name);
      ok = false;
    }
    if (!ok) {
      options_free(options);
      return (MlirPass){NULL};
    }
  }
  MlirDialectHandle dialects[] = {
      mlirGetDialectHandle__func__(),
      mlirGetDialectHandle__llvm__(),
      mlirGetDialectHandle__arith__(),
  };
  stc_pass_def def = {&stc_instrument_pass_spec, "StcInstrument",
                      &pass_type_anchor, dialects,
                      sizeof dialects / sizeof dialects[0], run, clone, destruct};
  return stc__create_pass(&def, options);
}

const stc_pass_spec stc_instrument_pass_spec = {
    PASS_NAME,
    "name every region (stc.region) and bracket it with the runtime's region timer",
    "builtin.module",
    option_specs,
    sizeof option_specs / sizeof option_specs[0],
    create,
};
