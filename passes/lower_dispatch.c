/* stc-lower-dispatch and stc-out-params-scope: the compiler half of the site
 * dispatch ABI (include/stc/rt_dispatch.h, docs/dispatch-abi.md).
 *
 * stc-out-params-scope{restore=false|true} (builtin.module, func dialect):
 *   buffer-results-to-out-params rewrites every private function and fails
 *   on a dynamically shaped result (a helper returning tensor<?x?xf32>).
 *   Only the site functions of stc-multi-variant need out-params, so before
 *   it this pass makes every other private func.func with a body public
 *   (marked stc.out_params_hidden; public functions are skipped by the
 *   upstream pass), and with restore=true makes them private again.
 *
 * stc-lower-dispatch (builtin.module, LLVM dialect):
 *   In:  a module lowered to the LLVM dialect whose dispatch functions @S
 *        still carry stc.site_descriptor (func-to-llvm keeps discardable
 *        attributes) and whose bodies call @S__ref.
 *   Out: per site, the globals of rt_dispatch.h with exactly its layouts
 *          @S__rt_str<i>    internal constant NUL-terminated strings
 *          @S__rt_args      internal constant [n x stc_rt_arg]
 *          @S__rt_variants  internal constant [k x stc_rt_variant] (entry =
 *                           the unpacked llvm.func, ciface = its
 *                           _mlir_ciface_ wrapper, code_hash = SHA-256 of
 *                           the printed variant and of every function and
 *                           global it refers to, transitively)
 *          @S__rt_slot      internal ptr, null (static-shaped sites only)
 *          @S__rt_site      internal mutable stc_rt_site
 *        and @S's body becomes the ABI's fast path (atomic acquire load of
 *        the slot, indirect call) and slow path (every unpacked word stored
 *        in an i64 stack array, call @stc_rt_site_enter). The descriptor
 *        attribute is removed. A variant whose LLVM signature is not @S's
 *        (a result buffer-results-to-out-params turned into an extra
 *        out-param for that variant only) is left out of the table, with a
 *        remark. A site that cannot be described (more than
 *        STC_RT_MAX_SITE_ARGS arguments, an unknown element type, a
 *        signature that is not memrefs) keeps calling its reference, with a
 *        remark.
 *   The new IR is built as text, parsed into a scratch module (with
 *   declarations of the functions it refers to, so that it verifies on its
 *   own), and spliced in: globals moved, @S's body swapped. */
#include "region_id.h"
#include "stc_passes.h"
#include "transform_apply.h"

#include "stc/hash.h"
#include "stc/rt_dispatch.h"

#include <inttypes.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/LLVM.h>
#include <mlir-c/Dialect/Transform.h>
#include <mlir-c/IR.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS_NAME "stc-lower-dispatch"
#define SCOPE_PASS_NAME "stc-out-params-scope"
#define ATTR_DESCRIPTOR "stc.site_descriptor"
#define ATTR_HIDDEN "stc.out_params_hidden"
#define SITE_ENTER "stc_rt_site_enter"
#define NEW_DISPATCH "__stc_new_dispatch" /* @S in the scratch module */


static bool ref_is(MlirStringRef have, const char *name) {
  return strlen(name) == have.length && memcmp(name, have.data, have.length) == 0;
}


static bool has_attr(MlirOperation op, const char *name) {
  return !mlirAttributeIsNull(mlirOperationGetAttributeByName(op, stc__str(name)));
}

static MlirBlock module_body(MlirOperation module) {
  return mlirRegionGetFirstBlock(mlirOperationGetRegion(module, 0));
}

/* ---- stc-out-params-scope ------------------------------------------------ */

static bool is_site_function(MlirOperation func) {
  return has_attr(func, "stc.site") || has_attr(func, "stc.reference") ||
         has_attr(func, "stc.variant_of");
}

static void scope_run(MlirOperation module, MlirExternalPass pass, void *user) {
  bool restore = user != NULL;
  MlirContext ctx = mlirOperationGetContext(module);
  for (MlirOperation op = mlirBlockGetFirstOperation(module_body(module));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    if (!stc__op_is(op, "func.func"))
      continue;
    if (restore) {
      if (!has_attr(op, ATTR_HIDDEN))
        continue;
      mlirOperationRemoveAttributeByName(op, stc__str(ATTR_HIDDEN));
      mlirOperationSetAttributeByName(op, stc__str("sym_visibility"),
                                      mlirStringAttrGet(ctx, stc__str("private")));
      continue;
    }
    MlirAttribute visibility =
        mlirOperationGetAttributeByName(op, stc__str("sym_visibility"));
    bool is_private = !mlirAttributeIsNull(visibility) &&
                      mlirAttributeIsAString(visibility) &&
                      ref_is(mlirStringAttrGetValue(visibility), "private");
    bool has_body = !mlirBlockIsNull(
        mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0)));
    if (!is_private || !has_body || is_site_function(op))
      continue;
    mlirOperationRemoveAttributeByName(op, stc__str("sym_visibility"));
    mlirOperationSetAttributeByName(op, stc__str(ATTR_HIDDEN), mlirUnitAttrGet(ctx));
  }
  (void)pass;
}

static _Alignas(8) char scope_type_anchor;

static const stc_pass_option_spec scope_options[] = {
    {"restore", "make the functions hidden before private again (true|false)",
     "false"},
};

