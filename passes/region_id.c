/* Stable region ids and region discovery (see region_id.h for the format).
 *
 * In: an MLIR module (read only). Out: the list of its regions (function
 * bodies and computing linalg ops), each with an id that survives
 * re-printing, SSA renaming and reordering of functions; plus the helpers
 * the passes share (byte counts, string escaping, option parsing). */
#include "region_id.h"

#include "stc/hash.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Linalg.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small utilities ---------------------------------------------------- */

static bool string_ref_equals(MlirStringRef ref, const char *text) {
  size_t length = strlen(text);
  return ref.length == length && memcmp(ref.data, text, length) == 0;
}

static bool string_ref_has_prefix(MlirStringRef ref, const char *prefix) {
  size_t length = strlen(prefix);
  return ref.length >= length && memcmp(ref.data, prefix, length) == 0;
}

static MlirStringRef op_name(MlirOperation op) {
  return mlirIdentifierStr(mlirOperationGetName(op));
}

uint64_t stc__saturating_mul(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

uint64_t stc__saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

/* ---- structural hash ---------------------------------------------------- */

/* Positions of the blocks and ops inside the op being hashed, so that a
 * nested operand is named by where it comes from rather than by SSA name. */
typedef struct hash_scope {
  const void **blocks;
  size_t num_blocks, cap_blocks;
  const void **ops;
  size_t num_ops, cap_ops;
  bool out_of_memory; /* positions then read as "outside": still deterministic */
} hash_scope;

static void scope_push(const void ***items, size_t *count, size_t *cap,
                       const void *item, bool *out_of_memory) {
  if (*count == *cap) {
    size_t grown = *cap ? *cap * 2 : 16;
    const void **bigger = realloc((void *)*items, grown * sizeof **items);
    if (!bigger) {
      *out_of_memory = true;
      return;
    }
    *items = bigger;
    *cap = grown;
  }
  (*items)[(*count)++] = item;
}

/* Linear search: payload regions are small, and ids are computed once. */
static long scope_find(const void *const *items, size_t count, const void *item) {
  for (size_t i = 0; i < count; i++)
    if (items[i] == item)
      return (long)i;
  return -1;
}

static void hash_chunk(MlirStringRef chunk, void *user) {
  uint64_t *hash = user;
  *hash = stc_hash64(chunk.data, chunk.length, *hash);
}

static void hash_text(uint64_t *hash, const char *text) {
  *hash = stc_hash64_str(text, *hash);
}

static void hash_type(uint64_t *hash, MlirType type) {
  mlirTypePrint(type, hash_chunk, hash);
  hash_text(hash, ";");
}

static int compare_named_attributes(const void *a, const void *b) {
  MlirStringRef x = mlirIdentifierStr(((const MlirNamedAttribute *)a)->name);
  MlirStringRef y = mlirIdentifierStr(((const MlirNamedAttribute *)b)->name);
  size_t common = x.length < y.length ? x.length : y.length;
  int order = memcmp(x.data, y.data, common);
  if (order != 0)
    return order;
  return (x.length > y.length) - (x.length < y.length);
}

static void hash_attributes(uint64_t *hash, MlirOperation op,
                            bool *out_of_memory) {
  intptr_t count = mlirOperationGetNumAttributes(op);
  if (count <= 0)
    return;
  MlirNamedAttribute *sorted = malloc((size_t)count * sizeof *sorted);
  if (!sorted) {
    *out_of_memory = true;
    return;
  }
  for (intptr_t i = 0; i < count; i++)
    sorted[i] = mlirOperationGetAttribute(op, i);
  qsort(sorted, (size_t)count, sizeof *sorted, compare_named_attributes);
  for (intptr_t i = 0; i < count; i++) {
    MlirStringRef name = mlirIdentifierStr(sorted[i].name);
    if (string_ref_has_prefix(name, STC_ATTR_PREFIX))
      continue;
    *hash = stc_hash64(name.data, name.length, *hash);
    hash_text(hash, "=");
    mlirAttributePrint(sorted[i].attribute, hash_chunk, hash);
    hash_text(hash, ";");
  }
  free(sorted);
}

static void hash_operand(uint64_t *hash, hash_scope *scope, MlirValue value) {
  char position[64];
  long index = -1;
  if (mlirValueIsABlockArgument(value)) {
    index = scope_find(scope->blocks, scope->num_blocks,
                       mlirBlockArgumentGetOwner(value).ptr);
    if (index >= 0)
      snprintf(position, sizeof position, "a%ld.%" PRIdPTR, index,
               mlirBlockArgumentGetArgNumber(value));
  } else if (mlirValueIsAOpResult(value)) {
    index = scope_find(scope->ops, scope->num_ops,
                       mlirOpResultGetOwner(value).ptr);
    if (index >= 0)
      snprintf(position, sizeof position, "r%ld.%" PRIdPTR, index,
               mlirOpResultGetResultNumber(value));
  }
  if (index >= 0) {
    hash_text(hash, position);
  } else {
    hash_text(hash, "outside:");
    hash_type(hash, mlirValueGetType(value));
  }
}

static bool defines_symbol(MlirOperation op) {
  return !mlirAttributeIsNull(mlirOperationGetAttributeByName(
      op, mlirStringRefCreateFromCString("sym_name")));
}

static void hash_op(uint64_t *hash, hash_scope *scope, MlirOperation op) {
  scope_push(&scope->ops, &scope->num_ops, &scope->cap_ops, op.ptr,
             &scope->out_of_memory);
  MlirStringRef name = op_name(op);
  *hash = stc_hash64(name.data, name.length, *hash);
  hash_text(hash, "(");
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(op); i < n; i++)
    hash_operand(hash, scope, mlirOperationGetOperand(op, i));
  hash_text(hash, ")->(");
  for (intptr_t i = 0, n = mlirOperationGetNumResults(op); i < n; i++)
    hash_type(hash, mlirValueGetType(mlirOperationGetResult(op, i)));
  hash_text(hash, ")");
  hash_attributes(hash, op, &scope->out_of_memory);
  if (defines_symbol(op))
    return;
  for (intptr_t r = 0, nr = mlirOperationGetNumRegions(op); r < nr; r++) {
    hash_text(hash, "{");
    MlirRegion region = mlirOperationGetRegion(op, r);
    for (MlirBlock block = mlirRegionGetFirstBlock(region);
         !mlirBlockIsNull(block); block = mlirBlockGetNextInRegion(block)) {
      scope_push(&scope->blocks, &scope->num_blocks, &scope->cap_blocks,
                 block.ptr, &scope->out_of_memory);
      hash_text(hash, "^");
      for (intptr_t a = 0, na = mlirBlockGetNumArguments(block); a < na; a++)
        hash_type(hash, mlirValueGetType(mlirBlockGetArgument(block, a)));
      for (MlirOperation nested = mlirBlockGetFirstOperation(block);
           !mlirOperationIsNull(nested);
           nested = mlirOperationGetNextInBlock(nested))
        hash_op(hash, scope, nested);
    }
    hash_text(hash, "}");
  }
}

