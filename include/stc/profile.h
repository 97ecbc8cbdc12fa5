/* stc/profile.h - hot-path profiles as YAML files (DESIGN.md section 3).
 *
 *   stc-profile: 1
 *   producer: "stc 0.1.0"
 *   environment: "cpu:x86_64:avx2,fma"
 *   created: "2026-12-02T10:00:00Z"
 *   regions:
 *     - id: "main/linalg.matmul#9f2c41d0"
 *       count: 40
 *       total-ns: 1234567
 *       max-ns: 40210
 *       bytes: 7372800      # optional, default 0
 *
 * Reading is all-or-nothing: a malformed file returns STC_ERR_PARSE (or
 * STC_ERR_VERSION) with file:line:col in the stc_error and no profile.
 * Unknown keys are reported through the warning callback and ignored.
 * Thread safety: a profile is a plain value; functions are reentrant. */
#ifndef STC_PROFILE_H
#define STC_PROFILE_H

#include "stc/hints.h"
#include "stc/status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STC_PROFILE_FORMAT_VERSION 1

typedef struct stc_profile_region {
  char *id;
  uint64_t count;
  uint64_t total_ns;
  uint64_t max_ns;
  uint64_t bytes;
} stc_profile_region;

/* All strings and the regions array are owned by the profile. */
typedef struct stc_profile {
  char *producer;    /* may be "" */
  char *environment; /* may be "" */
  char *created;     /* ISO 8601 UTC, may be "" */
  stc_profile_region *regions;
  size_t num_regions;
} stc_profile;

/* Called once per ignored unknown key; `file` is the name given to the reader. */
typedef void (*stc_profile_warning_fn)(void *user, const char *file,
                                       unsigned line, unsigned column,
                                       const char *message);

/* Creates an empty profile with the given header strings (copied; NULL = "").
 * `created` NULL means now. The caller owns *out. */
stc_status stc_profile_create(const char *producer, const char *environment,
                              const char *created, stc_profile **out);
/* Appends a region (id copied). Duplicate ids are STC_ERR_INVALID. */
stc_status stc_profile_add_region(stc_profile *profile, const char *id,
                                  uint64_t count, uint64_t total_ns,
                                  uint64_t max_ns, uint64_t bytes);
/* Destroys a profile; accepts NULL. */
void stc_profile_destroy(stc_profile *profile);

/* Parses a YAML document; `name` is used in error locations. warn may be NULL. */
stc_status stc_profile_read_string(const char *name, const char *text,
                                   size_t length, stc_profile **out,
                                   stc_error *err, stc_profile_warning_fn warn,
                                   void *user);
/* Reads and parses a file. */
stc_status stc_profile_read_file(const char *path, stc_profile **out,
                                 stc_error *err, stc_profile_warning_fn warn,
                                 void *user);

/* Serializes to YAML in the format above; the caller frees *out with free(). */
stc_status stc_profile_write_string(const stc_profile *profile, char **out,
                                    size_t *length, stc_error *err);
/* Writes atomically (temporary file in the same directory, fsync, rename):
 * the destination is either the old file or the complete new one. */
stc_status stc_profile_write_file(const stc_profile *profile, const char *path,
                                  stc_error *err);

/* Merges n profiles: counts, totals and bytes are summed after multiplying by
 * weights[i] (NULL = all 1; each weight finite and > 0), max of max is kept.
 * Header: producer of stc, environment of the first profile if all agree
 * else "mixed", created now. The caller owns *out. */
stc_status stc_profile_merge(const stc_profile *const *profiles,
                             const double *weights, size_t n,
                             stc_profile **out, stc_error *err);

/* Builds a profile from every record of a hints store. */
stc_status stc_profile_from_hints(stc_hints *hints, const char *producer,
                                  const char *environment, stc_profile **out);
/* Accumulates every region of a profile into a hints store. */
stc_status stc_profile_to_hints(const stc_profile *profile, stc_hints *hints);

#ifdef __cplusplus
}
#endif

#endif /* STC_PROFILE_H */
