/* cublas.c - the cuBLAS entry points of cuBLAS variants (stc/rt_gpu.h).
 *
 * In:  memref descriptors of device buffers from compiled code (or a host);
 *      $STC_CUBLAS and $STC_CUBLAS_LIBRARY, read once, on first use.
 * Out: the linalg op's result accumulated into its output by cublasSgemm /
 *      cublasSgemmStridedBatched on the legacy default stream (with which
 *      the streams of runtime/gpu.c synchronize); whether cuBLAS loads and
 *      why not (variant eligibility).
 *
 * Like runtime/blas.c, nothing is linked: a binary with cuBLAS variants runs
 * where cuBLAS is missing, with those variants ineligible. Unlike blas.c
 * there is no loop fallback (the operands are in device memory): a layout
 * cuBLAS cannot take is refused with a warning and a status, and the
 * variant must not be selected for it (cuBLAS variants require row- or
 * column-major operands, which is what bufferization produces). */
#include "gpu_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };

typedef int (*create_fn)(void **);
typedef int (*gemm_fn)(void *, int, int, int, int, int, const float *,
                       const float *, int, const float *, int, const float *,
                       float *, int);
typedef int (*gemm_batched_fn)(void *, int, int, int, int, int, const float *,
                               const float *, int, long long, const float *,
                               int, long long, const float *, float *, int,
                               long long, int);

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_call_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool g_done;
static struct {
  bool loaded;
  void *handle; /* cublasHandle_t, created on first use */
  create_fn create;
  gemm_fn sgemm;
  gemm_batched_fn sgemm_batched;
  char library[256];
  char why[1024];
  char reason[1100];
} g_cublas;

static void append_why(const char *text) {
  size_t used = strlen(g_cublas.why);
  snprintf(g_cublas.why + used, sizeof g_cublas.why - used, "%s%s",
           used ? "; " : "", text);
}

static bool try_library(const char *name) {
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    append_why(error ? error : name);
    return false;
  }
  void *create = dlsym(library, "cublasCreate_v2");
  void *sgemm = dlsym(library, "cublasSgemm_v2");
  void *batched = dlsym(library, "cublasSgemmStridedBatched");
  if (!create || !sgemm || !batched) {
    char text[512];
    snprintf(text, sizeof text, "%s lacks cublasCreate_v2, cublasSgemm_v2 or "
             "cublasSgemmStridedBatched", name);
    append_why(text);
    dlclose(library);
    return false;
  }
  memcpy(&g_cublas.create, &create, sizeof create);
  memcpy(&g_cublas.sgemm, &sgemm, sizeof sgemm);
  memcpy(&g_cublas.sgemm_batched, &batched, sizeof batched);
  snprintf(g_cublas.library, sizeof g_cublas.library, "%s", name);
  return true;
}

static void load_once(void) {
  const char *value = getenv("STC_CUBLAS");
  if (value && (strcmp(value, "off") == 0 || strcmp(value, "0") == 0 ||
                strcmp(value, "no") == 0 || strcmp(value, "false") == 0)) {
    snprintf(g_cublas.why, sizeof g_cublas.why, "STC_CUBLAS=off");
    return;
  }
  const char *gpu_why = NULL;
  if (!stc_rt_gpu_available(&gpu_why)) {
    snprintf(g_cublas.why, sizeof g_cublas.why, "no usable GPU: %s", gpu_why);
    return;
  }
  const char *chosen = getenv("STC_CUBLAS_LIBRARY");
  if (chosen && *chosen) {
    g_cublas.loaded = try_library(chosen);
  } else {
    static const char *const defaults[] = {
        "libcublas.so.13", "libcublas.so.12", "libcublas.so",
        "/usr/local/cuda/lib64/libcublas.so"};
    for (size_t i = 0; i < sizeof defaults / sizeof *defaults && !g_cublas.loaded; i++)
      g_cublas.loaded = try_library(defaults[i]);
  }
  if (!g_cublas.loaded)
    return;
  /* The handle binds to the current context: make ours current first. */
  int r = stc_rt__gpu_ready() ? g_cublas.create(&g_cublas.handle) : -1;
  if (r != 0) {
    g_cublas.loaded = false;
    snprintf(g_cublas.why, sizeof g_cublas.why, "cublasCreate failed (status %d)", r);
    return;
  }
  g_cublas.why[0] = 0;
}

static void ensure_loaded(void) {
  if (atomic_load_explicit(&g_done, memory_order_acquire))
    return;
  pthread_mutex_lock(&g_lock);
  if (!atomic_load_explicit(&g_done, memory_order_relaxed)) {
    load_once();
    snprintf(g_cublas.reason, sizeof g_cublas.reason, "cuBLAS not loaded: %s",
             g_cublas.why);
    atomic_store_explicit(&g_done, true, memory_order_release);
  }
  pthread_mutex_unlock(&g_lock);
}

void stc_rt__cublas_reset(void) {
  pthread_mutex_lock(&g_lock);
  memset(&g_cublas, 0, sizeof g_cublas);
  atomic_store_explicit(&g_done, false, memory_order_release);
  pthread_mutex_unlock(&g_lock);
}

bool stc_rt_cublas_available(const char **why) {
  ensure_loaded();
  if (why)
    *why = g_cublas.loaded ? NULL : g_cublas.why;
  return g_cublas.loaded;
}

