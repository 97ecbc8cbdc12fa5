/* Unit tests of libstc_rt's GPU layer (runtime/gpu.c, runtime/cublas.c).
 *
 * The first group runs everywhere: without a driver (a missing
 * STC_CUDA_DRIVER_LIBRARY, or STC_GPU=off) every entry point returns NULL /
 * a status and warns, never crashes, and cuBLAS is ineligible with the
 * reason. The second group needs a CUDA device: where none is usable, each of
 * those tests prints why and exits 77, which ctest reports as skipped
 * (SKIP_RETURN_CODE in test/unit/CMakeLists.txt), not as passed. */
#include "stc_test.h"

#include "../../runtime/gpu_internal.h"
#include "stc/rt.h"
#include "stc/rt_gpu.h"

#include <math.h>
#include <stdlib.h>

#define SKIP_RETURN_CODE 77

static void fresh(const char *driver, const char *gpu_switch) {
  if (driver)
    setenv("STC_CUDA_DRIVER_LIBRARY", driver, 1);
  else
    unsetenv("STC_CUDA_DRIVER_LIBRARY");
  if (gpu_switch)
    setenv("STC_GPU", gpu_switch, 1);
  else
    unsetenv("STC_GPU");
  stc_rt__gpu_reset();
  stc_rt__cublas_reset();
}

/* Exits 77 (skipped) with the reason when no device is usable. */
static void require_gpu(void) {
  fresh(NULL, NULL);
  const char *why = NULL;
  if (!stc_rt_gpu_available(&why)) {
    printf("SKIP: no usable CUDA device: %s\n", why);
    fflush(stdout);
    exit(SKIP_RETURN_CODE);
  }
}

/* ---- everywhere ---- */

STC_TEST(gpu_missing_driver_is_unavailable_with_reason) {
  fresh("/nonexistent/libcuda.so.1", NULL);
  const char *why = NULL;
  STC_CHECK(!stc_rt_gpu_available(&why));
  STC_CHECK(why && strstr(why, "no CUDA driver"));
  STC_CHECK(strstr(why, "/nonexistent/libcuda.so.1"));
  stc_rt_gpu_device info;
  stc_error err;
  STC_CHECK_EQ_INT(stc_rt_gpu_device_info(&info, &err), STC_ERR_UNAVAILABLE);
  STC_CHECK(strstr(err.message, "no CUDA driver"));
  char fingerprint[256];
  STC_CHECK_EQ_INT(stc_rt_gpu_fingerprint(fingerprint, sizeof fingerprint),
                   STC_ERR_UNAVAILABLE);
}

STC_TEST(gpu_off_by_environment) {
  fresh(NULL, "off");
  const char *why = NULL;
  STC_CHECK(!stc_rt_gpu_available(&why));
  STC_CHECK_STR_EQ(why, "STC_GPU=off");
  const char *cublas_why = NULL;
  STC_CHECK(!stc_rt_cublas_available(&cublas_why));
  STC_CHECK(strstr(cublas_why, "STC_GPU=off"));
  STC_CHECK(strstr(stc_rt__cublas_ineligible_reason(), "cuBLAS not loaded"));
}

/* What compiled --target=cuda code does at start and per op, without a
 * driver: nothing crashes, everything returns NULL, the status says why. */