static MlirPass scope_create(const stc_pass_option_value *values, size_t count,
                             stc_error *err) {
  bool restore = false;
  for (size_t i = 0; i < count; i++) {
    const char *name = values[i].name ? values[i].name : "";
    if (strcmp(name, "restore") != 0) {
      stc_error_set(err, NULL, 0, 0,
                    SCOPE_PASS_NAME ": unknown option '%s' (known: restore)", name);
      return (MlirPass){NULL};
    }
    if (!stc__option_bool(SCOPE_PASS_NAME, name, values[i].value ? values[i].value : "",
                          &restore, err))
      return (MlirPass){NULL};
  }
  MlirDialectHandle dialects[] = {mlirGetDialectHandle__func__()};
  stc_pass_def def = {&stc_out_params_scope_pass_spec, "StcOutParamsScope",
                      &scope_type_anchor, dialects, 1, scope_run, NULL, NULL};
  /* The option is the state: non-NULL = restore (no allocation). */
  return stc__create_pass(&def, restore ? (void *)&scope_type_anchor : NULL);
}

const stc_pass_spec stc_out_params_scope_pass_spec = {
    SCOPE_PASS_NAME,
    "hide non-site private functions from buffer-results-to-out-params "
    "(restore=true: undo)",
    "builtin.module",
    scope_options,
    1,
    scope_create,
};

/* ---- the site, read from the descriptor ----------------------------------- */

typedef struct site_arg {
  uint32_t role, element, rank;
  size_t first_param; /* index of its allocated pointer in @S's params */
} site_arg;

typedef struct site_variant {
  MlirStringRef name, revision, symbol;
  int64_t workspace; /* < 0 = unknown */
  uint32_t eligibility;
  uint32_t flags; /* stc_rt_variant_flags, from its code (code_hash) */
} site_variant;

typedef struct site_info {
  MlirOperation func; /* @S */
  MlirStringRef symbol, site_id, op_name;
  MlirType type; /* @S's !llvm.func type */
  bool static_shape;
  bool device; /* target = "cuda": every argument is device memory */
  site_arg args[STC_RT_MAX_SITE_ARGS];
  size_t num_args;
  site_variant *variants; /* owned; the usable ones, reference first */
  size_t num_variants;
} site_info;

static MlirAttribute dict_get(MlirAttribute dict, const char *key) {
  return mlirDictionaryAttrGetElementByName(dict, stc__str(key));
}

static bool dict_string(MlirAttribute dict, const char *key, MlirStringRef *out) {
  MlirAttribute a = dict_get(dict, key);
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a))
    return false;
  *out = mlirStringAttrGetValue(a);
  return true;
}

static bool dict_int(MlirAttribute dict, const char *key, int64_t *out) {
  MlirAttribute a = dict_get(dict, key);
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAInteger(a))
    return false;
  *out = mlirIntegerAttrGetValueInt(a);
  return true;
}

static bool element_code(MlirStringRef name, uint32_t *out) {
  static const char *const names[] = {"f32", "f64", "i32", "i64",
                                      "i8",  "i16", "f16", "bf16"};
  for (uint32_t i = 0; i < sizeof names / sizeof *names; i++)
    if (ref_is(name, names[i])) {
      *out = i;
      return true;
    }
  return false;
}

static bool role_code(MlirStringRef name, uint32_t *out) {
  if (ref_is(name, "input"))
    *out = STC_RT_ARG_INPUT;
  else if (ref_is(name, "output"))
    *out = STC_RT_ARG_OUTPUT;
  else if (ref_is(name, "both"))
    *out = STC_RT_ARG_INOUT;
  else
    return false;
  return true;
}

static uint32_t eligibility_code(MlirStringRef name) {
  if (ref_is(name, "static-shape") || ref_is(name, "divisible"))
    return STC_RT_ELIGIBLE_STATIC_SHAPE;
  if (ref_is(name, "blas"))
    return STC_RT_ELIGIBLE_BLAS;
  if (ref_is(name, "cublas"))
    return STC_RT_ELIGIBLE_CUBLAS;
  if (ref_is(name, "tf32"))
    return STC_RT_ELIGIBLE_TF32;
  return STC_RT_ELIGIBLE_ALWAYS;
}

static bool is_ptr(MlirType t) { return mlirTypeIsALLVMPointerType(t); }
static bool is_i64(MlirType t) {
  return mlirTypeIsAInteger(t) && mlirIntegerTypeGetWidth(t) == 64;
}

static MlirType func_type(MlirOperation func) {
  MlirAttribute a = mlirOperationGetAttributeByName(func, stc__str("function_type"));
  return mlirAttributeIsNull(a) || !mlirAttributeIsAType(a)
             ? (MlirType){NULL}
             : mlirTypeAttrGetValue(a);
}

/* Checks that params [*at, ...) start with one unpacked memref of `rank`
 * (rank < 0: count the i64 words up to the next pointer) and advances. */
static bool take_memref(MlirType type, size_t *at, int64_t *rank) {
  size_t n = (size_t)mlirLLVMFunctionTypeGetNumInputs(type);
  size_t i = *at;
  if (i + 2 > n || !is_ptr(mlirLLVMFunctionTypeGetInput(type, (intptr_t)i)) ||
      !is_ptr(mlirLLVMFunctionTypeGetInput(type, (intptr_t)i + 1)))
    return false;
  i += 2;
  size_t words = 0;
  while (i + words < n && is_i64(mlirLLVMFunctionTypeGetInput(type, (intptr_t)(i + words))) &&
         (*rank < 0 || words < (size_t)(1 + 2 * *rank)))
    words++;
  if (*rank < 0) {
    if (words == 0 || (words - 1) % 2 != 0)
      return false;
    *rank = (int64_t)(words - 1) / 2;
  } else if (words != (size_t)(1 + 2 * *rank)) {
    return false;
  }
  *at = i + words;
  return true;
}

