/* trial_cpu.c - the CPU trial runner (DESIGN.md section 5): runs a site's
 * variants on isolated state for the tuner, check-all and rechecks.
 *
 * In: a site and the caller's argument descriptors (C-interface layout).
 * Inputs are shared read-only. Every OUTPUT/INOUT argument gets two private
 * buffers covering its span (offset + lowest .. highest addressed element):
 * "scratch" (candidate runs, measurements) and "reference outputs" (kept
 * after the reference's first run, for validation). Before every run the
 * buffer is restored from the caller's data, outside the timed interval; the
 * caller's own buffer is the pristine copy, since nothing here writes it and
 * its owner is blocked inside stc_rt_site_enter. The one exception is the
 * check of a disk decision on the call it serves (check_on_call): the
 * reference runs on the reference-output buffers, then the candidate on the
 * caller's own arguments, as the call; after that the runner runs nothing
 * more. Out: elapsed times (CLOCK_MONOTONIC around one complete call) and
 * element-wise comparisons with |a - b| <= absolute + relative * |b|
 * (floats), exact (integers).
 *
 * Sites whose arguments are device memory (--target=cuda) are run by the
 * GPU trial runner instead (trial_gpu.c): every function here forwards. */
#include "dispatch_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void (*ciface1)(void *);
typedef void (*ciface2)(void *, void *);
typedef void (*ciface3)(void *, void *, void *);
typedef void (*ciface4)(void *, void *, void *, void *);
typedef void (*ciface5)(void *, void *, void *, void *, void *);
typedef void (*ciface6)(void *, void *, void *, void *, void *, void *);
typedef void (*ciface7)(void *, void *, void *, void *, void *, void *,
                        void *);
typedef void (*ciface8)(void *, void *, void *, void *, void *, void *,
                        void *, void *);

void stc_rt__call_variant(const stc_rt_site *site, size_t variant,
                          void *const *d) {
  void *f = site->variants[variant].ciface;
  switch (site->num_args) {
  case 1: ((ciface1)f)(d[0]); break;
  case 2: ((ciface2)f)(d[0], d[1]); break;
  case 3: ((ciface3)f)(d[0], d[1], d[2]); break;
  case 4: ((ciface4)f)(d[0], d[1], d[2], d[3]); break;
  case 5: ((ciface5)f)(d[0], d[1], d[2], d[3], d[4]); break;
  case 6: ((ciface6)f)(d[0], d[1], d[2], d[3], d[4], d[5]); break;
  case 7: ((ciface7)f)(d[0], d[1], d[2], d[3], d[4], d[5], d[6]); break;
  case 8: ((ciface8)f)(d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]); break;
  default: break; /* dispatch.c never calls with another count */
  }
}

size_t stc_rt__element_size(uint32_t element) {
  switch (element) {
  case STC_RT_F32: case STC_RT_I32: return 4;
  case STC_RT_F64: case STC_RT_I64: return 8;
  case STC_RT_I8: return 1;
  case STC_RT_I16: case STC_RT_F16: case STC_RT_BF16: return 2;
  }
  return 0;
}

const char *stc_rt__element_name(uint32_t element) {
  static const char *const names[] = {"f32", "f64", "i32", "i64",
                                      "i8",  "i16", "f16", "bf16"};
  return element < sizeof names / sizeof *names ? names[element] : "?";
}

/* The descriptor view of the words: allocated, aligned, offset, sizes[rank],
 * strides[rank]. */
typedef struct view {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
} view;

static view view_of(const void *descriptor, uint32_t rank) {
  const int64_t *w = descriptor;
  view v;
  memcpy(&v.aligned, &w[1], sizeof v.aligned);
  v.offset = w[2];
  v.sizes = &w[3];
  v.strides = &w[3 + rank];
  return v;
}

/* One written argument's private copies. */
typedef struct written_arg {
  size_t index;       /* argument index */
  uint32_t rank;
  uint32_t element;
  size_t element_size;
  uint64_t elements;  /* addressed elements (product of sizes) */
  int64_t span_first; /* caller element index of the span's first element */
  size_t span_bytes;  /* 0 for an empty memref */
  void *scratch;      /* span_bytes each, 64-byte aligned; allocated on */
  void *reference;    /* first use (a cached decision may run nothing) */
  int64_t *scratch_descriptor; /* caller's descriptor re-pointed */
  int64_t *reference_descriptor;
} written_arg;