uint64_t stc_region_structural_hash(MlirOperation op) {
  hash_scope scope = {0};
  uint64_t hash = STC_HASH_SEED;
  hash_op(&hash, &scope, op);
  free((void *)scope.blocks);
  free((void *)scope.ops);
  return hash;
}

/* ---- which ops are regions ---------------------------------------------- */

bool stc_region_op_is_computing(MlirOperation op) {
  /* Data movement and initialization: no arithmetic worth a timer pair or a
   * share of the tuning budget. Everything else that is a LinalgOp computes. */
  static const char *const data_movement[] = {
      "linalg.fill", "linalg.copy", "linalg.transpose", "linalg.broadcast"};
  MlirStringRef name = op_name(op);
  if (!string_ref_has_prefix(name, "linalg."))
    return false;
  for (size_t i = 0; i < sizeof data_movement / sizeof data_movement[0]; i++)
    if (string_ref_equals(name, data_movement[i]))
      return false;
  return !mlirAttributeIsNull(mlirLinalgGetIndexingMapsAttribute(op));
}

static bool is_func(MlirOperation op) {
  return string_ref_equals(op_name(op), "func.func");
}

static bool has_attr(MlirOperation op, const char *name) {
  return !mlirAttributeIsNull(
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString(name)));
}

/* Functions whose bodies are copies of other regions' ops (stc-instrument's
 * outlined functions, stc-multi-variant's variants and references). */