/* False with *why set when info->args is full (the runtime's limit). */
static bool has_room_for_arg(const site_info *info, char *why, size_t why_size) {
  if (info->num_args < STC_RT_MAX_SITE_ARGS)
    return true;
  snprintf(why, why_size, "it has more than %d memref arguments",
           STC_RT_MAX_SITE_ARGS);
  return false;
}

/* Fills info from the descriptor and @S's signature; false with *why set
 * when the site cannot use the runtime (it keeps calling its reference). */
static bool read_site(MlirOperation func, MlirAttribute desc, MlirSymbolTable table,
                      site_info *info, char *why, size_t why_size) {
  info->func = func;
  info->symbol = mlirStringAttrGetValue(
      mlirOperationGetAttributeByName(func, stc__str("sym_name")));
  info->type = func_type(func);
  MlirAttribute site = mlirOperationGetAttributeByName(func, stc__str("stc.site"));
  MlirAttribute args = dict_get(desc, "args");
  MlirAttribute results = dict_get(desc, "results");
  MlirAttribute variants = dict_get(desc, "variants");
  MlirAttribute shape = dict_get(desc, "static_shape");
  if (mlirTypeIsNull(info->type) || mlirAttributeIsNull(site) ||
      !mlirAttributeIsAString(site) || !dict_string(desc, "op", &info->op_name) ||
      mlirAttributeIsNull(args) || !mlirAttributeIsAArray(args) ||
      mlirAttributeIsNull(results) || !mlirAttributeIsAArray(results) ||
      mlirAttributeIsNull(variants) || !mlirAttributeIsAArray(variants) ||
      mlirAttributeIsNull(shape) || !mlirAttributeIsABool(shape)) {
    snprintf(why, why_size, "its stc.site_descriptor is malformed");
    return false;
  }
  info->site_id = mlirStringAttrGetValue(site);
  info->static_shape = mlirBoolAttrGetValue(shape);
  MlirStringRef target;
  info->device = dict_string(desc, "target", &target) && ref_is(target, "cuda");
  if (!mlirTypeEqual(mlirLLVMFunctionTypeGetReturnType(info->type),
                     mlirLLVMVoidTypeGet(mlirOperationGetContext(func)))) {
    snprintf(why, why_size, "it still returns a value (not every result "
                            "became an out-param)");
    return false;
  }
  size_t num_in = (size_t)mlirArrayAttrGetNumElements(args);
  size_t at = 0;
  /* The op's operands first, then out-params for the results that were not
   * folded into an operand (drop-equivalent-buffer-results). */
  for (size_t i = 0; i < num_in; i++) {
    MlirAttribute a = mlirArrayAttrGetElement(args, (intptr_t)i);
    MlirStringRef role, element;
    int64_t rank;
    site_arg arg = {0};
    if (!mlirAttributeIsADictionary(a) || !dict_string(a, "role", &role) ||
        !dict_string(a, "element", &element) || !dict_int(a, "rank", &rank) ||
        rank < 0 || !role_code(role, &arg.role)) {
      snprintf(why, why_size, "its stc.site_descriptor is malformed");
      return false;
    }
    if (!element_code(element, &arg.element)) {
      snprintf(why, why_size, "element type '%.*s' has no stc_rt_element",
               (int)element.length, element.data);
      return false;
    }
    if (!has_room_for_arg(info, why, why_size))
      return false;
    arg.rank = (uint32_t)rank;
    arg.first_param = at;
    if (!take_memref(info->type, &at, &rank)) {
      snprintf(why, why_size, "its LLVM signature does not match the "
                              "descriptor's memref arguments");
      return false;
    }
    info->args[info->num_args++] = arg;
  }
  size_t num_params = (size_t)mlirLLVMFunctionTypeGetNumInputs(info->type);
  size_t num_results = (size_t)mlirArrayAttrGetNumElements(results);
  size_t out = 0;
  while (at < num_params) {
    int64_t rank = -1;
    site_arg arg = {.role = STC_RT_ARG_OUTPUT, .first_param = at};
    if (!take_memref(info->type, &at, &rank)) {
      snprintf(why, why_size, "its LLVM signature has a non-memref argument");
      return false;
    }
    /* Out-params come in result order; with fewer out-params than results
     * (some folded into operands) take the next result of that rank. */
    MlirStringRef element = {0};
    bool found = false;
    for (; out < num_results && !found; out++) {
      MlirAttribute r = mlirArrayAttrGetElement(results, (intptr_t)out);
      int64_t r_rank;
      found = mlirAttributeIsADictionary(r) && dict_int(r, "rank", &r_rank) &&
              r_rank == rank && dict_string(r, "element", &element);
    }
    if (!found || !element_code(element, &arg.element)) {
      snprintf(why, why_size, "cannot tell the element type of an out-param");
      return false;
    }
    if (!has_room_for_arg(info, why, why_size))
      return false;
    arg.rank = (uint32_t)rank;
    info->args[info->num_args++] = arg;
  }

  size_t k = (size_t)mlirArrayAttrGetNumElements(variants);
  int64_t reference = 0;
  if (!dict_int(desc, "reference", &reference) || reference < 0 ||
      (size_t)reference >= k) {
    snprintf(why, why_size, "its stc.site_descriptor is malformed");
    return false;
  }
  info->variants = calloc(k ? k : 1, sizeof *info->variants);
  if (!info->variants) {
    snprintf(why, why_size, "out of memory");
    return false;
  }
  /* The reference first (index 0 in the table), then the others in order. */
  for (size_t pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < k; i++) {
      if ((pass == 0) != (i == (size_t)reference))
        continue;
      MlirAttribute v = mlirArrayAttrGetElement(variants, (intptr_t)i);
      MlirAttribute sym = mlirAttributeIsADictionary(v) ? dict_get(v, "symbol")
                                                        : (MlirAttribute){NULL};
      site_variant sv = {.workspace = -1};
      MlirStringRef elig = {0};
      if (mlirAttributeIsNull(sym) || !mlirAttributeIsAFlatSymbolRef(sym) ||
          !dict_string(v, "name", &sv.name) ||
          !dict_string(v, "revision", &sv.revision)) {
        snprintf(why, why_size, "its stc.site_descriptor is malformed");
        return false;
      }
      sv.symbol = mlirFlatSymbolRefAttrGetValue(sym);
      if (!dict_int(v, "workspace_bytes", &sv.workspace))
        sv.workspace = -1;
      if (dict_string(v, "eligibility", &elig))
        sv.eligibility = eligibility_code(elig);
      /* Usable only with @S's exact signature and a C-interface wrapper. */
      MlirOperation entry = mlirSymbolTableLookup(table, sv.symbol);
      char ciface[1024];
      snprintf(ciface, sizeof ciface, "_mlir_ciface_%.*s", (int)sv.symbol.length,
               sv.symbol.data);
      MlirOperation wrapper = mlirSymbolTableLookup(table, stc__str(ciface));
      bool usable = !mlirOperationIsNull(entry) && stc__op_is(entry, "llvm.func") &&
                    !mlirTypeIsNull(func_type(entry)) &&
                    mlirTypeEqual(func_type(entry), info->type) &&
                    !mlirOperationIsNull(wrapper) && stc__op_is(wrapper, "llvm.func");
      if (!usable) {
        if (pass == 0) {
          snprintf(why, why_size, "its reference '%.*s' does not have the "
                                  "dispatch function's signature or has no "
                                  "C-interface wrapper",
                   (int)sv.symbol.length, sv.symbol.data);
          return false;
        }
        char message[1200];
        snprintf(message, sizeof message,
                 PASS_NAME ": variant '%.*s' of site '%.*s' left out: its "
                           "lowered signature differs from the reference's",
                 (int)sv.name.length, sv.name.data, (int)info->site_id.length,
                 info->site_id.data);
        stc__pass_remark(mlirOperationGetContext(func), func, message);
        continue;
      }
      info->variants[info->num_variants++] = sv;
    }
  return true;
}

