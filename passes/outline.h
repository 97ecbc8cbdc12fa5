/* outline.h - the IR surgery that moving an op into a function of its own
 * needs, shared by the passes that outline ops: stc-instrument (one private
 * function per computing op) and stc-multi-variant (a reference, variants
 * and a dispatch function per site).
 *
 * In:  an op, the values its payload uses from outside it, a function type.
 * Out: lists of captured values, rewired uses, new private func.func ops,
 *      func.call / func.return ops. Nothing here prints, emits diagnostics
 *      or aborts; a null op or false means out of memory (or an op MLIR
 *      would not create). */
#ifndef STC_PASSES_OUTLINE_H
#define STC_PASSES_OUTLINE_H

#include <mlir-c/IR.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A list of distinct values in the order they were first added.
 * Zero-initialize; free `items` with free(). After an allocation failure
 * out_of_memory is set and the list holds what fit so far. */
typedef struct stc_value_list {
  MlirValue *items; /* owned */
  size_t count, capacity;
  bool out_of_memory;
} stc_value_list;

/* Appends `value` unless the list holds it already. */
void stc__value_list_add_unique(stc_value_list *list, MlirValue value);

/* True when `candidate` is `ancestor` or nested in it. */
bool stc__op_is_inside(MlirOperation candidate, MlirOperation ancestor);

/* True when `value` is a result of, or a block argument in, `op` or an op
 * nested in it. */
bool stc__value_defined_inside(MlirValue value, MlirOperation op);

/* Appends to `captured` every value that an op nested in `op` (not `op`
 * itself) uses but that is defined outside `op`, in pre-order walk order (so
 * deterministic). Returns false when the list ran out of memory. */
bool stc__capture_outside_values(MlirOperation op, stc_value_list *captured);

/* Points every use of `value` inside `op` (op included) at `replacement`. */
void stc__rewire_inside(MlirValue value, MlirOperation op,
                        MlirValue replacement);

/* A new private func.func @name of `type` (not inserted anywhere; the caller
 * owns it) whose region holds one empty entry block with one argument per
 * input, located at `loc`; *body_out is that block. Null when out of
 * memory. */
MlirOperation stc__build_private_function(MlirContext ctx, MlirLocation loc,
                                          const char *name, MlirType type,
                                          MlirBlock *body_out);

/* A new `func.call @callee(operands) : (...) -> results` (caller owns it),
 * with no_inline when asked. */
MlirOperation stc__build_call(MlirContext ctx, MlirLocation loc,
                              MlirStringRef callee, intptr_t num_operands,
                              const MlirValue *operands, intptr_t num_results,
                              const MlirType *results, bool no_inline);

/* Appends `func.return` of every result of `from` to `body`. False when out
 * of memory or the op cannot be built. */
bool stc__append_return(MlirBlock body, MlirLocation loc, MlirOperation from);

/* Inserts `replacement` (a new op with as many results as `op`) right
 * before `op` and points every use of op's results at replacement's. `op`
 * stays where it is, without uses. */
void stc__replace_op_uses(MlirOperation op, MlirOperation replacement);

#ifdef __cplusplus
}
#endif

#endif /* STC_PASSES_OUTLINE_H */
