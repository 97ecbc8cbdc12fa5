/* blas.c - the vendor-BLAS entry points of BLAS variants (stc/rt_blas.h).
 *
 * In:  memref descriptors from compiled BLAS variants; $STC_BLAS and
 *      $STC_BLAS_LIBRARY, read once, on first use.
 * Out: the linalg op's result accumulated into its output, computed by the
 *      CBLAS library loaded with dlopen where the operands' layout allows,
 *      by a plain loop otherwise; whether BLAS variants are eligible (site
 *      eligibility, dispatch.c) and why not, and the library's identity.
 *
 * Eligibility and identity come from finding the file dlopen would open
 * (library_lookup.c), not from loading it: a process whose tuning cache
 * names no BLAS winner never loads the library (OpenBLAS starts its
 * threads in its constructor: 10-15 ms of a short process). The file found
 * is loaded, by its path, just before a BLAS variant first runs
 * (stc_rt__blas_load: a trial, or a winner about to be published); if it
 * then fails to load, or is no longer the file identified, BLAS variants
 * become ineligible with a warning and their sites select again.
 *
 * Nothing is linked at build time (libstc_rt stays free of BLAS): the
 * library is found at run time, so a deployed model with BLAS variants still
 * runs - with those variants ineligible - on a machine without one.
 *
 * The loop fallback keeps every entry point correct for every input the op
 * accepts: the tuner validates the variant anyway, but a variant chosen for
 * a workload must stay right when a later call of the same workload brings
 * other strides (a subview) - a workload is shapes, not strides. */
/* dladdr, dl_iterate_phdr: the identity of the library loaded. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stc/rt_blas.h"

#include "dispatch_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CBLAS constants (cblas.h; identical in OpenBLAS, BLIS, MKL, netlib). */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

/* blasint is 32 bits in the LP64 libraries Debian ships (libopenblas0,
 * libblas3); sizes or leading dimensions beyond INT_MAX take the loop. */
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *,
                         int, const double *, int, double, double *, int);
typedef void (*sgemv_fn)(int, int, int, int, float, const float *, int,
                         const float *, int, float, float *, int);
typedef void (*dgemv_fn)(int, int, int, int, double, const double *, int,
                         const double *, int, double, double *, int);

/* Three steps, each at most once per process (stc_rt__blas_reset aside):
 * the lookup finds the file dlopen would open, without loading it
 * (library_lookup.c; eligibility is decided from it), the identity of that
 * file (real path, size, mtime, build id: what trust_verified keys hold)
 * is read when first asked for, and the load opens that file when a BLAS
 * variant is about to run. The identity is separate because only
 * trust_verified keys need it: reading it (the /proc/self/fd link, the
 * ELF notes) was half of a warm process's BLAS lookup, on every process.
 * `g_probed`, `g_identified` and `g_done` are published with release after
 * the fields they guard are written. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool g_probed, g_identified, g_done, g_attempted;
static struct {
  /* the lookup */
  bool found; /* path is to be loaded */
  char path[PATH_MAX];
  char stamp[256];               /* the file found (stc_rt__library_stamp) */
  char identity[PATH_MAX + 256]; /* "" = unknown (stc_rt__blas_identity) */
  /* the load */
  bool loaded;
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  sgemv_fn sgemv;
  dgemv_fn dgemv;
  char library[PATH_MAX];
  char why[1024];
  char reason[1100]; /* "vendor BLAS not loaded: <why>" */
} g_blas;

static void append_why(const char *format, const char *a, const char *b) {
  size_t used = strlen(g_blas.why);
  snprintf(g_blas.why + used, sizeof g_blas.why - used, format, used ? "; " : "",
           a, b);
}

/* "blas=<file identity>" of the object behind handle, "" when unknown. */
static void identity_of_handle(void *handle, char *identity, size_t size) {
  struct link_map *map = NULL;
  char file[PATH_MAX + 200], why[PATH_MAX + 64];
  identity[0] = 0;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
      map->l_name[0] &&
      stc_rt__library_examine(map->l_name, file, sizeof file, why,
                              sizeof why) == STC_RT__LIBRARY_FOUND)
    snprintf(identity, size, "blas=%s", file);
}