static bool is_derived_function(MlirOperation func) {
  return has_attr(func, STC_OUTLINED_ATTR) || has_attr(func, "stc.variant_of") ||
         has_attr(func, "stc.reference");
}

static bool func_has_body(MlirOperation func) {
  return mlirOperationGetNumRegions(func) > 0 &&
         !mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0)));
}

/* ---- ids ---------------------------------------------------------------- */

void stc_text_append(stc_text *text, const char *data, size_t length) {
  if (text->out_of_memory)
    return;
  if (text->length + length + 1 > text->capacity) {
    size_t grown = text->capacity ? text->capacity : 64;
    while (grown < text->length + length + 1)
      grown *= 2;
    char *bigger = realloc(text->data, grown);
    if (!bigger) {
      text->out_of_memory = true;
      return;
    }
    text->data = bigger;
    text->capacity = grown;
  }
  memcpy(text->data + text->length, data, length);
  text->length += length;
  text->data[text->length] = 0;
}

void stc_text_appendf(stc_text *text, const char *format, ...) {
  char small[256];
  va_list args;
  va_start(args, format);
  int needed = vsnprintf(small, sizeof small, format, args);
  va_end(args);
  if (needed < 0) {
    text->out_of_memory = true;
    return;
  }
  if ((size_t)needed < sizeof small) {
    stc_text_append(text, small, (size_t)needed);
    return;
  }
  char *large = malloc((size_t)needed + 1);
  if (!large) {
    text->out_of_memory = true;
    return;
  }
  va_start(args, format);
  vsnprintf(large, (size_t)needed + 1, format, args);
  va_end(args);
  stc_text_append(text, large, (size_t)needed);
  free(large);
}

void stc_text_append_escaped(stc_text *text, const char *data) {
  for (const unsigned char *p = (const unsigned char *)data; *p; p++) {
    if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') {
      stc_text_append(text, (const char *)p, 1);
    } else {
      char escaped[4];
      snprintf(escaped, sizeof escaped, "\\%02X", *p);
      stc_text_append(text, escaped, 3);
    }
  }
}

void stc_text_callback(MlirStringRef piece, void *user_data) {
  stc_text_append(user_data, piece.data, piece.length);
}

void stc_text_free(stc_text *text) {
  if (!text)
    return;
  free(text->data);
  text->data = NULL;
  text->length = text->capacity = 0;
  text->out_of_memory = false;
}

/* "<symbol path>/<op name>#<hash>" (path may be empty: then no '/'). */
static char *base_id(MlirOperation op) {
  /* Collect symbol names innermost first, then write them outermost first. */
  MlirStringRef names[64];
  size_t depth = 0;
  for (MlirOperation at = op; !mlirOperationIsNull(at);
       at = mlirOperationGetParentOperation(at)) {
    MlirAttribute name = mlirOperationGetAttributeByName(
        at, mlirStringRefCreateFromCString("sym_name"));
    if (!mlirAttributeIsNull(name) && mlirAttributeIsAString(name) &&
        depth < sizeof names / sizeof names[0])
      names[depth++] = mlirStringAttrGetValue(name);
  }
  stc_text id = {0};
  for (size_t i = depth; i-- > 0;) {
    stc_text_append(&id, names[i].data, names[i].length);
    stc_text_append(&id, "/", 1);
  }
  /* A function body's op part is the function op itself, whose name already
   * ended the path. */
  MlirStringRef name = op_name(op);
  stc_text_append(&id, name.data, name.length);
  char hash[16];
  snprintf(hash, sizeof hash, "#%08" PRIx32,
           (uint32_t)stc_region_structural_hash(op));
  stc_text_append(&id, hash, strlen(hash));
  if (id.out_of_memory) {
    free(id.data);
    return NULL;
  }
  return id.data;
}

/* A string -> count table with borrowed keys (open addressing). */
typedef struct id_table {
  const char **keys;
  size_t *values;
  size_t capacity; /* a power of two */
  size_t count;
} id_table;

static bool table_init(id_table *table, size_t expected) {
  size_t capacity = 16;
  while (capacity < expected * 2)
    capacity *= 2;
  table->keys = calloc(capacity, sizeof *table->keys);
  table->values = calloc(capacity, sizeof *table->values);
  table->capacity = capacity;
  table->count = 0;
  return table->keys && table->values;
}