/* ---- the code hash ------------------------------------------------------------ */

/* The module's top-level ops one variant's code consists of: the variant,
 * then every op a symbol reference inside a collected op names (callees,
 * globals, GPU binaries), each once, in walk order. */
typedef struct code_walk {
  MlirSymbolTable table;
  MlirOperation *ops;
  size_t count, capacity;
  bool out_of_memory;
  bool threads; /* an omp.parallel op is in the code */
} code_walk;

static void code_walk_add(code_walk *w, MlirOperation op) {
  if (mlirOperationIsNull(op))
    return;
  for (size_t i = 0; i < w->count; i++)
    if (mlirOperationEqual(w->ops[i], op))
      return;
  if (w->count == w->capacity) {
    size_t capacity = w->capacity ? 2 * w->capacity : 16;
    MlirOperation *grown = realloc(w->ops, capacity * sizeof *grown);
    if (!grown) {
      w->out_of_memory = true;
      return;
    }
    w->ops = grown;
    w->capacity = capacity;
  }
  w->ops[w->count++] = op;
}

static void code_walk_refer(code_walk *w, MlirAttribute a) {
  if (mlirAttributeIsAFlatSymbolRef(a)) {
    code_walk_add(w, mlirSymbolTableLookup(w->table, mlirFlatSymbolRefAttrGetValue(a)));
  } else if (mlirAttributeIsASymbolRef(a)) {
    /* @binary::@kernel: the top-level op is the root. */
    code_walk_add(w, mlirSymbolTableLookup(w->table, mlirSymbolRefAttrGetRootReference(a)));
  } else if (mlirAttributeIsAArray(a)) {
    for (intptr_t i = 0, n = mlirArrayAttrGetNumElements(a); i < n; i++)
      code_walk_refer(w, mlirArrayAttrGetElement(a, i));
  }
}

static MlirWalkResult code_walk_op(MlirOperation op, void *user) {
  code_walk *w = user;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (name.length == 12 && memcmp(name.data, "omp.parallel", 12) == 0)
    w->threads = true;
  for (intptr_t i = 0, n = mlirOperationGetNumAttributes(op); i < n; i++)
    code_walk_refer(w, mlirOperationGetAttribute(op, i).attribute);
  return MlirWalkResultAdvance;
}

/* SHA-256 hex of the printed code of the variant `symbol` (local scope, no
 * locations: the same compile prints the same text), or "" when it cannot
 * be computed (the runtime then treats the code as unknown). *variant_flags gets
 * STC_RT_VARIANT_STARTS_THREADS when that code opens an OpenMP parallel
 * region (convert-scf-to-openmp's omp.parallel, still in the LLVM dialect
 * module until translation outlines it). */
static void code_hash(MlirSymbolTable table, MlirStringRef symbol, char out[65],
                      uint32_t *variant_flags) {
  out[0] = 0;
  code_walk w = {table, NULL, 0, 0, false, false};
  code_walk_add(&w, mlirSymbolTableLookup(table, symbol));
  stc_text text = {0};
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  mlirOpPrintingFlagsUseLocalScope(flags);
  mlirOpPrintingFlagsAssumeVerified(flags);
  for (size_t i = 0; i < w.count && !w.out_of_memory; i++) {
    MlirOperation op = w.ops[i];
    mlirOperationWalk(op, code_walk_op, &w, MlirWalkPreOrder);
    mlirOperationPrintWithFlags(op, flags, stc_text_callback, &text);
    stc_text_append(&text, "\n", 1);
  }
  mlirOpPrintingFlagsDestroy(flags);
  if (w.count && !w.out_of_memory && !text.out_of_memory)
    stc_sha256_hex(text.data, text.length, out);
  *variant_flags = w.threads ? STC_RT_VARIANT_STARTS_THREADS : 0;
  stc_text_free(&text);
  free(w.ops);
}

