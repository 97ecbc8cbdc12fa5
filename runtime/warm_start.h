/* warm_start.h - the warm-start index of libstc_rt (warm_start.c): what the
 * tuner answered on sites' first calls in earlier processes, kept so that a
 * process from a warm cache need not ask again. Internal to libstc_rt and
 * its unit tests; not installed. */
#ifndef STC_RT_WARM_START_H
#define STC_RT_WARM_START_H

#include "stc/rt.h"
#include "stc/rt_dispatch.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum stc_rt__warm_outcome {
  STC_RT__WARM_NONE = 0,  /* no usable answer: ask the tuner */
  STC_RT__WARM_REFERENCE, /* the disk record names the reference */
  STC_RT__WARM_DEFERRED,  /* the record names a winner whose check (or start
                             cost, rent or buy) waits: the first call runs
                             the reference alone and the next asks */
} stc_rt__warm_outcome;

/* An answer: the outcome, and for STC_RT__WARM_DEFERRED the winner (the
 * site's variant index), the share of the reference's time it saves (1 -
 * the record's ratio; 0 when unknown), which rent or buy needs, and whether
 * the decision was trusted (trust_verified: switched to without a check). */
typedef struct stc_rt__warm_answer {
  stc_rt__warm_outcome outcome;
  uint32_t winner;
  double saving;
  bool trusted; /* a trust_verified decision: switched to unchecked */
} stc_rt__warm_answer;

/* A hash of everything of site the tuner's key depends on: its id, op and
 * arguments, and each variant's name, revision, eligibility, flags,
 * workspace and code hash. */
uint64_t stc_rt__warm_site_fingerprint(const stc_rt_site *site);

/* The index's answer for a first call of (site, workload) under config;
 * opens the index on first use (a few system calls). STC_RT__WARM_NONE when
 * the index is unusable (see warm_start.c), stale or silent. Thread-safe. */
stc_rt__warm_answer stc_rt__warm_lookup(const stc_rt_dispatch_config *config,
                                        uint64_t site, const char *workload);

/* Remembers what the tuner answered from the disk cache for (site,
 * workload): the record's creation time bounds the entry by the record's
 * TTL. Written into the index at exit (stc_rt__warm_flush), when due.
 * Thread-safe. */
void stc_rt__warm_note(const stc_rt_dispatch_config *config, uint64_t site,
                       const char *workload, stc_rt__warm_answer answer,
                       int64_t record_created);

/* Writes the index if this process learned answers it lacks and nothing
 * the answers depend on changed while it ran; silent on failure (the next
 * process asks the tuner). Runs at exit; tests call it. */
void stc_rt__warm_flush(void);

/* Forgets the process's view of the index (tests: a new "process"). */
void stc_rt__warm_reset(void);

/* The settle time (seconds, default 2) the records directory's last change
 * must be older than for a process to write the index; tests set 0. */
void stc_rt__warm_set_settle_seconds(int64_t seconds);

#endif /* STC_RT_WARM_START_H */
