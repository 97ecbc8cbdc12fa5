/* stc-lower-blas: the compiler half of vendor-BLAS variants.
 *
 * In:  a bufferized module (builtin.module) in which the variants of the
 *      BLAS schedules (passes/schedules/<op>_blas.mlir, stc.requires = "blas")
 *      hold their op marked `stc.blas`: linalg.matmul, batch_matmul, matvec
 *      or vecmat on memrefs of f32 or f64.
 * Out: each marked op replaced by
 *        %a' = memref.cast %a : memref<...> to memref<?x?xT, strided<[?, ?], offset: ?>>
 *        (then memref.transpose of its last two dims where the op's
 *        indexing_maps read that operand transposed: stc__blas_maps)
 *        ...
 *        func.call @stc_rt_blas_<op>_<T>(%a', %b', %c')
 *      plus, once per entry point, its declaration
 *        func.func private @stc_rt_blas_<op>_<T>(...) attributes {llvm.emit_c_interface}
 *      so that func-to-llvm calls the runtime's
 *      _mlir_ciface_stc_rt_blas_<op>_<T> (include/stc/rt_blas.h) with
 *      descriptor pointers: the runtime reads sizes, offsets and strides.
 *
 * A marked op this pass cannot lower (still on tensors: run it after
 * bufferization; an element type or layout the entry points do not take)
 * stays as it is, with a remark: the default lowering then computes it, so
 * the variant is slower but never wrong. A symbol of the entry point's name
 * that is not such a declaration is an error. */
#include "outline.h"
#include "stc_passes.h"
#include "transform_apply.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/MemRef.h>
#include <mlir-c/IR.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS_NAME "stc-lower-blas"
#define ATTR_BLAS "stc.blas"


/* The ops the runtime has entry points for, with their operands' ranks. */
static const struct {
  const char *op;   /* "linalg.<entry>" */
  const char *entry; /* the <op> of stc_rt_blas_<op>_<T> */
  intptr_t ranks[3];
} blas_ops[] = {
    {"linalg.matmul", "matmul", {2, 2, 2}},
    {"linalg.batch_matmul", "batch_matmul", {3, 3, 3}},
    {"linalg.matvec", "matvec", {2, 1, 1}},
    {"linalg.vecmat", "vecmat", {1, 2, 1}},
};
enum { NUM_BLAS_OPS = sizeof blas_ops / sizeof *blas_ops };

typedef struct marked_ops {
  MlirOperation *items; /* owned */
  size_t count, capacity;
  bool out_of_memory;
} marked_ops;

static MlirWalkResult collect(MlirOperation op, void *user) {
  marked_ops *list = user;
  if (mlirAttributeIsNull(mlirOperationGetAttributeByName(op, stc__str(ATTR_BLAS))))
    return MlirWalkResultAdvance;
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? 2 * list->capacity : 8;
    MlirOperation *items = realloc(list->items, capacity * sizeof *items);
    if (!items) {
      list->out_of_memory = true;
      return MlirWalkResultInterrupt;
    }
    list->items = items;
    list->capacity = capacity;
  }
  list->items[list->count++] = op;
  return MlirWalkResultAdvance;
}

/* Dim position of result `i` of `map`, or -1 when it is not a dim. */
static int64_t result_dim(MlirAffineMap map, intptr_t i) {
  MlirAffineExpr e = mlirAffineMapGetResult(map, i);
  return mlirAffineExprIsADim(e) ? (int64_t)mlirAffineDimExprGetPosition(e) : -1;
}

/* Does `map` give (batch..., row, col) for the dims named? (batch: d0 when
 * has_batch.) *transposed when it gives (batch..., col, row) instead. */
static bool operand_map(MlirAffineMap map, bool has_batch, int64_t row,
                        int64_t col, bool *transposed) {
  intptr_t lead = has_batch ? 1 : 0;
  if (mlirAffineMapGetNumResults(map) != lead + 2 ||
      (has_batch && result_dim(map, 0) != 0))
    return false;
  int64_t a = result_dim(map, lead), b = result_dim(map, lead + 1);
  *transposed = a == col && b == row;
  return (a == row && b == col) || *transposed;
}