/* ---- the IR text ------------------------------------------------------------ */

#define ARG_T "!llvm.struct<(i32, i32, i32, i32)>"
#define VARIANT_T "!llvm.struct<(ptr, ptr, ptr, ptr, i64, i32, i32, ptr)>"
#define SITE_T "!llvm.struct<(i32, i32, ptr, ptr, ptr, i32, i32, ptr, ptr, ptr)>"

/* @"<S>__rt_<what>" */
static void sym(stc_text *t, const site_info *info, const char *what) {
  stc_text_append(t, "@\"", 2);
  stc_text_append(t, info->symbol.data, info->symbol.length);
  stc_text_appendf(t, "__rt_%s\"", what);
}

static void append_ref_symbol(stc_text *t, const char *prefix, MlirStringRef name) {
  char *copy = strndup(name.data, name.length);
  stc_text_appendf(t, "@\"%s", prefix);
  if (copy)
    stc_text_append_escaped(t, copy);
  else
    t->out_of_memory = true;
  stc_text_append(t, "\"", 1);
  free(copy);
}

static void string_global(stc_text *t, const site_info *info, unsigned index,
                          MlirStringRef value) {
  char what[32];
  snprintf(what, sizeof what, "str%u", index);
  stc_text_appendf(t, "  llvm.mlir.global internal constant ");
  sym(t, info, what);
  stc_text_append(t, "(\"", 2);
  for (size_t i = 0; i < value.length; i++)
    stc_text_appendf(t, "\\%02X", (unsigned char)value.data[i]);
  stc_text_appendf(t, "\\00\") {addr_space = 0 : i32} : !llvm.array<%zu x i8>\n",
                   value.length + 1);
}

/* Initializer bodies: an undef aggregate filled field by field. `n` numbers
 * the SSA values of one body. */
typedef struct body {
  stc_text *t;
  unsigned n;
  const char *type;
} body;

static unsigned body_begin(body *b) {
  stc_text_appendf(b->t, "    %%v%u = llvm.mlir.undef : %s\n", b->n, b->type);
  return b->n++;
}

static unsigned insert_int(body *b, unsigned agg, const char *path, int bits,
                           uint64_t value) {
  stc_text_appendf(b->t, "    %%v%u = llvm.mlir.constant(%" PRIu64 " : i%d) : i%d\n",
                   b->n, value, bits, bits);
  stc_text_appendf(b->t, "    %%v%u = llvm.insertvalue %%v%u, %%v%u[%s] : %s\n",
                   b->n + 1, b->n, agg, path, b->type);
  b->n += 2;
  return b->n - 1;
}

/* Inserts the address of a global/function written by `write_sym`. */
static unsigned insert_addr_text(body *b, unsigned agg, const char *path,
                                 const char *symbol_text) {
  stc_text_appendf(b->t, "    %%v%u = llvm.mlir.addressof %s : !llvm.ptr\n", b->n,
                   symbol_text);
  stc_text_appendf(b->t, "    %%v%u = llvm.insertvalue %%v%u, %%v%u[%s] : %s\n",
                   b->n + 1, b->n, agg, path, b->type);
  b->n += 2;
  return b->n - 1;
}

static unsigned insert_null(body *b, unsigned agg, const char *path) {
  stc_text_appendf(b->t, "    %%v%u = llvm.mlir.zero : !llvm.ptr\n", b->n);
  stc_text_appendf(b->t, "    %%v%u = llvm.insertvalue %%v%u, %%v%u[%s] : %s\n",
                   b->n + 1, b->n, agg, path, b->type);
  b->n += 2;
  return b->n - 1;
}

static void body_end(body *b, unsigned last) {
  stc_text_appendf(b->t, "    llvm.return %%v%u : %s\n  }\n", last, b->type);
}

/* The text of one symbol reference into a small owned buffer. */
static char *symbol_text(const site_info *info, const char *what) {
  stc_text t = {0};
  sym(&t, info, what);
  return t.out_of_memory ? (stc_text_free(&t), NULL) : t.data;
}

static char *ref_text(const char *prefix, MlirStringRef name) {
  stc_text t = {0};
  append_ref_symbol(&t, prefix, name);
  return t.out_of_memory ? (stc_text_free(&t), NULL) : t.data;
}

/* Appends `llvm.func @name(<params of type>)` (a declaration). */
static void declare(stc_text *t, const char *prefix, MlirStringRef name,
                    MlirType type) {
  stc_text_append(t, "  llvm.func ", 12);
  append_ref_symbol(t, prefix, name);
  stc_text_append(t, "(", 1);
  for (intptr_t i = 0, n = mlirLLVMFunctionTypeGetNumInputs(type); i < n; i++) {
    if (i)
      stc_text_append(t, ", ", 2);
    mlirTypePrint(mlirLLVMFunctionTypeGetInput(type, i), stc_text_callback, t);
  }
  stc_text_append(t, ")\n", 2);
}