/* OpenBLAS's worker threads busy-wait 2^28 TSC cycles (about 0.1 s) after
 * every call before they sleep. On a machine with few cores that spin takes
 * the cores the next code needs: an OpenMP variant timed right after
 * matmul_blas ran at half its speed (gpt2_c_attn on 2 cores: ratio 1.03
 * instead of 0.50-0.55), so the tuner (and bench/regret.sh's oracle)
 * rejected or mis-ranked it, and so does any OpenMP op that follows a BLAS
 * call in a model. 2^22 cycles (1-3 ms) keeps the calls of paired timings
 * (BLAS, reference, BLAS, ...) on awake threads and lets them sleep soon
 * after; the trial runner (trial_cpu.c) waits that window out before it
 * times another candidate. 2^18 (about 0.1 ms) made short BLAS calls pay a
 * wake-up in every pair: matvec_blas lost to the reference in 2-3 of 6
 * tunes of mv_gpt2_proj / mv_rn50_fc (regret 1.5-2.7); 2^22 without the
 * wait lost bert_base_qkvo's OpenMP variant in 5 of 13. OpenBLAS reads the
 * value (an exponent, clamped to 4..30) when it is loaded; a user's own
 * setting wins. */
#define STC_OPENBLAS_THREAD_TIMEOUT "22"

static void cap_openblas_spin(void) {
  const char *own = getenv("OPENBLAS_THREAD_TIMEOUT");
  const char *goto_own = getenv("GOTO_THREAD_TIMEOUT");
  if ((own && *own) || (goto_own && *goto_own))
    return;
  (void)setenv("OPENBLAS_THREAD_TIMEOUT", STC_OPENBLAS_THREAD_TIMEOUT, 0);
}

/* Opens `name` and resolves the four routines; false (with the reason
 * appended to g_blas.why) when it does not load or lacks one. *handle_out
 * gets the handle on success. */
static bool try_library(const char *name, void **handle_out) {
  atomic_store_explicit(&g_attempted, true, memory_order_relaxed);
  cap_openblas_spin(); /* before the library (perhaps OpenBLAS) loads */
  void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *error = dlerror();
    append_why("%s%s%s", "", error ? error : name);
    return false;
  }
  static const char *const symbols[4] = {"cblas_sgemm", "cblas_dgemm",
                                         "cblas_sgemv", "cblas_dgemv"};
  void *found[4];
  for (size_t i = 0; i < 4; i++) {
    found[i] = dlsym(handle, symbols[i]);
    if (!found[i]) {
      append_why("%s%s lacks %s", name, symbols[i]);
      dlclose(handle);
      return false;
    }
  }
  /* dlsym hands back object pointers; POSIX guarantees they convert. */
  memcpy(&g_blas.sgemm, &found[0], sizeof found[0]);
  memcpy(&g_blas.dgemm, &found[1], sizeof found[1]);
  memcpy(&g_blas.sgemv, &found[2], sizeof found[2]);
  memcpy(&g_blas.dgemv, &found[3], sizeof found[3]);
  snprintf(g_blas.library, sizeof g_blas.library, "%s", name);
  *handle_out = handle;
  return true;
}

static bool env_says_off(const char *value) {
  return value && (strcmp(value, "off") == 0 || strcmp(value, "0") == 0 ||
                   strcmp(value, "no") == 0 || strcmp(value, "false") == 0);
}

static void finish_load_locked(void) {
  if (g_blas.loaded)
    g_blas.why[0] = 0;
  snprintf(g_blas.reason, sizeof g_blas.reason, "vendor BLAS not loaded: %s",
           g_blas.why);
  atomic_store_explicit(&g_done, true, memory_order_release);
}

/* The lookup could not decide: load as dlopen finds it, each name in turn
 * (then the identity is that of the object loaded). */
