/* gpu.c - the GPU layer of libstc_rt (stc/rt_gpu.h): the CUDA driver API
 * loaded with dlopen, the mgpu* functions that MLIR's gpu-to-llvm host code
 * and gpu.binary's LLVM translation call, and the host API (availability,
 * device identity, memory, copies, event timing).
 *
 * In:  calls from compiled --target=cuda code (module loads from global
 *      constructors, launches, streams, events, allocations, copies) and
 *      from hosts; $STC_GPU, $STC_GPU_DEVICE, $STC_CUDA_DRIVER_LIBRARY, read
 *      once on first use.
 * Out: driver calls on the primary context of one device; failures as
 *      statuses plus one warning line each (rate-limited), never an exit.
 *
 * Why the pool: synchronous gpu ops lower to "create a stream, enqueue,
 * synchronize, destroy"; creating a stream is a driver call of several
 * microseconds, a launch is about as much, so every launch would pay
 * twice. Pooled streams are created with the default (blocking) flag, so
 * reusing one only adds ordering with earlier work, never removes it. */
#include "gpu_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Driver constants used here (cuda.h values; stable across versions). */
enum {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_EVENT_DEFAULT = 0,
  CU_EVENT_DISABLE_TIMING = 2,
  CU_STREAM_DEFAULT = 0,
};

#define MAX_WARNINGS 16
#define STREAM_POOL_SIZE 64

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool g_done;         /* initialization attempted */
static atomic_bool g_quarantined;  /* a sticky device error happened */
static atomic_int g_warnings;      /* warning lines printed so far */
static atomic_int g_generation;    /* bumped by reset: threads re-bind */
static int g_default_device = -1;  /* mgpuSetDefaultDevice, before init */

static struct {
  bool ok;
  stc_cu_api api;
  stc_cu_device device;
  stc_cu_context context;
  stc_rt_gpu_device info;
  char why[1024];
} g_gpu;

static struct {
  pthread_mutex_t lock;
  stc_cu_stream free[STREAM_POOL_SIZE];
  int count;
} g_streams = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

static struct {
  pthread_mutex_t lock;
  stc_status status;
  char message[512];
} g_last = {PTHREAD_MUTEX_INITIALIZER, STC_OK, ""};

static _Thread_local int t_bound_generation = -1;
static atomic_bool g_unavailable_warned; /* "no usable GPU" said once */

/* ---- errors ---- */

static atomic_uint_fast64_t g_failures; /* every recorded failure */

uint64_t stc_rt__gpu_failures(void) {
  return atomic_load_explicit(&g_failures, memory_order_acquire);
}

static void record(stc_status status, const char *message) {
  atomic_fetch_add_explicit(&g_failures, 1, memory_order_acq_rel);
  pthread_mutex_lock(&g_last.lock);
  g_last.status = status;
  snprintf(g_last.message, sizeof g_last.message, "%s", message);
  pthread_mutex_unlock(&g_last.lock);
  int n = atomic_fetch_add(&g_warnings, 1);
  if (n < MAX_WARNINGS)
    fprintf(stderr, "stc: warning: gpu: %s\n", message);
  else if (n == MAX_WARNINGS)
    fprintf(stderr, "stc: warning: gpu: further GPU warnings suppressed\n");
}

void stc_rt__gpu_fail(stc_status status, const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  record(status, message);
}

/* Errors after which the context is unusable (cuda.h: the device-side
 * faults; the CUDA documentation calls them sticky). */
static bool sticky(stc_cu_result r) {
  return r == 700 || r == 702 || (r >= 714 && r <= 719) || r == 214 || r == 999;
}

bool stc_rt__gpu_check(stc_cu_result result, const char *call) {
  if (result == 0)
    return true;
  const char *name = NULL, *text = NULL;
  if (g_gpu.api.get_error_name)
    g_gpu.api.get_error_name(result, &name);
  if (g_gpu.api.get_error_string)
    g_gpu.api.get_error_string(result, &text);
  char message[512];
  snprintf(message, sizeof message, "%s failed: %s (%s)", call,
           name ? name : "CUDA error", text ? text : "no description");
  if (sticky(result) && !atomic_exchange(&g_quarantined, true)) {
    pthread_mutex_lock(&g_lock);
    snprintf(g_gpu.why, sizeof g_gpu.why, "quarantined after %s", message);
    pthread_mutex_unlock(&g_lock);
    record(STC_ERR_QUARANTINED, message);
    return false;
  }
  record(sticky(result) ? STC_ERR_QUARANTINED : STC_ERR_DEVICE, message);
  return false;
}