static void table_free(id_table *table) {
  free((void *)table->keys);
  free(table->values);
}

/* The slot holding `key`, or the empty slot where it belongs. The table is
 * sized for every key up front, so it never fills. */
static size_t table_slot(const id_table *table, const char *key) {
  size_t mask = table->capacity - 1;
  size_t slot = (size_t)stc_hash64_str(key, STC_HASH_SEED) & mask;
  while (table->keys[slot] && strcmp(table->keys[slot], key) != 0)
    slot = (slot + 1) & mask;
  return slot;
}

/* ---- collection ----------------------------------------------------------- */

typedef struct collect_state {
  stc_region_list *list;
  char **bases; /* parallel to list->items: base id of computed ids, else NULL */
  size_t bases_capacity;
  bool out_of_memory;
} collect_state;

static void add_region(collect_state *state, MlirOperation op,
                       MlirOperation func, stc_region_kind kind) {
  stc_region_list *list = state->list;
  if (state->out_of_memory)
    return;
  if (list->count == list->capacity) {
    size_t grown = list->capacity ? list->capacity * 2 : 16;
    stc_region *items = realloc(list->items, grown * sizeof *items);
    if (!items) {
      state->out_of_memory = true;
      return;
    }
    list->items = items;
    char **bases = realloc(state->bases, grown * sizeof *bases);
    if (!bases) {
      state->out_of_memory = true;
      return;
    }
    state->bases = bases;
    list->capacity = grown;
  }
  stc_region *region = &list->items[list->count];
  region->op = op;
  region->func = func;
  region->kind = kind;
  region->id = NULL;
  state->bases[list->count] = NULL;
  MlirAttribute existing = mlirOperationGetAttributeByName(
      op, mlirStringRefCreateFromCString(STC_REGION_ATTR));
  region->has_attr =
      !mlirAttributeIsNull(existing) && mlirAttributeIsAString(existing);
  if (region->has_attr) {
    MlirStringRef text = mlirStringAttrGetValue(existing);
    region->id = strndup(text.data, text.length);
    if (!region->id) {
      state->out_of_memory = true;
      return;
    }
  } else {
    state->bases[list->count] = base_id(op);
    if (!state->bases[list->count]) {
      state->out_of_memory = true;
      return;
    }
  }
  list->count++;
}

static void collect_in(collect_state *state, MlirOperation op,
                       MlirOperation func);

static void collect_nested(collect_state *state, MlirOperation op,
                           MlirOperation func) {
  for (intptr_t r = 0, nr = mlirOperationGetNumRegions(op); r < nr; r++) {
    MlirRegion region = mlirOperationGetRegion(op, r);
    for (MlirBlock block = mlirRegionGetFirstBlock(region);
         !mlirBlockIsNull(block); block = mlirBlockGetNextInRegion(block))
      for (MlirOperation nested = mlirBlockGetFirstOperation(block);
           !mlirOperationIsNull(nested);
           nested = mlirOperationGetNextInBlock(nested))
        collect_in(state, nested, func);
  }
}

static void collect_in(collect_state *state, MlirOperation op,
                       MlirOperation func) {
  if (is_func(op)) {
    if (!func_has_body(op))
      return;
    /* An outlined region function is not a function-body region, but the op
     * inside it (carrying its stc.region) still is a region. */
    if (!is_derived_function(op))
      add_region(state, op, op, STC_REGION_FUNCTION);
    else if (!has_attr(op, STC_OUTLINED_ATTR))
      return; /* variants / references: copies of a region, not regions */
    collect_nested(state, op, op);
    return;
  }
  if (!mlirOperationIsNull(func) && stc_region_op_is_computing(op)) {
    add_region(state, op, func, STC_REGION_OP);
    return; /* a payload holds no further regions */
  }
  collect_nested(state, op, func);
}

void stc_region_list_free(stc_region_list *list) {
  if (!list)
    return;
  for (size_t i = 0; i < list->count; i++)
    free(list->items[i].id);
  free(list->items);
  list->items = NULL;
  list->count = 0;
  list->capacity = 0;
}

/* Gives every computed region a unique id: ids read from stc.region are
 * taken first; a computed id that is taken gets the next ".<n>" suffix. The
 * walk is in module order, so within one function suffixes follow the order
 * of appearance; ids of different functions never share a base. */