struct stc_rt__trial {
  const stc_rt_site *site;
  void *caller[STC_RT_MAX_SITE_ARGS];
  written_arg written[STC_RT_MAX_SITE_ARGS];
  size_t num_written;
  bool have_reference_outputs;
  size_t reference_outputs_of; /* which variant filled them */
  /* check_on_call ran a variant on the caller's arguments: they are no
   * longer the pristine state, so nothing else may run. */
  bool served;
  char check_message[256]; /* why check_on_call failed, or "" */
  char unready[1200];      /* why a variant could not run (UNAVAILABLE) */
  /* Contended runs (timed_run): how many were timed again, and the time
   * the retakes and the runs kept have cost, which bounds the retakes. */
  size_t contended;
  uint64_t kept_ns, retaken_ns;
  uint64_t *clean_ns; /* per variant: its fastest uncontended run, or 0 */
  stc_rt__gpu_trial *gpu;  /* a device site: everything forwards to it */
};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Span of the elements a descriptor addresses, relative to its offset:
 * [lo, hi]. False on negative sizes or overflow. *elements is 0 for an empty
 * memref. */
static bool span_of(const view *v, uint32_t rank, int64_t *lo, int64_t *hi,
                    uint64_t *elements) {
  *lo = *hi = 0;
  uint64_t count = 1;
  for (uint32_t d = 0; d < rank; d++) {
    if (v->sizes[d] < 0)
      return false;
    if (__builtin_mul_overflow(count, (uint64_t)v->sizes[d], &count))
      return false;
  }
  *elements = count;
  if (count == 0)
    return true;
  for (uint32_t d = 0; d < rank; d++) {
    int64_t extent;
    if (__builtin_mul_overflow(v->sizes[d] - 1, v->strides[d], &extent))
      return false;
    if (extent < 0 ? __builtin_add_overflow(*lo, extent, lo)
                   : __builtin_add_overflow(*hi, extent, hi))
      return false;
  }
  return true;
}

bool stc_rt__span(const void *descriptor, uint32_t rank, int64_t *lo,
                  int64_t *hi, uint64_t *elements) {
  view v = view_of(descriptor, rank);
  return span_of(&v, rank, lo, hi, elements);
}

/* Builds one written argument's buffers and re-pointed descriptors. */
static stc_status written_init(written_arg *w, size_t index,
                               const stc_rt_arg *arg, void *descriptor,
                               char *message, size_t message_size) {
  w->index = index;
  w->rank = arg->rank;
  w->element = arg->element;
  w->element_size = stc_rt__element_size(arg->element);
  view v = view_of(descriptor, arg->rank);
  int64_t lo, hi;
  if (w->element_size == 0 || !span_of(&v, arg->rank, &lo, &hi, &w->elements)) {
    snprintf(message, message_size,
             "argument %zu: unsupported element type or bad shape", index);
    return STC_ERR_INVALID;
  }
  size_t words = 3 + 2 * (size_t)arg->rank;
  w->scratch_descriptor = malloc(words * sizeof(int64_t));
  w->reference_descriptor = malloc(words * sizeof(int64_t));
  if (!w->scratch_descriptor || !w->reference_descriptor)
    goto nomem;
  memcpy(w->scratch_descriptor, descriptor, words * sizeof(int64_t));
  memcpy(w->reference_descriptor, descriptor, words * sizeof(int64_t));
  if (w->elements == 0)
    return STC_OK; /* nothing addressed: the caller's pointers are never used */
  uint64_t span_elements = (uint64_t)(hi - lo) + 1;
  uint64_t bytes;
  if (__builtin_add_overflow(v.offset, lo, &w->span_first) ||
      __builtin_mul_overflow(span_elements, (uint64_t)w->element_size,
                             &bytes) ||
      bytes > SIZE_MAX - 64) {
    snprintf(message, message_size, "argument %zu: span too large", index);
    return STC_ERR_INVALID;
  }
  w->span_bytes = (size_t)bytes;
  /* The span's first element sits at the buffer start: offset' = -lo (the
   * comparisons walk the scratch descriptor's layout, allocated or not). */
  w->scratch_descriptor[2] = w->reference_descriptor[2] = -lo;
  return STC_OK;
nomem:
  snprintf(message, message_size,
           "argument %zu: out of memory for scratch buffers", index);
  return STC_ERR_NOMEM;
}