const char *stc_rt__cublas_ineligible_reason(void) {
  return stc_rt_cublas_available(NULL) ? NULL : g_cublas.reason;
}

/* ---- layouts ---- */

/* A rows x cols f32 matrix at base, strides in elements. */
typedef struct view {
  float *base;
  int64_t rows, cols, s0, s1;
} view;

static view transposed(view v) { return (view){v.base, v.cols, v.rows, v.s1, v.s0}; }

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Column-major with a positive leading dimension? (A stride of a dimension
 * of size 1 never matters.) */
static bool column_major(view v, int *ld) {
  int64_t rows = v.rows > 1 ? v.rows : 1;
  int64_t s0 = v.rows <= 1 ? 1 : v.s0;
  int64_t s1 = v.cols <= 1 ? rows : v.s1;
  if (s0 != 1 || s1 < rows || !fits_int(s1))
    return false;
  *ld = (int)s1;
  return true;
}

/* v as a cuBLAS operand: column-major as is (N), row-major as the
 * column-major transpose (T). */
static bool operand(view v, int *op, int *ld) {
  if (column_major(v, ld)) {
    *op = CUBLAS_OP_N;
    return true;
  }
  if (column_major(transposed(v), ld)) {
    *op = CUBLAS_OP_T;
    return true;
  }
  return false;
}

/* C += A B, batch_count times with the given batch strides (elements). In
 * column-major terms; a row-major C is computed as C^T += B^T A^T. */
static void gemm(view a, view b, view c, int64_t batch_count, int64_t stride_a,
                 int64_t stride_b, int64_t stride_c, const char *entry) {
  if (c.rows == 0 || c.cols == 0 || a.cols == 0 || batch_count == 0)
    return;
  if (!stc_rt_cublas_available(NULL)) {
    stc_rt__gpu_fail(STC_ERR_UNAVAILABLE, "%s: %s; nothing computed", entry,
                     g_cublas.reason);
    return;
  }
  int ldc = 0;
  if (!column_major(c, &ldc)) {
    view t = a;
    a = transposed(b);
    b = transposed(t);
    c = transposed(c);
    int64_t stride_t = stride_a;
    stride_a = stride_b;
    stride_b = stride_t;
  }
  int op_a, op_b, lda, ldb;
  if (!column_major(c, &ldc) || !operand(a, &op_a, &lda) ||
      !operand(b, &op_b, &ldb) || !fits_int(c.rows) || !fits_int(c.cols) ||
      !fits_int(a.cols) || !fits_int(batch_count)) {
    stc_rt__gpu_fail(STC_ERR_INVALID,
                     "%s: operand layout not supported by cuBLAS (needs row- "
                     "or column-major operands); nothing computed",
                     entry);
    return;
  }
  if (!stc_rt__gpu_ready())
    return;
  const float one = 1.0f;
  int status;
  pthread_mutex_lock(&g_call_lock); /* one handle, used by one thread at a time */
  if (batch_count == 1)
    status = g_cublas.sgemm(g_cublas.handle, op_a, op_b, (int)c.rows, (int)c.cols,
                            (int)a.cols, &one, a.base, lda, b.base, ldb, &one,
                            c.base, ldc);
  else
    status = g_cublas.sgemm_batched(g_cublas.handle, op_a, op_b, (int)c.rows,
                                    (int)c.cols, (int)a.cols, &one, a.base, lda,
                                    stride_a, b.base, ldb, stride_b, &one,
                                    c.base, ldc, stride_c, (int)batch_count);
  pthread_mutex_unlock(&g_call_lock);
  if (status != 0)
    stc_rt__gpu_fail(STC_ERR_DEVICE, "%s: cuBLAS status %d", entry, status);
}

static view matrix(void *aligned, int64_t offset, const int64_t *sizes,
                   const int64_t *strides) {
  return (view){(float *)aligned + offset, sizes[0], sizes[1], strides[0],
                strides[1]};
}

void _mlir_ciface_stc_rt_cublas_matmul_f32(stc_rt_memref2 *a, stc_rt_memref2 *b,
                                           stc_rt_memref2 *c) {
  gemm(matrix(a->aligned, a->offset, a->sizes, a->strides),
       matrix(b->aligned, b->offset, b->sizes, b->strides),
       matrix(c->aligned, c->offset, c->sizes, c->strides), 1, 0, 0, 0,
       "stc_rt_cublas_matmul_f32");
}

void _mlir_ciface_stc_rt_cublas_batch_matmul_f32(stc_rt_memref3 *a,
                                                 stc_rt_memref3 *b,
                                                 stc_rt_memref3 *c) {
  int64_t batch = c->sizes[0];
  if (batch > 1 && (a->sizes[0] != batch || b->sizes[0] != batch)) {
    stc_rt__gpu_fail(STC_ERR_INVALID, "stc_rt_cublas_batch_matmul_f32: batch "
                                      "sizes differ; nothing computed");
    return;
  }
  gemm(matrix(a->aligned, a->offset, a->sizes + 1, a->strides + 1),
       matrix(b->aligned, b->offset, b->sizes + 1, b->strides + 1),
       matrix(c->aligned, c->offset, c->sizes + 1, c->strides + 1), batch,
       a->strides[0], b->strides[0], c->strides[0],
       "stc_rt_cublas_batch_matmul_f32");
}
