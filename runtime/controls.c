/* controls.c - site dispatch's process-wide side: the configuration (the
 * STC_TUNE* environment controls of DESIGN.md section 5, read once, or
 * stc_rt_dispatch_configure), the one tuner created lazily from it, warnings,
 * and the readable report table.
 *
 * In: the environment (STC_TUNE, STC_CACHE_DIR / XDG_CACHE_HOME / HOME,
 * STC_TUNE_REPORT, STC_TUNE_CHECK_ALL, STC_TUNE_RECHECK_EVERY, every other
 * STC_TUNE_<FIELD> as a tuner policy field). Out: the tuner handed to
 * dispatch.c, and on stderr: one warning per bad control, one when the cache
 * directory cannot be used, report tables on request. */
#include "dispatch_internal.h"
#include "gpu_internal.h"

#include "stc/tuner_cache.h"
#include "stc/tuner_remote.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

void stc_rt__warn(const char *format, ...) {
  char line[1200];
  va_list ap;
  va_start(ap, format);
  vsnprintf(line, sizeof line, format, ap);
  va_end(ap);
  /* One fprintf: lines from racing threads do not interleave. */
  fprintf(stderr, "stc: warning: %s\n", line);
}

/* ---- configuration ---- */

void stc_rt_dispatch_config_init(stc_rt_dispatch_config *config) {
  memset(config, 0, sizeof *config);
  stc_tuner_policy_init(&config->policy);
  config->warm_start = true;
}

static bool parse_flag(const char *name, const char *text, bool *out) {
  static const char *const yes[] = {"1", "true", "yes", "on"};
  static const char *const no[] = {"0", "false", "no", "off", ""};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
    if (strcasecmp(text, yes[i]) == 0)
      return *out = true;
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    if (strcasecmp(text, no[i]) == 0) {
      *out = false;
      return true;
    }
  stc_rt__warn("%s='%.100s' is not a flag (1/0, true/false, yes/no, on/off); "
               "using 0",
               name, text);
  *out = false;
  return false;
}

static void parse_count(const char *name, const char *text, uint64_t *out) {
  char *end = NULL;
  unsigned long long value = 0;
  if (text[0] >= '0' && text[0] <= '9')
    value = strtoull(text, &end, 10);
  if (!end || *end) {
    stc_rt__warn("%s='%.100s' is not a non-negative integer; using 0", name,
                 text);
    value = 0;
  }
  *out = value;
}

/* Controls that are not policy fields (the tags belong to
 * stc_rt_environment). */
static bool is_plain_control(const char *name) {
  static const char *const plain[] = {
      "STC_TUNE",          "STC_TUNE_REPORT",     "STC_TUNE_CHECK_ALL",
      "STC_TUNE_RECHECK_EVERY", "STC_TUNE_BUILD_TAG", "STC_TUNE_DRIVER_TAG",
      "STC_TUNE_CONTEXT_TAG", "STC_TUNE_WARM_START"};
  for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
    if (strcmp(name, plain[i]) == 0)
      return true;
  return false;
}

/* STC_TUNE_<FIELD>=value -> stc_tuner_policy_set("<field>", value). */
static void apply_policy_control(stc_tuner_policy *policy, const char *entry) {
  const char *equals = strchr(entry, '=');
  size_t name_length = (size_t)(equals - entry);
  char name[128], field[128];
  if (name_length >= sizeof name) {
    stc_rt__warn("ignoring over-long control %.60s...", entry);
    return;
  }
  memcpy(name, entry, name_length);
  name[name_length] = 0;
  if (is_plain_control(name))
    return;
  const char *prefix = "STC_TUNE_";
  size_t i = 0;
  for (const char *c = name + strlen(prefix); *c; c++)
    field[i++] = (char)tolower((unsigned char)*c);
  field[i] = 0;
  stc_error err;
  stc_error_clear(&err);
  stc_status status = stc_tuner_policy_set(policy, field, equals + 1, &err);
  if (status == STC_ERR_NOT_FOUND)
    stc_rt__warn("%s: unknown tuning control (ignored)", name);
  else if (status != STC_OK)
    stc_rt__warn("%s: %s; using the default", name, err.message);
}

