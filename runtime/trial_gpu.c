/* trial_gpu.c - the GPU trial runner (DESIGN.md sections 5-6): runs the
 * variants of a site whose arguments are device memory (--target=cuda) on
 * isolated device state, for the tuner, check-all and rechecks.
 *
 * In: a site and the caller's argument descriptors (C-interface layout,
 * pointers into device memory). Inputs are shared read-only, as on the CPU.
 * Every OUTPUT/INOUT argument gets two device buffers covering its span
 * (offset + lowest .. highest addressed element): "scratch" (candidate runs,
 * measurements) and "reference outputs" (kept after the reference's first
 * run). Before every run the buffer is restored from the caller's device
 * data by a device-to-device copy, outside the timed interval. A compiled
 * variant returns once its stream is synchronized, so the call is complete
 * when it returns.
 * Out: elapsed GPU time of the complete call (a pair of CUDA events on the
 * legacy default stream, with which every stream of the runtime
 * synchronizes: stc_rt_gpu_timer_*), and comparisons of both spans read back
 * to the host (trial_cpu.c's tolerance rules), within the read-back limit.
 *
 * Short calls. One event pair around one call of 10-50 us measures mostly
 * the launch, the host's wait and the events' own resolution: the tuner's
 * paired ratios of two kernels within a few percent of each other then
 * swapped from run to run (256^3 and 1024^3 on an H200). So a sample is a
 * batch: the variant's first measurement times one call, which sets its
 * batch size (calls per sample, so that a sample lasts at least
 * STC_GPU_SAMPLE_NS, at most STC_GPU_MAX_BATCH calls; 1 for calls that
 * long already), and every later sample restores the scratch buffers once,
 * makes one untimed warm-up call, then times `batch` back-to-back complete
 * calls between one event pair and reports their mean. The calls of a
 * batch repeat on the data the previous call left (C += A B grows C): GPU
 * kernels' time does not depend on the values, and validation runs
 * separately on restored buffers. L2 is handled the same way for every
 * variant: each sample starts right after the restore copy and the warm-up
 * call, so inputs and outputs that fit the L2 are resident (warm), as in a
 * program that calls the site in a loop. The batch sizes differ between
 * variants (each reports time per call), so a pair still compares the
 * reference's and the candidate's complete calls.
 *
 * Failures. The GPU layer never exits: a launch that cannot start (too many
 * threads per block, too much shared memory) is a recorded failure and the
 * kernel does not run. A variant during which a failure is recorded
 * (stc_rt__gpu_failures moved) is rejected with that failure as its note;
 * the program goes on with another variant. A sticky device error
 * quarantines the GPU (stc_rt_gpu_available turns false): STC_ERR_DEVICE,
 * which makes the tuner quarantine the environment's lane. */
#include "dispatch_internal.h"
#include "gpu_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool stc_rt__site_on_device(const stc_rt_site *site) {
  for (uint32_t i = 0; i < site->num_args; i++)
    if (site->args[i].memory == STC_RT_MEMORY_DEVICE)
      return true;
  return false;
}

void stc_rt__gpu_environment(char *environment, size_t size, bool *persistent) {
  char gpu[256];
  size_t used = strnlen(environment, size);
  if (stc_rt_gpu_fingerprint(gpu, sizeof gpu) != STC_OK) {
    snprintf(gpu, sizeof gpu, "unknown");
    *persistent = false; /* a record must name the device it was made on */
  }
  if (used + 5 + strlen(gpu) >= size) {
    *persistent = false;
    return;
  }
  snprintf(environment + used, size - used, ";gpu=%s", gpu);
}

/* One written argument's device copies. */
typedef struct gpu_arg {
  size_t index;
  uint32_t rank, element;
  size_t element_size;
  uint64_t elements;
  int64_t span_first; /* caller element index of the span's first element */
  size_t span_bytes;  /* 0 for an empty memref */
  void *scratch;      /* device, span_bytes */
  void *reference;    /* device, span_bytes */
  int64_t *scratch_descriptor; /* caller's descriptor re-pointed */
  int64_t *reference_descriptor;
} gpu_arg;

struct stc_rt__gpu_trial {
  const stc_rt_site *site;
  void *caller[STC_RT_MAX_SITE_ARGS];
  gpu_arg written[STC_RT_MAX_SITE_ARGS];
  size_t num_written;
  bool have_reference_outputs;
  size_t reference_outputs_of;
  bool served;
  stc_rt_gpu_timer *timer;
  uint32_t *batch; /* per variant: calls per sample, 0 until first measured */
};