static void load_by_names_locked(const char *const *names, size_t count) {
  void *handle = NULL;
  for (size_t i = 0; i < count && !g_blas.loaded; i++)
    g_blas.loaded = try_library(names[i], &handle);
  if (g_blas.loaded)
    identity_of_handle(handle, g_blas.identity, sizeof g_blas.identity);
  g_blas.found = g_blas.loaded;
  atomic_store_explicit(&g_identified, true, memory_order_release);
  finish_load_locked();
}

static void probe_locked(void) {
  if (env_says_off(getenv("STC_BLAS"))) {
    snprintf(g_blas.why, sizeof g_blas.why, "STC_BLAS=off");
    finish_load_locked();
    return;
  }
  static const char *const defaults[] = {"libopenblas.so.0", "libopenblas.so",
                                         "libblas.so.3"};
  const char *chosen = getenv("STC_BLAS_LIBRARY");
  const char *const *names = chosen && *chosen ? &chosen : defaults;
  size_t count = chosen && *chosen ? 1 : sizeof defaults / sizeof *defaults;
  for (size_t i = 0; i < count; i++) {
    char why[PATH_MAX + 128];
    stc_rt__lookup found = stc_rt__library_find(
        names[i], g_blas.path, sizeof g_blas.path, g_blas.stamp,
        sizeof g_blas.stamp, why, sizeof why);
    if (found == STC_RT__LIBRARY_UNDECIDED) {
      g_blas.why[0] = 0;
      load_by_names_locked(names + i, count - i);
      return;
    }
    if (found == STC_RT__LIBRARY_FOUND) {
      g_blas.found = true;
      g_blas.why[0] = 0;
      return; /* the identity is read when asked for (identify_locked) */
    }
    append_why("%s%s%s", why, "");
  }
  finish_load_locked(); /* nothing to load */
}

static void ensure_probed(void) {
  if (atomic_load_explicit(&g_probed, memory_order_acquire))
    return;
  pthread_mutex_lock(&g_lock);
  if (!atomic_load_explicit(&g_probed, memory_order_relaxed)) {
    probe_locked();
    atomic_store_explicit(&g_probed, true, memory_order_release);
  }
  pthread_mutex_unlock(&g_lock);
}

/* The identity of the file the lookup found, once: "" when that file
 * changed since (its stamp differs) or cannot be read any more; then keys
 * that need it treat the library as unknown, and the load below fails its
 * comparison. */
static void identify_locked(void) {
  if (atomic_load_explicit(&g_identified, memory_order_relaxed))
    return;
  char stamp[sizeof g_blas.stamp], file[PATH_MAX + 200], why[PATH_MAX + 64];
  g_blas.identity[0] = 0;
  if (g_blas.found &&
      stc_rt__library_examine(g_blas.path, file, sizeof file, why,
                              sizeof why) == STC_RT__LIBRARY_FOUND &&
      stc_rt__library_stamp(g_blas.path, stamp, sizeof stamp, why,
                            sizeof why) == STC_RT__LIBRARY_FOUND &&
      strcmp(stamp, g_blas.stamp) == 0)
    snprintf(g_blas.identity, sizeof g_blas.identity, "blas=%s", file);
  atomic_store_explicit(&g_identified, true, memory_order_release);
}

/* Loads the file the lookup found; it must still be that file, since
 * identity keys may have been made from it (its identity is taken first if
 * none was yet). */
static void load_found_locked(void) {
  void *handle = NULL;
  identify_locked();
  if (try_library(g_blas.path, &handle)) {
    char loaded[sizeof g_blas.identity];
    identity_of_handle(handle, loaded, sizeof loaded);
    if (strcmp(loaded, g_blas.identity) == 0) {
      g_blas.loaded = true;
    } else {
      /* Kept mapped (it may have started threads); never called. */
      append_why("%s%s changed between its lookup and its load%s", g_blas.path,
                 "");
    }
  }
  if (!g_blas.loaded)
    stc_rt__warn("vendor BLAS '%s' was found but does not load (%s); BLAS "
                 "variants are ineligible in this process and their sites "
                 "run other variants",
                 g_blas.path, g_blas.why);
  finish_load_locked();
}