STC_TEST(gpu_mgpu_calls_without_driver_fail_softly) {
  fresh("/nonexistent/libcuda.so.1", NULL);
  mgpuSetDefaultDevice(0);
  STC_CHECK(mgpuModuleLoad("not a cubin", 11) == NULL);
  STC_CHECK(mgpuModuleLoadJIT("not ptx", 2) == NULL);
  STC_CHECK(mgpuModuleGetFunction(NULL, "k") == NULL);
  void *stream = mgpuStreamCreate();
  STC_CHECK(stream == NULL);
  STC_CHECK(mgpuMemAlloc(1024, stream, false) == NULL);
  float host[4] = {1, 2, 3, 4};
  mgpuMemcpy(host, host + 2, 2 * sizeof(float), stream);
  mgpuMemset32(host, 0, 4, stream);
  mgpuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL, 0);
  void *event = mgpuEventCreate();
  STC_CHECK(event == NULL);
  mgpuEventRecord(event, stream);
  mgpuEventSynchronize(event);
  mgpuEventDestroy(event);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  mgpuMemFree(NULL, stream);
  mgpuModuleUnload(NULL);
  STC_CHECK(host[0] == 1 && host[3] == 4); /* nothing touched host memory */
  stc_error err;
  STC_CHECK_EQ_INT(stc_rt_gpu_last_status(&err), STC_ERR_UNAVAILABLE);
  STC_CHECK(strstr(err.message, "no usable GPU"));
  void *p = (void *)1;
  STC_CHECK_EQ_INT(stc_rt_gpu_alloc(16, &p, &err), STC_ERR_UNAVAILABLE);
  STC_CHECK(p == NULL);
  STC_CHECK_EQ_INT(stc_rt_gpu_copy(host, host + 1, 4, &err), STC_ERR_UNAVAILABLE);
  stc_rt_gpu_timer *timer = (void *)1;
  STC_CHECK_EQ_INT(stc_rt_gpu_timer_create(&timer, &err), STC_ERR_UNAVAILABLE);
  STC_CHECK(timer == NULL);
  stc_rt_gpu_timer_destroy(NULL);
  STC_CHECK_EQ_INT(stc_rt_gpu_free(NULL), STC_OK);
  /* A constant's device copy: none, nothing cached (0 and no crash). */
  STC_CHECK(stc_rt_gpu_constant((uintptr_t)host, sizeof host) == 0);
  STC_CHECK(stc_rt_gpu_constant(0, 16) == 0);
  STC_CHECK_EQ_INT((int)stc_rt_gpu_constant_count(), 0);
}

STC_TEST(gpu_cublas_entry_points_without_gpu_compute_nothing) {
  fresh("/nonexistent/libcuda.so.1", NULL);
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0};
  stc_rt_memref2 da = {a, a, 0, {2, 2}, {2, 1}};
  stc_rt_memref2 db = {b, b, 0, {2, 2}, {2, 1}};
  stc_rt_memref2 dc = {c, c, 0, {2, 2}, {2, 1}};
  _mlir_ciface_stc_rt_cublas_matmul_f32(&da, &db, &dc);
  STC_CHECK(c[0] == 0 && c[3] == 0);
  stc_error err;
  STC_CHECK_EQ_INT(stc_rt_gpu_last_status(&err), STC_ERR_UNAVAILABLE);
  STC_CHECK(strstr(err.message, "cuBLAS not loaded"));
}

STC_TEST(gpu_symbols_are_registered_for_jit_hosts) {
  size_t count = 0;
  const stc_rt_symbol *symbols = stc_rt_symbols(&count);
  static const char *const wanted[] = {
      "mgpuModuleLoad", "mgpuModuleLoadJIT", "mgpuLaunchKernel",
      "mgpuStreamCreate", "mgpuMemAlloc", "mgpuMemcpy", "mgpuMemset32",
      "_mlir_ciface_stc_rt_cublas_matmul_f32", "stc_rt_gpu_constant"};
  for (size_t w = 0; w < sizeof wanted / sizeof *wanted; w++) {
    bool found = false;
    for (size_t i = 0; i < count; i++)
      found |= strcmp(symbols[i].name, wanted[w]) == 0 && symbols[i].address;
    STC_CHECK(found);
  }
}

/* ---- with a device ---- */