static stc_status assign_ids(collect_state *state, stc_error *err,
                             MlirOperation *blame) {
  stc_region_list *list = state->list;
  id_table taken, next_suffix;
  bool ok_taken = table_init(&taken, list->count);
  bool ok_next = table_init(&next_suffix, list->count);
  stc_status status = STC_OK;
  if (!ok_taken || !ok_next) {
    status = STC_ERR_NOMEM;
    stc_error_set(err, NULL, 0, 0, "out of memory while naming regions");
    goto done;
  }
  for (size_t i = 0; i < list->count; i++) {
    if (!list->items[i].has_attr)
      continue;
    size_t slot = table_slot(&taken, list->items[i].id);
    if (taken.keys[slot]) {
      status = STC_ERR_INVALID;
      stc_error_set(err, NULL, 0, 0,
                    "region id '%s' is carried by two ops; each stc.region "
                    "must be unique",
                    list->items[i].id);
      if (blame)
        *blame = list->items[i].op;
      goto done;
    }
    taken.keys[slot] = list->items[i].id;
  }
  for (size_t i = 0; i < list->count; i++) {
    const char *base = state->bases[i];
    if (!base)
      continue;
    size_t counter_slot = table_slot(&next_suffix, base);
    size_t suffix = next_suffix.keys[counter_slot] ? next_suffix.values[counter_slot] : 0;
    size_t length = strlen(base) + 24;
    char *id = malloc(length);
    if (!id) {
      status = STC_ERR_NOMEM;
      stc_error_set(err, NULL, 0, 0, "out of memory while naming regions");
      goto done;
    }
    for (;;) {
      if (suffix == 0)
        snprintf(id, length, "%s", base);
      else
        snprintf(id, length, "%s.%zu", base, suffix);
      if (!taken.keys[table_slot(&taken, id)])
        break;
      suffix++;
    }
    list->items[i].id = id;
    taken.keys[table_slot(&taken, id)] = id;
    next_suffix.keys[counter_slot] = base;
    next_suffix.values[counter_slot] = suffix + 1;
  }
done:
  table_free(&taken);
  table_free(&next_suffix);
  return status;
}

stc_status stc_region_collect(MlirOperation root, stc_region_list *out,
                              stc_error *err, MlirOperation *blame) {
  out->items = NULL;
  out->count = 0;
  out->capacity = 0;
  if (blame)
    *blame = (MlirOperation){NULL};
  collect_state state = {.list = out};
  collect_in(&state, root, (MlirOperation){NULL});
  stc_status status = STC_OK;
  if (state.out_of_memory) {
    status = STC_ERR_NOMEM;
    stc_error_set(err, NULL, 0, 0, "out of memory while collecting regions");
  } else {
    status = assign_ids(&state, err, blame);
  }
  for (size_t i = 0; i < out->count; i++)
    free(state.bases[i]);
  free(state.bases);
  if (status != STC_OK)
    stc_region_list_free(out);
  return status;
}

/* ---- byte counts ---------------------------------------------------------- */

/* Bits of one scalar element, or 0 when unknown. */
static uint64_t element_bits(MlirType type) {
  if (mlirTypeIsAInteger(type))
    return mlirIntegerTypeGetWidth(type);
  if (mlirTypeIsAIndex(type))
    return 64;
  if (mlirTypeIsAFloat(type))
    return mlirFloatTypeGetWidth(type);
  if (mlirTypeIsAComplex(type))
    return 2 * element_bits(mlirComplexTypeGetElementType(type));
  return 0;
}

uint64_t stc_type_bytes(MlirType type, bool *has_dynamic) {
  bool dynamic = false;
  uint64_t elements = 1;
  MlirType element = type;
  if (mlirTypeIsAShaped(type)) {
    element = mlirShapedTypeGetElementType(type);
    if (!mlirShapedTypeHasRank(type)) {
      dynamic = true;
    } else {
      for (intptr_t i = 0, rank = mlirShapedTypeGetRank(type); i < rank; i++) {
        if (mlirShapedTypeIsDynamicDim(type, i)) {
          dynamic = true;
          continue;
        }
        int64_t size = mlirShapedTypeGetDimSize(type, i);
        elements = stc__saturating_mul(elements, size > 0 ? (uint64_t)size : 0);
      }
    }
  } else if (element_bits(type) == 0) {
    return 0; /* a pointer, token or other non-data value */
  }
  uint64_t bits = element_bits(element);
  if (bits == 0)
    dynamic = true;
  if (dynamic && has_dynamic)
    *has_dynamic = true;
  return stc__saturating_mul(elements, (bits + 7) / 8);
}

