/* compiler.h - stc-run's compiler module: everything of stc-run that needs
 * MLIR (parsing, the --tune-hot-paths pipeline, the checks on the module,
 * translation and code generation), built as a loadable module that the
 * driver (stc-run.c) dlopens only when it must compile: on an object-cache
 * hit a start loads neither the module nor libMLIR (8 ms of relocations, ~40%
 * of a warm start). The driver and the module are built together; the
 * module's table says which stc it belongs to, and the driver refuses any
 * other.
 *
 * In:  a request (the module's text and the options that change the code).
 * Out: the objects, the lazy variant units, the metadata a later hit needs
 *      (stc-run.c: meta_read), the phases' times; diagnostics printed as
 *      they come (and recorded in the metadata). */
#ifndef STC_RUN_COMPILER_H
#define STC_RUN_COMPILER_H

#include "run_common.h"
#include "stc/status.h"
#include "stc_emit_objects.h"

/* The module's one exported symbol: a function returning its table. */
#define STC_RUN_COMPILER_SYMBOL "stc_run_compiler_table"
/* Bumped whenever the request, the result or the table change. */
#define STC_RUN_COMPILER_ABI 2

typedef struct stc_run_compile_request {
  const char *input_name; /* for messages: the file or "<stdin>" */
  const char *text;       /* the module (NUL-terminated) */
  size_t length;
  const char *entry; /* without '@' */
  result_kind result;
  int opt_level;       /* 0-3 */
  int compile_threads; /* 0: automatic */
  bool tune_hot_paths;
  const char *hot_path_profile, *variant_library, *schedule_options,
      *default_lowering; /* each may be NULL */
  bool show_remarks;     /* print the remarks (recorded either way) */
  bool lazy_variants;    /* leave non-reference variants to lazy units */
} stc_run_compile_request;

typedef struct stc_run_compile_result {
  stc_emit_objects objects;
  stc_emit_lazy *lazy; /* NULL: none */
  bool openmp;         /* the module has OpenMP ops */
  byte_buffer meta;    /* for the object cache (always filled) */
  double parse_s, pipeline_s, translate_s, codegen_s;
  stc_emit_timing emit;
} stc_run_compile_result;

typedef struct stc_run_compiler {
  stc_run_part_header header; /* STC_RUN_COMPILER_ABI */
  /* Parses, runs the pipeline, checks the module and the entry, compiles.
   * -1 on success (*result filled; the caller frees it with
   * result_free), else an exit code after printing why. */
  int (*compile)(const stc_run_compile_request *request,
                 stc_run_compile_result *result);
  void (*result_free)(stc_run_compile_result *result);
  /* stc_emit.h's lazy units. */
  size_t (*lazy_units)(const stc_emit_lazy *lazy);
  size_t (*lazy_roots)(const stc_emit_lazy *lazy, size_t unit,
                       const char *const **names);
  stc_status (*lazy_compile)(const stc_emit_lazy *lazy, size_t unit,
                             char **data, size_t *size, stc_error *err);
} stc_run_compiler;

typedef const stc_run_compiler *(*stc_run_compiler_fn)(void);

#endif /* STC_RUN_COMPILER_H */