static void written_free(written_arg *w) {
  free(w->scratch);
  free(w->reference);
  free(w->scratch_descriptor);
  free(w->reference_descriptor);
}

void stc_rt__trial_destroy(stc_rt__trial *trial) {
  if (!trial)
    return;
  for (size_t i = 0; i < trial->num_written; i++)
    written_free(&trial->written[i]);
  free(trial->clean_ns);
  stc_rt__gpu_trial_destroy(trial->gpu);
  free(trial);
}

stc_status stc_rt__trial_create(const stc_rt_site *site,
                                void *const *descriptors, stc_rt__trial **out,
                                char *message, size_t message_size) {
  *out = NULL;
  stc_rt__trial *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(message, message_size, "out of memory for the trial runner");
    return STC_ERR_NOMEM;
  }
  t->site = site;
  if (stc_rt__site_on_device(site)) {
    stc_status status = stc_rt__gpu_trial_create(site, descriptors, &t->gpu,
                                                 message, message_size);
    if (status != STC_OK) {
      free(t);
      return status;
    }
    *out = t;
    return STC_OK;
  }
  t->clean_ns = calloc(site->num_variants ? site->num_variants : 1,
                       sizeof *t->clean_ns);
  if (!t->clean_ns) {
    snprintf(message, message_size, "out of memory for the trial runner");
    stc_rt__trial_destroy(t);
    return STC_ERR_NOMEM;
  }
  for (size_t i = 0; i < site->num_args; i++) {
    t->caller[i] = descriptors[i];
    if (site->args[i].role == STC_RT_ARG_INPUT)
      continue;
    stc_status status =
        written_init(&t->written[t->num_written++], i, &site->args[i],
                     descriptors[i], message, message_size);
    if (status != STC_OK) {
      stc_rt__trial_destroy(t);
      return status;
    }
  }
  *out = t;
  return STC_OK;
}

/* Allocates w's scratch or reference buffer on first use and points its
 * descriptor there; false without memory. */
static bool buffer_ready(written_arg *w, bool reference_set) {
  void **buffer = reference_set ? &w->reference : &w->scratch;
  int64_t *descriptor =
      reference_set ? w->reference_descriptor : w->scratch_descriptor;
  if (*buffer || w->span_bytes == 0)
    return true;
  if (posix_memalign(buffer, 64, w->span_bytes) != 0) {
    *buffer = NULL;
    return false;
  }
  memcpy(&descriptor[0], buffer, sizeof(void *));
  memcpy(&descriptor[1], buffer, sizeof(void *));
  return true;
}

/* ---- contention ---- */

/* A timed run during which the process's threads waited for a CPU is a
 * measurement of the machine's other load, not of the variant: on the
 * 2-core machine of bench/regret.sh, while another session's compile ran
 * (another autogroup: its nice value does not protect us), the OpenMP
 * worker of conv_parallel_decompose_vec waited on a run queue in every run
 * of its trial and the variant timed at 1.1-1.3x the (single-threaded)
 * reference instead of 0.6x, stably (relative MAD 0.01-0.04), so neither
 * the noise limit nor the paired design caught it: the load hurts only the
 * candidate that needs both cores. Linux counts each thread's wait
 * (/proc/self/task/TID/schedstat, second field: ns runnable but not
 * running); a run whose threads waited more than 1/20 of its time plus
 * 50 us (a wake-up) is timed again, STC_CONTENDED_RETAKES times at most
 * and while the retakes have cost less than the runs kept (plus
 * STC_CONTENDED_GRACE_NS), so that a machine loaded for good at most
 * doubles a tune. The run kept is the first uncontended one, or else the
 * fastest. A wait that did not slow the run is no contention: once a
 * variant has an uncontended run, a run within 1/20 of its fastest one is
 * kept whatever its threads waited (libomp's idle workers spin for 200 ms
 * after a parallel region, and under other load their waits came with
 * every run of the serial reference, which they did not slow). */
#define STC_CONTENDED_RETAKES 3u
#define STC_CONTENDED_GRACE_NS 20000000u
/* A variant whose uncontended run took less than this is not watched any
 * more: reading the threads' waits costs 20-40 us a run (it doubled the
 * tune of a 64x128x96 matmul), and preempting so short a run is rare and
 * an outlier that the paired median absorbs. */
