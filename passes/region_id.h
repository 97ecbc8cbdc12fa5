/* region_id.h - stable region ids and the region analysis that the stc
 * passes share (stc-instrument names and brackets regions, the scheduling
 * pass finds the same regions to classify them).
 *
 * A *region* is either
 *   - a function body: a func.func with a body that is not an outlined
 *     region function (one carrying STC_OUTLINED_ATTR), or
 *   - a computing op: a linalg structured op (LinalgOp) inside a func.func,
 *     except the pure data-movement ops linalg.fill, linalg.copy,
 *     linalg.transpose and linalg.broadcast (cheap, not worth a timer pair
 *     or a tuning budget).
 *
 * Region id format (what profiles store, what stc.region holds):
 *
 *     <symbol path>/<op name>#<hash>[.<n>]
 *
 *   <symbol path>  the sym_name of every enclosing symbol op, outermost
 *                  first, joined by '/'; for a function body it ends with the
 *                  function's own name. An unnamed top-level module adds
 *                  nothing. Example: "main", "inner/main".
 *   <op name>      the op's full name, e.g. "linalg.matmul", "func.func".
 *   <hash>         8 lower-case hex digits: the low 32 bits of stc_hash64
 *                  over the op's structure (below).
 *   .<n>           only when two regions of the same function have the same
 *                  id (two identical matmuls): the first keeps the plain id,
 *                  the next ones get ".1", ".2", ... in order of appearance
 *                  in the function (pre-order walk). This is the one place
 *                  where an id depends on order, and only on the order inside
 *                  one function: reordering functions never changes an id.
 *
 *   e.g. "main/linalg.matmul#9f2c41d0", "main/func.func#0b7e2d11",
 *        "main/linalg.matmul#9f2c41d0.1".
 *
 * The structural hash covers: the op name; operand and result types;
 * attributes sorted by name, each as its name and its mlirAttributePrint
 * text, skipping every attribute whose name starts with "stc."; and, for ops
 * that do not define a symbol, their nested regions (block argument types
 * and, recursively, every nested op the same way, with each nested operand
 * named by its position: a block argument or a result of an op inside the
 * region, or "outside" plus its type) so that generics with different
 * payloads differ. It excludes locations, SSA names and the printed form
 * (generic or pretty). A symbol-defining op (func.func) is identified by its
 * symbol path and signature; its body is not hashed, so editing a function's
 * body keeps the function's id.
 *
 * An op or function that already carries stc.region keeps that id (it was
 * instrumented before; its surroundings may have changed since).
 *
 * Also here: the small helpers both passes need (static byte counts,
 * saturating arithmetic, a text builder with MLIR string escaping, option
 * value parsing). Nothing here prints or aborts. */
#ifndef STC_PASSES_REGION_ID_H
#define STC_PASSES_REGION_ID_H

#include "stc/status.h"

#include <mlir-c/IR.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The attribute holding a region's id (a StringAttr), on the computing op or
 * on the func.func of a function body. */
#define STC_REGION_ATTR "stc.region"
/* On a function stc-instrument outlined one computing op into: the id of
 * that op (StringAttr). Such a function is not a function-body region. */
#define STC_OUTLINED_ATTR "stc.outlined_region"
/* Attributes with this prefix never enter a structural hash. */
#define STC_ATTR_PREFIX "stc."

typedef enum stc_region_kind {
  STC_REGION_FUNCTION = 0, /* a func.func body */
  STC_REGION_OP = 1,       /* a computing linalg op */
} stc_region_kind;

typedef struct stc_region {
  MlirOperation op;   /* the func.func or the computing op */
  MlirOperation func; /* the enclosing func.func (== op for a function) */
  char *id;           /* owned by the list */
  stc_region_kind kind;
  bool has_attr; /* the id was read from an existing stc.region attribute */
} stc_region;