stc_status stc_rt_gpu_last_status(stc_error *message) {
  pthread_mutex_lock(&g_last.lock);
  stc_status s = g_last.status;
  if (message) {
    stc_error_clear(message);
    if (s != STC_OK)
      stc_error_set(message, NULL, 0, 0, "%s", g_last.message);
  }
  pthread_mutex_unlock(&g_last.lock);
  return s;
}

/* ---- loading and initialization ---- */

static bool env_off(const char *value) {
  return value && (strcmp(value, "off") == 0 || strcmp(value, "0") == 0 ||
                   strcmp(value, "no") == 0 || strcmp(value, "false") == 0);
}

/* Resolves the first of `names` (NULL-terminated) that the library has. */
static bool resolve(void *handle, void *slot, const char *const *names) {
  for (; *names; names++) {
    void *address = dlsym(handle, *names);
    if (address) {
      memcpy(slot, &address, sizeof address);
      return true;
    }
  }
  return false;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

static bool load_api(void *handle, stc_cu_api *api, char *missing, size_t size) {
  struct {
    void *slot;
    const char *const *names;
  } table[] = {
      {&api->init, NAMES("cuInit")},
      {&api->driver_get_version, NAMES("cuDriverGetVersion")},
      {&api->device_get_count, NAMES("cuDeviceGetCount")},
      {&api->device_get, NAMES("cuDeviceGet")},
      {&api->device_get_name, NAMES("cuDeviceGetName")},
      {&api->device_get_attribute, NAMES("cuDeviceGetAttribute")},
      {&api->device_total_mem, NAMES("cuDeviceTotalMem_v2")},
      {&api->primary_ctx_retain, NAMES("cuDevicePrimaryCtxRetain")},
      {&api->ctx_set_current, NAMES("cuCtxSetCurrent")},
      {&api->ctx_synchronize, NAMES("cuCtxSynchronize")},
      {&api->module_load_data, NAMES("cuModuleLoadData")},
      {&api->module_load_data_ex, NAMES("cuModuleLoadDataEx")},
      {&api->module_unload, NAMES("cuModuleUnload")},
      {&api->module_get_function, NAMES("cuModuleGetFunction")},
      {&api->func_set_attribute, NAMES("cuFuncSetAttribute")},
      {&api->launch_kernel, NAMES("cuLaunchKernel")},
      {&api->stream_create, NAMES("cuStreamCreate")},
      {&api->stream_destroy, NAMES("cuStreamDestroy_v2")},
      {&api->stream_synchronize, NAMES("cuStreamSynchronize")},
      {&api->stream_wait_event, NAMES("cuStreamWaitEvent")},
      {&api->event_create, NAMES("cuEventCreate")},
      {&api->event_destroy, NAMES("cuEventDestroy_v2")},
      {&api->event_record, NAMES("cuEventRecord")},
      {&api->event_synchronize, NAMES("cuEventSynchronize")},
      {&api->event_elapsed_time,
       NAMES("cuEventElapsedTime_v2", "cuEventElapsedTime")},
      {&api->mem_alloc, NAMES("cuMemAlloc_v2")},
      {&api->mem_free, NAMES("cuMemFree_v2")},
      {&api->memcpy_async, NAMES("cuMemcpyAsync")},
      {&api->memcpy_sync, NAMES("cuMemcpy")},
      {&api->memset_d32_async, NAMES("cuMemsetD32Async")},
      {&api->memset_d16_async, NAMES("cuMemsetD16Async")},
      {&api->mem_host_register, NAMES("cuMemHostRegister_v2")},
      {&api->mem_host_unregister, NAMES("cuMemHostUnregister")},
      {&api->get_error_name, NAMES("cuGetErrorName")},
      {&api->get_error_string, NAMES("cuGetErrorString")},
  };
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (!resolve(handle, table[i].slot, table[i].names)) {
      snprintf(missing, size, "the CUDA driver lacks %s", table[i].names[0]);
      return false;
    }
  return true;
}

static void initialize(void) {
  if (env_off(getenv("STC_GPU"))) {
    snprintf(g_gpu.why, sizeof g_gpu.why, "STC_GPU=off");
    return;
  }
  const char *library = getenv("STC_CUDA_DRIVER_LIBRARY");
  if (!library || !*library)
    library = "libcuda.so.1";
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *error = dlerror();
    snprintf(g_gpu.why, sizeof g_gpu.why, "no CUDA driver: %s",
             error ? error : library);
    return;
  }
  stc_cu_api *api = &g_gpu.api;
  if (!load_api(handle, api, g_gpu.why, sizeof g_gpu.why))
    return; /* the handle stays open: harmless, and dlclose races users */
  const char *name = NULL;
  stc_cu_result r = api->init(0);
  if (r != 0) {
    api->get_error_name(r, &name);
    snprintf(g_gpu.why, sizeof g_gpu.why, "cuInit failed: %s",
             name ? name : "CUDA error");
    return;
  }
  int count = 0;
  if (api->device_get_count(&count) != 0 || count == 0) {
    snprintf(g_gpu.why, sizeof g_gpu.why, "no CUDA device");
    return;
  }
  int ordinal = g_default_device;
  const char *chosen = getenv("STC_GPU_DEVICE");
  if (ordinal < 0 && chosen && *chosen)
    ordinal = atoi(chosen);
  if (ordinal < 0)
    ordinal = 0;
  if (ordinal >= count) {
    snprintf(g_gpu.why, sizeof g_gpu.why,
             "CUDA device %d requested, %d present", ordinal, count);
    return;
  }
  if ((r = api->device_get(&g_gpu.device, ordinal)) != 0 ||
      (r = api->primary_ctx_retain(&g_gpu.context, g_gpu.device)) != 0) {
    api->get_error_name(r, &name);
    snprintf(g_gpu.why, sizeof g_gpu.why, "cannot open CUDA device %d: %s",
             ordinal, name ? name : "CUDA error");
    return;
  }
  stc_rt_gpu_device *info = &g_gpu.info;
  info->ordinal = ordinal;
  api->device_get_name(info->name, (int)sizeof info->name - 1, g_gpu.device);
  api->device_get_attribute(&info->compute_major,
                            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                            g_gpu.device);
  api->device_get_attribute(&info->compute_minor,
                            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                            g_gpu.device);
  api->device_get_attribute(&info->multiprocessors,
                            CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                            g_gpu.device);
  api->driver_get_version(&info->driver_version);
  size_t total = 0;
  api->device_total_mem(&total, g_gpu.device);
  info->total_memory = total;
  g_gpu.ok = true;
}

