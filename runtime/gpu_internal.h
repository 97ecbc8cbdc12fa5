/* gpu_internal.h - what runtime/gpu.c shares with runtime/cublas.c: the
 * CUDA driver entry points stc uses (declared here, not taken from cuda.h,
 * so that libstc_rt builds where no CUDA toolkit is installed), lazy
 * initialization, and the error path (status + one warning line). */
#ifndef STC_RT_GPU_INTERNAL_H
#define STC_RT_GPU_INTERNAL_H

#include "stc/rt_gpu.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int stc_cu_result; /* CUresult: 0 = CUDA_SUCCESS */
typedef int stc_cu_device;
typedef void *stc_cu_context, *stc_cu_module, *stc_cu_function, *stc_cu_stream,
    *stc_cu_event;
typedef uint64_t stc_cu_pointer; /* CUdeviceptr */

/* The driver entry points, resolved with dlsym by stc_rt__gpu_ready. */
typedef struct stc_cu_api {
  stc_cu_result (*init)(unsigned);
  stc_cu_result (*driver_get_version)(int *);
  stc_cu_result (*device_get_count)(int *);
  stc_cu_result (*device_get)(stc_cu_device *, int);
  stc_cu_result (*device_get_name)(char *, int, stc_cu_device);
  stc_cu_result (*device_get_attribute)(int *, int, stc_cu_device);
  stc_cu_result (*device_total_mem)(size_t *, stc_cu_device);
  stc_cu_result (*primary_ctx_retain)(stc_cu_context *, stc_cu_device);
  stc_cu_result (*ctx_set_current)(stc_cu_context);
  stc_cu_result (*ctx_synchronize)(void);
  stc_cu_result (*module_load_data)(stc_cu_module *, const void *);
  stc_cu_result (*module_load_data_ex)(stc_cu_module *, const void *, unsigned,
                                       int *, void **);
  stc_cu_result (*module_unload)(stc_cu_module);
  stc_cu_result (*module_get_function)(stc_cu_function *, stc_cu_module,
                                       const char *);
  stc_cu_result (*func_set_attribute)(stc_cu_function, int, int);
  stc_cu_result (*launch_kernel)(stc_cu_function, unsigned, unsigned, unsigned,
                                 unsigned, unsigned, unsigned, unsigned,
                                 stc_cu_stream, void **, void **);
  stc_cu_result (*stream_create)(stc_cu_stream *, unsigned);
  stc_cu_result (*stream_destroy)(stc_cu_stream);
  stc_cu_result (*stream_synchronize)(stc_cu_stream);
  stc_cu_result (*stream_wait_event)(stc_cu_stream, stc_cu_event, unsigned);
  stc_cu_result (*event_create)(stc_cu_event *, unsigned);
  stc_cu_result (*event_destroy)(stc_cu_event);
  stc_cu_result (*event_record)(stc_cu_event, stc_cu_stream);
  stc_cu_result (*event_synchronize)(stc_cu_event);
  stc_cu_result (*event_elapsed_time)(float *, stc_cu_event, stc_cu_event);
  stc_cu_result (*mem_alloc)(stc_cu_pointer *, size_t);
  stc_cu_result (*mem_free)(stc_cu_pointer);
  stc_cu_result (*memcpy_async)(stc_cu_pointer, stc_cu_pointer, size_t,
                                stc_cu_stream);
  stc_cu_result (*memcpy_sync)(stc_cu_pointer, stc_cu_pointer, size_t);
  stc_cu_result (*memset_d32_async)(stc_cu_pointer, unsigned, size_t,
                                    stc_cu_stream);
  stc_cu_result (*memset_d16_async)(stc_cu_pointer, unsigned short, size_t,
                                    stc_cu_stream);
  stc_cu_result (*mem_host_register)(void *, size_t, unsigned);
  stc_cu_result (*mem_host_unregister)(void *);
  stc_cu_result (*get_error_name)(stc_cu_result, const char **);
  stc_cu_result (*get_error_string)(stc_cu_result, const char **);
} stc_cu_api;

/* Initializes on first use (thread-safe) and makes the context current on
 * the calling thread. Returns the API, or NULL when no device is usable
 * (stc_rt_gpu_available says why; nothing is printed here). */
const stc_cu_api *stc_rt__gpu_ready(void);

/* Turns a failed driver call into a status: records it as the last status,
 * prints the warning line (rate-limited), quarantines the lane on a sticky
 * error. Returns true when result is success. */
bool stc_rt__gpu_check(stc_cu_result result, const char *call);

/* How many GPU failures (failed driver calls, refused requests) were
 * recorded so far in the process: the GPU trial runner compares it before
 * and after a variant runs to see that a launch failed. */
uint64_t stc_rt__gpu_failures(void);

/* Records a failure that is not a driver call (e.g. "cuBLAS not loaded")
 * with a warning line, same rate limit. */
void stc_rt__gpu_fail(stc_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Test-only: forget everything (driver, device, pool, quarantine, warning
 * count) so that the next call reads the environment again. Streams, events
 * and modules created before are leaked, not destroyed. */
void stc_rt__gpu_reset(void);
void stc_rt__cublas_reset(void);

/* The reason cuBLAS variants are ineligible, or NULL when cuBLAS loads
 * (for dispatch eligibility, like stc_rt__blas_ineligible_reason). */
const char *stc_rt__cublas_ineligible_reason(void);

#endif /* STC_RT_GPU_INTERNAL_H */
