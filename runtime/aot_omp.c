/* aot_omp.c - the libomp half of libstc_rt_aot.a, the AOT start-up stub
 * (aot_boot.c says why): defines the libomp entry points that
 * convert-scf-to-openmp's code calls and loads libomp (STC_RT_AOT_OPENMP,
 * libomp.so.5, else libomp.so, found as aot_load.c does) on the first of
 * them, then calls through; a process that runs no parallel variant never
 * loads it. An executable linking the static runtime (which has
 * stc_rt_site_enter itself) takes only this half. The loaded libomp gets
 * the KMP_BLOCKTIME cap (openmp_spin.h) before the call that loaded it
 * starts it; nothing of this runs at load time.
 *
 * Built a second time for stc-run (STC_RT_OPENMP_FOR_JIT, the
 * stc_rt_openmp_jit library, openmp_jit.h): the same entry points, static,
 * listed under libomp's names by stc_rt__lazy_openmp_symbols for the JIT to
 * define, so that a JIT start of a module with parallel variants does not
 * load libomp (1-1.5 ms) until one of them runs. */
#include "aot_load.h"
#include "openmp_spin.h"
#ifdef STC_RT_OPENMP_FOR_JIT
#include "openmp_jit.h"
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef STC_RT_AOT_OPENMP
#define STC_RT_AOT_OPENMP "libomp.so.5"
#endif
#ifndef STC_RT_AOT_OPENMP_FALLBACK
#define STC_RT_AOT_OPENMP_FALLBACK "libomp.so"
#endif
/* Where the LLVM stc was built against keeps its libomp (CMake: its
 * library directory), searched after LD_LIBRARY_PATH and before the
 * system's: the recipes give an executable with the static runtime no
 * RUNPATH (aot_load.c). */
#ifndef STC_RT_AOT_OPENMP_DIRS
#define STC_RT_AOT_OPENMP_DIRS NULL
#endif

/* The entry points' names and linkage: libomp's own for the AOT stub (the
 * linker binds the object's references to them); for stc-run, the names
 * `ld --wrap=__kmpc_<name>` gives a shared library's references to them
 * (stc-run links the cached objects into one and exports these), and the
 * JIT gets them from stc_rt__lazy_openmp_symbols: never libomp's own, which
 * would interpose libomp's calls to itself once it is loaded.
 * STC_RT_OMP_HOST: the fork call's limit and its remedy, for each. */
#ifdef STC_RT_OPENMP_FOR_JIT
#define STC_RT_OMP_ENTRY
#define STC_RT_KMPC(name) __wrap___kmpc_##name
#define STC_RT_OMP_HOST                                                       \
  "stc-run's lazy libomp entry points (runtime/aot_omp.c) forward at most "   \
  "%d: run with STC_RUN_LAZY_OPENMP=0"
#else
#define STC_RT_OMP_ENTRY
#define STC_RT_KMPC(name) __kmpc_##name
#define STC_RT_OMP_HOST                                                       \
  "the AOT start-up stub (runtime/aot_boot.c) forwards at most %d: link "     \
  "libomp directly"
#endif

/* __kmpc_fork_call forwards at most this many microtask arguments (libomp
 * reads each as a void *; LLVM's OpenMPIRBuilder passes pointers). */
#define STC_RT_AOT_MAX_FORK_ARGS 32

/* ---- libomp: the entry points convert-scf-to-openmp's code calls (LLVM's
 * libomp ABI, kmp.h; `loc` is an ident_t, opaque here) ---- */

typedef void (*kmpc_micro)(int32_t *, int32_t *, ...);
typedef void (*fork_call_fn)(void *, int32_t, kmpc_micro, ...);
typedef int32_t (*global_thread_num_fn)(void *);
typedef void (*loc_gtid_fn)(void *, int32_t);
typedef void (*push_num_threads_fn)(void *, int32_t, int32_t);
typedef void (*static_init_4_fn)(void *, int32_t, int32_t, int32_t *,
                                 int32_t *, int32_t *, int32_t *, int32_t,
                                 int32_t);
typedef void (*static_init_8_fn)(void *, int32_t, int32_t, int32_t *,
                                 int64_t *, int64_t *, int64_t *, int64_t,
                                 int64_t);

static struct {
  fork_call_fn fork_call;
  global_thread_num_fn global_thread_num;
  loc_gtid_fn barrier, for_static_fini;
  push_num_threads_fn push_num_threads;
  static_init_4_fn for_static_init_4, for_static_init_4u;
  static_init_8_fn for_static_init_8, for_static_init_8u;
} g_omp;
static pthread_once_t g_omp_once = PTHREAD_ONCE_INIT;