static bool ensure_initialized(void) {
  if (!atomic_load_explicit(&g_done, memory_order_acquire)) {
    pthread_mutex_lock(&g_lock);
    if (!atomic_load_explicit(&g_done, memory_order_relaxed)) {
      initialize();
      atomic_store_explicit(&g_done, true, memory_order_release);
    }
    pthread_mutex_unlock(&g_lock);
  }
  return g_gpu.ok && !atomic_load_explicit(&g_quarantined, memory_order_acquire);
}

const stc_cu_api *stc_rt__gpu_ready(void) {
  if (!ensure_initialized())
    return NULL;
  int generation = atomic_load_explicit(&g_generation, memory_order_acquire);
  if (t_bound_generation != generation) {
    if (!stc_rt__gpu_check(g_gpu.api.ctx_set_current(g_gpu.context),
                           "cuCtxSetCurrent"))
      return NULL;
    t_bound_generation = generation;
  }
  return &g_gpu.api;
}

/* The API for an mgpu* call: NULL (after one warning per process naming
 * why) when no device is usable. */
static const stc_cu_api *ready_for(const char *what) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api) {
    const char *why = NULL;
    stc_rt_gpu_available(&why);
    char message[1200];
    snprintf(message, sizeof message, "%s: no usable GPU: %s%s", what,
             why ? why : "unknown",
             atomic_load(&g_unavailable_warned) ? ""
                                                : " (GPU work is skipped: "
                                                  "results are not computed)");
    if (atomic_exchange(&g_unavailable_warned, true)) {
      pthread_mutex_lock(&g_last.lock); /* the status only: said once */
      g_last.status = STC_ERR_UNAVAILABLE;
      snprintf(g_last.message, sizeof g_last.message, "%.500s", message);
      pthread_mutex_unlock(&g_last.lock);
    } else {
      record(STC_ERR_UNAVAILABLE, message);
    }
  }
  return api;
}