uint64_t stc_op_bytes(MlirOperation op, bool *has_dynamic) {
  uint64_t total = 0;
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(op); i < n; i++)
    total = stc__saturating_add(
        total, stc_type_bytes(mlirValueGetType(mlirOperationGetOperand(op, i)),
                              has_dynamic));
  for (intptr_t i = 0, n = mlirOperationGetNumResults(op); i < n; i++)
    total = stc__saturating_add(
        total, stc_type_bytes(mlirValueGetType(mlirOperationGetResult(op, i)),
                              has_dynamic));
  return total;
}

/* ---- strings and options -------------------------------------------------- */

bool stc__option_bool(const char *pass, const char *name, const char *value,
                      bool *out, stc_error *err) {
  /* A bare `strict` (no value) means true, as in MLIR's pass options. */
  if (!value || !*value || strcmp(value, "true") == 0 || strcmp(value, "1") == 0) {
    *out = true;
    return true;
  }
  if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0) {
    *out = false;
    return true;
  }
  stc_error_set(err, NULL, 0, 0,
                "%s: option '%s': expected true or false, got '%s'", pass, name,
                value);
  return false;
}

bool stc__option_u64(const char *pass, const char *name, const char *value,
                     uint64_t *out, stc_error *err) {
  char *end = NULL;
  errno = 0;
  unsigned long long parsed =
      value && *value >= '0' && *value <= '9' ? strtoull(value, &end, 10) : 0;
  if (!value || !end || *end || errno == ERANGE) {
    stc_error_set(err, NULL, 0, 0,
                  "%s: option '%s': expected a non-negative integer, got '%s'",
                  pass, name, value ? value : "");
    return false;
  }
  *out = parsed;
  return true;
}

bool stc__option_double(const char *pass, const char *name, const char *value,
                        double *out, stc_error *err) {
  char *end = NULL;
  double parsed = value && *value ? strtod(value, &end) : 0;
  if (!value || !end || *end || !isfinite(parsed)) {
    stc_error_set(err, NULL, 0, 0,
                  "%s: option '%s': expected a number, got '%s'", pass, name,
                  value ? value : "");
    return false;
  }
  *out = parsed;
  return true;
}

void stc__string_list_free(char **items, size_t count) {
  for (size_t i = 0; items && i < count; i++)
    free(items[i]);
  free(items);
}

bool stc__option_list(const char *pass, const char *name, const char *value,
                      const char *what, char ***items, size_t *count,
                      stc_error *err) {
  stc__string_list_free(*items, *count);
  *items = NULL;
  *count = 0;
  if (!value || !*value) {
    stc_error_set(err, NULL, 0, 0,
                  "%s: option '%s': expected a comma-separated list of %s, got ''",
                  pass, name, what);
    return false;
  }
  size_t n = 1;
  for (const char *p = value; *p; p++)
    n += *p == ',';
  char **list = calloc(n, sizeof *list);
  bool ok = list != NULL;
  const char *start = value;
  for (size_t i = 0; ok && i < n; i++) {
    const char *end = strchr(start, ',');
    size_t length = end ? (size_t)(end - start) : strlen(start);
    ok = (list[i] = strndup(start, length)) != NULL;
    start = end ? end + 1 : start + length;
  }
  if (!ok) {
    stc__string_list_free(list, n);
    stc_error_set(err, NULL, 0, 0, "%s: out of memory", pass);
    return false;
  }
  *items = list;
  *count = n;
  return true;
}

bool stc__string_list_copy(char *const *from, size_t count, char ***to) {
  *to = NULL;
  if (!from)
    return true;
  char **list = calloc(count + 1, sizeof *list);
  bool ok = list != NULL;
  for (size_t i = 0; ok && i < count; i++)
    ok = (list[i] = strdup(from[i])) != NULL;
  if (!ok) {
    stc__string_list_free(list, count);
    return false;
  }
  *to = list;
  return true;
}