uint32_t stc_rt__gpu_batch_size(uint64_t call_ns, uint64_t sample_ns,
                                uint32_t max_batch) {
  if (max_batch <= 1 || call_ns >= sample_ns)
    return 1;
  if (call_ns == 0)
    return max_batch;
  uint64_t batch = (sample_ns + call_ns - 1) / call_ns;
  return batch > max_batch ? max_batch : (uint32_t)batch;
}

static char *aligned_of(const void *descriptor) {
  char *p;
  memcpy(&p, (const int64_t *)descriptor + 1, sizeof p);
  return p;
}

/* The first byte of w's span in the caller's (device) buffer. */
static char *caller_span(const stc_rt__gpu_trial *t, const gpu_arg *w) {
  return aligned_of(t->caller[w->index]) + w->span_first * (int64_t)w->element_size;
}

static stc_status arg_init(gpu_arg *w, size_t index, const stc_rt_arg *arg,
                           void *descriptor, char *message, size_t size) {
  w->index = index;
  w->rank = arg->rank;
  w->element = arg->element;
  w->element_size = stc_rt__element_size(arg->element);
  int64_t lo, hi;
  if (w->element_size == 0 || arg->rank > STC_RT__MAX_RANK ||
      !stc_rt__span(descriptor, arg->rank, &lo, &hi, &w->elements)) {
    snprintf(message, size, "argument %zu: unsupported element type or bad shape",
             index);
    return STC_ERR_INVALID;
  }
  size_t words = 3 + 2 * (size_t)arg->rank;
  w->scratch_descriptor = malloc(words * sizeof(int64_t));
  w->reference_descriptor = malloc(words * sizeof(int64_t));
  if (!w->scratch_descriptor || !w->reference_descriptor) {
    snprintf(message, size, "argument %zu: out of memory", index);
    return STC_ERR_NOMEM;
  }
  memcpy(w->scratch_descriptor, descriptor, words * sizeof(int64_t));
  memcpy(w->reference_descriptor, descriptor, words * sizeof(int64_t));
  if (w->elements == 0)
    return STC_OK;
  uint64_t bytes;
  int64_t offset = ((const int64_t *)descriptor)[2];
  if (__builtin_add_overflow(offset, lo, &w->span_first) ||
      __builtin_mul_overflow((uint64_t)(hi - lo) + 1, (uint64_t)w->element_size,
                             &bytes) ||
      bytes > SIZE_MAX / 2) {
    snprintf(message, size, "argument %zu: span too large", index);
    return STC_ERR_INVALID;
  }
  w->span_bytes = (size_t)bytes;
  stc_error err;
  stc_error_clear(&err);
  if (stc_rt_gpu_alloc(w->span_bytes, &w->scratch, &err) != STC_OK ||
      stc_rt_gpu_alloc(w->span_bytes, &w->reference, &err) != STC_OK) {
    snprintf(message, size, "argument %zu: no device memory for scratch buffers: %s",
             index, err.message);
    return STC_ERR_NOMEM;
  }
  void *pointers[2] = {w->scratch, w->reference};
  int64_t *descriptors[2] = {w->scratch_descriptor, w->reference_descriptor};
  for (int k = 0; k < 2; k++) {
    memcpy(&descriptors[k][0], &pointers[k], sizeof(void *));
    memcpy(&descriptors[k][1], &pointers[k], sizeof(void *));
    descriptors[k][2] = -lo;
  }
  return STC_OK;
}

void stc_rt__gpu_trial_destroy(stc_rt__gpu_trial *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->num_written; i++) {
    stc_rt_gpu_free(t->written[i].scratch);
    stc_rt_gpu_free(t->written[i].reference);
    free(t->written[i].scratch_descriptor);
    free(t->written[i].reference_descriptor);
  }
  stc_rt_gpu_timer_destroy(t->timer);
  free(t->batch);
  free(t);
}

stc_status stc_rt__gpu_trial_create(const stc_rt_site *site,
                                    void *const *descriptors,
                                    stc_rt__gpu_trial **out, char *message,
                                    size_t size) {
  *out = NULL;
  const char *why = NULL;
  if (!stc_rt_gpu_available(&why)) {
    snprintf(message, size, "no usable GPU for a device site: %s",
             why ? why : "unknown reason");
    return STC_ERR_UNAVAILABLE;
  }
  stc_rt__gpu_trial *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(message, size, "out of memory for the GPU trial runner");
    return STC_ERR_NOMEM;
  }
  t->site = site;
  t->batch = calloc(site->num_variants ? site->num_variants : 1, sizeof *t->batch);
  if (!t->batch) {
    snprintf(message, size, "out of memory for the GPU trial runner");
    stc_rt__gpu_trial_destroy(t);
    return STC_ERR_NOMEM;
  }
  stc_error err;
  stc_error_clear(&err);
  if (stc_rt_gpu_timer_create(&t->timer, &err) != STC_OK) {
    snprintf(message, size, "no GPU timer: %s", err.message);
    stc_rt__gpu_trial_destroy(t);
    return STC_ERR_UNAVAILABLE;
  }
  for (size_t i = 0; i < site->num_args; i++) {
    t->caller[i] = descriptors[i];
    if (site->args[i].role == STC_RT_ARG_INPUT)
      continue;
    stc_status status = arg_init(&t->written[t->num_written++], i, &site->args[i],
                                 descriptors[i], message, size);
    if (status != STC_OK) {
      stc_rt__gpu_trial_destroy(t);
      return status;
    }
  }
  *out = t;
  return STC_OK;
}