#define STC_CONTENDED_MIN_RUN_NS 200000u

static bool cpu_wait_of_process(uint64_t *wait_ns);
static bool (*g_cpu_wait)(uint64_t *wait_ns) = cpu_wait_of_process;
static uint64_t (*g_run_clock)(void) = now_ns;

/* The sum of the process's threads' run-queue waits; false when Linux
 * does not tell (no /proc, no schedstats): then no run is retaken. */
static bool cpu_wait_of_process(uint64_t *wait_ns) {
  static atomic_bool unavailable;
  if (atomic_load_explicit(&unavailable, memory_order_relaxed))
    return false;
  DIR *tasks = opendir("/proc/self/task");
  if (!tasks) {
    atomic_store_explicit(&unavailable, true, memory_order_relaxed);
    return false;
  }
  uint64_t total = 0;
  size_t read_any = 0;
  struct dirent *entry;
  while ((entry = readdir(tasks)) != NULL) {
    if (entry->d_name[0] == '.')
      continue;
    char path[64], text[96];
    snprintf(path, sizeof path, "%.20s/schedstat", entry->d_name);
    int fd = openat(dirfd(tasks), path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue; /* the thread exited meanwhile */
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    unsigned long long running, waiting;
    if (n <= 0)
      continue;
    text[n] = 0;
    if (sscanf(text, "%llu %llu", &running, &waiting) != 2)
      continue;
    total += waiting;
    read_any++;
  }
  closedir(tasks);
  if (!read_any) {
    atomic_store_explicit(&unavailable, true, memory_order_relaxed);
    return false;
  }
  *wait_ns = total;
  return true;
}

void stc_rt__set_trial_sources(bool (*wait)(uint64_t *wait_ns),
                               uint64_t (*clock)(void)) {
  g_cpu_wait = wait ? wait : cpu_wait_of_process;
  g_run_clock = clock ? clock : now_ns;
}

bool stc_rt__contended(uint64_t wait_ns, uint64_t run_ns) {
  return wait_ns > run_ns / 20 + 50000;
}

/* Restores one buffer set from the caller's data and runs variant on it;
 * only the call itself is inside the timed interval. False (nothing ran)
 * without memory for the buffers. */
/* Thread pools spin for a while after each call: OpenBLAS's idle workers
 * (runtime/blas.c caps it at 2^22 cycles, under 3 ms at >= 1.5 GHz) and
 * libomp's (KMP_BLOCKTIME, capped at 1 ms by rt.c). A candidate timed in
 * that window shares the cores with them: on 2 cores an OpenMP variant
 * timed right after matmul_blas ran at half speed and lost. So a candidate
 * (not the reference, which the pairs alternate with BLAS: pausing there
 * would let the workers sleep and charge BLAS a wake-up per pair) waits
 * until the window since the last run of the OTHER pool's variant has
 * passed: a non-BLAS candidate after BLAS, a BLAS candidate after a
 * variant that starts an OpenMP team (the final duel times the two head to
 * head, each right after the other). A few ms per switch of candidate. */
#define STC_BLAS_SPIN_WINDOW_NS 3000000u
#define STC_OMP_SPIN_WINDOW_NS 2000000u
static _Atomic uint64_t g_blas_run_ended_ns;
static _Atomic uint64_t g_omp_run_ended_ns;

static void wait_out_spin(_Atomic uint64_t *ended_ns, uint64_t window_ns) {
  uint64_t ended = atomic_load_explicit(ended_ns, memory_order_relaxed);
  uint64_t now = now_ns();
  if (!ended || now - ended >= window_ns)
    return;
  uint64_t left = window_ns - (now - ended);
  struct timespec pause = {0, (long)left};
  while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
    ;
}

/* waited (may be NULL): the process's threads' run-queue wait during the
 * call (g_cpu_wait), UINT64_MAX when unknown. */
static bool run_on(stc_rt__trial *t, size_t variant, bool reference_set,
                   uint64_t *ns, uint64_t *waited) {
  if (t->served)
    return false; /* callers check first; never restore from a written state */
  for (size_t i = 0; i < t->num_written; i++)
    if (!buffer_ready(&t->written[i], reference_set))
      return false;
  void *args[STC_RT_MAX_SITE_ARGS];
  memcpy(args, t->caller, sizeof args);
  for (size_t i = 0; i < t->num_written; i++) {
    written_arg *w = &t->written[i];
    if (w->span_bytes) {
      view v = view_of(t->caller[w->index], w->rank);
      memcpy(reference_set ? w->reference : w->scratch,
             v.aligned + w->span_first * (int64_t)w->element_size,
             w->span_bytes);
    }
    args[w->index] =
        reference_set ? w->reference_descriptor : w->scratch_descriptor;
  }
  bool blas = t->site->variants[variant].eligibility == STC_RT_ELIGIBLE_BLAS;
  bool omp = !blas && (t->site->variants[variant].flags &
                       STC_RT_VARIANT_STARTS_THREADS);
  if (ns && variant != t->site->reference)
    wait_out_spin(blas ? &g_omp_run_ended_ns : &g_blas_run_ended_ns,
                  blas ? STC_OMP_SPIN_WINDOW_NS : STC_BLAS_SPIN_WINDOW_NS);
  uint64_t wait_before = 0, wait_after = 0;
  bool wait_known = waited && g_cpu_wait(&wait_before);
  uint64_t start = g_run_clock();
  stc_rt__call_variant(t->site, variant, args);
  uint64_t end = g_run_clock();
  if (waited) {
    wait_known = wait_known && g_cpu_wait(&wait_after);
    /* A thread that exited took its waits along: never below zero. */
    *waited = !wait_known              ? UINT64_MAX
              : wait_after > wait_before ? wait_after - wait_before
                                         : 0;
  }
  if (blas || omp)
    atomic_store_explicit(blas ? &g_blas_run_ended_ns : &g_omp_run_ended_ns,
                          end, memory_order_relaxed);
  if (ns)
    *ns = end - start;
  return true;
}

/* A BLAS variant runs only once its library is loaded (runtime/blas.c
 * decides eligibility without loading it); false, with the reason in
 * t->unready, when it does not load. */
static bool variant_ready(stc_rt__trial *t, size_t variant) {
  if (t->site->variants[variant].eligibility != STC_RT_ELIGIBLE_BLAS)
    return true;
  const char *why = NULL;
  if (stc_rt__blas_load(&why))
    return true;
  snprintf(t->unready, sizeof t->unready, "vendor BLAS not loaded: %s",
           why ? why : "unknown reason");
  return false;
}

size_t stc_rt__trial_contended(const stc_rt__trial *trial) {
  return trial ? trial->contended : 0;
}

/* One timed run, taken again while contended (see above). */
static bool timed_run(stc_rt__trial *t, size_t variant, uint64_t *ns) {
  uint64_t fastest = UINT64_MAX;
  for (unsigned attempt = 0;; attempt++) {
    uint64_t run_ns = 0, waited = 0;
    uint64_t clean = t->clean_ns[variant];
    bool watch = !clean || clean >= STC_CONTENDED_MIN_RUN_NS;
    if (!run_on(t, variant, false, &run_ns, watch ? &waited : NULL))
      return false;
    if (!watch)
      waited = UINT64_MAX;
    if (waited == UINT64_MAX || !stc_rt__contended(waited, run_ns) ||
        (clean && run_ns <= clean + clean / 20)) {
      *ns = run_ns;
      if (!clean || run_ns < clean)
        t->clean_ns[variant] = run_ns ? run_ns : 1;
      break;
    }
    t->contended++;
    fastest = run_ns < fastest ? run_ns : fastest;
    if (attempt == STC_CONTENDED_RETAKES ||
        t->retaken_ns + run_ns > t->kept_ns + STC_CONTENDED_GRACE_NS) {
      *ns = fastest;
      break;
    }
    t->retaken_ns += run_ns;
  }
  t->kept_ns += *ns;
  return true;
}

stc_status stc_rt__trial_measure(stc_rt__trial *trial, size_t variant,
                                 uint64_t *ns) {
  if (trial && trial->gpu)
    return stc_rt__gpu_trial_measure(trial->gpu, variant, ns, NULL, 0);
  if (!trial || variant >= trial->site->num_variants || !ns || trial->served)
    return STC_ERR_INVALID;
  if (!variant_ready(trial, variant))
    return STC_ERR_UNAVAILABLE;
  return timed_run(trial, variant, ns) ? STC_OK : STC_ERR_NOMEM;
}

/* ---- comparison ---- */

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    float magnitude = ldexpf((float)mantissa, -24); /* subnormal or zero */
    return sign ? -magnitude : magnitude;
  } else {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static double load_float(const char *p, uint32_t element) {
  switch (element) {
  case STC_RT_F32: { float f; memcpy(&f, p, 4); return f; }
  case STC_RT_F64: { double d; memcpy(&d, p, 8); return d; }
  case STC_RT_F16: { uint16_t h; memcpy(&h, p, 2); return half_to_float(h); }
  default: { /* bf16: the top half of an f32 */
    uint16_t h; memcpy(&h, p, 2);
    uint32_t bits = (uint32_t)h << 16; float f; memcpy(&f, &bits, 4);
    return f;
  }
  }
}

static int64_t load_int(const char *p, uint32_t element) {
  switch (element) {
  case STC_RT_I8: { int8_t v; memcpy(&v, p, 1); return v; }
  case STC_RT_I16: { int16_t v; memcpy(&v, p, 2); return v; }
  case STC_RT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
  default: { int64_t v; memcpy(&v, p, 8); return v; }
  }
}

static bool is_integer(uint32_t element) {
  return element == STC_RT_I8 || element == STC_RT_I16 ||
         element == STC_RT_I32 || element == STC_RT_I64;
}

/* Compares candidate value a with reference value b. */
static void compare_one(const char *a, const char *b, uint32_t element,
                        const stc_tolerance *tol, double allowance,
                        stc_rt__comparison *out) {
  double error;
  bool ok;
  if (is_integer(element)) {
    int64_t x = load_int(a, element), y = load_int(b, element);
    ok = x == y;
    error = fabs((double)x - (double)y);
  } else {
    double x = load_float(a, element), y = load_float(b, element);
    if (!isfinite(y)) { /* a non-finite reference must be matched exactly */
      ok = isnan(y) ? isnan(x) : x == y;
      error = ok ? 0.0 : INFINITY;
    } else if (!isfinite(x)) {
      ok = false;
      error = INFINITY;
    } else {
      error = fabs(x - y);
      ok = error <= tol->absolute + allowance + tol->relative * fabs(y);
    }
  }
  if (!ok)
    out->mismatches++;
  if (error > out->max_error || (isnan(error) && !isnan(out->max_error)))
    out->max_error = error;
}

/* Walks every addressed element of one written argument (an odometer over
 * its sizes; positions relative to each buffer's re-pointed offset): a is
 * the candidate's span (the scratch buffer, or the caller's span), b the
 * reference's. */
static void compare_arg(const written_arg *w, const char *a, const char *b,
                        const stc_tolerance *tol, stc_rt__comparison *out) {
  if (w->elements == 0)
    return;
  view s = view_of(w->scratch_descriptor, w->rank);
  int64_t index[STC_RT__MAX_RANK] = {0};
  /* tol->scaled: an allowance of scaled * mean|reference| per element
   * (TF32 variants: errors scale with the output, not with each element,
   * which may be a cancellation near 0). A first pass finds the mean. */
  double allowance = 0;
  for (int pass = tol->scaled > 0 && !is_integer(w->element) ? 0 : 1; pass < 2; pass++) {
    double sum = 0;
    uint64_t finite = 0;
    memset(index, 0, sizeof index);
    for (uint64_t n = 0; n < w->elements; n++) {
      int64_t position = s.offset;
      for (uint32_t d = 0; d < w->rank; d++)
        position += index[d] * s.strides[d];
      size_t byte = (size_t)position * w->element_size;
      if (pass == 0) {
        double y = load_float(b + byte, w->element);
        if (isfinite(y))
          sum += fabs(y), finite++;
      } else {
        compare_one(a + byte, b + byte, w->element, tol, allowance, out);
      }
      for (uint32_t d = w->rank; d-- > 0;) { /* row-major increment */
        if (++index[d] < s.sizes[d])
          break;
        index[d] = 0;
      }
    }
    if (pass == 0 && finite)
      allowance = tol->scaled * (sum / (double)finite);
  }
}

void stc_rt__compare_elements(const int64_t *descriptor, uint32_t rank,
                              uint32_t element, uint64_t elements,
                              const char *a, const char *b,
                              const stc_tolerance *tolerance,
                              stc_rt__comparison *out) {
  written_arg w = {.rank = rank, .element = element,
                   .element_size = stc_rt__element_size(element),
                   .elements = elements,
                   .scratch_descriptor = (int64_t *)descriptor};
  compare_arg(&w, a, b, tolerance, out);
}

/* The first byte of w's span in the caller's buffer: where the scratch
 * and reference buffers' first byte sits. */
static char *caller_span(const stc_rt__trial *t, const written_arg *w) {
  view v = view_of(t->caller[w->index], w->rank);
  return v.aligned + w->span_first * (int64_t)w->element_size;
}

/* The bytes a comparison reads back (saturating). */
static uint64_t readback_bytes(const stc_rt__trial *t) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < t->num_written; i++) {
    const written_arg *w = &t->written[i];
    uint64_t arg_bytes;
    /* Saturating: a broadcast (stride 0) output may address far more
     * elements than it stores, and must then exceed any limit. */
    if (__builtin_mul_overflow(w->elements, (uint64_t)w->element_size,
                               &arg_bytes) ||
        __builtin_add_overflow(bytes, arg_bytes, &bytes))
      bytes = UINT64_MAX;
  }
  return bytes;
}

