/* stc/status.h - the one status enum every stc library returns, and the
 * located error record that carries a message out of a library (libraries
 * never print; tools turn these into messages and exit codes). */
#ifndef STC_STATUS_H
#define STC_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STC_VERSION_MAJOR 0
#define STC_VERSION_MINOR 1
#define STC_VERSION_PATCH 0
#define STC_VERSION_STRING "0.1.0"

/* Returns the library version as "MAJOR.MINOR.PATCH"; static storage. */
const char *stc_version(void);

typedef enum stc_status {
  STC_OK = 0,
  STC_ERR_INVALID,      /* bad argument, request or policy */
  STC_ERR_NOMEM,        /* an allocation failed; nothing was changed */
  STC_ERR_IO,           /* a file could not be read or written */
  STC_ERR_PARSE,        /* malformed input (file:line:col in the stc_error) */
  STC_ERR_VERSION,      /* a file of an unsupported format version */
  STC_ERR_NOT_FOUND,    /* no such entry (a cache miss, an unknown key) */
  STC_ERR_CORRUPT,      /* a stored record failed its checksum or shape */
  STC_ERR_QUARANTINED,  /* a device lane is quarantined after a device failure */
  STC_ERR_UNAVAILABLE,  /* no validator / zero reference time: keep the reference */
  STC_ERR_DEVICE,       /* a device error (unconfirmed completion) */
  STC_ERR_REJECTED,     /* a candidate was rejected (wrong result, budget, zero time) */
  STC_ERR_PERMISSION,   /* a refused path: symlink, foreign owner, no permission */
} stc_status;

/* Returns a short constant name for a status ("ok", "invalid", ...). */
const char *stc_status_str(stc_status status);

/* A message with an optional location. line == 0 means "no location";
 * file[0] == 0 means "no file". Fixed-size so that it never needs freeing. */
typedef struct stc_error {
  char file[512];
  unsigned line;
  unsigned column;
  char message[1024];
} stc_error;

/* Clears an error record (err may be NULL). */
void stc_error_clear(stc_error *err);

/* Fills err (may be NULL) with a printf-style message and location; file may
 * be NULL. Truncates silently. */
void stc_error_set(stc_error *err, const char *file, unsigned line,
                   unsigned column, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

/* Writes "file:line:col: message" (or the parts that are known) into buf. */
void stc_error_format(const stc_error *err, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* STC_STATUS_H */