bool stc__blas_maps(MlirOperation op, bool transposed[3]) {
  transposed[0] = transposed[1] = transposed[2] = false;
  bool matmul = stc__op_is(op, "linalg.matmul");
  bool batch = stc__op_is(op, "linalg.batch_matmul");
  if (!matmul && !batch)
    return true; /* matvec, vecmat: their maps are fixed */
  MlirAttribute maps = mlirOperationGetAttributeByName(op, stc__str("indexing_maps"));
  if (mlirAttributeIsNull(maps))
    return true;
  if (!mlirAttributeIsAArray(maps) || mlirArrayAttrGetNumElements(maps) != 3)
    return false;
  MlirAffineMap map[3];
  for (intptr_t i = 0; i < 3; i++) {
    MlirAttribute a = mlirArrayAttrGetElement(maps, i);
    if (!mlirAttributeIsAAffineMap(a))
      return false;
    map[i] = mlirAffineMapAttrGetValue(a);
    if (mlirAffineMapGetNumDims(map[i]) != (batch ? 4 : 3))
      return false;
  }
  /* Loops: [b,] m, n, k. */
  int64_t m = batch ? 1 : 0, n = m + 1, k = m + 2;
  bool c_transposed;
  return operand_map(map[0], batch, m, k, &transposed[0]) &&
         operand_map(map[1], batch, k, n, &transposed[1]) &&
         operand_map(map[2], batch, m, n, &c_transposed) && !c_transposed;
}

/* "f32" / "f64" for a memref of that element type, else NULL. */
static const char *element_suffix(MlirType type) {
  if (!mlirTypeIsAMemRef(type))
    return NULL;
  MlirType element = mlirShapedTypeGetElementType(type);
  return mlirTypeIsAF32(element) ? "f32" : mlirTypeIsAF64(element) ? "f64" : NULL;
}

/* memref<?x...xT, strided<[?, ...], offset: ?>> of `rank`. */
static MlirType dynamic_memref(MlirContext ctx, intptr_t rank, const char *element) {
  char text[160];
  size_t at = (size_t)snprintf(text, sizeof text, "memref<");
  for (intptr_t i = 0; i < rank; i++)
    at += (size_t)snprintf(text + at, sizeof text - at, "?x");
  at += (size_t)snprintf(text + at, sizeof text - at, "%s, strided<[", element);
  for (intptr_t i = 0; i < rank; i++)
    at += (size_t)snprintf(text + at, sizeof text - at, "%s?", i ? ", " : "");
  snprintf(text + at, sizeof text - at, "], offset: ?>>");
  return mlirTypeParseGet(ctx, stc__str(text));
}

/* Why `op` cannot become a call (NULL when it can); *which and *suffix say
 * which entry point. */
static const char *check_op(MlirOperation op, size_t *which, const char **suffix) {
  *which = NUM_BLAS_OPS;
  for (size_t i = 0; i < NUM_BLAS_OPS; i++)
    if (stc__op_is(op, blas_ops[i].op))
      *which = i;
  if (*which == NUM_BLAS_OPS)
    return "it is not a linalg matmul, batch_matmul, matvec or vecmat";
  if (mlirOperationGetNumResults(op) != 0)
    return "it is not bufferized (run " PASS_NAME " after bufferization)";
  if (mlirOperationGetNumOperands(op) != 3)
    return "it does not have exactly three operands";
  bool transposed[3];
  if (!stc__blas_maps(op, transposed))
    return "its indexing maps are not a (transposed) matmul's";
  *suffix = element_suffix(mlirValueGetType(mlirOperationGetOperand(op, 0)));
  if (!*suffix)
    return "its element type is neither f32 nor f64";
  for (intptr_t i = 0; i < 3; i++) {
    MlirType type = mlirValueGetType(mlirOperationGetOperand(op, i));
    const char *s = element_suffix(type);
    if (!s || strcmp(s, *suffix) != 0)
      return "its operands do not share one element type";
    if (mlirShapedTypeGetRank(type) != blas_ops[*which].ranks[i])
      return "an operand has an unexpected rank";
    int64_t offset;
    int64_t strides[3];
    if (mlirLogicalResultIsFailure(
            mlirMemRefTypeGetStridesAndOffset(type, strides, &offset)))
      return "an operand's layout is not strided";
  }
  return NULL;
}