/* The start of both comparisons: checks the request and whether the
 * outputs fit the read-back limit (out->supported; nothing runs when not),
 * then makes sure reference's outputs are at hand, run on copies of the
 * still pristine caller state (so an input that aliases an output reads
 * what the call would have read). */
static stc_status comparison_begin(stc_rt__trial *t, size_t reference,
                                   size_t candidate,
                                   const stc_tolerance *tolerance,
                                   stc_rt__comparison *out) {
  memset(out, 0, sizeof *out);
  if (!t || reference >= t->site->num_variants ||
      candidate >= t->site->num_variants || !tolerance || t->served)
    return STC_ERR_INVALID;
  if (!variant_ready(t, reference) || !variant_ready(t, candidate))
    return STC_ERR_UNAVAILABLE; /* nothing ran */
  out->compared_bytes = readback_bytes(t);
  out->supported = out->compared_bytes <= tolerance->readback_limit;
  if (out->supported &&
      (!t->have_reference_outputs || t->reference_outputs_of != reference)) {
    if (!run_on(t, reference, true, NULL, NULL))
      return STC_ERR_NOMEM;
    t->have_reference_outputs = true;
    t->reference_outputs_of = reference;
  }
  return STC_OK;
}

stc_status stc_rt__trial_compare(stc_rt__trial *t, size_t reference,
                                 size_t candidate,
                                 const stc_tolerance *tolerance,
                                 stc_rt__comparison *out) {
  if (t && t->gpu)
    return stc_rt__gpu_trial_compare(t->gpu, reference, candidate, tolerance,
                                     out, NULL, 0);
  stc_status status =
      comparison_begin(t, reference, candidate, tolerance, out);
  if (status != STC_OK || !out->supported)
    return status;
  if (!run_on(t, candidate, false, NULL, NULL))
    return STC_ERR_NOMEM;
  for (size_t i = 0; i < t->num_written; i++)
    compare_arg(&t->written[i], t->written[i].scratch, t->written[i].reference,
                tolerance, out);
  return STC_OK;
}

