/* aot_boot.c - the libstc_rt half of libstc_rt_aot.a, the start-up stub an
 * AOT executable links when it uses the shared runtime (libstc_rt.so;
 * cmake/StcAOT.cmake, test/e2e/aot-build.sh and bench/stcbench.py link the
 * static runtime by default, and take only the libomp half, aot_omp.c). It
 * defines what a tuned model object calls of libstc_rt - stc_rt_site_enter
 * and the vendor-BLAS entry points - and loads the library on the first
 * such call (aot_load.c: dlopen, RTLD_LOCAL, where the executable's own
 * dependencies are found), then calls through.
 *
 * Why (docs/aot.md, "Start-up cost"): a library the executable needs
 * directly sits in the process's global scope ahead of everything the
 * runner utilities pull in (libMLIR, libLLVM, libstdc++), and every one of
 * their ~47k start-up symbol lookups checks it first: under callgrind
 * ~2.1M instructions per library, libstc_rt and libomp together 4.4M of
 * the dynamic loader's 73M, about 1 ms of a 35 ms process. Loaded on
 * demand they are in no start-up lookup. (The static runtime avoids both
 * that and the ~0.3 ms dlopen of libstc_rt and libyaml at the first site
 * call.)
 *
 * An object that calls anything else of libstc_rt (the region timers, the
 * GPU entry points) still links the library itself (the recipes keep it
 * after this stub, --as-needed); the stub's entry points then load the
 * already loaded library, so they are always right.
 *
 * Library: STC_RT_AOT_RUNTIME (libstc_rt.so). One that does not load is a
 * one-line error naming it and dlerror(), and exit status 127, never a call
 * through a null pointer. A libomp the executable links gets the
 * KMP_BLOCKTIME cap in this stub's constructor, as in libstc_rt's
 * (openmp_spin.h); the one the libomp half loads, when it loads it. */
#include "aot_load.h"
#include "openmp_spin.h"
#include "stc/rt_blas.h"
#include "stc/rt_dispatch.h"

#include <pthread.h>
#include <stdint.h>

#ifndef STC_RT_AOT_RUNTIME
#define STC_RT_AOT_RUNTIME "libstc_rt.so"
#endif

/* Weak: null unless the executable links libomp (openmp_spin.h). */
extern void kmp_set_defaults(const char *) __attribute__((weak));

__attribute__((constructor)) static void stc_rt_aot_load(void) {
  stc_rt__openmp_spin_cap(kmp_set_defaults);
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
  void *h = stc_rt__aot_open(lib, NULL);
  if (!h)
    stc_rt__aot_load_failed(lib, "the stc runtime, needed by a tuned site");
  g_rt.site_enter = (site_enter_fn)stc_rt__aot_symbol(h, lib, "stc_rt_site_enter");
#define STC_RT_AOT_BLAS(field, type)                                          \
  g_rt.field = (type)stc_rt__aot_symbol(h, lib, "_mlir_ciface_stc_rt_blas_" #field)
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
