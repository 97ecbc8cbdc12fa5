/* rt.c - libstc_rt's process-level side: configuration (the profile output
 * path), profile export (merged shards + environment -> YAML through
 * stc/profile.h), the exit-time write, region statistics, and the symbol
 * table JIT hosts register.
 *
 * In: $STC_PROFILE_OUT (read on first use), stc_rt_set_profile_out, the
 * merged samples of region_timer.c. Out: profile files, and at exit at most
 * one warning line on stderr when the profile cannot be written. */
#include "openmp_spin.h"
#include "rt_internal.h"

#include "stc/profile.h"
#include "stc/rt_blas.h"
#include "stc/rt_gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int stc_rt_abi_version(void) { return STC_RT_ABI_VERSION; }

/* ---- configuration ---- */

static pthread_mutex_t g_config_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_config_loaded; /* $STC_PROFILE_OUT read */
static char *g_profile_out;  /* owned; NULL = no exit-time write */
/* The last successful export to g_profile_out and how many samples it held:
 * the exit-time write skips when nothing changed since (stc-run exports
 * explicitly, then exits). */
static char *g_last_export_path;
static uint64_t g_last_export_samples;

/* Caller holds g_config_lock. */
static void load_config_locked(void) {
  if (g_config_loaded)
    return;
  g_config_loaded = true;
  const char *path = getenv("STC_PROFILE_OUT");
  if (path && *path)
    g_profile_out = strdup(path); /* NULL without memory: no write at exit */
}

stc_status stc_rt_set_profile_out(const char *path) {
  char *copy = NULL;
  if (path && !(copy = strdup(path)))
    return STC_ERR_NOMEM;
  pthread_mutex_lock(&g_config_lock);
  g_config_loaded = true;
  free(g_profile_out);
  g_profile_out = copy;
  pthread_mutex_unlock(&g_config_lock);
  return STC_OK;
}

stc_status stc_rt_profile_out(char *buf, size_t size) {
  if (!buf || size == 0)
    return STC_ERR_INVALID;
  stc_status status = STC_OK;
  pthread_mutex_lock(&g_config_lock);
  load_config_locked();
  if (!g_profile_out)
    status = STC_ERR_NOT_FOUND;
  else if (strlen(g_profile_out) >= size)
    status = STC_ERR_INVALID;
  else
    strcpy(buf, g_profile_out);
  pthread_mutex_unlock(&g_config_lock);
  return status;
}

/* ---- export ---- */

/* Writes `hints` as a profile to path. */
static stc_status write_profile(stc_hints *hints, const char *path,
                                stc_error *err) {
  char environment[2048];
  char producer[64];
  stc_profile *profile = NULL;
  if (stc_rt_environment(environment, sizeof environment) != STC_OK)
    environment[0] = 0; /* tags too long: a profile without identity beats none */
  snprintf(producer, sizeof producer, "stc %s", stc_version());
  stc_status status =
      stc_profile_from_hints(hints, producer, environment, &profile);
  if (status != STC_OK) {
    stc_error_set(err, NULL, 0, 0, "cannot build the profile: %s",
                  stc_status_str(status));
    return status;
  }
  status = stc_profile_write_file(profile, path, err);
  stc_profile_destroy(profile);
  if (status != STC_OK && err && !err->message[0])
    stc_error_set(err, NULL, 0, 0, "%s", stc_status_str(status));
  return status;
}

/* Remembers a successful export when it went to the exit-time path. */
static void note_export(const char *path, uint64_t samples) {
  pthread_mutex_lock(&g_config_lock);
  load_config_locked();
  if (g_profile_out && strcmp(g_profile_out, path) == 0) {
    char *copy = strdup(path);
    if (copy) { /* without memory the exit write just happens again */
      free(g_last_export_path);
      g_last_export_path = copy;
      g_last_export_samples = samples;
    }
  }
  pthread_mutex_unlock(&g_config_lock);
}

static bool already_exported(const char *path, uint64_t samples) {
  pthread_mutex_lock(&g_config_lock);
  bool same = g_last_export_path && strcmp(g_last_export_path, path) == 0 &&
              g_last_export_samples == samples;
  pthread_mutex_unlock(&g_config_lock);
  return same;
}