void stc_rt_dispatch_config_from_environment(stc_rt_dispatch_config *config) {
  stc_rt_dispatch_config_init(config);
  const char *mode = getenv("STC_TUNE");
  if (mode && *mode &&
      stc_tune_mode_parse(mode, &config->policy.mode) != STC_OK) {
    stc_rt__warn("STC_TUNE='%.100s' is not explore, cache-only or off; "
                 "using explore",
                 mode);
    config->policy.mode = STC_MODE_EXPLORE;
  }
  const char *text;
  if ((text = getenv("STC_TUNE_REPORT")))
    parse_flag("STC_TUNE_REPORT", text, &config->print_reports);
  if ((text = getenv("STC_TUNE_CHECK_ALL")))
    parse_flag("STC_TUNE_CHECK_ALL", text, &config->check_all);
  if ((text = getenv("STC_TUNE_RECHECK_EVERY")))
    parse_count("STC_TUNE_RECHECK_EVERY", text, &config->recheck_every);
  if ((text = getenv("STC_TUNE_WARM_START")))
    parse_flag("STC_TUNE_WARM_START", text, &config->warm_start);
  for (char **entry = environ; entry && *entry; entry++)
    if (strncmp(*entry, "STC_TUNE_", 9) == 0 && strchr(*entry, '='))
      apply_policy_control(&config->policy, *entry);
  stc_error err;
  stc_error_clear(&err);
  if (stc_tuner_policy_validate(&config->policy, &err) != STC_OK) {
    /* Each field was valid alone; the combination is not. */
    stc_rt__warn("tuning controls: %s; using the default policy", err.message);
    stc_tune_mode mode_kept = config->policy.mode;
    stc_tuner_policy_init(&config->policy);
    config->policy.mode = mode_kept;
  }
  char *directory = NULL;
  stc_status status = stc_cache_default_directory(&directory, &err);
  if (status == STC_OK && strlen(directory) < sizeof config->cache_directory) {
    strcpy(config->cache_directory, directory);
    config->use_cache = true;
  } else if (status == STC_OK) {
    stc_rt__warn("cache directory '%.200s...' is too long; tuning decisions "
                 "stay in memory",
                 directory);
  } else {
    stc_rt__warn("no cache directory (set STC_CACHE_DIR or HOME); tuning "
                 "decisions stay in memory");
  }
  free(directory);
}

/* ---- the process-wide tuner ---- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_configured;                /* under g_lock */
static stc_rt_dispatch_config g_config;  /* read-only once g_started */
static atomic_bool g_started;            /* dispatch has read g_config */
static _Atomic(stc_tuner *) g_tuner;
static atomic_bool g_cache_warned;
static atomic_bool g_remote_warned;

/* STC_CACHE_REMOTE (README "Fleet cache (Redis)"): the fleet tier under the
 * disk cache. A bad url or option is one warning; an unreachable server is
 * found on first use and warned about once (stc_rt__note_cache_warnings). */
static void attach_remote(stc_tuner *tuner) {
  const char *url = getenv("STC_CACHE_REMOTE");
  if (!url || !url[0])
    return;
  stc_remote_options options;
  stc_remote_options_init(&options);
  stc_error err;
  stc_error_clear(&err);
  if (stc_remote_options_from_environment(&options, &err) != STC_OK)
    stc_rt__warn("%s; using the default", err.message);
  stc_remote_cache *remote = NULL;
  stc_error_clear(&err);
  /* A host that warned about the tier already (stc-run's object tier, for
   * the same url) said enough: one remote warning per process. */
  if (stc_remote_cache_open(url, &options, &remote, &err) != STC_OK) {
    if (!atomic_exchange(&g_remote_warned, true))
      stc_rt__warn("STC_CACHE_REMOTE: %s; using the local cache only",
                   err.message);
    return;
  }
  if (!stc_tuner_set_remote(tuner, remote)) {
    if (!atomic_exchange(&g_remote_warned, true))
      stc_rt__warn("STC_CACHE_REMOTE is set but there is no usable cache "
                   "directory to put it under; not used");
  }
}

stc_status stc_rt_dispatch_configure(const stc_rt_dispatch_config *config,
                                     stc_error *err) {
  stc_error_clear(err);
  if (!config) {
    stc_error_set(err, NULL, 0, 0, "config is required");
    return STC_ERR_INVALID;
  }
  stc_status status = stc_tuner_policy_validate(&config->policy, err);
  if (status != STC_OK)
    return status;
  if (config->use_cache &&
      !memchr(config->cache_directory, 0, sizeof config->cache_directory)) {
    stc_error_set(err, NULL, 0, 0, "cache_directory is not NUL-terminated");
    return STC_ERR_INVALID;
  }
  pthread_mutex_lock(&g_lock);
  if (atomic_load(&g_started)) {
    status = STC_ERR_INVALID;
    stc_error_set(err, NULL, 0, 0,
                  "site dispatch has already started; configure it before "
                  "the first site call");
  } else {
    g_config = *config;
    g_configured = true;
  }
  pthread_mutex_unlock(&g_lock);
  return status;
}

