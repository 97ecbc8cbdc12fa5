/* stc_emit_objects.h - the in-memory objects stc_emit makes for stc-run
 * (stc_emit_objects_in_memory, stc_emit.h): their types and the names they
 * define, without MLIR's headers, for code that links and runs them. */
#ifndef STC_EMIT_OBJECTS_H
#define STC_EMIT_OBJECTS_H

#include <stddef.h>

/* The names under which stc_emit_objects_in_memory's objects export their
 * global constructors and destructors (called in ascending priority): the
 * loader calls them, since ORC without a platform runtime does not. */
#define STC_EMIT_CTORS_SYMBOL "__stc_emit_global_ctors"
#define STC_EMIT_DTORS_SYMBOL "__stc_emit_global_dtors"

/* The most partitions (threads, objects) one module is compiled into. */
#define STC_EMIT_MAX_PARTITIONS 8

typedef struct stc_emit_timing {
  double translate_optimize_s; /* MLIR -> LLVM IR, split, then default<O{n}>
                                  (the slowest partition's, when split) */
  double codegen_s;            /* the rest: instruction selection to object
                                  bytes, waiting for the other partitions */
  int partitions;              /* objects emitted */
  /* CPU time (not wall): of the calling thread (translation, the split,
   * or everything when not split), and of the partitions' threads (the
   * busiest one, all together). serial + busiest is the compile's critical
   * path on idle cores. */
  double serial_cpu_s, partition_cpu_max_s, partition_cpu_sum_s;
} stc_emit_timing;

/* The objects of one module: linked side by side (one JITDylib) they are the
 * program; each malloc'd. */
typedef struct stc_emit_objects {
  size_t count;
  char *data[STC_EMIT_MAX_PARTITIONS];
  size_t size[STC_EMIT_MAX_PARTITIONS];
} stc_emit_objects;

/* Lazy variant units. A tuned module's dispatch tables (stc/rt_dispatch.h)
 * name, per site, a reference and other variants. With lazy units, each
 * non-reference variant (its unpacked entry and _mlir_ciface_ wrapper, with
 * every local function only they reference) is left out of the eager
 * objects and compiled on demand by stc_emit_lazy_compile, into an object
 * that defines the unit's entries under STC_EMIT_LAZY_PREFIX + name; the
 * eager objects refer to the entries by their own names, which the loader
 * defines (as lazy stubs that call through to the prefixed ones). */
#define STC_EMIT_LAZY_PREFIX "__stc_lazy."

typedef struct stc_emit_lazy stc_emit_lazy;

#endif /* STC_EMIT_OBJECTS_H */