/* Device copies of constants (stc_rt_gpu_constant), by host address. */
typedef struct constant_copy {
  uintptr_t host;
  uint64_t bytes;
  uintptr_t device;
} constant_copy;
static struct {
  pthread_mutex_t lock;
  constant_copy *copies;
  size_t count, capacity;
} g_constants = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

void stc_rt__gpu_reset(void) {
  pthread_mutex_lock(&g_lock);
  memset(&g_gpu, 0, sizeof g_gpu);
  g_default_device = -1;
  atomic_store(&g_quarantined, false);
  atomic_store(&g_warnings, 0);
  atomic_store(&g_unavailable_warned, false);
  atomic_fetch_add(&g_generation, 1);
  atomic_store_explicit(&g_done, false, memory_order_release);
  pthread_mutex_unlock(&g_lock);
  pthread_mutex_lock(&g_streams.lock);
  g_streams.count = 0;
  pthread_mutex_unlock(&g_streams.lock);
  pthread_mutex_lock(&g_constants.lock);
  g_constants.count = 0; /* the copies went with the context's state */
  pthread_mutex_unlock(&g_constants.lock);
  pthread_mutex_lock(&g_last.lock);
  g_last.status = STC_OK;
  g_last.message[0] = 0;
  pthread_mutex_unlock(&g_last.lock);
}

/* ---- host API ---- */

bool stc_rt_gpu_available(const char **why) {
  bool ok = ensure_initialized();
  if (why)
    *why = ok ? NULL : g_gpu.why;
  return ok;
}

static stc_status unavailable(stc_error *err) {
  const char *why = NULL;
  stc_rt_gpu_available(&why);
  stc_error_set(err, NULL, 0, 0, "no usable GPU: %s", why ? why : "unknown");
  return STC_ERR_UNAVAILABLE;
}

/* The last recorded failure as this call's error. */
static stc_status failed(stc_error *err) {
  stc_error message;
  stc_status s = stc_rt_gpu_last_status(&message);
  if (err)
    *err = message;
  return s == STC_OK ? STC_ERR_DEVICE : s;
}

stc_status stc_rt_gpu_device_info(stc_rt_gpu_device *out, stc_error *err) {
  if (!out) {
    stc_error_set(err, NULL, 0, 0, "NULL device info");
    return STC_ERR_INVALID;
  }
  if (!stc_rt_gpu_available(NULL))
    return unavailable(err);
  *out = g_gpu.info;
  return STC_OK;
}

stc_status stc_rt_gpu_fingerprint(char *buf, size_t size) {
  if (!buf || size == 0)
    return STC_ERR_INVALID;
  stc_rt_gpu_device info;
  if (stc_rt_gpu_device_info(&info, NULL) != STC_OK)
    return STC_ERR_UNAVAILABLE;
  int n = snprintf(buf, size, "cuda:%s:sm_%d%d:%dsm:driver%d", info.name,
                   info.compute_major, info.compute_minor, info.multiprocessors,
                   info.driver_version);
  if (n < 0 || (size_t)n >= size) {
    buf[0] = 0;
    return STC_ERR_INVALID;
  }
  return STC_OK;
}