/* What a failure recorded while `what` ran means for the trial. */
static stc_status failure(const char *what, char *message, size_t size) {
  const char *why = NULL;
  stc_error last;
  stc_error_clear(&last);
  stc_rt_gpu_last_status(&last);
  if (!stc_rt_gpu_available(&why)) {
    if (message)
      snprintf(message, size, "device error during %s: %s", what,
               why ? why : last.message);
    return STC_ERR_DEVICE;
  }
  if (message)
    snprintf(message, size, "%s failed on the GPU: %s", what, last.message);
  return STC_ERR_REJECTED;
}

/* Restores one buffer set from the caller's device data, then runs variant
 * on it: `calls` complete calls back to back (after one untimed warm-up
 * call when more than one); *ns (when wanted) is the GPU time of the
 * timed calls, per call. */
static stc_status run_on(stc_rt__gpu_trial *t, size_t variant, bool reference_set,
                         uint32_t calls, uint64_t *ns, char *message, size_t size) {
  if (t->served)
    return STC_ERR_INVALID;
  void *args[STC_RT_MAX_SITE_ARGS];
  memcpy(args, t->caller, sizeof args);
  stc_error err;
  stc_error_clear(&err);
  for (size_t i = 0; i < t->num_written; i++) {
    gpu_arg *w = &t->written[i];
    if (w->span_bytes &&
        stc_rt_gpu_copy(reference_set ? w->reference : w->scratch,
                        caller_span(t, w), w->span_bytes, &err) != STC_OK)
      return failure("restoring the scratch buffers", message, size);
    args[w->index] = reference_set ? w->reference_descriptor : w->scratch_descriptor;
  }
  char what[160];
  snprintf(what, sizeof what, "variant '%s'", t->site->variants[variant].name);
  uint64_t before = stc_rt__gpu_failures();
  if (calls > 1)
    stc_rt__call_variant(t->site, variant, args);
  double ms = 0;
  bool timed = ns && stc_rt__gpu_failures() == before &&
               stc_rt_gpu_timer_start(t->timer, &err) == STC_OK;
  for (uint32_t c = 0; c < (calls ? calls : 1) && stc_rt__gpu_failures() == before; c++)
    stc_rt__call_variant(t->site, variant, args);
  if (timed)
    timed = stc_rt_gpu_timer_stop(t->timer, &ms, &err) == STC_OK;
  else
    stc_rt_gpu_synchronize(&err);
  if (stc_rt__gpu_failures() != before || (ns && !timed))
    return failure(what, message, size);
  if (ns)
    *ns = (uint64_t)(ms * 1e6 / (calls ? calls : 1) + 0.5);
  return STC_OK;
}

stc_status stc_rt__gpu_trial_measure(stc_rt__gpu_trial *t, size_t variant,
                                     uint64_t *ns, char *message, size_t size) {
  if (!t || variant >= t->site->num_variants || !ns || t->served)
    return STC_ERR_INVALID;
  if (t->batch[variant] == 0) {
    /* The first measurement (a warm-up in the tuner's policy) times one
     * call, which sizes the batches of the later ones. */
    stc_status status = run_on(t, variant, false, 1, ns, message, size);
    if (status != STC_OK)
      return status;
    t->batch[variant] =
        stc_rt__gpu_batch_size(*ns, STC_GPU_SAMPLE_NS, STC_GPU_MAX_BATCH);
    return STC_OK;
  }
  return run_on(t, variant, false, t->batch[variant], ns, message, size);
}

uint32_t stc_rt__gpu_trial_batch(const stc_rt__gpu_trial *t, size_t variant) {
  return t && variant < t->site->num_variants ? t->batch[variant] : 0;
}

/* Output bytes a comparison reads back, per side (saturating). */
static uint64_t readback_bytes(const stc_rt__gpu_trial *t) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < t->num_written; i++) {
    uint64_t arg_bytes;
    if (__builtin_mul_overflow(t->written[i].elements,
                               (uint64_t)t->written[i].element_size, &arg_bytes) ||
        __builtin_add_overflow(bytes, arg_bytes, &bytes))
      bytes = UINT64_MAX;
  }
  return bytes;
}