bool stc_rt__blas_load(const char **why) {
  ensure_probed();
  if (!atomic_load_explicit(&g_done, memory_order_acquire)) {
    pthread_mutex_lock(&g_lock);
    if (!atomic_load_explicit(&g_done, memory_order_relaxed))
      load_found_locked();
    pthread_mutex_unlock(&g_lock);
  }
  if (why)
    *why = g_blas.loaded ? NULL : g_blas.why;
  return g_blas.loaded;
}

/* Test-only: forget the outcome so the next call reads the environment
 * again. A loaded library stays mapped (dlclose would pull it from under
 * threads it started); a second dlopen just takes another reference. */
void stc_rt__blas_reset(void) {
  pthread_mutex_lock(&g_lock);
  memset(&g_blas, 0, sizeof g_blas);
  atomic_store_explicit(&g_done, false, memory_order_release);
  atomic_store_explicit(&g_probed, false, memory_order_release);
  atomic_store_explicit(&g_identified, false, memory_order_release);
  atomic_store_explicit(&g_attempted, false, memory_order_release);
  pthread_mutex_unlock(&g_lock);
}

bool stc_rt__blas_attempted(void) {
  return atomic_load_explicit(&g_attempted, memory_order_acquire);
}

bool stc_rt__blas_probed(void) {
  return atomic_load_explicit(&g_probed, memory_order_acquire);
}

bool stc_rt_blas_available(const char **library, const char **why) {
  bool loaded = stc_rt__blas_load(why);
  if (library)
    *library = loaded ? g_blas.library : NULL;
  return loaded;
}

/* Both answer from the lookup until a load was tried, then from the load:
 * a library found but failing to load makes BLAS variants ineligible. */
const char *stc_rt__blas_identity(void) {
  ensure_probed();
  bool done = atomic_load_explicit(&g_done, memory_order_acquire);
  if (!done && !atomic_load_explicit(&g_identified, memory_order_acquire)) {
    pthread_mutex_lock(&g_lock);
    if (!atomic_load_explicit(&g_done, memory_order_relaxed))
      identify_locked();
    pthread_mutex_unlock(&g_lock);
    done = atomic_load_explicit(&g_done, memory_order_acquire);
  }
  bool usable = done ? g_blas.loaded : g_blas.found;
  return usable && g_blas.identity[0] ? g_blas.identity : NULL;
}

const char *stc_rt__blas_ineligible_reason(void) {
  ensure_probed();
  bool done = atomic_load_explicit(&g_done, memory_order_acquire);
  if (done ? g_blas.loaded : g_blas.found)
    return NULL;
  return g_blas.reason;
}

/* ---- strided views ---- */

typedef enum elem { ELEM_F32, ELEM_F64 } elem;

/* A rows x cols matrix (or, cols == 1 and s1 unused, a vector) at `base`,
 * strides in elements. */
typedef struct view {
  char *base;
  int64_t rows, cols, s0, s1;
} view;

static size_t elem_size(elem e) { return e == ELEM_F32 ? sizeof(float) : sizeof(double); }

static view matrix(elem e, void *aligned, int64_t offset, const int64_t *sizes,
                   const int64_t *strides) {
  return (view){(char *)aligned + offset * (int64_t)elem_size(e), sizes[0],
                sizes[1], strides[0], strides[1]};
}

static view vector(elem e, const stc_rt_memref1 *m) {
  return (view){(char *)m->aligned + m->offset * (int64_t)elem_size(e),
                m->sizes[0], 1, m->strides[0], 1};
}

static view transposed(view v) { return (view){v.base, v.cols, v.rows, v.s1, v.s0}; }

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Row-major with a positive leading dimension (a stride of a dimension of
 * size 1 never matters)? *ld gets it. */
static bool row_major(view v, int *ld) {
  int64_t s1 = v.cols <= 1 ? 1 : v.s1;
  int64_t cols = v.cols > 1 ? v.cols : 1;
  int64_t s0 = v.rows <= 1 ? cols : v.s0;
  if (s1 != 1 || s0 < cols || !fits_int(s0))
    return false;
  *ld = (int)s0;
  return true;
}