stc_status stc_rt_profile_export(const char *path, stc_error *err) {
  char configured[4096];
  stc_error_clear(err);
  if (!path) {
    stc_status status = stc_rt_profile_out(configured, sizeof configured);
    if (status != STC_OK) {
      stc_error_set(err, NULL, 0, 0,
                    status == STC_ERR_NOT_FOUND
                        ? "no profile output configured (set STC_PROFILE_OUT)"
                        : "the configured profile path is too long");
      return status;
    }
    path = configured;
  }
  stc_hints *hints = NULL;
  uint64_t samples = 0;
  stc_status status = stc_rt__regions_collect(&hints, &samples);
  if (status != STC_OK) {
    stc_error_set(err, NULL, 0, 0, "cannot merge region samples: %s",
                  stc_status_str(status));
    return status;
  }
  status = write_profile(hints, path, err);
  stc_hints_destroy(hints);
  if (status == STC_OK)
    note_export(path, samples);
  return status;
}

/* Runs after main returns (or exit): nobody is left to hand a status to, so
 * a failure becomes one warning line, and nothing here may abort. */
static void write_profile_at_exit(void) {
  char path[4096];
  if (stc_rt_profile_out(path, sizeof path) != STC_OK)
    return;
  stc_hints *hints = NULL;
  uint64_t samples = 0;
  stc_error err;
  stc_error_clear(&err);
  stc_status status = stc_rt__regions_collect(&hints, &samples);
  if (status == STC_OK && already_exported(path, samples)) {
    stc_hints_destroy(hints);
    return;
  }
  if (status == STC_OK)
    status = write_profile(hints, path, &err);
  else
    stc_error_set(&err, NULL, 0, 0, "cannot merge region samples: %s",
                  stc_status_str(status));
  stc_hints_destroy(hints);
  if (status != STC_OK)
    fprintf(stderr, "stc: warning: cannot write profile '%s': %s\n", path,
            err.message[0] ? err.message : stc_status_str(status));
}

static atomic_bool g_exit_hook_installed;

/* See lock_for_fork in region_timer.c: the same for the configuration. */
static void lock_config_for_fork(void) { pthread_mutex_lock(&g_config_lock); }
static void unlock_config_after_fork(void) {
  pthread_mutex_unlock(&g_config_lock);
}

static void install_exit_hook(void) {
  atexit(write_profile_at_exit);
  pthread_atfork(lock_config_for_fork, unlock_config_after_fork,
                 unlock_config_after_fork);
}

/* Registered at load time, so that a program that records nothing still
 * writes its (empty) profile, and before the program's own atexit handlers,
 * so that ours runs after them and sees their samples. region_timer.c calls
 * it too: that reference keeps this file linked into programs that use the
 * static library only through the region timer. */
void stc_rt__exit_hook_install(void) {
  /* Not pthread_once: its completion is a futex wake, a system call in
   * every process's start. A caller that loses the race returns before
   * the winner has registered, which nothing here depends on. */
  if (!atomic_exchange(&g_exit_hook_installed, true))
    install_exit_hook();
}

/* libomp's idle workers spin 200 ms (KMP_BLOCKTIME) after every parallel
 * region before they sleep. On 2 cores a vendor BLAS call made in that
 * window shares a core with the spinning worker: a 512^3 cblas_sgemm right
 * after a small OpenMP loop took 4.5-5.6 ms per call, 2.6-3.8 ms with
 * KMP_BLOCKTIME=0 or 1 (in about 2 of 5 runs at one-thread speed across
 * sites), and the spinning pool also slows an OpenBLAS or OpenMP variant
 * the tuner times next. 1 ms keeps back-to-back regions (a model's
 * elementwise ops, one tile loop after another) on awake workers and
 * lets them sleep soon after the last one, as runtime/blas.c does for
 * OpenBLAS's workers (2^22 cycles). A user's KMP_BLOCKTIME, or an
 * OMP_WAIT_POLICY (which sets the blocktime itself), wins. The cap goes
 * into libomp through its kmp_set_defaults before it starts, not into the
 * environment (openmp_spin.h says where and why). */
bool stc_rt_cap_openmp_spin(void *libomp_handle) {
  return stc_rt__openmp_spin_cap(
      (stc_rt__kmp_set_defaults_fn)dlsym(libomp_handle, "kmp_set_defaults"));
}

/* A libomp the program links (a dependency, so loaded before this
 * constructor runs, and not started yet): a weak reference, null without
 * one, so a process without libomp pays one test. The AOT stub caps the
 * libomp it loads later itself (aot_omp.c). */
extern void kmp_set_defaults(const char *) __attribute__((weak));

__attribute__((constructor)) static void stc_rt_load(void) {
  stc_rt__openmp_spin_cap(kmp_set_defaults);
  stc_rt__exit_hook_install();
}

/* ---- statistics ---- */

