/* aot_boot.c - libstc_rt_aot.a, the start-up stub an AOT executable links
 * ahead of libstc_rt.so and libomp (cmake/StcAOT.cmake,
 * test/e2e/aot-build.sh, bench/stcbench.py): it defines what a tuned model
 * object calls - stc_rt_site_enter, the vendor-BLAS entry points and the
 * libomp entry points that parallel variants call - and loads the real
 * library on the first such call (dlopen, RTLD_LOCAL), then calls through.
 *
 * Why (docs/aot.md, "Start-up cost"): a library the executable needs
 * directly sits in the process's global scope ahead of everything the
 * runner utilities pull in (libMLIR, libLLVM, libstdc++), and every one of
 * their ~47k start-up symbol lookups checks it first: under callgrind
 * ~2.1M instructions per library, libstc_rt and libomp together 4.4M of
 * the dynamic loader's 73M, about 1 ms of a 35 ms process. Loaded on
 * demand they are in no start-up lookup, libomp is not loaded at all by a
 * process that runs no parallel variant, and a tuned executable starts
 * like the default lowering's.
 *
 * An object that calls anything else of libstc_rt (the region timers, the
 * GPU entry points) or of libomp still links the library itself (the
 * recipes keep it after this stub, --as-needed); the stub's entry points
 * then load the already loaded library, so they are always right.
 *
 * Libraries: STC_RT_AOT_RUNTIME (libstc_rt.so) and STC_RT_AOT_OPENMP
 * (libomp.so.5, else libomp.so), found the way the executable's own
 * dependencies are: in the executable's library search path (dlinfo
 * RTLD_DI_SERINFO: LD_LIBRARY_PATH, its RUNPATH - the recipes keep -rpath
 * for both - then the system's), the first directory holding the file.
 * Not a plain dlopen(name): that searches the RUNPATH of dlopen's caller,
 * which under ASan or TSan is the sanitizer's interceptor, not the
 * executable.
 * libstc_rt is loaded before libomp. A library that does not load is a
 * one-line error naming it and dlerror(), and exit status 127 (what the
 * dynamic loader does today for a missing dependency at start), never a
 * call through a null pointer. KMP_BLOCKTIME is capped in this stub's
 * constructor, as libstc_rt's constructor does (openmp_spin.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlinfo, Dl_serinfo */
#endif
#include "openmp_spin.h"
#include "stc/rt_blas.h"
#include "stc/rt_dispatch.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef STC_RT_AOT_RUNTIME
#define STC_RT_AOT_RUNTIME "libstc_rt.so"
#endif
#ifndef STC_RT_AOT_OPENMP
#define STC_RT_AOT_OPENMP "libomp.so.5"
#endif
#ifndef STC_RT_AOT_OPENMP_FALLBACK
#define STC_RT_AOT_OPENMP_FALLBACK "libomp.so"
#endif

/* __kmpc_fork_call forwards at most this many microtask arguments (libomp
 * reads each as a void *; LLVM's OpenMPIRBuilder passes pointers). */
#define STC_RT_AOT_MAX_FORK_ARGS 32

__attribute__((constructor)) static void stc_rt_aot_load(void) {
  stc_rt__openmp_spin_cap();
}

static _Noreturn void load_failed(const char *library, const char *what) {
  const char *why = dlerror();
  fprintf(stderr, "stc: error: cannot load %s (%s): %s\n", library, what,
          why ? why : "symbol not found");
  fflush(stderr);
  _exit(127);
}

/* dlopen of `name` where the executable's own dependencies are searched;
 * NULL with dlerror() set when it is in none of them or does not load. */
static void *open_as_dependency(const char *name) {
  int flags = RTLD_NOW | RTLD_LOCAL;
  void *self = dlopen(NULL, RTLD_NOW);
  Dl_serinfo size;
  if (self && dlinfo(self, RTLD_DI_SERINFOSIZE, &size) == 0) {
    Dl_serinfo *info = malloc(size.dls_size);
    if (info) {
      info->dls_size = size.dls_size;
      info->dls_cnt = size.dls_cnt;
      if (dlinfo(self, RTLD_DI_SERINFO, info) == 0) {
        for (unsigned i = 0; i < info->dls_cnt; i++) {
          char path[4096];
          int n = snprintf(path, sizeof path, "%s/%s",
                           info->dls_serpath[i].dls_name, name);
          if (n > 0 && (size_t)n < sizeof path && access(path, F_OK) == 0) {
            free(info);
            return dlopen(path, flags); /* found: this one, or its error */
          }
        }
      }
      free(info);
    }
  }
  return dlopen(name, flags); /* not in the search path: dlerror says so */
}

static void *symbol(void *handle, const char *library, const char *name) {
  (void)dlerror();
  void *p = dlsym(handle, name);
  if (!p)
    load_failed(library, name);
  return p;
}

/* ---- libstc_rt ---- */

typedef void (*site_enter_fn)(stc_rt_site *, uint64_t *, uint32_t);
typedef void (*blas2_fn)(stc_rt_memref2 *, stc_rt_memref2 *, stc_rt_memref2 *);
typedef void (*blas3_fn)(stc_rt_memref3 *, stc_rt_memref3 *, stc_rt_memref3 *);
typedef void (*matvec_fn)(stc_rt_memref2 *, stc_rt_memref1 *, stc_rt_memref1 *);
typedef void (*vecmat_fn)(stc_rt_memref1 *, stc_rt_memref2 *, stc_rt_memref1 *);

static struct {
  site_enter_fn site_enter;
  blas2_fn matmul_f32, matmul_f64;
  blas3_fn batch_matmul_f32, batch_matmul_f64;
  matvec_fn matvec_f32, matvec_f64;
  vecmat_fn vecmat_f32, vecmat_f64;
} g_rt;
static pthread_once_t g_rt_once = PTHREAD_ONCE_INIT;

