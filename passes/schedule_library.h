/* schedule_library.h - the schedule space of stc-multi-variant as data.
 *
 * In:  the built-in scripts (passes/schedules/<name>.mlir, embedded at build time
 *      by passes/embed_schedules.cmake into stc_builtin_schedules[]) and an
 *      optional user YAML file (variant-library=):
 *
 *        - name: my_tile8           # the script's named sequence
 *          kind: matmul             # op kind (see multi_variant.c)
 *          dynamic: yes             # yes | static | divisible (or true/false)
 *          script: |
 *            module attributes {transform.with_named_sequence} {
 *              transform.named_sequence @my_tile8(%op: !transform.any_op {transform.consumed}) {
 *                ...
 *
 * Out: an stc_schedule_list of owned records, each remembering where its
 *      script text starts in its file so that errors inside the script can
 *      be reported at the YAML file's line and column.
 *
 * Nothing here touches MLIR: scripts stay text until the pass parses them.
 * Libraries return stc_status and fill a located stc_error; nothing prints. */
#ifndef STC_PASSES_SCHEDULE_LIBRARY_H
#define STC_PASSES_SCHEDULE_LIBRARY_H

#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One embedded script (generated builtin_schedules.c); static storage. */
typedef struct stc_builtin_schedule {
  const char *name;   /* file name without .mlir = its named sequence */
  const char *script; /* NUL-terminated module text */
} stc_builtin_schedule;

extern const stc_builtin_schedule stc_builtin_schedules[];
extern const size_t stc_num_builtin_schedules;

/* Which shapes a schedule handles correctly (the scripts' stc.dynamic). */
typedef enum stc_schedule_shapes {
  STC_SCHEDULE_SHAPES_UNKNOWN = 0, /* built-in: read from the script */
  STC_SCHEDULE_SHAPES_ANY,         /* "yes": static and dynamic shapes */
  STC_SCHEDULE_SHAPES_STATIC,      /* "static": static shapes only */
  STC_SCHEDULE_SHAPES_DIVISIBLE,   /* "divisible": static, tiles divide */
} stc_schedule_shapes;

/* Parses "yes"/"true" (ANY), "static"/"no"/"false" (STATIC), "divisible".
 * Returns false on anything else. */
bool stc_schedule_shapes_parse(const char *text, stc_schedule_shapes *out);
/* "yes", "static", "divisible" or "unknown"; static storage. */
const char *stc_schedule_shapes_str(stc_schedule_shapes shapes);

typedef struct stc_schedule {
  char *name;   /* owned; the named sequence to apply */
  char *kind;   /* owned; NULL for a built-in until read from its script */
  char *script; /* owned; a transform module's text */
  stc_schedule_shapes shapes;
  bool builtin;
  /* Where script line 1, column 1 is in `file` (a YAML file; "" for a
   * built-in), and whether later script lines map one to one onto file
   * lines shifted by `indent` columns (a literal block scalar). */
  char *file; /* owned */
  unsigned line, column, indent;
  bool block;
} stc_schedule;

/* A growable list; zero-initialize; free with stc_schedule_list_free. */
typedef struct stc_schedule_list {
  stc_schedule *items; /* owned */
  size_t count, capacity;
} stc_schedule_list;

/* Appends every built-in schedule (kind and shapes unknown: the pass reads
 * them from the script). STC_ERR_NOMEM on allocation failure. */
stc_status stc_schedule_list_add_builtins(stc_schedule_list *list,
                                          stc_error *err);

/* Appends one generated schedule (e.g. a GPU schedule made by the CUDA
 * pipeline), handled like a built-in: kind and shapes are read from the
 * named sequence's stc.kind / stc.dynamic. STC_ERR_NOMEM on allocation
 * failure. */
stc_status stc_schedule_list_add_text(stc_schedule_list *list, const char *name,
                                      const char *script, stc_error *err);

/* Appends the schedules of a YAML variant library. On a missing file
 * (STC_ERR_IO), malformed YAML or a missing / bad field (STC_ERR_PARSE)
 * fills err with file:line:col and appends nothing. */
stc_status stc_schedule_list_load_yaml(stc_schedule_list *list,
                                       const char *path, stc_error *err);

/* Maps a (1-based) line and column inside schedule `s`'s script onto its
 * file. For built-ins or non-block scripts returns the script's start. */
void stc_schedule_locate(const stc_schedule *s, unsigned script_line,
                         unsigned script_column, unsigned *file_line,
                         unsigned *file_column);

/* The most vector elements (the product of a vectorize op's vector_sizes)
 * a variant-library schedule may ask for: the vectorizer unrolls work
 * proportional to it, so [4096, 4096, 4096] would compile for hours. The
 * largest built-in ([64, 64, 32]); [64, 64, 64] already compiles a 32x32x16
 * matmul for 17 s. */
#define STC_SCHEDULE_MAX_VECTOR_ELEMENTS (1u << 17)

/* Finds the first "vector_sizes [...]" in script whose literal sizes
 * multiply to more than limit (SSA-valued sizes count as 1). Returns true
 * and sets *line, *column (1-based, within the script) and *product
 * (saturating); false when every list stays within the limit. */
bool stc_schedule_vector_sizes_exceed(const char *script, uint64_t limit,
                                      unsigned *line, unsigned *column,
                                      uint64_t *product);

/* Frees every record and the array; leaves an empty list; accepts NULL. */
void stc_schedule_list_free(stc_schedule_list *list);

#ifdef __cplusplus
}
#endif

#endif /* STC_PASSES_SCHEDULE_LIBRARY_H */