static void omp_load(void) {
  const char *lib = STC_RT_AOT_OPENMP;
  void *h = stc_rt__aot_open(lib, STC_RT_AOT_OPENMP_DIRS);
  if (!h) {
    lib = STC_RT_AOT_OPENMP_FALLBACK;
    h = stc_rt__aot_open(lib, STC_RT_AOT_OPENMP_DIRS);
  }
  if (!h)
    stc_rt__aot_load_failed(STC_RT_AOT_OPENMP, "the OpenMP runtime, needed by a parallel variant");
  /* Before the first __kmpc call starts it (libomp applies its defaults
   * then); an older libomp without kmp_set_defaults keeps its own. */
  stc_rt__openmp_spin_cap(
      (stc_rt__kmp_set_defaults_fn)dlsym(h, "kmp_set_defaults"));
#define STC_RT_AOT_OMP(field, type)                                           \
  g_omp.field = (type)stc_rt__aot_symbol(h, lib, "__kmpc_" #field)
  STC_RT_AOT_OMP(fork_call, fork_call_fn);
  STC_RT_AOT_OMP(global_thread_num, global_thread_num_fn);
  STC_RT_AOT_OMP(barrier, loc_gtid_fn);
  STC_RT_AOT_OMP(for_static_fini, loc_gtid_fn);
  STC_RT_AOT_OMP(push_num_threads, push_num_threads_fn);
  STC_RT_AOT_OMP(for_static_init_4, static_init_4_fn);
  STC_RT_AOT_OMP(for_static_init_4u, static_init_4_fn);
  STC_RT_AOT_OMP(for_static_init_8, static_init_8_fn);
  STC_RT_AOT_OMP(for_static_init_8u, static_init_8_fn);
#undef STC_RT_AOT_OMP
}

static inline void omp(void) { pthread_once(&g_omp_once, omp_load); }

/* Forwards every argument: passing unused trailing variadic arguments is
 * defined (libomp reads `argc` of them). */
STC_RT_OMP_ENTRY void STC_RT_KMPC(fork_call)(void *loc, int32_t argc,
                                              kmpc_micro task, ...) {
  void *a[STC_RT_AOT_MAX_FORK_ARGS] = {0};
  if (argc < 0 || argc > STC_RT_AOT_MAX_FORK_ARGS) {
    fprintf(stderr,
            "stc: error: a parallel region passes %d arguments; "
            STC_RT_OMP_HOST "\n",
            (int)argc, STC_RT_AOT_MAX_FORK_ARGS);
    abort();
  }
  va_list ap;
  va_start(ap, task);
  for (int32_t i = 0; i < argc; i++)
    a[i] = va_arg(ap, void *);
  va_end(ap);
  omp();
  g_omp.fork_call(loc, argc, task, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                  a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15],
                  a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23],
                  a[24], a[25], a[26], a[27], a[28], a[29], a[30], a[31]);
}

STC_RT_OMP_ENTRY int32_t STC_RT_KMPC(global_thread_num)(void *loc) {
  omp();
  return g_omp.global_thread_num(loc);
}

STC_RT_OMP_ENTRY void STC_RT_KMPC(barrier)(void *loc, int32_t gtid) {
  omp();
  g_omp.barrier(loc, gtid);
}

STC_RT_OMP_ENTRY void STC_RT_KMPC(for_static_fini)(void *loc, int32_t gtid) {
  omp();
  g_omp.for_static_fini(loc, gtid);
}

STC_RT_OMP_ENTRY void STC_RT_KMPC(push_num_threads)(void *loc, int32_t gtid,
                                                     int32_t num_threads) {
  omp();
  g_omp.push_num_threads(loc, gtid, num_threads);
}

#define STC_RT_AOT_STATIC_INIT(suffix, field, t, ut)                          \
  STC_RT_OMP_ENTRY void STC_RT_KMPC(for_static_init_##suffix)(               \
      void *loc, int32_t gtid, int32_t schedule, int32_t *last, ut *lower,    \
      ut *upper, t *stride, t incr, t chunk) {                                \
    omp();                                                                    \
    g_omp.field(loc, gtid, schedule, last, (t *)lower, (t *)upper, stride,    \
                incr, chunk);                                                 \
  }
STC_RT_AOT_STATIC_INIT(4, for_static_init_4, int32_t, int32_t)
STC_RT_AOT_STATIC_INIT(4u, for_static_init_4u, int32_t, uint32_t)
STC_RT_AOT_STATIC_INIT(8, for_static_init_8, int64_t, int64_t)
STC_RT_AOT_STATIC_INIT(8u, for_static_init_8u, int64_t, uint64_t)
#undef STC_RT_AOT_STATIC_INIT

#ifdef STC_RT_OPENMP_FOR_JIT
const stc_rt_symbol *stc_rt__lazy_openmp_symbols(size_t *count) {
#define STC_RT_OMP_SYMBOL(name) {"__kmpc_" #name, (void *)STC_RT_KMPC(name)}
  static const stc_rt_symbol symbols[] = {
      STC_RT_OMP_SYMBOL(fork_call),         STC_RT_OMP_SYMBOL(global_thread_num),
      STC_RT_OMP_SYMBOL(barrier),           STC_RT_OMP_SYMBOL(for_static_fini),
      STC_RT_OMP_SYMBOL(push_num_threads),  STC_RT_OMP_SYMBOL(for_static_init_4),
      STC_RT_OMP_SYMBOL(for_static_init_4u), STC_RT_OMP_SYMBOL(for_static_init_8),
      STC_RT_OMP_SYMBOL(for_static_init_8u),
  };
#undef STC_RT_OMP_SYMBOL
  *count = sizeof symbols / sizeof *symbols;
  return symbols;
}
#endif