stc_status stc_rt_gpu_alloc(size_t bytes, void **out, stc_error *err) {
  if (!out) {
    stc_error_set(err, NULL, 0, 0, "NULL output pointer");
    return STC_ERR_INVALID;
  }
  *out = NULL;
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api)
    return unavailable(err);
  if (bytes == 0)
    return STC_OK;
  stc_cu_pointer p = 0;
  if (!stc_rt__gpu_check(api->mem_alloc(&p, bytes), "cuMemAlloc"))
    return failed(err);
  *out = (void *)(uintptr_t)p;
  return STC_OK;
}

stc_status stc_rt_gpu_free(void *device_pointer) {
  if (!device_pointer)
    return STC_OK;
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api)
    return STC_ERR_UNAVAILABLE;
  return stc_rt__gpu_check(api->mem_free((stc_cu_pointer)(uintptr_t)device_pointer),
                           "cuMemFree")
             ? STC_OK
             : STC_ERR_DEVICE;
}

stc_status stc_rt_gpu_copy(void *dst, const void *src, size_t bytes, stc_error *err) {
  if (bytes == 0)
    return STC_OK;
  if (!dst || !src) {
    stc_error_set(err, NULL, 0, 0, "NULL copy operand");
    return STC_ERR_INVALID;
  }
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api)
    return unavailable(err);
  if (!stc_rt__gpu_check(api->memcpy_sync((stc_cu_pointer)(uintptr_t)dst,
                                          (stc_cu_pointer)(uintptr_t)src, bytes),
                         "cuMemcpy"))
    return failed(err);
  return STC_OK;
}

stc_status stc_rt_gpu_synchronize(stc_error *err) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api)
    return unavailable(err);
  if (!stc_rt__gpu_check(api->ctx_synchronize(), "cuCtxSynchronize"))
    return failed(err);
  return STC_OK;
}

struct stc_rt_gpu_timer {
  stc_cu_event start, stop;
};

stc_status stc_rt_gpu_timer_create(stc_rt_gpu_timer **out, stc_error *err) {
  if (!out) {
    stc_error_set(err, NULL, 0, 0, "NULL output pointer");
    return STC_ERR_INVALID;
  }
  *out = NULL;
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api)
    return unavailable(err);
  stc_rt_gpu_timer *t = calloc(1, sizeof *t);
  if (!t) {
    stc_error_set(err, NULL, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  if (!stc_rt__gpu_check(api->event_create(&t->start, CU_EVENT_DEFAULT),
                         "cuEventCreate") ||
      !stc_rt__gpu_check(api->event_create(&t->stop, CU_EVENT_DEFAULT),
                         "cuEventCreate")) {
    stc_rt_gpu_timer_destroy(t);
    return failed(err);
  }
  *out = t;
  return STC_OK;
}

void stc_rt_gpu_timer_destroy(stc_rt_gpu_timer *timer) {
  if (!timer)
    return;
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (api) {
    if (timer->start)
      api->event_destroy(timer->start);
    if (timer->stop)
      api->event_destroy(timer->stop);
  }
  free(timer);
}

stc_status stc_rt_gpu_timer_start(stc_rt_gpu_timer *timer, stc_error *err) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api)
    return unavailable(err);
  if (!timer) {
    stc_error_set(err, NULL, 0, 0, "NULL timer");
    return STC_ERR_INVALID;
  }
  if (!stc_rt__gpu_check(api->event_record(timer->start, NULL), "cuEventRecord"))
    return failed(err);
  return STC_OK;
}

stc_status stc_rt_gpu_timer_stop(stc_rt_gpu_timer *timer, double *milliseconds,
                                 stc_error *err) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api)
    return unavailable(err);
  if (!timer || !milliseconds) {
    stc_error_set(err, NULL, 0, 0, "NULL timer or result");
    return STC_ERR_INVALID;
  }
  float ms = 0;
  if (!stc_rt__gpu_check(api->event_record(timer->stop, NULL), "cuEventRecord") ||
      !stc_rt__gpu_check(api->event_synchronize(timer->stop), "cuEventSynchronize") ||
      !stc_rt__gpu_check(api->event_elapsed_time(&ms, timer->start, timer->stop),
                         "cuEventElapsedTime"))
    return failed(err);
  *milliseconds = ms;
  return STC_OK;
}