stc_status stc_rt__trial_check_on_call(stc_rt__trial *t, size_t reference,
                                       size_t candidate,
                                       const stc_tolerance *tolerance,
                                       stc_rt__comparison *out) {
  if (t && t->gpu)
    return stc_rt__gpu_trial_check_on_call(t->gpu, reference, candidate,
                                           tolerance, out, t->check_message,
                                           sizeof t->check_message);
  stc_status status =
      comparison_begin(t, reference, candidate, tolerance, out);
  if (status != STC_OK || !out->supported)
    return status;
  /* The candidate on the caller's own arguments: this call's run. */
  stc_rt__call_variant(t->site, candidate, t->caller);
  t->served = true;
  for (size_t i = 0; i < t->num_written; i++)
    compare_arg(&t->written[i], caller_span(t, &t->written[i]),
                t->written[i].reference, tolerance, out);
  if (out->mismatches)
    for (size_t i = 0; i < t->num_written; i++) {
      /* The whole span: elements the reference did not write are back to
       * what the call found, exactly as if the reference had run on it. */
      const written_arg *w = &t->written[i];
      if (w->span_bytes)
        memcpy(caller_span(t, w), w->reference, w->span_bytes);
    }
  return STC_OK;
}

/* ---- the tuner's callbacks ---- */

