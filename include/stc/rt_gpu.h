/* stc/rt_gpu.h - libstc_rt's GPU layer (DESIGN.md section 5): the CUDA
 * driver API loaded with dlopen, the `mgpu*` functions that MLIR's
 * gpu-to-llvm host code calls, a little host API (availability, device
 * identity, memory, copies, timing) for hosts and benchmarks, and the cuBLAS
 * entry points of cuBLAS variants.
 *
 * Nothing CUDA is linked at build time: libcuda.so.1 ($STC_CUDA_DRIVER_LIBRARY
 * when set) is opened on first use, so a binary built with --target=cuda
 * links and starts on a machine without a GPU or driver, and every CPU path
 * of libstc_rt works there. STC_GPU=off loads nothing.
 *
 * Initialization is lazy and thread-safe: the first call of any function here
 * (often mgpuModuleLoad, from a global constructor before main) loads the
 * driver, initializes it and retains the primary context of the default
 * device (mgpuSetDefaultDevice, else $STC_GPU_DEVICE, else 0). Each calling
 * thread makes that context current once.
 *
 * Errors. The mgpu* functions cannot return a status (their signatures are
 * MLIR's): a failed driver call prints one line on stderr
 *   stc: warning: gpu: <call> failed: <CUDA error name> (<description>)
 * (the first 16 such lines per process, then one line saying that more are
 * suppressed), records the status (stc_rt_gpu_last_status) and returns NULL /
 * does nothing. They never exit or abort. A sticky device error (illegal
 * address, launch failure, ...) marks the device lane quarantined: from then
 * on stc_rt_gpu_available is false and every mgpu* call fails fast.
 *
 * Thread safety: every function may be called from any thread. */
#ifndef STC_RT_GPU_H
#define STC_RT_GPU_H

#include "stc/rt_blas.h"
#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True when a CUDA device is usable (loading and initializing the driver on
 * the first call). *why (may be NULL) gets the reason when false ("STC_GPU=off",
 * the dlopen error, "no CUDA device", the cuInit error, "quarantined after
 * ..."): static storage, valid for the life of the process. */
bool stc_rt_gpu_available(const char **why);

/* The identity of the device in use (DESIGN.md section 5). */
typedef struct stc_rt_gpu_device {
  char name[256];         /* "NVIDIA H200" */
  int ordinal;            /* device index */
  int compute_major;      /* 9 on Hopper */
  int compute_minor;      /* 0 */
  int multiprocessors;    /* SM count, 132 on an H200 */
  int driver_version;     /* cuDriverGetVersion: 13000 = CUDA 13.0 */
  uint64_t total_memory;  /* bytes */
} stc_rt_gpu_device;

/* Fills *out; STC_ERR_UNAVAILABLE (reason in err, may be NULL) without a
 * usable device, STC_ERR_INVALID for a NULL out. */
stc_status stc_rt_gpu_device_info(stc_rt_gpu_device *out, stc_error *err);

/* Writes the GPU part of an environment fingerprint into buf:
 *   "cuda:<name>:sm_<major><minor>:<sms>sm:driver<version>"
 * STC_ERR_UNAVAILABLE without a device, STC_ERR_INVALID when buf is NULL or
 * too small (256 bytes always hold it). */
stc_status stc_rt_gpu_fingerprint(char *buf, size_t size);

/* The status of the last failed GPU call of any thread (STC_OK when none
 * failed); message (may be NULL) gets its one-line description. */
stc_status stc_rt_gpu_last_status(stc_error *message);

/* Device memory (plain cuMemAlloc; never managed memory). *out gets NULL for
 * 0 bytes. stc_rt_gpu_free accepts NULL. */
stc_status stc_rt_gpu_alloc(size_t bytes, void **out, stc_error *err);
stc_status stc_rt_gpu_free(void *device_pointer);

/* A synchronous copy of bytes between any two of host and device memory
 * (unified addressing), complete on return. */
stc_status stc_rt_gpu_copy(void *dst, const void *src, size_t bytes, stc_error *err);

/* Waits for all work on the device (every stream). */
stc_status stc_rt_gpu_synchronize(stc_error *err);

/* GPU time of complete work: a pair of timing events on the legacy default
 * stream, with which every stream the runtime hands out synchronizes, so the
 * interval covers all work issued between start and stop. Owned by the
 * caller; destroy accepts NULL. Not for concurrent use of one timer. */
typedef struct stc_rt_gpu_timer stc_rt_gpu_timer;
stc_status stc_rt_gpu_timer_create(stc_rt_gpu_timer **out, stc_error *err);
void stc_rt_gpu_timer_destroy(stc_rt_gpu_timer *timer);
stc_status stc_rt_gpu_timer_start(stc_rt_gpu_timer *timer, stc_error *err);
/* Records the stop event, waits for it, *milliseconds = the elapsed time. */
stc_status stc_rt_gpu_timer_stop(stc_rt_gpu_timer *timer, double *milliseconds,
                                 stc_error *err);

/* ---- what MLIR's gpu-to-llvm host code and LLVM translation call ----
 * Signatures as MLIR 22 emits them (see docs/gpu.md). Streams are pooled:
 * mgpuStreamDestroy returns a stream to the pool and mgpuStreamCreate reuses
 * it, so the per-operation stream of synchronous gpu ops costs no driver
 * call after warm-up. Handles are the driver's (CUmodule, CUfunction,
 * CUstream, CUevent) as opaque pointers. */
void *mgpuModuleLoad(void *data, size_t gpu_blob_size);
void *mgpuModuleLoadJIT(void *data, int optimization_level);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                      intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                      intptr_t block_z, int32_t shared_memory_bytes,
                      void *stream, void **params, void **extra,
                      size_t params_count);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