static void rt_load(void) {
  const char *lib = STC_RT_AOT_RUNTIME;
  void *h = open_as_dependency(lib);
  if (!h)
    load_failed(lib, "the stc runtime, needed by a tuned site");
  g_rt.site_enter = (site_enter_fn)symbol(h, lib, "stc_rt_site_enter");
#define STC_RT_AOT_BLAS(field, type)                                          \
  g_rt.field = (type)symbol(h, lib, "_mlir_ciface_stc_rt_blas_" #field)
  STC_RT_AOT_BLAS(matmul_f32, blas2_fn);
  STC_RT_AOT_BLAS(matmul_f64, blas2_fn);
  STC_RT_AOT_BLAS(batch_matmul_f32, blas3_fn);
  STC_RT_AOT_BLAS(batch_matmul_f64, blas3_fn);
  STC_RT_AOT_BLAS(matvec_f32, matvec_fn);
  STC_RT_AOT_BLAS(matvec_f64, matvec_fn);
  STC_RT_AOT_BLAS(vecmat_f32, vecmat_fn);
  STC_RT_AOT_BLAS(vecmat_f64, vecmat_fn);
#undef STC_RT_AOT_BLAS
}

static inline void rt(void) { pthread_once(&g_rt_once, rt_load); }

void stc_rt_site_enter(stc_rt_site *site, uint64_t *words, uint32_t num_words) {
  rt();
  g_rt.site_enter(site, words, num_words);
}

#define STC_RT_AOT_BLAS_ENTRY(field, ta, tb, tc)                              \
  void _mlir_ciface_stc_rt_blas_##field(ta *a, tb *b, tc *c) {                \
    rt();                                                                     \
    g_rt.field(a, b, c);                                                      \
  }
STC_RT_AOT_BLAS_ENTRY(matmul_f32, stc_rt_memref2, stc_rt_memref2, stc_rt_memref2)
STC_RT_AOT_BLAS_ENTRY(matmul_f64, stc_rt_memref2, stc_rt_memref2, stc_rt_memref2)
STC_RT_AOT_BLAS_ENTRY(batch_matmul_f32, stc_rt_memref3, stc_rt_memref3, stc_rt_memref3)
STC_RT_AOT_BLAS_ENTRY(batch_matmul_f64, stc_rt_memref3, stc_rt_memref3, stc_rt_memref3)
STC_RT_AOT_BLAS_ENTRY(matvec_f32, stc_rt_memref2, stc_rt_memref1, stc_rt_memref1)
STC_RT_AOT_BLAS_ENTRY(matvec_f64, stc_rt_memref2, stc_rt_memref1, stc_rt_memref1)
STC_RT_AOT_BLAS_ENTRY(vecmat_f32, stc_rt_memref1, stc_rt_memref2, stc_rt_memref1)
STC_RT_AOT_BLAS_ENTRY(vecmat_f64, stc_rt_memref1, stc_rt_memref2, stc_rt_memref1)
#undef STC_RT_AOT_BLAS_ENTRY

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
  rt(); /* libstc_rt first, as when both were linked (its constructor) */
  const char *lib = STC_RT_AOT_OPENMP;
  void *h = open_as_dependency(lib);
  if (!h) {
    lib = STC_RT_AOT_OPENMP_FALLBACK;
    h = open_as_dependency(lib);
  }
  if (!h)
    load_failed(STC_RT_AOT_OPENMP, "the OpenMP runtime, needed by a parallel variant");
#define STC_RT_AOT_OMP(field, type)                                           \
  g_omp.field = (type)symbol(h, lib, "__kmpc_" #field)
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
void __kmpc_fork_call(void *loc, int32_t argc, kmpc_micro task, ...) {
  void *a[STC_RT_AOT_MAX_FORK_ARGS] = {0};
  if (argc < 0 || argc > STC_RT_AOT_MAX_FORK_ARGS) {
    fprintf(stderr,
            "stc: error: a parallel region passes %d arguments; the AOT "
            "start-up stub (runtime/aot_boot.c) forwards at most %d: link "
            "libomp directly\n",
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

int32_t __kmpc_global_thread_num(void *loc) {
  omp();
  return g_omp.global_thread_num(loc);
}

void __kmpc_barrier(void *loc, int32_t gtid) {
  omp();
  g_omp.barrier(loc, gtid);
}

void __kmpc_for_static_fini(void *loc, int32_t gtid) {
  omp();
  g_omp.for_static_fini(loc, gtid);
}

void __kmpc_push_num_threads(void *loc, int32_t gtid, int32_t num_threads) {
  omp();
  g_omp.push_num_threads(loc, gtid, num_threads);
}

#define STC_RT_AOT_STATIC_INIT(suffix, field, t, ut)                          \
  void __kmpc_for_static_init_##suffix(void *loc, int32_t gtid,               \
                                       int32_t schedule, int32_t *last,       \
                                       ut *lower, ut *upper, t *stride,       \
                                       t incr, t chunk) {                     \
    omp();                                                                    \
    g_omp.field(loc, gtid, schedule, last, (t *)lower, (t *)upper, stride,    \
                incr, chunk);                                                 \
  }
STC_RT_AOT_STATIC_INIT(4, for_static_init_4, int32_t, int32_t)
STC_RT_AOT_STATIC_INIT(4u, for_static_init_4u, int32_t, uint32_t)
STC_RT_AOT_STATIC_INIT(8, for_static_init_8, int64_t, int64_t)
STC_RT_AOT_STATIC_INIT(8u, for_static_init_8u, int64_t, uint64_t)
#undef STC_RT_AOT_STATIC_INIT
