/* jit.h - stc-run's JIT module: everything of stc-run that needs LLVM (ORC
 * LLJIT links a module's objects into the process; lazy variant units are
 * compiled on their first call), built as a loadable module,
 * stc-run-jit.so, that the driver (stc-run.c) dlopens only when it links
 * objects: a start whose object cache holds the module as a shared library
 * (object_merge.h) loads neither the module nor libLLVM, whose dynamic
 * linking was ~10 ms of a 12 ms warm start. Like the compiler module
 * (compiler.h), built with the driver; its table says which stc it belongs
 * to, and the driver refuses any other.
 *
 * In:  a request: the objects, the absolute definitions the driver provides
 *      (libstc_rt's entry points, the lazy libomp shims, stc's runner
 *      utilities), the libraries to load on a lookup that needs them, and
 *      for lazy units the compiler and the runtime's explore hook setter.
 * Out: a loaded module whose symbols the driver looks up and calls; errors
 *      printed as "stc-run: error: ..." (stc_run_error). */
#ifndef STC_RUN_JIT_H
#define STC_RUN_JIT_H

#include "compiler.h"
#include "stc/rt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The module's one exported symbol: a function returning its table. */
#define STC_RUN_JIT_SYMBOL "stc_run_jit_table"
/* Bumped whenever the request, the table or their meaning change. */
#define STC_RUN_JIT_ABI 1
/* The alignment an object's bytes need to be parsed where they are (else
 * the JIT copies them). */
#define STC_RUN_JIT_OBJECT_ALIGN 16
/* The most tables of absolute definitions a request carries. */
#define STC_RUN_JIT_MAX_TABLES 4

/* Libraries loaded when first needed: the JIT calls load(context) on the
 * first lookup of a symbol for which needs(symbol) holds, before it looks
 * in the process (libraries loaded globally are found there). */
typedef struct stc_run_jit_loader {
  bool (*needs)(const char *symbol);
  bool (*load)(void *context); /* false after saying why */
  void *context;
  const char *what; /* for the error: "cannot load <what>" */
} stc_run_jit_loader;

typedef struct stc_run_jit_request {
  const char *input_name; /* for messages: the file or "<stdin>" */
  /* The objects (parsed where they are when 16-byte aligned: the caller
   * keeps them until unload). */
  size_t num_objects;
  const char *const *objects;
  const size_t *sizes;
  /* Absolute definitions; they take precedence over the process's. */
  size_t num_tables;
  const stc_rt_symbol *tables[STC_RUN_JIT_MAX_TABLES];
  size_t table_sizes[STC_RUN_JIT_MAX_TABLES];
  size_t num_loaders;
  const stc_run_jit_loader *loaders;
  /* Lazy variant units (NULL: none); compiled with the compiler module. */
  const stc_emit_lazy *lazy;
  const stc_run_compiler *compiler;
  int compile_threads; /* for a site's candidates before it explores */
  /* Where a stub jumps when its unit could not be compiled (the session
   * printed why); it must not return. */
  void (*call_failed)(void);
  /* libstc_rt's stc_rt_set_explore_hook (the driver's copy). */
  void (*set_explore_hook)(stc_rt_explore_hook hook, void *user);
} stc_run_jit_request;

typedef struct stc_run_jit_code stc_run_jit_code; /* opaque */

/* What the lazy units cost after the start (--timing). */
typedef struct stc_run_jit_lazy_stats {
  size_t units, compiled, prepared;
  double compile_s, prepare_s;
} stc_run_jit_lazy_stats;

typedef struct stc_run_jit {
  stc_run_part_header header; /* STC_RUN_JIT_ABI */
  /* Creates a JIT and adds the objects (linked at the first lookup) and
   * the lazy units; NULL after printing why. */
  stc_run_jit_code *(*load)(const stc_run_jit_request *request);
  /* A symbol's address (linking what it needs), or 0 (the session printed
   * why). */
  uint64_t (*lookup)(stc_run_jit_code *code, const char *name);
  /* After the entry resolved: finds the lazy units' stubs and installs the
   * explore hook that compiles a site's candidates before it times them. */
  void (*lazy_ready)(stc_run_jit_code *code);
  void (*lazy_stats)(stc_run_jit_code *code, stc_run_jit_lazy_stats *stats);
  /* Frees the JIT (the caller ran the module's destructors); NULL is a
   * no-op. */
  void (*unload)(stc_run_jit_code *code);
} stc_run_jit;

typedef const stc_run_jit *(*stc_run_jit_fn)(void);

#endif /* STC_RUN_JIT_H */
