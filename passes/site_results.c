/* stc-site-results-in-place: one lowered signature for every function of a
 * site, static or dynamic shapes alike.
 *
 * In:  a module right after one-shot-bufferize (function boundaries): the
 *      functions stc-multi-variant made for a site - @S__ref, the variants
 *      @S__<schedule>, the dispatch @S - take the op's operands as memrefs,
 *      its inits last, and return one memref per op result (result i is
 *      tied to init i: destination-passing style).
 * Out: every variant returns, for result i, its init argument: where a
 *      schedule's loops computed out of place (into a copy of the init),
 *      `memref.copy %result, %init` is inserted before the return. The
 *      returned value is then the argument itself in the reference (a linalg
 *      op bufferizes in place into its init), in every variant, and so in
 *      the dispatch; drop-equivalent-buffer-results, run after this pass,
 *      turns all of them into `void f(memrefs...)`.
 *
 * Why it is sound: the callers see a site only through @S, whose analysis
 * (it calls the in-place reference) already says the init argument is
 * written, so no caller relies on the init's old value after the call; a
 * variant that writes its result there at the end does what the reference
 * does. Why it is needed: without it, whether a result came back in the
 * init buffer depended on the schedule, so the variants' lowered signatures
 * differed from the reference's (stc-lower-dispatch had to leave them out),
 * and out-params (buffer-results-to-out-params) cannot be made for
 * dynamically shaped results at all: a hot dynamic-shape site made
 * --tune-hot-paths fail.
 *
 * A variant is left as it is when its site's reference does not work in
 * place (then callers may rely on the init's old value), or when its
 * returned types do not match its trailing arguments or it has more than
 * one block; the out-params fallback of the pipeline still applies to
 * static shapes, and stc-lower-dispatch leaves out a variant whose
 * signature differs. */
#include "stc_passes.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/MemRef.h>
#include <mlir-c/IR.h>
#include <string.h>

#define PASS_NAME "stc-site-results-in-place"



/* The single-block body's func.return when each returned value is a memref
 * of its tied init argument's type (results i tied to the last arguments);
 * null otherwise. */
static MlirOperation tied_return(MlirOperation func) {
  MlirBlock block = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  if (mlirBlockIsNull(block) || !mlirBlockIsNull(mlirBlockGetNextInRegion(block)))
    return (MlirOperation){NULL};
  MlirOperation ret = mlirBlockGetTerminator(block);
  if (mlirOperationIsNull(ret) || !stc__op_is(ret, "func.return"))
    return (MlirOperation){NULL};
  intptr_t num_results = mlirOperationGetNumOperands(ret);
  intptr_t num_args = mlirBlockGetNumArguments(block);
  if (num_results > num_args)
    return (MlirOperation){NULL};
  for (intptr_t i = 0; i < num_results; i++) {
    MlirValue result = mlirOperationGetOperand(ret, i);
    MlirValue init = mlirBlockGetArgument(block, num_args - num_results + i);
    if (!mlirTypeIsAMemRef(mlirValueGetType(result)) ||
        !mlirTypeEqual(mlirValueGetType(result), mlirValueGetType(init)))
      return (MlirOperation){NULL};
  }
  return ret;
}

/* True when `func` returns its init arguments themselves (in place). */
static bool returns_inits(MlirOperation func) {
  MlirOperation ret = tied_return(func);
  if (mlirOperationIsNull(ret))
    return false;
  MlirBlock block = mlirOperationGetBlock(ret);
  intptr_t num_results = mlirOperationGetNumOperands(ret);
  intptr_t num_args = mlirBlockGetNumArguments(block);
  for (intptr_t i = 0; i < num_results; i++)
    if (!mlirValueEqual(mlirOperationGetOperand(ret, i),
                        mlirBlockGetArgument(block, num_args - num_results + i)))
      return false;
  return true;
}

/* The reference of the site whose dispatch is `dispatch`, from its
 * descriptor (variants[reference].symbol); null when unreadable. */