/* The tuner's verdict on a comparison: unsupported (the outputs are too
 * large to read back), rejected with the mismatch in message, or passed. */
static stc_status trial_verdict(const stc_rt__comparison *c,
                                stc_validation *outcome, char *message,
                                size_t message_size) {
  if (!c->supported) {
    *outcome = STC_VALIDATION_UNSUPPORTED;
    snprintf(message, message_size,
             "outputs of %" PRIu64 " bytes exceed the read-back limit",
             c->compared_bytes);
    return STC_OK;
  }
  if (c->mismatches) {
    snprintf(message, message_size,
             "wrong result: %" PRIu64 " element(s) outside tolerance, "
             "max error %g",
             c->mismatches, c->max_error);
    return STC_ERR_REJECTED;
  }
  *outcome = STC_VALIDATION_PASSED;
  return STC_OK;
}

/* Passes status on, with the reason a variant could not run. */
static stc_status unready_message(const stc_rt__trial *t, stc_status status,
                                  char *message, size_t message_size) {
  if (status == STC_ERR_UNAVAILABLE)
    snprintf(message, message_size, "%s", t->unready);
  return status;
}

static stc_status trial_validate(void *user, size_t reference,
                                 size_t candidate,
                                 const stc_tolerance *tolerance,
                                 stc_validation *outcome, char *message,
                                 size_t message_size) {
  stc_rt__trial *t = user;
  stc_rt__comparison c;
  stc_tolerance tf32;
  tolerance = stc_rt__variant_tolerance(t->site, candidate, tolerance, &tf32);
  stc_status status =
      t->gpu ? stc_rt__gpu_trial_compare(t->gpu, reference, candidate,
                                         tolerance, &c, message, message_size)
             : stc_rt__trial_compare(t, reference, candidate, tolerance, &c);
  if (status != STC_OK) /* the GPU runner wrote its own message */
    return t->gpu ? status : unready_message(t, status, message, message_size);
  return trial_verdict(&c, outcome, message, message_size);
}