/* A vector's increment for BLAS (positive; a length-1 vector's is 1). */
static bool increment(view v, int *inc) {
  int64_t s = v.rows <= 1 ? 1 : v.s0;
  if (s < 1 || !fits_int(s))
    return false;
  *inc = (int)s;
  return true;
}

/* A row-major view as it is, or a column-major one as its transpose. */
static bool blas_operand(view v, int *trans, int *ld) {
  if (row_major(v, ld)) {
    *trans = CBLAS_NO_TRANS;
    return true;
  }
  if (row_major(transposed(v), ld)) {
    *trans = CBLAS_TRANS;
    return true;
  }
  return false;
}

static double load(elem e, const char *p) {
  return e == ELEM_F32 ? (double)*(const float *)p : *(const double *)p;
}

/* Accumulates in the element type, in k order, like the linalg op. */
static void fma_into(elem e, char *out, const char *x, const char *y) {
  if (e == ELEM_F32)
    *(float *)out += *(const float *)x * *(const float *)y;
  else
    *(double *)out += load(e, x) * load(e, y);
}

static char *at(elem e, view v, int64_t i, int64_t j) {
  return v.base + (i * v.s0 + j * v.s1) * (int64_t)elem_size(e);
}

/* ---- gemm / gemv ---- */

/* C += A B with the library when every operand maps onto it. */
static bool gemm_blas(elem e, view a, view b, view c) {
  int ta, tb, lda, ldb, ldc;
  if (!fits_int(c.rows) || !fits_int(c.cols) || !fits_int(a.cols) ||
      !blas_operand(a, &ta, &lda) || !blas_operand(b, &tb, &ldb))
    return false;
  if (!row_major(c, &ldc))
    return false;
  int m = (int)c.rows, n = (int)c.cols, k = (int)a.cols;
  if (e == ELEM_F32)
    g_blas.sgemm(CBLAS_ROW_MAJOR, ta, tb, m, n, k, 1.0f, (const float *)a.base,
                 lda, (const float *)b.base, ldb, 1.0f, (float *)c.base, ldc);
  else
    g_blas.dgemm(CBLAS_ROW_MAJOR, ta, tb, m, n, k, 1.0, (const double *)a.base,
                 lda, (const double *)b.base, ldb, 1.0, (double *)c.base, ldc);
  return true;
}

static void gemm(elem e, view a, view b, view c) {
  if (c.rows == 0 || c.cols == 0 || a.cols == 0)
    return;
  if (stc_rt_blas_available(NULL, NULL)) {
    /* A column-major C is the row-major C^T += B^T A^T. */
    if (gemm_blas(e, a, b, c) ||
        gemm_blas(e, transposed(b), transposed(a), transposed(c)))
      return;
  }
  for (int64_t i = 0; i < c.rows; i++)
    for (int64_t j = 0; j < c.cols; j++)
      for (int64_t k = 0; k < a.cols; k++)
        fma_into(e, at(e, c, i, j), at(e, a, i, k), at(e, b, k, j));
}

/* y += A x, A rows x cols. */
static void gemv(elem e, view a, view x, view y) {
  if (a.rows == 0 || a.cols == 0)
    return;
  int trans, lda, incx, incy;
  if (stc_rt_blas_available(NULL, NULL) && fits_int(a.rows) &&
      fits_int(a.cols) && blas_operand(a, &trans, &lda) &&
      increment(x, &incx) && increment(y, &incy)) {
    /* A column-major A is stored as the row-major A^T: y += (A^T)^T x. */
    int m = (int)(trans == CBLAS_NO_TRANS ? a.rows : a.cols);
    int n = (int)(trans == CBLAS_NO_TRANS ? a.cols : a.rows);
    if (e == ELEM_F32)
      g_blas.sgemv(CBLAS_ROW_MAJOR, trans, m, n, 1.0f, (const float *)a.base,
                   lda, (const float *)x.base, incx, 1.0f, (float *)y.base, incy);
    else
      g_blas.dgemv(CBLAS_ROW_MAJOR, trans, m, n, 1.0, (const double *)a.base,
                   lda, (const double *)x.base, incx, 1.0, (double *)y.base, incy);
    return;
  }
  for (int64_t i = 0; i < a.rows; i++)
    for (int64_t j = 0; j < a.cols; j++)
      fma_into(e, at(e, y, i, 0), at(e, a, i, j), at(e, x, j, 0));
}