static void emit_site_text(stc_text *t, site_info *info, MlirSymbolTable table) {
  stc_text_appendf(t, "module {\n  llvm.func @" SITE_ENTER
                      "(!llvm.ptr, !llvm.ptr, i32)\n");
  for (size_t i = 0; i < info->num_variants; i++) {
    MlirStringRef s = info->variants[i].symbol;
    declare(t, "", s, info->type);
    char ciface[1024];
    snprintf(ciface, sizeof ciface, "_mlir_ciface_%.*s", (int)s.length, s.data);
    declare(t, "", stc__str(ciface),
            func_type(mlirSymbolTableLookup(table, stc__str(ciface))));
  }
  /* Strings: 0 site id, 1 op name, then name and revision per variant,
   * then each variant's code hash. */
  unsigned strings = 0;
  string_global(t, info, strings++, info->site_id);
  string_global(t, info, strings++, info->op_name);
  for (size_t i = 0; i < info->num_variants; i++) {
    string_global(t, info, strings++, info->variants[i].name);
    string_global(t, info, strings++, info->variants[i].revision);
  }
  for (size_t i = 0; i < info->num_variants; i++) {
    char hash[65];
    code_hash(table, info->variants[i].symbol, hash, &info->variants[i].flags);
    string_global(t, info, strings++, stc__str(hash));
  }

  char type[128], path[32];
  snprintf(type, sizeof type, "!llvm.array<%zu x " ARG_T ">", info->num_args);
  stc_text_appendf(t, "  llvm.mlir.global internal constant ");
  sym(t, info, "args");
  stc_text_appendf(t, "() {addr_space = 0 : i32} : %s {\n", type);
  body b = {t, 0, type};
  unsigned agg = body_begin(&b);
  for (size_t i = 0; i < info->num_args; i++) {
    const site_arg *a = &info->args[i];
    uint32_t fields[4] = {a->role, a->element, a->rank,
                          info->device ? STC_RT_MEMORY_DEVICE : STC_RT_MEMORY_HOST};
    for (int f = 0; f < 4; f++) {
      snprintf(path, sizeof path, "%zu, %d", i, f);
      agg = insert_int(&b, agg, path, 32, fields[f]);
    }
  }
  body_end(&b, agg);

  snprintf(type, sizeof type, "!llvm.array<%zu x " VARIANT_T ">", info->num_variants);
  stc_text_appendf(t, "  llvm.mlir.global internal constant ");
  sym(t, info, "variants");
  stc_text_appendf(t, "() {addr_space = 0 : i32} : %s {\n", type);
  b = (body){t, 0, type};
  agg = body_begin(&b);
  for (size_t i = 0; i < info->num_variants; i++) {
    const site_variant *v = &info->variants[i];
    char what[32];
    for (int f = 0; f < 2; f++) {
      snprintf(what, sizeof what, "str%zu", 2 + 2 * i + (size_t)f);
      char *target = symbol_text(info, what);
      snprintf(path, sizeof path, "%zu, %d", i, f);
      agg = insert_addr_text(&b, agg, path, target ? target : "@\"\"");
      free(target);
    }
    char *entry = ref_text("", v->symbol);
    char *wrapper = ref_text("_mlir_ciface_", v->symbol);
    snprintf(path, sizeof path, "%zu, 2", i);
    agg = insert_addr_text(&b, agg, path, entry ? entry : "@\"\"");
    snprintf(path, sizeof path, "%zu, 3", i);
    agg = insert_addr_text(&b, agg, path, wrapper ? wrapper : "@\"\"");
    if (!entry || !wrapper)
      t->out_of_memory = true;
    free(entry);
    free(wrapper);
    snprintf(path, sizeof path, "%zu, 4", i);
    agg = insert_int(&b, agg, path, 64,
                     v->workspace < 0 ? UINT64_MAX : (uint64_t)v->workspace);
    snprintf(path, sizeof path, "%zu, 5", i);
    agg = insert_int(&b, agg, path, 32, v->eligibility);
    snprintf(path, sizeof path, "%zu, 6", i);
    agg = insert_int(&b, agg, path, 32, v->flags);
    snprintf(what, sizeof what, "str%zu", 2 + 2 * info->num_variants + i);
    char *hash = symbol_text(info, what);
    snprintf(path, sizeof path, "%zu, 7", i);
    agg = insert_addr_text(&b, agg, path, hash ? hash : "@\"\"");
    if (!hash)
      t->out_of_memory = true;
    free(hash);
  }
  body_end(&b, agg);

  if (info->static_shape) {
    stc_text_appendf(t, "  llvm.mlir.global internal ");
    sym(t, info, "slot");
    stc_text_appendf(t, "() {addr_space = 0 : i32, alignment = 8 : i64} : "
                        "!llvm.ptr {\n    %%z = llvm.mlir.zero : !llvm.ptr\n"
                        "    llvm.return %%z : !llvm.ptr\n  }\n");
  }

  stc_text_appendf(t, "  llvm.mlir.global internal ");
  sym(t, info, "site");
  stc_text_appendf(t, "() {addr_space = 0 : i32, alignment = 8 : i64} : " SITE_T " {\n");
  b = (body){t, 0, SITE_T};
  agg = body_begin(&b);
  agg = insert_int(&b, agg, "0", 32, STC_RT_DISPATCH_ABI_VERSION);
  agg = insert_int(&b, agg, "1", 32, info->num_args);
  const char *const pointers[] = {"str0", "str1", "args"};
  for (int f = 0; f < 3; f++) {
    char *target = symbol_text(info, pointers[f]);
    snprintf(path, sizeof path, "%d", 2 + f);
    agg = insert_addr_text(&b, agg, path, target ? target : "@\"\"");
    free(target);
  }
  agg = insert_int(&b, agg, "5", 32, info->num_variants);
  agg = insert_int(&b, agg, "6", 32, 0); /* the reference comes first */
  char *variants = symbol_text(info, "variants");
  agg = insert_addr_text(&b, agg, "7", variants ? variants : "@\"\"");
  free(variants);
  if (info->static_shape) {
    char *slot = symbol_text(info, "slot");
    agg = insert_addr_text(&b, agg, "8", slot ? slot : "@\"\"");
    free(slot);
  } else {
    agg = insert_null(&b, agg, "8");
  }
  agg = insert_null(&b, agg, "9");
  body_end(&b, agg);

  /* The dispatch function. */
  size_t num_params = (size_t)mlirLLVMFunctionTypeGetNumInputs(info->type);
  stc_text_appendf(t, "  llvm.func @" NEW_DISPATCH "(");
  for (size_t i = 0; i < num_params; i++) {
    stc_text_appendf(t, "%s%%p%zu: ", i ? ", " : "", i);
    mlirTypePrint(mlirLLVMFunctionTypeGetInput(info->type, (intptr_t)i),
                  stc_text_callback, t);
  }
  stc_text_appendf(t, ") {\n");
  stc_text_appendf(t, "    %%n = llvm.mlir.constant(%zu : i64) : i64\n"
                      "    %%words = llvm.alloca %%n x i64 {alignment = 8 : i64} "
                      ": (i64) -> !llvm.ptr\n",
                   num_params ? num_params : 1);
  stc_text_appendf(t, "    %%site = llvm.mlir.addressof ");
  sym(t, info, "site");
  stc_text_appendf(t, " : !llvm.ptr\n");
  /* The argument list of the indirect call: "%p0, %p1 : (types)". */
  stc_text call_args = {0}, call_types = {0};
  for (size_t i = 0; i < num_params; i++) {
    stc_text_appendf(&call_args, "%s%%p%zu", i ? ", " : "", i);
    if (i)
      stc_text_append(&call_types, ", ", 2);
    mlirTypePrint(mlirLLVMFunctionTypeGetInput(info->type, (intptr_t)i),
                  stc_text_callback, &call_types);
  }
  if (call_args.out_of_memory || call_types.out_of_memory)
    t->out_of_memory = true;
  if (info->static_shape) {
    stc_text_appendf(t, "    %%slot = llvm.mlir.addressof ");
    sym(t, info, "slot");
    stc_text_appendf(
        t, " : !llvm.ptr\n"
           "    %%f = llvm.load %%slot atomic acquire {alignment = 8 : i64} : "
           "!llvm.ptr -> !llvm.ptr\n"
           "    %%null = llvm.mlir.zero : !llvm.ptr\n"
           "    %%tuned = llvm.icmp \"ne\" %%f, %%null : !llvm.ptr\n"
           "    llvm.cond_br %%tuned, ^fast, ^slow\n"
           "  ^fast:\n"
           "    llvm.call %%f(%s) : !llvm.ptr, (%s) -> ()\n"
           "    llvm.return\n"
           "  ^slow:\n",
        call_args.data ? call_args.data : "", call_types.data ? call_types.data : "");
  }
  stc_text_free(&call_args);
  stc_text_free(&call_types);
  for (size_t i = 0; i < num_params; i++) {
    MlirType pt = mlirLLVMFunctionTypeGetInput(info->type, (intptr_t)i);
    char word[32];
    if (is_ptr(pt)) {
      stc_text_appendf(t, "    %%w%zu = llvm.ptrtoint %%p%zu : !llvm.ptr to i64\n", i, i);
      snprintf(word, sizeof word, "%%w%zu", i);
    } else {
      snprintf(word, sizeof word, "%%p%zu", i);
    }
    stc_text_appendf(t,
                     "    %%g%zu = llvm.getelementptr %%words[%zu] : (!llvm.ptr) "
                     "-> !llvm.ptr, i64\n"
                     "    llvm.store %s, %%g%zu {alignment = 8 : i64} : i64, !llvm.ptr\n",
                     i, i, word, i);
  }
  stc_text_appendf(t,
                   "    %%count = llvm.mlir.constant(%zu : i32) : i32\n"
                   "    llvm.call @" SITE_ENTER "(%%site, %%words, %%count) : "
                   "(!llvm.ptr, !llvm.ptr, i32) -> ()\n"
                   "    llvm.return\n  }\n}\n",
                   num_params);
}