/* Reads both device spans of every written argument back and compares
 * them: candidate (the scratch buffers, or the caller's spans) against the
 * reference outputs. */
static stc_status read_back_compare(stc_rt__gpu_trial *t, bool caller,
                                    const stc_tolerance *tolerance,
                                    stc_rt__comparison *out, char *message,
                                    size_t size) {
  stc_error err;
  stc_error_clear(&err);
  for (size_t i = 0; i < t->num_written; i++) {
    gpu_arg *w = &t->written[i];
    if (!w->span_bytes)
      continue;
    char *a = malloc(w->span_bytes), *b = malloc(w->span_bytes);
    stc_status status = STC_OK;
    if (!a || !b) {
      if (message)
        snprintf(message, size, "out of memory reading outputs back");
      status = STC_ERR_NOMEM;
    } else if (stc_rt_gpu_copy(a, caller ? caller_span(t, w) : w->scratch,
                               w->span_bytes, &err) != STC_OK ||
               stc_rt_gpu_copy(b, w->reference, w->span_bytes, &err) != STC_OK) {
      status = failure("reading outputs back", message, size);
    } else {
      stc_rt__compare_elements(w->scratch_descriptor, w->rank, w->element,
                               w->elements, a, b, tolerance, out);
    }
    free(a);
    free(b);
    if (status != STC_OK)
      return status;
  }
  return STC_OK;
}

/* Checks the request and the read-back limit (nothing runs when over it),
 * then makes sure the reference's outputs are at hand. */
static stc_status comparison_begin(stc_rt__gpu_trial *t, size_t reference,
                                   size_t candidate,
                                   const stc_tolerance *tolerance,
                                   stc_rt__comparison *out, char *message,
                                   size_t size) {
  memset(out, 0, sizeof *out);
  if (!t || reference >= t->site->num_variants ||
      candidate >= t->site->num_variants || !tolerance || t->served)
    return STC_ERR_INVALID;
  out->compared_bytes = readback_bytes(t);
  out->supported = out->compared_bytes <= tolerance->readback_limit;
  if (out->supported &&
      (!t->have_reference_outputs || t->reference_outputs_of != reference)) {
    stc_status status = run_on(t, reference, true, 1, NULL, message, size);
    if (status != STC_OK)
      return status; /* the reference failed: nothing to validate against */
    t->have_reference_outputs = true;
    t->reference_outputs_of = reference;
  }
  return STC_OK;
}

stc_status stc_rt__gpu_trial_compare(stc_rt__gpu_trial *t, size_t reference,
                                     size_t candidate,
                                     const stc_tolerance *tolerance,
                                     stc_rt__comparison *out, char *message,
                                     size_t size) {
  stc_status status =
      comparison_begin(t, reference, candidate, tolerance, out, message, size);
  if (status != STC_OK || !out->supported)
    return status;
  status = run_on(t, candidate, false, 1, NULL, message, size);
  if (status != STC_OK)
    return status;
  return read_back_compare(t, false, tolerance, out, message, size);
}

stc_status stc_rt__gpu_trial_check_on_call(stc_rt__gpu_trial *t, size_t reference,
                                           size_t candidate,
                                           const stc_tolerance *tolerance,
                                           stc_rt__comparison *out,
                                           char *message, size_t size) {
  stc_status status =
      comparison_begin(t, reference, candidate, tolerance, out, message, size);
  if (status != STC_OK || !out->supported)
    return status;
  /* The candidate on the caller's own arguments: this call's run. */
  uint64_t before = stc_rt__gpu_failures();
  stc_error err;
  stc_error_clear(&err);
  stc_rt__call_variant(t->site, candidate, t->caller);
  stc_rt_gpu_synchronize(&err);
  t->served = true;
  bool failed = stc_rt__gpu_failures() != before;
  if (failed)
    status = failure("the checked variant", message, size);
  else
    status = read_back_compare(t, true, tolerance, out, message, size);
  if (status == STC_ERR_DEVICE)
    return status;
  if (failed || out->mismatches)
    /* The reference's result on the caller's spans, as if it had run. */
    for (size_t i = 0; i < t->num_written; i++) {
      gpu_arg *w = &t->written[i];
      if (w->span_bytes)
        stc_rt_gpu_copy(caller_span(t, w), w->reference, w->span_bytes, &err);
    }
  return status;
}

bool stc_rt__gpu_trial_served(const stc_rt__gpu_trial *t) {
  return t && t->served;
}