/* The entry point's declaration, created at the top of the module the
 * first time; null (with an error emitted) when the name is taken by
 * something else. */
static MlirOperation declare(MlirContext ctx, MlirOperation module,
                             MlirSymbolTable table, const char *name,
                             MlirType type, MlirLocation loc) {
  MlirOperation existing = mlirSymbolTableLookup(table, stc__str(name));
  if (!mlirOperationIsNull(existing)) {
    MlirAttribute have = mlirOperationGetAttributeByName(existing, stc__str("function_type"));
    MlirStringRef kind = mlirIdentifierStr(mlirOperationGetName(existing));
    bool same = kind.length == 9 && memcmp(kind.data, "func.func", 9) == 0 &&
                !mlirAttributeIsNull(have) && mlirAttributeIsAType(have) &&
                mlirTypeEqual(mlirTypeAttrGetValue(have), type) &&
                mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(existing, 0)));
    if (same)
      return existing;
    char message[400];
    snprintf(message, sizeof message,
             PASS_NAME ": symbol @%s exists and is not the runtime's "
                       "declaration of that name",
             name);
    mlirEmitError(mlirOperationGetLocation(existing), message);
    return (MlirOperation){NULL};
  }
  MlirNamedAttribute attributes[] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, stc__str("sym_name")),
                            mlirStringAttrGet(ctx, stc__str(name))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, stc__str("function_type")),
                            mlirTypeAttrGet(type)),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, stc__str("sym_visibility")),
                            mlirStringAttrGet(ctx, stc__str("private"))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, stc__str("llvm.emit_c_interface")),
                            mlirUnitAttrGet(ctx)),
  };
  MlirOperationState state = mlirOperationStateGet(stc__str("func.func"), loc);
  mlirOperationStateAddAttributes(&state, 4, attributes);
  MlirRegion body = mlirRegionCreate();
  mlirOperationStateAddOwnedRegions(&state, 1, &body);
  MlirOperation decl = mlirOperationCreate(&state);
  MlirBlock top = mlirRegionGetFirstBlock(mlirOperationGetRegion(module, 0));
  mlirBlockInsertOwnedOperation(top, 0, decl);
  mlirSymbolTableInsert(table, decl);
  return decl;
}

/* Replaces one checked op by casts + the call. False with an error emitted
 * when the declaration cannot be made. */
static bool lower_op(MlirContext ctx, MlirOperation module, MlirSymbolTable table,
                     MlirOperation op, size_t which, const char *suffix,
                     const char *prefix) {
  MlirLocation loc = mlirOperationGetLocation(op);
  MlirBlock block = mlirOperationGetBlock(op);
  MlirValue args[3];
  MlirType types[3];
  bool transposed[3];
  stc__blas_maps(op, transposed);
  for (intptr_t i = 0; i < 3; i++) {
    MlirValue operand = mlirOperationGetOperand(op, i);
    intptr_t rank = blas_ops[which].ranks[i];
    types[i] = dynamic_memref(ctx, rank, suffix);
    args[i] = operand;
    if (!mlirTypeEqual(mlirValueGetType(operand), types[i])) {
      MlirOperationState state = mlirOperationStateGet(stc__str("memref.cast"), loc);
      mlirOperationStateAddOperands(&state, 1, &args[i]);
      mlirOperationStateAddResults(&state, 1, &types[i]);
      MlirOperation cast = mlirOperationCreate(&state);
      mlirBlockInsertOwnedOperationBefore(block, op, cast);
      args[i] = mlirOperationGetResult(cast, 0);
    }
    if (transposed[i]) {
      /* A strided view with the last two dims swapped: the entry point
       * sees the operand the default map reads (column-major for BLAS). */
      char perm[96];
      snprintf(perm, sizeof perm, "affine_map<%s>",
               rank == 3 ? "(d0, d1, d2) -> (d0, d2, d1)" : "(d0, d1) -> (d1, d0)");
      MlirNamedAttribute permutation = mlirNamedAttributeGet(
          mlirIdentifierGet(ctx, stc__str("permutation")), mlirAttributeParseGet(ctx, stc__str(perm)));
      MlirOperationState state = mlirOperationStateGet(stc__str("memref.transpose"), loc);
      mlirOperationStateAddOperands(&state, 1, &args[i]);
      mlirOperationStateAddResults(&state, 1, &types[i]);
      mlirOperationStateAddAttributes(&state, 1, &permutation);
      MlirOperation transpose = mlirOperationCreate(&state);
      mlirBlockInsertOwnedOperationBefore(block, op, transpose);
      args[i] = mlirOperationGetResult(transpose, 0);
    }
  }
  char name[64];
  snprintf(name, sizeof name, "%s%s_%s", prefix, blas_ops[which].entry, suffix);
  MlirType type = mlirFunctionTypeGet(ctx, 3, types, 0, NULL);
  if (mlirOperationIsNull(declare(ctx, module, table, name, type, loc)))
    return false;
  MlirOperation call = stc__build_call(ctx, loc, stc__str(name), 3, args, 0, NULL, false);
  mlirBlockInsertOwnedOperationBefore(block, op, call);
  mlirOperationDestroy(op);
  return true;
}