/* ---- splicing -------------------------------------------------------------- */

static bool symbol_starts_with(MlirOperation op, const char *prefix, size_t length) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, stc__str("sym_name"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a))
    return false;
  MlirStringRef name = mlirStringAttrGetValue(a);
  return name.length >= length && memcmp(name.data, prefix, length) == 0;
}

static bool symbol_is(MlirOperation op, const char *name) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, stc__str("sym_name"));
  return !mlirAttributeIsNull(a) && mlirAttributeIsAString(a) &&
         ref_is(mlirStringAttrGetValue(a), name);
}

/* Moves the parsed globals into the module, the stc_rt_site_enter
 * declaration when missing, and swaps @S's body for the new one. */
static bool splice(MlirOperation module, MlirSymbolTable table, MlirOperation parsed,
                   const site_info *info) {
  char prefix[1100];
  int length = snprintf(prefix, sizeof prefix, "%.*s__rt_", (int)info->symbol.length,
                        info->symbol.data);
  MlirOperation op = mlirBlockGetFirstOperation(module_body(parsed));
  while (!mlirOperationIsNull(op)) {
    MlirOperation next = mlirOperationGetNextInBlock(op);
    if (stc__op_is(op, "llvm.mlir.global") &&
        symbol_starts_with(op, prefix, (size_t)length)) {
      MlirStringRef name = mlirStringAttrGetValue(
          mlirOperationGetAttributeByName(op, stc__str("sym_name")));
      if (!mlirOperationIsNull(mlirSymbolTableLookup(table, name)))
        return false; /* a clash: the caller reports it */
      mlirOperationRemoveFromParent(op);
      mlirBlockInsertOwnedOperationBefore(module_body(module), info->func, op);
      mlirSymbolTableInsert(table, op);
    } else if (symbol_is(op, SITE_ENTER) &&
               mlirOperationIsNull(mlirSymbolTableLookup(table, stc__str(SITE_ENTER)))) {
      mlirOperationRemoveFromParent(op);
      mlirBlockInsertOwnedOperation(module_body(module), 0, op);
      mlirSymbolTableInsert(table, op);
    } else if (symbol_is(op, NEW_DISPATCH)) {
      MlirRegion old_body = mlirOperationGetRegion(info->func, 0);
      MlirRegion new_body = mlirOperationGetRegion(op, 0);
      mlirRegionTakeBody(old_body, new_body);
    }
    op = next;
  }
  return true;
}