static stc_status trial_check_on_call(void *user, size_t reference,
                                      size_t candidate,
                                      const stc_tolerance *tolerance,
                                      stc_validation *outcome, bool *served,
                                      char *message, size_t message_size) {
  stc_rt__trial *t = user;
  stc_rt__comparison c;
  stc_tolerance tf32;
  tolerance = stc_rt__variant_tolerance(t->site, candidate, tolerance, &tf32);
  *served = false;
  stc_status status =
      stc_rt__trial_check_on_call(t, reference, candidate, tolerance, &c);
  if (t->gpu) {
    *served = stc_rt__trial_served(t);
    if (status != STC_OK) { /* a launch failure or device error: say which */
      snprintf(message, message_size, "%s", t->check_message);
      return status;
    }
  } else {
    if (status != STC_OK)
      return unready_message(t, status, message, message_size);
    *served = t->served;
  }
  status = trial_verdict(&c, outcome, message, message_size);
  /* Kept for the dispatcher's warning (stc_rt__trial_check_message). */
  if (status == STC_ERR_REJECTED)
    snprintf(t->check_message, sizeof t->check_message, "%s", message);
  return status;
}

static stc_status trial_measure(void *user, size_t candidate,
                                uint64_t *elapsed_ns, char *message,
                                size_t message_size) {
  stc_rt__trial *t = user;
  if (t && t->gpu)
    return stc_rt__gpu_trial_measure(t->gpu, candidate, elapsed_ns, message,
                                     message_size);
  return unready_message(t, stc_rt__trial_measure(t, candidate, elapsed_ns),
                         message, message_size);
}

stc_trial_runner stc_rt__trial_runner(stc_rt__trial *trial) {
  stc_trial_runner runner = {trial, trial_validate, trial_measure,
                             trial_check_on_call};
  return runner;
}

bool stc_rt__trial_served(const stc_rt__trial *trial) {
  if (trial && trial->gpu)
    return stc_rt__gpu_trial_served(trial->gpu);
  return trial && trial->served;
}

const char *stc_rt__trial_check_message(const stc_rt__trial *trial) {
  return trial ? trial->check_message : "";
}