/* Regions in module order (pre-order walk: a function, then its ops). */
typedef struct stc_region_list {
  stc_region *items; /* owned */
  size_t count;
  size_t capacity;
} stc_region_list;

/* Finds every region under `root` (usually a builtin.module) and gives each
 * its id. On failure returns a status with the reason in err and, where an
 * op is to blame (two regions carrying the same stc.region), that op in
 * *blame (may be NULL); `out` is then empty. The caller frees `out` with
 * stc_region_list_free in every case. */
stc_status stc_region_collect(MlirOperation root, stc_region_list *out,
                              stc_error *err, MlirOperation *blame);
/* Frees the ids and the array; leaves an empty list; accepts NULL. */
void stc_region_list_free(stc_region_list *list);

/* True for the computing linalg ops that are regions (see above). */
bool stc_region_op_is_computing(MlirOperation op);

/* The 64-bit structural hash described above. */
uint64_t stc_region_structural_hash(MlirOperation op);

/* ---- helpers shared by the passes ---- */

/* Bytes of one value of `type` (a scalar, or a tensor / memref / vector of
 * int, float, index or complex elements). Dynamic dims count as 1 and set
 * *has_dynamic (may be NULL); element types of unknown size count 0 bytes
 * and set it too. Saturates at UINT64_MAX. */
uint64_t stc_type_bytes(MlirType type, bool *has_dynamic);

/* Bytes an op touches: every operand plus every result (stc_type_bytes).
 * Sets *has_dynamic when any of them is not statically sized. */
uint64_t stc_op_bytes(MlirOperation op, bool *has_dynamic);

/* a + b and a * b, UINT64_MAX when the exact value does not fit. */
uint64_t stc__saturating_add(uint64_t a, uint64_t b);
uint64_t stc__saturating_mul(uint64_t a, uint64_t b);

/* A growable NUL-terminated string. Zero-initialize; free with
 * stc_text_free. After an allocation failure out_of_memory is set and later
 * appends do nothing (data holds what fit so far, or is NULL). */
typedef struct stc_text {
  char *data; /* owned */
  size_t length, capacity;
  bool out_of_memory;
} stc_text;

void stc_text_append(stc_text *text, const char *data, size_t length);
void stc_text_appendf(stc_text *text, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends `data` as the body of an MLIR string literal: double quotes,
 * backslashes and non-printable bytes become \XX (two hex digits). */
void stc_text_append_escaped(stc_text *text, const char *data);
void stc_text_free(stc_text *text);
/* An MlirStringCallback appending to the stc_text user_data (the printers'
 * callback: mlirOperationPrint, mlirAttributePrint, ...). */
void stc_text_callback(MlirStringRef piece, void *user_data);

/* Option values as the stc pass factories accept them. Each returns false
 * and fills err ("<pass>: option '<name>': ...") on a bad value. */
bool stc__option_bool(const char *pass, const char *name, const char *value,
                      bool *out, stc_error *err);
bool stc__option_u64(const char *pass, const char *name, const char *value,
                     uint64_t *out, stc_error *err);
bool stc__option_double(const char *pass, const char *name, const char *value,
                        double *out, stc_error *err);
/* "a,b,c" into owned strings (*items, *count), replacing and freeing the
 * list already there. Empty elements are kept (the caller says what is
 * wrong with them); an empty value is an error ("expected a comma-separated
 * list of <what>, got ''"). On failure the list is empty. */
bool stc__option_list(const char *pass, const char *name, const char *value,
                      const char *what, char ***items, size_t *count,
                      stc_error *err);
/* Frees a list of owned strings (NULL allowed). */
void stc__string_list_free(char **items, size_t count);
/* A copy of a list of strings (NULL for NULL); false when out of memory
 * (then *to is NULL). */
bool stc__string_list_copy(char *const *from, size_t count, char ***to);

#ifdef __cplusplus
}
#endif

#endif /* STC_PASSES_REGION_ID_H */