/* p[tid.x] = v + tid.x: hand-written PTX, JIT-compiled for the device. */
static const char fill_ptx[] =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry stc_fill(.param .u64 p, .param .f32 v) {\n"
    "  .reg .b32 %r<2>; .reg .b64 %rd<4>; .reg .f32 %f<3>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.f32 %f1, [v];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mov.u32 %r1, %tid.x;\n"
    "  cvt.rn.f32.u32 %f2, %r1;\n  add.f32 %f2, %f2, %f1;\n"
    "  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd3, %rd2, %rd3;\n"
    "  st.global.f32 [%rd3], %f2;\n  ret;\n}\n";

STC_TEST(gpu_device_identity) {
  require_gpu();
  stc_rt_gpu_device info;
  STC_CHECK_EQ_INT(stc_rt_gpu_device_info(&info, NULL), STC_OK);
  STC_CHECK(info.name[0]);
  STC_CHECK(info.compute_major >= 3);
  STC_CHECK(info.multiprocessors > 0);
  STC_CHECK(info.driver_version >= 10000);
  char fingerprint[256];
  STC_CHECK_EQ_INT(stc_rt_gpu_fingerprint(fingerprint, sizeof fingerprint), STC_OK);
  STC_CHECK(strncmp(fingerprint, "cuda:", 5) == 0);
  STC_CHECK(strstr(fingerprint, ":driver"));
  printf("device: %s\n", fingerprint);
  char tiny[8];
  STC_CHECK_EQ_INT(stc_rt_gpu_fingerprint(tiny, sizeof tiny), STC_ERR_INVALID);
}

STC_TEST(gpu_memory_copies_and_memset_round_trip) {
  require_gpu();
  void *stream = mgpuStreamCreate();
  STC_CHECK(stream);
  float host[256], back[256];
  for (int i = 0; i < 256; i++)
    host[i] = (float)i * 0.5f;
  float *device = mgpuMemAlloc(sizeof host, stream, false);
  STC_CHECK(device);
  mgpuMemcpy(device, host, sizeof host, stream);
  mgpuMemcpy(back, device, sizeof back, stream);
  mgpuStreamSynchronize(stream);
  STC_CHECK(memcmp(host, back, sizeof host) == 0);
  float two = 2.0f;
  unsigned bits;
  memcpy(&bits, &two, sizeof bits);
  mgpuMemset32(device, bits, 256, stream);
  mgpuMemcpy(back, device, sizeof back, stream);
  mgpuStreamSynchronize(stream);
  STC_CHECK(back[0] == 2.0f && back[255] == 2.0f);
  STC_CHECK(mgpuMemAlloc(16, stream, true) == NULL); /* no managed memory */
  mgpuMemFree(device, stream);
  mgpuStreamDestroy(stream);
  STC_CHECK_EQ_INT(stc_rt_gpu_synchronize(NULL), STC_OK);
}

/* One device copy per constant per process (stc-gpu-host-memory's
 * memref.get_global of a constant). */
STC_TEST(gpu_constant_is_copied_once) {
  require_gpu();
  static const float weights[300] = {1, 2, 3, [299] = 7};
  static const float other[4] = {5, 6, 7, 8};
  uintptr_t first = stc_rt_gpu_constant((uintptr_t)weights, sizeof weights);
  STC_CHECK(first != 0);
  STC_CHECK(stc_rt_gpu_constant((uintptr_t)weights, sizeof weights) == first);
  uintptr_t second = stc_rt_gpu_constant((uintptr_t)other, sizeof other);
  STC_CHECK(second != 0 && second != first);
  STC_CHECK(stc_rt_gpu_constant((uintptr_t)weights, sizeof weights) == first);
  STC_CHECK_EQ_INT((int)stc_rt_gpu_constant_count(), 2);
  float back[300];
  STC_CHECK_EQ_INT(stc_rt_gpu_copy(back, (void *)first, sizeof back, NULL), STC_OK);
  STC_CHECK(memcmp(back, weights, sizeof back) == 0);
  STC_CHECK_EQ_INT(stc_rt_gpu_copy(back, (void *)second, sizeof other, NULL), STC_OK);
  STC_CHECK(memcmp(back, other, sizeof other) == 0);
}

STC_TEST(gpu_streams_are_reused) {
  require_gpu();
  void *first = mgpuStreamCreate();
  STC_CHECK(first);
  mgpuStreamDestroy(first);
  void *second = mgpuStreamCreate();
  STC_CHECK(second == first);
  mgpuStreamDestroy(second);
}

STC_TEST(gpu_launch_and_failed_launch) {
  require_gpu();
  void *module = mgpuModuleLoadJIT((void *)fill_ptx, 2);
  STC_CHECK(module);
  void *function = mgpuModuleGetFunction(module, "stc_fill");
  STC_CHECK(function);
  STC_CHECK(mgpuModuleGetFunction(module, "no_such_kernel") == NULL);
  void *stream = mgpuStreamCreate();
  float *device = mgpuMemAlloc(2048 * sizeof(float), stream, false);
  STC_CHECK(device);
  float v = 10.0f;
  void *params[2] = {&device, &v};
  /* 2048 threads per block is over every CUDA device's limit: the launch
   * fails with a status, and the next launch works. */
  mgpuLaunchKernel(function, 1, 1, 1, 2048, 1, 1, 0, stream, params, NULL, 2);
  stc_error err;
  STC_CHECK_EQ_INT(stc_rt_gpu_last_status(&err), STC_ERR_DEVICE);
  STC_CHECK(strstr(err.message, "cuLaunchKernel failed"));
  STC_CHECK(stc_rt_gpu_available(NULL)); /* not sticky */
  mgpuLaunchKernel(function, 1, 1, 1, 128, 1, 1, 0, stream, params, NULL, 2);
  float back[128];
  mgpuMemcpy(back, device, sizeof back, stream);
  mgpuStreamSynchronize(stream);
  for (int i = 0; i < 128; i++)
    STC_CHECK(back[i] == 10.0f + (float)i);
  /* An event-timed launch. */
  stc_rt_gpu_timer *timer = NULL;
  STC_CHECK_EQ_INT(stc_rt_gpu_timer_create(&timer, NULL), STC_OK);
  STC_CHECK_EQ_INT(stc_rt_gpu_timer_start(timer, NULL), STC_OK);
  mgpuLaunchKernel(function, 1, 1, 1, 128, 1, 1, 0, stream, params, NULL, 2);
  double ms = -1;
  STC_CHECK_EQ_INT(stc_rt_gpu_timer_stop(timer, &ms, NULL), STC_OK);
  STC_CHECK(ms >= 0);
  stc_rt_gpu_timer_destroy(timer);
  mgpuMemFree(device, stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
}

STC_TEST(gpu_bad_ptx_is_a_warning_not_a_crash) {
  require_gpu();
  STC_CHECK(mgpuModuleLoadJIT("this is not PTX", 2) == NULL);
  stc_error err;
  STC_CHECK_EQ_INT(stc_rt_gpu_last_status(&err), STC_ERR_DEVICE);
  STC_CHECK(strstr(err.message, "cuModuleLoadDataEx"));
  STC_CHECK(stc_rt_gpu_available(NULL));
}

/* A store to address 0: the kernel faults, the fault surfaces at the next
 * synchronization as CUDA_ERROR_ILLEGAL_ADDRESS, a sticky error: the lane is
 * quarantined and every later call fails fast instead of touching the dead
 * context. (Its own process: ctest runs each test alone.) */
static const char fault_ptx[] =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry stc_fault() {\n"
    "  .reg .b64 %rd<2>; .reg .b32 %r<2>;\n"
    "  mov.u64 %rd1, 0;\n  mov.u32 %r1, 1;\n"
    "  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";

STC_TEST(gpu_device_fault_quarantines_the_lane) {
  require_gpu();
  void *module = mgpuModuleLoadJIT((void *)fault_ptx, 2);
  STC_CHECK(module);
  void *function = mgpuModuleGetFunction(module, "stc_fault");
  STC_CHECK(function);
  void *stream = mgpuStreamCreate();
  mgpuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL, 0);
  mgpuStreamSynchronize(stream);
  stc_error err;
  STC_CHECK_EQ_INT(stc_rt_gpu_last_status(&err), STC_ERR_QUARANTINED);
  STC_CHECK(strstr(err.message, "cuStreamSynchronize failed: CUDA_ERROR_"));
  const char *why = NULL;
  STC_CHECK(!stc_rt_gpu_available(&why));
  STC_CHECK(strstr(why, "quarantined after"));
  STC_CHECK(mgpuMemAlloc(16, stream, false) == NULL);
  void *p = (void *)1;
  STC_CHECK_EQ_INT(stc_rt_gpu_alloc(16, &p, NULL), STC_ERR_UNAVAILABLE);
}

/* C += A B on the device against a double loop, for C row- and
 * column-major, and a strided batch. */
static bool check_matmul(bool c_column_major, int64_t batch) {
  const int64_t m = 37, n = 29, k = 23;
  size_t na = (size_t)(batch * m * k), nb = (size_t)(batch * k * n),
         nc = (size_t)(batch * m * n);
  float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4),
        *out = malloc(nc * 4);
  for (size_t i = 0; i < na; i++)
    a[i] = (float)((i * 7919 + 13) % 2003) / 1001.5f - 1.0f;
  for (size_t i = 0; i < nb; i++)
    b[i] = (float)((i * 104729 + 7) % 1999) / 999.5f - 1.0f;
  for (size_t i = 0; i < nc; i++)
    c[i] = (float)(i % 5);
  float *da, *db, *dc;
  stc_rt_gpu_alloc(na * 4, (void **)&da, NULL);
  stc_rt_gpu_alloc(nb * 4, (void **)&db, NULL);
  stc_rt_gpu_alloc(nc * 4, (void **)&dc, NULL);
  stc_rt_gpu_copy(da, a, na * 4, NULL);
  stc_rt_gpu_copy(db, b, nb * 4, NULL);
  stc_rt_gpu_copy(dc, c, nc * 4, NULL);
  int64_t cs0 = c_column_major ? 1 : n, cs1 = c_column_major ? m : 1;
  if (batch == 1) {
    stc_rt_memref2 ma = {da, da, 0, {m, k}, {k, 1}};
    stc_rt_memref2 mb = {db, db, 0, {k, n}, {1, k}}; /* column-major B */
    stc_rt_memref2 mc = {dc, dc, 0, {m, n}, {cs0, cs1}};
    _mlir_ciface_stc_rt_cublas_matmul_f32(&ma, &mb, &mc);
  } else {
    stc_rt_memref3 ma = {da, da, 0, {batch, m, k}, {m * k, k, 1}};
    stc_rt_memref3 mb = {db, db, 0, {batch, k, n}, {k * n, n, 1}};
    stc_rt_memref3 mc = {dc, dc, 0, {batch, m, n}, {m * n, cs0, cs1}};
    _mlir_ciface_stc_rt_cublas_batch_matmul_f32(&ma, &mb, &mc);
  }
  stc_rt_gpu_copy(out, dc, nc * 4, NULL);
  bool ok = true;
  for (int64_t p = 0; p < batch; p++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        size_t at = (size_t)(p * m * n + i * cs0 + j * cs1);
        double want = c[at];
        for (int64_t q = 0; q < k; q++) {
          double bv = batch == 1 ? b[q + j * k] : b[p * k * n + q * n + j];
          want += (double)a[p * m * k + i * k + q] * bv;
        }
        if (fabs(out[at] - want) > 1e-4 + 1e-4 * fabs(want))
          ok = false;
      }
  stc_rt_gpu_free(da);
  stc_rt_gpu_free(db);
  stc_rt_gpu_free(dc);
  free(a), free(b), free(c), free(out);
  return ok;
}

STC_TEST(gpu_cublas_matmul_matches_a_loop) {
  require_gpu();
  const char *why = NULL;
  if (!stc_rt_cublas_available(&why)) {
    printf("SKIP: cuBLAS not loaded: %s\n", why);
    exit(SKIP_RETURN_CODE);
  }
  STC_CHECK(stc_rt__cublas_ineligible_reason() == NULL);
  STC_CHECK(check_matmul(false, 1));
  STC_CHECK(check_matmul(true, 1));
  STC_CHECK(check_matmul(false, 3));
  STC_CHECK_EQ_INT(stc_rt_gpu_last_status(NULL), STC_OK);
}
