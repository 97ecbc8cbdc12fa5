/* openblas_bench.c - times the vendor BLAS directly, for bench/defaults.py.
 * In:  gemm BATCH M K N | gemv M N, then the minimum seconds to time (e.g.
 *      0.5). The library is STC_BLAS_LIBRARY, else libopenblas.so.0, else
 *      libopenblas.so (dlopen, as libstc_rt does; OPENBLAS_NUM_THREADS caps
 *      its threads).
 * Out: one line "calls seconds gflops library" on stdout: row-major f32
 *      C[MxN] = A[MxK] B[KxN] (BATCH products, one cblas_sgemm each, as
 *      libstc_rt's batch_matmul BLAS entry point does) or y[M] = A[MxN] x[N]
 *      with cblas_sgemv. One untimed call first. Exit 2 on bad usage, 3 when
 *      no BLAS loads. Build: cc -O2 openblas_bench.c -ldl */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                         const float *, int, float, float *, int);
typedef void (*sgemv_fn)(int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
enum { ROW_MAJOR = 101, NO_TRANS = 111 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *filled(size_t n, unsigned seed) {
  float *p = malloc(n * sizeof *p);
  if (!p) {
    fprintf(stderr, "openblas_bench: out of memory\n");
    exit(3);
  }
  for (size_t i = 0; i < n; i++)
    p[i] = (float)((i * 131 + seed) % 1009) / 1009.0f - 0.5f;
  return p;
}

int main(int argc, char **argv) {
  int gemm = argc == 7 && strcmp(argv[1], "gemm") == 0;
  int gemv = argc == 5 && strcmp(argv[1], "gemv") == 0;
  if (!gemm && !gemv) {
    fprintf(stderr, "usage: %s gemm BATCH M K N MIN_SECONDS | gemv M N MIN_SECONDS\n", argv[0]);
    return 2;
  }
  const char *names[] = {getenv("STC_BLAS_LIBRARY"), "libopenblas.so.0", "libopenblas.so"};
  void *lib = NULL;
  const char *name = NULL;
  for (int i = 0; i < 3 && !lib; i++)
    if (names[i] && *names[i])
      lib = dlopen(name = names[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "openblas_bench: no BLAS: %s\n", dlerror());
    return 3;
  }
  sgemm_fn sgemm = (sgemm_fn)dlsym(lib, "cblas_sgemm");
  sgemv_fn sgemv = (sgemv_fn)dlsym(lib, "cblas_sgemv");
  if (!sgemm || !sgemv) {
    fprintf(stderr, "openblas_bench: %s has no cblas_sgemm/cblas_sgemv\n", name);
    return 3;
  }
  double min_s = atof(argv[argc - 1]);
  long batch = gemm ? atol(argv[2]) : 1, m = atol(argv[gemm ? 3 : 2]);
  long k = gemm ? atol(argv[4]) : atol(argv[3]), n = gemm ? atol(argv[5]) : 1;
  if (batch < 1 || m < 1 || k < 1 || n < 1) {
    fprintf(stderr, "openblas_bench: sizes must be positive\n");
    return 2;
  }
  float *a = filled((size_t)(batch * m * k), 1), *b = filled((size_t)(batch * k * n), 2);
  float *c = filled((size_t)(batch * m * n), 3);
  double flops = 2.0 * (double)batch * (double)m * (double)k * (double)n;
  long calls = 0;
  double t0 = 0, elapsed = 0;
  for (int timed = 0; timed < 2; timed++) {
    if (timed)
      t0 = now();
    do {
      for (long i = 0; i < batch; i++) {
        if (gemm)
          sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)m, (int)n, (int)k, 1.0f, a + i * m * k,
                (int)k, b + i * k * n, (int)n, 0.0f, c + i * m * n, (int)n);
        else
          sgemv(ROW_MAJOR, NO_TRANS, (int)m, (int)k, 1.0f, a, (int)k, b, 1, 0.0f, c, 1);
      }
      if (timed) {
        calls++;
        elapsed = now() - t0;
      }
    } while (timed && (elapsed < min_s || calls < 3));
  }
  printf("%ld %.6f %.3f %s\n", calls, elapsed, flops * (double)calls / elapsed / 1e9, name);
  return 0;
}