/* ---- entry points ---- */

static void matmul(elem e, stc_rt_memref2 *a, stc_rt_memref2 *b, stc_rt_memref2 *c) {
  gemm(e, matrix(e, a->aligned, a->offset, a->sizes, a->strides),
       matrix(e, b->aligned, b->offset, b->sizes, b->strides),
       matrix(e, c->aligned, c->offset, c->sizes, c->strides));
}

static void batch_matmul(elem e, stc_rt_memref3 *a, stc_rt_memref3 *b,
                         stc_rt_memref3 *c) {
  for (int64_t i = 0; i < c->sizes[0]; i++)
    gemm(e,
         matrix(e, a->aligned, a->offset + i * a->strides[0], a->sizes + 1,
                a->strides + 1),
         matrix(e, b->aligned, b->offset + i * b->strides[0], b->sizes + 1,
                b->strides + 1),
         matrix(e, c->aligned, c->offset + i * c->strides[0], c->sizes + 1,
                c->strides + 1));
}

static void matvec(elem e, stc_rt_memref2 *a, stc_rt_memref1 *x, stc_rt_memref1 *y) {
  gemv(e, matrix(e, a->aligned, a->offset, a->sizes, a->strides), vector(e, x),
       vector(e, y));
}

/* y[n] += sum_k x[k] A[k][n] is y += A^T x. */
static void vecmat(elem e, stc_rt_memref1 *x, stc_rt_memref2 *a, stc_rt_memref1 *y) {
  gemv(e, transposed(matrix(e, a->aligned, a->offset, a->sizes, a->strides)),
       vector(e, x), vector(e, y));
}

void _mlir_ciface_stc_rt_blas_matmul_f32(stc_rt_memref2 *a, stc_rt_memref2 *b,
                                         stc_rt_memref2 *c) {
  matmul(ELEM_F32, a, b, c);
}
void _mlir_ciface_stc_rt_blas_matmul_f64(stc_rt_memref2 *a, stc_rt_memref2 *b,
                                         stc_rt_memref2 *c) {
  matmul(ELEM_F64, a, b, c);
}
void _mlir_ciface_stc_rt_blas_batch_matmul_f32(stc_rt_memref3 *a,
                                               stc_rt_memref3 *b,
                                               stc_rt_memref3 *c) {
  batch_matmul(ELEM_F32, a, b, c);
}
void _mlir_ciface_stc_rt_blas_batch_matmul_f64(stc_rt_memref3 *a,
                                               stc_rt_memref3 *b,
                                               stc_rt_memref3 *c) {
  batch_matmul(ELEM_F64, a, b, c);
}
void _mlir_ciface_stc_rt_blas_matvec_f32(stc_rt_memref2 *a, stc_rt_memref1 *x,
                                         stc_rt_memref1 *y) {
  matvec(ELEM_F32, a, x, y);
}
void _mlir_ciface_stc_rt_blas_matvec_f64(stc_rt_memref2 *a, stc_rt_memref1 *x,
                                         stc_rt_memref1 *y) {
  matvec(ELEM_F64, a, x, y);
}
void _mlir_ciface_stc_rt_blas_vecmat_f32(stc_rt_memref1 *x, stc_rt_memref2 *a,
                                         stc_rt_memref1 *y) {
  vecmat(ELEM_F32, x, a, y);
}
void _mlir_ciface_stc_rt_blas_vecmat_f64(stc_rt_memref1 *x, stc_rt_memref2 *a,
                                         stc_rt_memref1 *y) {
  vecmat(ELEM_F64, x, a, y);
}