/* Under g_lock: the configuration, read from the environment unless
 * stc_rt_dispatch_configure gave one; fixed from here on. */
static void start_locked(void) {
  if (!g_configured)
    stc_rt_dispatch_config_from_environment(&g_config);
  g_configured = true;
  atomic_store_explicit(&g_started, true, memory_order_release);
}

const stc_rt_dispatch_config *stc_rt__dispatch_config(void) {
  if (!atomic_load_explicit(&g_started, memory_order_acquire)) {
    pthread_mutex_lock(&g_lock);
    start_locked();
    pthread_mutex_unlock(&g_lock);
  }
  return &g_config;
}

stc_tuner *stc_rt__dispatch_tuner(const stc_rt_dispatch_config **config) {
  stc_tuner *tuner = atomic_load_explicit(&g_tuner, memory_order_acquire);
  if (!tuner) {
    pthread_mutex_lock(&g_lock);
    tuner = atomic_load_explicit(&g_tuner, memory_order_relaxed);
    if (!tuner) {
      start_locked();
      stc_error err;
      stc_error_clear(&err);
      const char *directory =
          g_config.use_cache ? g_config.cache_directory : NULL;
      if (stc_tuner_create(&g_config.policy, directory, &tuner, &err) !=
          STC_OK) {
        tuner = NULL; /* dispatch runs references; it will ask again */
      } else {
        stc_tuner_stats stats;
        stc_tuner_stats_get(tuner, &stats);
        if (directory && stats.cache_warnings && !atomic_exchange(&g_cache_warned, true))
          stc_rt__warn("cannot use the cache directory '%s'; tuning "
                       "decisions stay in memory",
                       directory);
        attach_remote(tuner);
        stc_tuner_set_explore_hook(tuner, stc_rt__explore_started, NULL);
        atomic_store_explicit(&g_tuner, tuner, memory_order_release);
      }
    }
    pthread_mutex_unlock(&g_lock);
  }
  if (config)
    *config = &g_config;
  return tuner;
}

void stc_rt__note_cache_warnings(stc_tuner *tuner, uint64_t before) {
  char remote_why[600];
  if (!atomic_load(&g_remote_warned) &&
      stc_tuner_remote_fault(tuner, remote_why, sizeof remote_why) &&
      !atomic_exchange(&g_remote_warned, true))
    stc_rt__warn("remote tuning cache %s; going on with the local cache "
                 "(no further remote warnings)",
                 remote_why);
  stc_tuner_stats stats;
  stc_tuner_stats_get(tuner, &stats);
  if (stats.cache_warnings <= before || atomic_exchange(&g_cache_warned, true))
    return;
  char why[1024];
  if (!stc_tuner_cache_fault(tuner, why, sizeof why))
    snprintf(why, sizeof why, "no space or permission?");
  stc_rt__warn("the tuning cache in '%s' failed (%s); tuning decisions stay in "
               "memory",
               g_config.use_cache ? g_config.cache_directory : "(none)", why);
}

bool stc_rt_claim_remote_warning(void) {
  return !atomic_exchange(&g_remote_warned, true);
}

void stc_rt__controls_reset(void) {
  pthread_mutex_lock(&g_lock);
  stc_tuner_destroy(atomic_exchange(&g_tuner, NULL));
  g_configured = false;
  atomic_store(&g_started, false);
  memset(&g_config, 0, sizeof g_config);
  atomic_store(&g_cache_warned, false);
  atomic_store(&g_remote_warned, false);
  pthread_mutex_unlock(&g_lock);
}

stc_tuner *stc_rt__tuner_if_started(void) {
  return atomic_load_explicit(&g_tuner, memory_order_acquire);
}

/* Stats of the tuner, zero when it does not exist yet. */
void stc_rt__tuner_stats(stc_tuner_stats *out) {
  stc_tuner *tuner = atomic_load_explicit(&g_tuner, memory_order_acquire);
  if (tuner)
    stc_tuner_stats_get(tuner, out);
  else
    memset(out, 0, sizeof *out);
}