/* ---- mgpu*: modules and launches ---- */

void mgpuSetDefaultDevice(int32_t device) {
  pthread_mutex_lock(&g_lock);
  bool late = atomic_load(&g_done) && g_gpu.ok && g_gpu.info.ordinal != device;
  if (!atomic_load(&g_done))
    g_default_device = device;
  pthread_mutex_unlock(&g_lock);
  if (late)
    stc_rt__gpu_fail(STC_ERR_INVALID,
                     "mgpuSetDefaultDevice(%d) after initialization on device "
                     "%d: ignored",
                     (int)device, g_gpu.info.ordinal);
}

void *mgpuModuleLoad(void *data, size_t gpu_blob_size) {
  (void)gpu_blob_size; /* a cubin or fatbin carries its own size */
  const stc_cu_api *api = ready_for("mgpuModuleLoad");
  if (!api || !data)
    return NULL;
  stc_cu_module module = NULL;
  if (!stc_rt__gpu_check(api->module_load_data(&module, data), "cuModuleLoadData"))
    return NULL;
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optimization_level) {
  const stc_cu_api *api = ready_for("mgpuModuleLoadJIT");
  if (!api || !data)
    return NULL;
  char log[4096] = "";
  int options[3] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[3] = {(void *)(intptr_t)optimization_level, log,
                     (void *)(uintptr_t)(sizeof log - 1)};
  stc_cu_module module = NULL;
  stc_cu_result r = api->module_load_data_ex(&module, data, 3, options, values);
  if (r != 0) {
    log[sizeof log - 1] = 0;
    for (char *p = log; *p; p++)
      if (*p == '\n')
        *p = ' ';
    char call[4200];
    snprintf(call, sizeof call, "cuModuleLoadDataEx (PTX JIT%s%.4000s)",
             log[0] ? ": " : "", log);
    stc_rt__gpu_check(r, call);
    return NULL;
  }
  return module;
}

void mgpuModuleUnload(void *module) {
  if (!module)
    return;
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api)
    return;
  /* Unloads run from global destructors; when the driver has already shut
   * down (CUDA_ERROR_DEINITIALIZED) the module is gone with it. */
  stc_cu_result r = api->module_unload(module);
  if (r != 4)
    stc_rt__gpu_check(r, "cuModuleUnload");
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api || !module)
    return NULL; /* the load already said why */
  stc_cu_function function = NULL;
  char call[300];
  snprintf(call, sizeof call, "cuModuleGetFunction(%.256s)", name ? name : "");
  if (!stc_rt__gpu_check(api->module_get_function(&function, module, name), call))
    return NULL;
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                      intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                      intptr_t block_z, int32_t shared_memory_bytes,
                      void *stream, void **params, void **extra,
                      size_t params_count) {
  (void)params_count;
  const stc_cu_api *api = ready_for("mgpuLaunchKernel");
  if (!api)
    return;
  if (!function) {
    stc_rt__gpu_fail(STC_ERR_DEVICE, "mgpuLaunchKernel: no kernel function "
                                     "(its module did not load); launch skipped");
    return;
  }
  if (grid_x <= 0 || grid_y <= 0 || grid_z <= 0 || block_x <= 0 ||
      block_y <= 0 || block_z <= 0 || grid_x > UINT32_MAX ||
      grid_y > UINT32_MAX || grid_z > UINT32_MAX || block_x > UINT32_MAX ||
      block_y > UINT32_MAX || block_z > UINT32_MAX) {
    /* An empty grid (a zero-sized loop) is no work; negative is a bug. */
    if (grid_x < 0 || grid_y < 0 || grid_z < 0 || block_x < 0 || block_y < 0 ||
        block_z < 0 || grid_x > UINT32_MAX || grid_y > UINT32_MAX ||
        grid_z > UINT32_MAX || block_x > UINT32_MAX || block_y > UINT32_MAX ||
        block_z > UINT32_MAX)
      stc_rt__gpu_fail(STC_ERR_INVALID,
                       "mgpuLaunchKernel: invalid grid %ldx%ldx%ld / block "
                       "%ldx%ldx%ld; launch skipped",
                       (long)grid_x, (long)grid_y, (long)grid_z, (long)block_x,
                       (long)block_y, (long)block_z);
    return;
  }
  if (shared_memory_bytes > 48 * 1024) {
    int limit = 0;
    api->device_get_attribute(&limit,
                              CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                              g_gpu.device);
    if (shared_memory_bytes > limit) {
      stc_rt__gpu_fail(STC_ERR_INVALID,
                       "mgpuLaunchKernel: %d bytes of shared memory requested, "
                       "the device allows %d; launch skipped",
                       (int)shared_memory_bytes, limit);
      return;
    }
    if (!stc_rt__gpu_check(api->func_set_attribute(
                               function,
                               CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               shared_memory_bytes),
                           "cuFuncSetAttribute"))
      return;
  }
  stc_rt__gpu_check(api->launch_kernel(function, (unsigned)grid_x,
                                       (unsigned)grid_y, (unsigned)grid_z,
                                       (unsigned)block_x, (unsigned)block_y,
                                       (unsigned)block_z,
                                       (unsigned)shared_memory_bytes, stream,
                                       params, extra),
                    "cuLaunchKernel");
}