/* is_host_shared (managed memory) is refused: NULL and a warning. */
void *mgpuMemAlloc(uint64_t size_bytes, void *stream, bool is_host_shared);
void mgpuMemFree(void *pointer, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t size_bytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuMemHostRegister(void *pointer, uint64_t size_bytes);
void mgpuMemHostUnregister(void *pointer);
void mgpuSetDefaultDevice(int32_t device);

/* The device copy of a constant (memref.get_global of a constant global
 * that kernels read, stc-gpu-host-memory): host is its address, bytes its
 * size. The first call for a (host, bytes) allocates and copies; every
 * later one returns the same copy, so a model called in a loop makes one
 * device copy per constant per process (freed with the process). 0 when
 * the copy cannot be made (no device: the failure is recorded and warned
 * like any other). Thread-safe. */
uintptr_t stc_rt_gpu_constant(uintptr_t host, uint64_t bytes);
/* Constants copied so far (tests). */
size_t stc_rt_gpu_constant_count(void);

/* ---- cuBLAS (runtime/cublas.c) ----
 * libcublas.so.13, .so.12 or .so ($STC_CUBLAS_LIBRARY when set) is opened
 * on first use; STC_CUBLAS=off loads nothing. The entry points compute
 * exactly the linalg ops' semantics (accumulate into C: C += A B, per batch
 * for batch_matmul) on device memory, f32 with IEEE products (cuBLAS's
 * default math mode, no TF32). Operands may be row- or column-major (unit
 * stride on one dimension, positive leading dimension); batch_matmul needs
 * one batch stride per operand. Anything else, or no cuBLAS / no device:
 * nothing is computed, a warning is printed and stc_rt_gpu_last_status says
 * why - cuBLAS variants are eligible only where stc_rt_cublas_available. */
bool stc_rt_cublas_available(const char **why);
void _mlir_ciface_stc_rt_cublas_matmul_f32(stc_rt_memref2 *a, stc_rt_memref2 *b,
                                           stc_rt_memref2 *c);
void _mlir_ciface_stc_rt_cublas_batch_matmul_f32(stc_rt_memref3 *a,
                                                 stc_rt_memref3 *b,
                                                 stc_rt_memref3 *c);

#ifdef __cplusplus
}
#endif

#endif /* STC_RT_GPU_H */
