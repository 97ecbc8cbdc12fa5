/* constant_loop.c - a --target=cuda function with a 1 MiB constant weight
 * (tools/gpu/constant_loop.mlir), called in a loop: its device copy of the
 * constant must be made once per process (stc_rt_gpu_constant), so device
 * memory does not grow with the calls. For tools/gpu/device-run.sh.
 *
 * Out: one line "constant_loop: N calls, ..." with the device memory in
 *      use after the first call and after the last (cuMemGetInfo, the
 *      driver loaded here with dlopen like runtime/gpu.c does), the
 *      constants copied and the result check (y = N * 512: x = 1, W = 0.5,
 *      K = 1024, y from 0; exact in f32). Exit 0 when the memory in use
 *      grew by less than 1 MiB (before the fix: 1 MiB per call), exactly
 *      one constant was copied and y is right; 1 otherwise; 77 without a
 *      GPU. */
#include "stc/rt.h"
#include "stc/rt_gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void _mlir_ciface_apply(stc_rt_memref2 *x, stc_rt_memref2 *y);

typedef int (*mem_get_info_fn)(size_t *free, size_t *total);

static long long used_bytes(mem_get_info_fn info) {
  size_t free_bytes = 0, total = 0;
  if (info(&free_bytes, &total) != 0)
    return -1;
  return (long long)(total - free_bytes);
}

int main(int argc, char **argv) {
  int calls = argc > 1 ? atoi(argv[1]) : 1000;
  const char *why = NULL;
  if (calls < 2 || !stc_rt_gpu_available(&why)) {
    fprintf(stderr, "constant_loop: %s\n", calls < 2 ? "usage: constant_loop [CALLS >= 2]" : why);
    return calls < 2 ? 2 : 77;
  }
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  mem_get_info_fn info = driver ? (mem_get_info_fn)dlsym(driver, "cuMemGetInfo_v2") : NULL;
  if (!info) {
    fprintf(stderr, "constant_loop: no cuMemGetInfo_v2 in libcuda.so.1\n");
    return 1;
  }
  float host_x[1024], host_y[256];
  for (int i = 0; i < 1024; i++)
    host_x[i] = 1.0f;
  for (int i = 0; i < 256; i++)
    host_y[i] = 0.0f;
  float *x = NULL, *y = NULL;
  if (stc_rt_gpu_alloc(sizeof host_x, (void **)&x, NULL) != STC_OK ||
      stc_rt_gpu_alloc(sizeof host_y, (void **)&y, NULL) != STC_OK ||
      stc_rt_gpu_copy(x, host_x, sizeof host_x, NULL) != STC_OK ||
      stc_rt_gpu_copy(y, host_y, sizeof host_y, NULL) != STC_OK)
    return 1;
  stc_rt_memref2 dx = {x, x, 0, {1, 1024}, {1024, 1}}, dy = {y, y, 0, {1, 256}, {256, 1}};
  _mlir_ciface_apply(&dx, &dy);
  stc_rt_gpu_synchronize(NULL);
  long long first = used_bytes(info);
  for (int i = 1; i < calls; i++)
    _mlir_ciface_apply(&dx, &dy);
  stc_rt_gpu_synchronize(NULL);
  long long last = used_bytes(info);
  stc_rt_gpu_copy(host_y, y, sizeof host_y, NULL);
  int wrong = 0;
  for (int i = 0; i < 256; i++)
    wrong += host_y[i] != 512.0f * (float)calls;
  size_t copies = stc_rt_gpu_constant_count();
  bool ok = first >= 0 && last >= 0 && last - first < (1 << 20) && copies == 1 && !wrong;
  printf("constant_loop: %d calls, device memory in use %lld bytes after the first, "
         "%lld after the last (grew by %lld), constants copied %zu, y %s: %s\n",
         calls, first, last, last - first, copies, wrong ? "WRONG" : "right",
         ok ? "ok" : "FAILED");
  stc_rt_gpu_free(x);
  stc_rt_gpu_free(y);
  return ok ? 0 : 1;
}