/* ---- mgpu*: streams and events ---- */

void *mgpuStreamCreate(void) {
  const stc_cu_api *api = ready_for("mgpuStreamCreate");
  if (!api)
    return NULL;
  stc_cu_stream stream = NULL;
  pthread_mutex_lock(&g_streams.lock);
  if (g_streams.count > 0)
    stream = g_streams.free[--g_streams.count];
  pthread_mutex_unlock(&g_streams.lock);
  if (stream)
    return stream;
  if (!stc_rt__gpu_check(api->stream_create(&stream, CU_STREAM_DEFAULT),
                         "cuStreamCreate"))
    return NULL; /* NULL is the legacy default stream: still usable */
  return stream;
}

void mgpuStreamDestroy(void *stream) {
  if (!stream)
    return;
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (!api)
    return;
  pthread_mutex_lock(&g_streams.lock);
  bool pooled = g_streams.count < STREAM_POOL_SIZE;
  if (pooled)
    g_streams.free[g_streams.count++] = stream;
  pthread_mutex_unlock(&g_streams.lock);
  if (!pooled)
    stc_rt__gpu_check(api->stream_destroy(stream), "cuStreamDestroy");
}

void mgpuStreamSynchronize(void *stream) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (api)
    stc_rt__gpu_check(api->stream_synchronize(stream), "cuStreamSynchronize");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (api && event)
    stc_rt__gpu_check(api->stream_wait_event(stream, event, 0), "cuStreamWaitEvent");
}

void *mgpuEventCreate(void) {
  const stc_cu_api *api = ready_for("mgpuEventCreate");
  if (!api)
    return NULL;
  stc_cu_event event = NULL;
  if (!stc_rt__gpu_check(api->event_create(&event, CU_EVENT_DISABLE_TIMING),
                         "cuEventCreate"))
    return NULL;
  return event;
}

