/* Outlining support for the stc passes (see outline.h).
 *
 * In:  ops to move into functions of their own. Out: captured-value lists,
 * rewired uses and the new func.func / func.call / func.return ops; the
 * caller owns and places every op built here. */
#include "outline.h"
#include "stc_passes.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <stdlib.h>


static MlirNamedAttribute named(MlirContext ctx, const char *name,
                                MlirAttribute value) {
  return mlirNamedAttributeGet(mlirIdentifierGet(ctx, stc__str(name)), value);
}

void stc__value_list_add_unique(stc_value_list *list, MlirValue value) {
  for (size_t i = 0; i < list->count; i++)
    if (mlirValueEqual(list->items[i], value))
      return;
  if (list->count == list->capacity) {
    size_t grown = list->capacity ? list->capacity * 2 : 8;
    MlirValue *bigger = realloc(list->items, grown * sizeof *bigger);
    if (!bigger) {
      list->out_of_memory = true;
      return;
    }
    list->items = bigger;
    list->capacity = grown;
  }
  list->items[list->count++] = value;
}

bool stc__op_is_inside(MlirOperation candidate, MlirOperation ancestor) {
  for (MlirOperation at = candidate; !mlirOperationIsNull(at);
       at = mlirOperationGetParentOperation(at))
    if (mlirOperationEqual(at, ancestor))
      return true;
  return false;
}

bool stc__value_defined_inside(MlirValue value, MlirOperation op) {
  if (mlirValueIsABlockArgument(value))
    return stc__op_is_inside(
        mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(value)), op);
  return stc__op_is_inside(mlirOpResultGetOwner(value), op);
}

typedef struct capture_walk {
  MlirOperation root;
  stc_value_list *captured;
} capture_walk;

static MlirWalkResult capture_from_payload(MlirOperation nested, void *user) {
  capture_walk *walk = user;
  if (mlirOperationEqual(nested, walk->root))
    return MlirWalkResultAdvance;
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(nested); i < n; i++) {
    MlirValue value = mlirOperationGetOperand(nested, i);
    if (!stc__value_defined_inside(value, walk->root))
      stc__value_list_add_unique(walk->captured, value);
  }
  return MlirWalkResultAdvance;
}

bool stc__capture_outside_values(MlirOperation op, stc_value_list *captured) {
  capture_walk walk = {op, captured};
  mlirOperationWalk(op, capture_from_payload, &walk, MlirWalkPreOrder);
  return !captured->out_of_memory;
}

void stc__rewire_inside(MlirValue value, MlirOperation op,
                        MlirValue replacement) {
  MlirOpOperand use = mlirValueGetFirstUse(value);
  while (!mlirOpOperandIsNull(use)) {
    /* Taken before the use moves to another value's use list. */
    MlirOpOperand next = mlirOpOperandGetNextUse(use);
    MlirOperation owner = mlirOpOperandGetOwner(use);
    if (stc__op_is_inside(owner, op))
      mlirOperationSetOperand(owner, mlirOpOperandGetOperandNumber(use),
                              replacement);
    use = next;
  }
}

MlirOperation stc__build_private_function(MlirContext ctx, MlirLocation loc,
                                          const char *name, MlirType type,
                                          MlirBlock *body_out) {
  intptr_t num_inputs = mlirFunctionTypeGetNumInputs(type);
  MlirType *inputs = malloc(sizeof(MlirType) * (size_t)(num_inputs + 1));
  MlirLocation *locs = malloc(sizeof(MlirLocation) * (size_t)(num_inputs + 1));
  if (!inputs || !locs) {
    free(inputs);
    free(locs);
    return (MlirOperation){NULL};
  }
  for (intptr_t i = 0; i < num_inputs; i++) {
    inputs[i] = mlirFunctionTypeGetInput(type, i);
    locs[i] = loc;
  }
  MlirBlock body = mlirBlockCreate(num_inputs, inputs, locs);
  free(inputs);
  free(locs);
  MlirRegion region = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(region, body);
  MlirNamedAttribute attributes[] = {
      named(ctx, "sym_name", mlirStringAttrGet(ctx, stc__str(name))),
      named(ctx, "function_type", mlirTypeAttrGet(type)),
      named(ctx, "sym_visibility", mlirStringAttrGet(ctx, stc__str("private"))),
  };
  MlirOperationState func_state = mlirOperationStateGet(stc__str("func.func"), loc);
  mlirOperationStateAddAttributes(&func_state,
                                  sizeof attributes / sizeof attributes[0],
                                  attributes);
  mlirOperationStateAddOwnedRegions(&func_state, 1, &region);
  *body_out = body;
  return mlirOperationCreate(&func_state);
}

MlirOperation stc__build_call(MlirContext ctx, MlirLocation loc,
                              MlirStringRef callee, intptr_t num_operands,
                              const MlirValue *operands, intptr_t num_results,
                              const MlirType *results, bool no_inline) {
  MlirNamedAttribute attributes[2] = {
      named(ctx, "callee", mlirFlatSymbolRefAttrGet(ctx, callee)),
      named(ctx, "no_inline", mlirUnitAttrGet(ctx)),
  };
  MlirOperationState state = mlirOperationStateGet(stc__str("func.call"), loc);
  mlirOperationStateAddOperands(&state, num_operands, operands);
  mlirOperationStateAddResults(&state, num_results, results);
  mlirOperationStateAddAttributes(&state, no_inline ? 2 : 1, attributes);
  return mlirOperationCreate(&state);
}

bool stc__append_return(MlirBlock body, MlirLocation loc, MlirOperation from) {
  intptr_t n = mlirOperationGetNumResults(from);
  MlirValue *results = malloc(sizeof(MlirValue) * (size_t)(n + 1));
  if (!results)
    return false;
  for (intptr_t i = 0; i < n; i++)
    results[i] = mlirOperationGetResult(from, i);
  MlirOperationState state = mlirOperationStateGet(stc__str("func.return"), loc);
  mlirOperationStateAddOperands(&state, n, results);
  MlirOperation ret = mlirOperationCreate(&state);
  free(results);
  if (mlirOperationIsNull(ret))
    return false;
  mlirBlockAppendOwnedOperation(body, ret);
  return true;
}

void stc__replace_op_uses(MlirOperation op, MlirOperation replacement) {
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(op), op,
                                      replacement);
  for (intptr_t i = 0, n = mlirOperationGetNumResults(op); i < n; i++)
    mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, i),
                                  mlirOperationGetResult(replacement, i));
}