static MlirOperation reference_of(MlirSymbolTable table, MlirOperation dispatch) {
  MlirAttribute desc = mlirOperationGetAttributeByName(dispatch, stc__str("stc.site_descriptor"));
  if (mlirAttributeIsNull(desc) || !mlirAttributeIsADictionary(desc))
    return (MlirOperation){NULL};
  MlirAttribute variants = mlirDictionaryAttrGetElementByName(desc, stc__str("variants"));
  MlirAttribute index = mlirDictionaryAttrGetElementByName(desc, stc__str("reference"));
  if (mlirAttributeIsNull(variants) || !mlirAttributeIsAArray(variants) ||
      mlirAttributeIsNull(index) || !mlirAttributeIsAInteger(index))
    return (MlirOperation){NULL};
  int64_t k = mlirIntegerAttrGetValueInt(index);
  if (k < 0 || k >= mlirArrayAttrGetNumElements(variants))
    return (MlirOperation){NULL};
  MlirAttribute entry = mlirArrayAttrGetElement(variants, (intptr_t)k);
  MlirAttribute symbol = mlirAttributeIsADictionary(entry)
                             ? mlirDictionaryAttrGetElementByName(entry, stc__str("symbol"))
                             : (MlirAttribute){NULL};
  if (mlirAttributeIsNull(symbol) || !mlirAttributeIsAFlatSymbolRef(symbol))
    return (MlirOperation){NULL};
  return mlirSymbolTableLookup(table, mlirFlatSymbolRefAttrGetValue(symbol));
}

/* Rewrites one variant's return (see the file comment), only when its
 * site's reference works in place: then callers already expect the init
 * arguments to be overwritten. */
static void results_into_inits(MlirSymbolTable table, MlirOperation func) {
  MlirAttribute site = mlirOperationGetAttributeByName(func, stc__str("stc.variant_of"));
  if (mlirAttributeIsNull(site) || !mlirAttributeIsAFlatSymbolRef(site))
    return;
  MlirOperation dispatch = mlirSymbolTableLookup(table, mlirFlatSymbolRefAttrGetValue(site));
  MlirOperation reference =
      mlirOperationIsNull(dispatch) ? dispatch : reference_of(table, dispatch);
  if (mlirOperationIsNull(reference) || !returns_inits(reference))
    return;
  MlirOperation ret = tied_return(func);
  if (mlirOperationIsNull(ret))
    return;
  MlirBlock block = mlirOperationGetBlock(ret);
  intptr_t num_results = mlirOperationGetNumOperands(ret);
  intptr_t num_args = mlirBlockGetNumArguments(block);
  MlirLocation loc = mlirOperationGetLocation(ret);
  for (intptr_t i = 0; i < num_results; i++) {
    MlirValue result = mlirOperationGetOperand(ret, i);
    MlirValue init = mlirBlockGetArgument(block, num_args - num_results + i);
    if (mlirValueEqual(result, init))
      continue;
    MlirValue operands[2] = {result, init};
    MlirOperationState state = mlirOperationStateGet(stc__str("memref.copy"), loc);
    mlirOperationStateAddOperands(&state, 2, operands);
    mlirBlockInsertOwnedOperationBefore(block, ret, mlirOperationCreate(&state));
    mlirOperationSetOperand(ret, i, init);
  }
}

static void run(MlirOperation module, MlirExternalPass pass, void *state) {
  (void)pass;
  (void)state;
  MlirSymbolTable table = mlirSymbolTableCreate(module);
  MlirBlock top = mlirRegionGetFirstBlock(mlirOperationGetRegion(module, 0));
  for (MlirOperation op = mlirBlockGetFirstOperation(top); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    if (stc__op_is(op, "func.func"))
      results_into_inits(table, op);
  mlirSymbolTableDestroy(table);
}

static _Alignas(8) char type_anchor;

static MlirPass create(const stc_pass_option_value *values, size_t count,
                       stc_error *err) {
  if (!stc__no_options(PASS_NAME, values, count, err))
    return (MlirPass){NULL};
  MlirDialectHandle dialects[] = {mlirGetDialectHandle__memref__()};
  stc_pass_def def = {&stc_site_results_in_place_pass_spec, "StcSiteResultsInPlace",
                      &type_anchor, dialects, 1, run, NULL, NULL};
  return stc__create_pass(&def, NULL);
}

const stc_pass_spec stc_site_results_in_place_pass_spec = {
    PASS_NAME,
    "after bufferization: every variant of a site writes its results into "
    "its init arguments (so drop-equivalent-buffer-results gives each site one "
    "signature)",
    "builtin.module",
    NULL,
    0,
    create,
};