void mgpuEventDestroy(void *event) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (api && event)
    stc_rt__gpu_check(api->event_destroy(event), "cuEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (api && event)
    stc_rt__gpu_check(api->event_synchronize(event), "cuEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (api && event)
    stc_rt__gpu_check(api->event_record(event, stream), "cuEventRecord");
}

/* ---- constants ---- */

/* One device copy per (host address, size) for the whole process, made on
 * first use, never freed (a constant lives as long as the program). The
 * table is searched linearly: a model has tens to hundreds of constants
 * and each memref.get_global execution looks one up once. */
uintptr_t stc_rt_gpu_constant(uintptr_t host, uint64_t bytes) {
  if (!host || bytes == 0)
    return 0;
  pthread_mutex_lock(&g_constants.lock);
  uintptr_t device = 0;
  for (size_t i = 0; i < g_constants.count && !device; i++)
    if (g_constants.copies[i].host == host && g_constants.copies[i].bytes == bytes)
      device = g_constants.copies[i].device;
  if (!device && g_constants.count == g_constants.capacity) {
    size_t capacity = g_constants.capacity ? 2 * g_constants.capacity : 64;
    constant_copy *grown =
        realloc(g_constants.copies, capacity * sizeof *grown);
    if (grown) {
      g_constants.copies = grown;
      g_constants.capacity = capacity;
    }
  }
  if (!device) {
    void *p = NULL;
    stc_error err;
    stc_error_clear(&err);
    /* A failure is recorded by the GPU layer; 0 is returned (launches on
     * it are then skipped like any without a device) and nothing cached. */
    if (stc_rt_gpu_alloc((size_t)bytes, &p, &err) == STC_OK && p &&
        stc_rt_gpu_copy(p, (const void *)host, (size_t)bytes, &err) == STC_OK) {
      device = (uintptr_t)p;
      if (g_constants.count < g_constants.capacity)
        g_constants.copies[g_constants.count++] =
            (constant_copy){host, bytes, device};
      /* else: out of host memory for the table; this copy is not shared */
    } else if (p) {
      stc_rt_gpu_free(p);
    }
  }
  pthread_mutex_unlock(&g_constants.lock);
  return device;
}

size_t stc_rt_gpu_constant_count(void) {
  pthread_mutex_lock(&g_constants.lock);
  size_t count = g_constants.count;
  pthread_mutex_unlock(&g_constants.lock);
  return count;
}

/* ---- mgpu*: memory ---- */

void *mgpuMemAlloc(uint64_t size_bytes, void *stream, bool is_host_shared) {
  (void)stream; /* cuMemAlloc is synchronous and stream-independent */
  const stc_cu_api *api = ready_for("mgpuMemAlloc");
  if (!api)
    return NULL;
  if (is_host_shared) {
    stc_rt__gpu_fail(STC_ERR_INVALID, "mgpuMemAlloc: host-shared (managed) "
                                      "memory is not supported by stc");
    return NULL;
  }
  if (size_bytes == 0)
    return NULL;
  stc_cu_pointer p = 0;
  if (!stc_rt__gpu_check(api->mem_alloc(&p, (size_t)size_bytes), "cuMemAlloc"))
    return NULL;
  return (void *)(uintptr_t)p;
}

void mgpuMemFree(void *pointer, void *stream) {
  (void)stream;
  if (!pointer)
    return;
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (api)
    stc_rt__gpu_check(api->mem_free((stc_cu_pointer)(uintptr_t)pointer), "cuMemFree");
}

void mgpuMemcpy(void *dst, void *src, size_t size_bytes, void *stream) {
  if (size_bytes == 0)
    return;
  const stc_cu_api *api = ready_for("mgpuMemcpy");
  if (!api)
    return;
  stc_rt__gpu_check(api->memcpy_async((stc_cu_pointer)(uintptr_t)dst,
                                      (stc_cu_pointer)(uintptr_t)src, size_bytes,
                                      stream),
                    "cuMemcpyAsync");
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  if (count == 0)
    return;
  const stc_cu_api *api = ready_for("mgpuMemset32");
  if (api)
    stc_rt__gpu_check(api->memset_d32_async((stc_cu_pointer)(uintptr_t)dst, value,
                                            count, stream),
                      "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  if (count == 0)
    return;
  const stc_cu_api *api = ready_for("mgpuMemset16");
  if (api)
    stc_rt__gpu_check(api->memset_d16_async((stc_cu_pointer)(uintptr_t)dst, value,
                                            count, stream),
                      "cuMemsetD16Async");
}

void mgpuMemHostRegister(void *pointer, uint64_t size_bytes) {
  const stc_cu_api *api = ready_for("mgpuMemHostRegister");
  if (api && pointer && size_bytes)
    stc_rt__gpu_check(api->mem_host_register(pointer, (size_t)size_bytes, 0),
                      "cuMemHostRegister");
}

void mgpuMemHostUnregister(void *pointer) {
  const stc_cu_api *api = stc_rt__gpu_ready();
  if (api && pointer)
    stc_rt__gpu_check(api->mem_host_unregister(pointer), "cuMemHostUnregister");
}