stc_status stc_rt_regions_snapshot(stc_hints **out) {
  return stc_rt__regions_collect(out, NULL);
}

bool stc_rt_region_stats(const char *region_id, stc_region_record *out) {
  stc_hints *hints = NULL;
  if (!region_id || !out || stc_rt__regions_collect(&hints, NULL) != STC_OK)
    return false;
  bool found = stc_hints_record_for(hints, region_id, out);
  stc_hints_destroy(hints);
  return found;
}

/* ---- symbols for JIT hosts ---- */

static const stc_rt_symbol g_symbols[] = {
    {STC_RT_REGION_BEGIN_SYMBOL, (void *)stc_rt_region_begin},
    {STC_RT_REGION_END_SYMBOL, (void *)stc_rt_region_end},
    {"stc_rt_profile_export", (void *)stc_rt_profile_export},
    {"stc_rt_regions_reset", (void *)stc_rt_regions_reset},
    {"stc_rt_site_enter", (void *)stc_rt_site_enter},
    /* stc/rt_blas.h: what stc-lower-blas calls */
    {"_mlir_ciface_stc_rt_blas_matmul_f32", (void *)_mlir_ciface_stc_rt_blas_matmul_f32},
    {"_mlir_ciface_stc_rt_blas_matmul_f64", (void *)_mlir_ciface_stc_rt_blas_matmul_f64},
    {"_mlir_ciface_stc_rt_blas_batch_matmul_f32",
     (void *)_mlir_ciface_stc_rt_blas_batch_matmul_f32},
    {"_mlir_ciface_stc_rt_blas_batch_matmul_f64",
     (void *)_mlir_ciface_stc_rt_blas_batch_matmul_f64},
    {"_mlir_ciface_stc_rt_blas_matvec_f32", (void *)_mlir_ciface_stc_rt_blas_matvec_f32},
    {"_mlir_ciface_stc_rt_blas_matvec_f64", (void *)_mlir_ciface_stc_rt_blas_matvec_f64},
    {"_mlir_ciface_stc_rt_blas_vecmat_f32", (void *)_mlir_ciface_stc_rt_blas_vecmat_f32},
    {"_mlir_ciface_stc_rt_blas_vecmat_f64", (void *)_mlir_ciface_stc_rt_blas_vecmat_f64},
    /* stc/rt_gpu.h: what --target=cuda host code and cuBLAS variants call */
    {"mgpuModuleLoad", (void *)mgpuModuleLoad},
    {"mgpuModuleLoadJIT", (void *)mgpuModuleLoadJIT},
    {"mgpuModuleUnload", (void *)mgpuModuleUnload},
    {"mgpuModuleGetFunction", (void *)mgpuModuleGetFunction},
    {"mgpuLaunchKernel", (void *)mgpuLaunchKernel},
    {"mgpuStreamCreate", (void *)mgpuStreamCreate},
    {"mgpuStreamDestroy", (void *)mgpuStreamDestroy},
    {"mgpuStreamSynchronize", (void *)mgpuStreamSynchronize},
    {"mgpuStreamWaitEvent", (void *)mgpuStreamWaitEvent},
    {"mgpuEventCreate", (void *)mgpuEventCreate},
    {"mgpuEventDestroy", (void *)mgpuEventDestroy},
    {"mgpuEventSynchronize", (void *)mgpuEventSynchronize},
    {"mgpuEventRecord", (void *)mgpuEventRecord},
    {"mgpuMemAlloc", (void *)mgpuMemAlloc},
    {"mgpuMemFree", (void *)mgpuMemFree},
    {"mgpuMemcpy", (void *)mgpuMemcpy},
    {"mgpuMemset32", (void *)mgpuMemset32},
    {"mgpuMemset16", (void *)mgpuMemset16},
    {"mgpuMemHostRegister", (void *)mgpuMemHostRegister},
    {"mgpuMemHostUnregister", (void *)mgpuMemHostUnregister},
    {"mgpuSetDefaultDevice", (void *)mgpuSetDefaultDevice},
    {"stc_rt_gpu_constant", (void *)stc_rt_gpu_constant},
    {"_mlir_ciface_stc_rt_cublas_matmul_f32", (void *)_mlir_ciface_stc_rt_cublas_matmul_f32},
    {"_mlir_ciface_stc_rt_cublas_batch_matmul_f32",
     (void *)_mlir_ciface_stc_rt_cublas_batch_matmul_f32},
};

const stc_rt_symbol *stc_rt_symbols(size_t *count) {
  if (count)
    *count = sizeof g_symbols / sizeof *g_symbols;
  return g_symbols;
}