stc_status stc_rt_dispatch_reports(stc_tune_report **out, size_t *count) {
  if (!out || !count)
    return STC_ERR_INVALID;
  *out = NULL;
  *count = 0;
  stc_tuner *tuner = atomic_load_explicit(&g_tuner, memory_order_acquire);
  return tuner ? stc_tuner_reports(tuner, out, count) : STC_OK;
}

/* ---- reports ---- */

const char *stc_rt__ineligible_reason(const stc_rt_site *site, size_t index) {
  switch (site->variants[index].eligibility) {
  case STC_RT_ELIGIBLE_ALWAYS:
    return NULL;
  case STC_RT_ELIGIBLE_STATIC_SHAPE:
    /* Only a static site (it has a slot) is known to run compiled shapes. */
    return site->slot ? NULL : "static-shape variant at a dynamic site";
  case STC_RT_ELIGIBLE_BLAS:
    return stc_rt__blas_ineligible_reason();
  case STC_RT_ELIGIBLE_CUBLAS:
    return stc_rt__cublas_ineligible_reason();
  case STC_RT_ELIGIBLE_TF32: {
    /* The policy in force (the tuner exists: a site is being decided). */
    const stc_rt_dispatch_config *config = NULL;
    stc_rt__dispatch_tuner(&config);
    return config && config->policy.allow_tf32
               ? NULL
               : "TF32 variant, not allowed by the policy (f32 results would change "
                 "within tolerance_tf32; STC_TUNE_ALLOW_TF32=1 allows it)";
  }
  }
  return "unknown eligibility";
}

void stc_rt__report_print(const stc_tune_report *r, const stc_rt_site *site,
                          FILE *stream) {
  if (!stream)
    stream = stderr;
  /* Built in memory and written at once so racing reports stay whole. */
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  if (!out)
    return;
  fprintf(out,
          "stc: tuning report\n"
          "  site:     %s\n  workload: %s\n  winner:   %s\n"
          "  elapsed:  %.3f ms%s\n"
          "  trials:   %zu runs\n",
          r->operation ? r->operation : "", r->workload ? r->workload : "",
          r->winner ? r->winner : "", (double)r->elapsed_ns / 1e6,
          r->budget_exhausted ? "  (budget exhausted)" : "", r->trials);
  /* Scripts parse these columns by name: new ones go before the note. */
  fprintf(out, "  %-24s %7s %8s %7s %8s %6s  %s\n", "candidate", "samples",
          "ratio", "noise", "verified", "trials", "note");
  for (size_t i = 0; i < r->num_candidates; i++) {
    const stc_candidate_report *c = &r->candidates[i];
    char ratio[32] = "-", noise[32] = "-";
    if (c->has_ratio) {
      snprintf(ratio, sizeof ratio, "%.3f", c->ratio);
      snprintf(noise, sizeof noise, "%.3f", c->relative_mad);
    }
    const char *reason = NULL;
    for (size_t v = 0; site && c->name && v < site->num_variants; v++)
      if (site->variants[v].name && strcmp(site->variants[v].name, c->name) == 0)
        reason = stc_rt__ineligible_reason(site, v);
    fprintf(out, "  %-24s %7zu %8s %7s %8s %6zu  %s%s%s%s\n",
            c->name ? c->name : "", c->samples, ratio, noise,
            c->verified ? "yes" : "no", c->trials, c->note ? c->note : "",
            reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
  }
  fclose(out);
  fputs(text, stream);
  fflush(stream);
  free(text);
}

void stc_rt_dispatch_reports_print(FILE *stream) {
  stc_tune_report *reports = NULL;
  size_t count = 0;
  if (stc_rt_dispatch_reports(&reports, &count) != STC_OK)
    return;
  for (size_t i = 0; i < count; i++)
    stc_rt__report_print(&reports[i], NULL, stream);
  stc_tune_reports_free(reports, count);
}

const stc_tolerance *stc_rt__variant_tolerance(const stc_rt_site *site, size_t variant,
                                               const stc_tolerance *base,
                                               stc_tolerance *storage) {
  if (!site || variant >= site->num_variants ||
      site->variants[variant].eligibility != STC_RT_ELIGIBLE_TF32)
    return base;
  stc_tolerance_for_tf32(base, storage);
  return storage;
}