static void run(MlirOperation module, MlirExternalPass pass, void *user) {
  (void)user;
  MlirContext ctx = mlirOperationGetContext(module);
  marked_ops marked = {0};
  mlirOperationWalk(module, collect, &marked, MlirWalkPreOrder);
  if (marked.out_of_memory) {
    free(marked.items);
    mlirEmitError(mlirOperationGetLocation(module), PASS_NAME ": out of memory");
    mlirExternalPassSignalFailure(pass);
    return;
  }
  MlirSymbolTable table = mlirSymbolTableCreate(module);
  bool ok = true;
  for (size_t i = 0; i < marked.count && ok; i++) {
    MlirOperation op = marked.items[i];
    size_t which;
    const char *suffix = NULL;
    const char *why = check_op(op, &which, &suffix);
    /* stc.blas = "cublas" (a cuBLAS variant under --target=cuda): the
     * runtime's cuBLAS entry points, f32 matmul / batch_matmul on device
     * memory (include/stc/rt_gpu.h). */
    MlirAttribute marker = mlirOperationGetAttributeByName(op, stc__str(ATTR_BLAS));
    MlirStringRef value = mlirAttributeIsAString(marker)
                              ? mlirStringAttrGetValue(marker)
                              : (MlirStringRef){"", 0};
    bool cublas = value.length == 6 && memcmp(value.data, "cublas", 6) == 0;
    if (!why && cublas && (which > 1 || strcmp(suffix, "f32") != 0))
      why = "cuBLAS entry points take f32 matmul / batch_matmul only";
    if (why) {
      char message[300];
      snprintf(message, sizeof message,
               PASS_NAME ": op marked stc.blas keeps its default lowering: %s", why);
      stc__pass_remark(ctx, op, message);
      mlirOperationRemoveAttributeByName(op, stc__str(ATTR_BLAS));
      continue;
    }
    ok = lower_op(ctx, module, table, op, which, suffix,
                  cublas ? "stc_rt_cublas_" : "stc_rt_blas_");
  }
  mlirSymbolTableDestroy(table);
  free(marked.items);
  if (!ok)
    mlirExternalPassSignalFailure(pass);
}

static _Alignas(8) char type_anchor;

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  if (!stc__no_options(PASS_NAME, values, count, err))
    return (MlirPass){NULL};
  MlirDialectHandle dialects[] = {mlirGetDialectHandle__func__(),
                                  mlirGetDialectHandle__memref__()};
  stc_pass_def def = {&stc_lower_blas_pass_spec, "StcLowerBlas", &type_anchor,
                      dialects, 2, run, NULL, NULL};
  return stc__create_pass(&def, NULL);
}

const stc_pass_spec stc_lower_blas_pass_spec = {
    PASS_NAME,
    "after bufferization: ops marked stc.blas (BLAS variants) become calls of "
    "libstc_rt's vendor-BLAS entry points (include/stc/rt_blas.h)",
    "builtin.module",
    NULL,
    0,
    create,
};