/* ---- the pass --------------------------------------------------------------- */

static bool lower_site(MlirOperation module, MlirSymbolTable table, MlirOperation func,
                       MlirAttribute desc) {
  MlirContext ctx = mlirOperationGetContext(module);
  site_info info = {0};
  char why[600] = "";
  bool ok = true;
  if (!read_site(func, desc, table, &info, why, sizeof why)) {
    char message[1200];
    MlirAttribute site = mlirOperationGetAttributeByName(func, stc__str("stc.site"));
    MlirStringRef id = !mlirAttributeIsNull(site) && mlirAttributeIsAString(site)
                           ? mlirStringAttrGetValue(site)
                           : stc__str("?");
    snprintf(message, sizeof message,
             PASS_NAME ": site '%.*s' keeps calling its reference: %s",
             (int)id.length, id.data, why);
    stc__pass_remark(ctx, func, message);
  } else {
    stc_text text = {0};
    emit_site_text(&text, &info, table);
    MlirOperation parsed =
        text.out_of_memory
            ? (MlirOperation){NULL}
            : mlirOperationCreateParse(ctx, stc__str(text.data), stc__str(PASS_NAME));
    if (mlirOperationIsNull(parsed)) {
      mlirEmitError(mlirOperationGetLocation(func),
                    PASS_NAME ": internal error: the generated dispatch does "
                              "not parse (see the error above)");
      ok = false;
    } else if (!splice(module, table, parsed, &info)) {
      mlirEmitError(mlirOperationGetLocation(func),
                    PASS_NAME ": a dispatch global's name is already taken");
      ok = false;
    }
    if (!mlirOperationIsNull(parsed))
      mlirOperationDestroy(parsed);
    stc_text_free(&text);
  }
  free(info.variants);
  /* Consumed: nothing downstream reads it, and LLVM translation ignores it. */
  mlirOperationRemoveAttributeByName(func, stc__str(ATTR_DESCRIPTOR));
  return ok;
}

static void run(MlirOperation module, MlirExternalPass pass, void *user) {
  (void)user;
  MlirSymbolTable table = mlirSymbolTableCreate(module);
  bool ok = !mlirSymbolTableIsNull(table);
  /* Collect first: splicing inserts ops into the block being walked. */
  size_t count = 0, capacity = 0;
  MlirOperation *sites = NULL;
  for (MlirOperation op = mlirBlockGetFirstOperation(module_body(module));
       ok && !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    if (!stc__op_is(op, "llvm.func") || !has_attr(op, ATTR_DESCRIPTOR))
      continue;
    if (count == capacity) {
      capacity = capacity ? 2 * capacity : 16;
      MlirOperation *grown = realloc(sites, capacity * sizeof *grown);
      if (!grown) {
        mlirEmitError(mlirOperationGetLocation(module), PASS_NAME ": out of memory");
        ok = false;
        break;
      }
      sites = grown;
    }
    sites[count++] = op;
  }
  for (size_t i = 0; ok && i < count; i++) {
    MlirAttribute desc = mlirOperationGetAttributeByName(sites[i], stc__str(ATTR_DESCRIPTOR));
    if (!mlirAttributeIsADictionary(desc)) {
      mlirEmitError(mlirOperationGetLocation(sites[i]),
                    PASS_NAME ": stc.site_descriptor is not a dictionary");
      ok = false;
      break;
    }
    ok = lower_site(module, table, sites[i], desc);
  }
  free(sites);
  if (!mlirSymbolTableIsNull(table))
    mlirSymbolTableDestroy(table);
  if (ok && !mlirOperationVerify(module)) {
    mlirEmitError(mlirOperationGetLocation(module),
                  PASS_NAME ": the module does not verify after lowering the "
                            "dispatch");
    ok = false;
  }
  if (!ok)
    mlirExternalPassSignalFailure(pass);
}

static _Alignas(8) char pass_type_anchor;

#define PASS_DESCRIPTION                                                      \
  "in the LLVM dialect: emit the rt_dispatch.h globals of every site and "  \
  "give its dispatch function the slot fast path and the "                  \
  "stc_rt_site_enter slow path"

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  if (!stc__no_options(PASS_NAME, values, count, err))
    return (MlirPass){NULL};
  /* transform: remarks go through transform.debug.emit_remark_at. */
  MlirDialectHandle dialects[] = {mlirGetDialectHandle__llvm__(),
                                  mlirGetDialectHandle__transform__()};
  stc_pass_def def = {&stc_lower_dispatch_pass_spec, "StcLowerDispatch",
                      &pass_type_anchor, dialects, 2, run, NULL, NULL};
  return stc__create_pass(&def, NULL);
}

const stc_pass_spec stc_lower_dispatch_pass_spec = {
    PASS_NAME, PASS_DESCRIPTION, "builtin.module", NULL, 0, create,
};
