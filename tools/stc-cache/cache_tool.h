/* cache_tool.h - what the stc-cache commands share: exit codes, the parsed
 * command line, opening the cache without creating it, a listing of every
 * record file, and the small formatters (ages, durations, keys). Internal to
 * tools/stc-cache; util.c is also linked into the stc-cache-testgen fixture. */
#ifndef STC_CACHE_TOOL_H
#define STC_CACHE_TOOL_H

#include "stc/status.h"
#include "stc/tuner_cache.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes: 1 means "the cache or a record is bad, or an operation
 * failed", 2 means "the command line is wrong". */
enum {
  STC_CACHE_EXIT_OK = 0,
  STC_CACHE_EXIT_FAILURE = 1,
  STC_CACHE_EXIT_USAGE = 2,
};

/* Defaults of DESIGN.md section 6 (policy: capacity 1024, TTL 7 days). */
#define STC_CACHE_TOOL_DEFAULT_CAPACITY 1024u
#define STC_CACHE_TOOL_DEFAULT_TTL (7u * 24u * 3600u)

/* The parsed command line. Strings are borrowed from argv, except
 * directory, which main owns. */
typedef struct stc_cache_tool {
  const char *command;
  const char **args; /* positional arguments after the command */
  size_t num_args;
  char *directory; /* --dir, else the default rule */
  size_t capacity;
  uint64_t ttl_seconds;
  bool long_keys;
  bool objects;      /* --objects: stc-run's object cache, not the records */
  bool capacity_set; /* --capacity given (defaults differ per cache) */
  bool has_now; /* --now: a fixed clock, for tests and reproducible reports */
  int64_t now;
  const char *remote; /* --remote=URL: the fleet tier instead of the disk */
} stc_cache_tool;

/* The commands; each returns an exit code. */
int stc__cache_list(const stc_cache_tool *tool);
int stc__cache_show(const stc_cache_tool *tool);
int stc__cache_verify(const stc_cache_tool *tool);
int stc__cache_prune(const stc_cache_tool *tool);
int stc__cache_clear(const stc_cache_tool *tool);
/* list, show, verify, prune and clear on DIR/objects-v1 (objects.c). */
int stc__cache_objects(const stc_cache_tool *tool);

/* Prints "stc-cache: error: ..." on stderr; returns STC_CACHE_EXIT_FAILURE. */
int stc__cache_fail(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
/* Prints "stc-cache: error: ..." and the --help hint on stderr; returns
 * STC_CACHE_EXIT_USAGE. */
int stc__cache_usage_error(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
/* Prints a library error as "stc-cache: error: FILE: message"; returns
 * STC_CACHE_EXIT_FAILURE. */
int stc__cache_fail_status(stc_status status, const stc_error *err);

/* The time ages and freshness are judged at: --now, else the wall clock. */
int64_t stc__cache_now(const stc_cache_tool *tool);

/* Opens the cache under directory with the tool's clock. When the cache
 * does not exist yet and create is false, returns STC_CACHE_EXIT_OK with
 * *out NULL, so that read-only commands and removals leave no directory
 * behind (stc_disk_cache_open always creates what is missing). Errors are
 * printed. */
int stc__cache_open(const stc_cache_tool *tool, const char *directory,
                    size_t capacity, uint64_t ttl_seconds, bool create,
                    stc_disk_cache **out);

/* One record file as listed. */
typedef struct stc_cache_item {
  char *path;              /* owned */
  const char *name;        /* the file name inside path */
  stc_status status;       /* the library's verdict (STC_OK: record is valid) */
  const char *problem;     /* static text; NULL when valid and fresh */
  stc_cache_record record; /* filled when status is STC_OK */
  bool expired;            /* valid, but older than the tool's TTL */
} stc_cache_item;

typedef struct stc_cache_listing {
  stc_cache_item *items; /* oldest first */
  size_t count;
  int64_t now;
} stc_cache_listing;

/* Lists every record file under directory, judging expiry by the tool's
 * TTL and clock. A cache that does not exist is an empty listing. Errors
 * are printed; the return value is an exit code. */
int stc__cache_collect(const stc_cache_tool *tool, const char *directory,
                       stc_cache_listing *out);
void stc__cache_listing_free(stc_cache_listing *listing);

/* remote.c: the same listing of the records a Redis server holds
 * (tool->remote), items named by their Redis keys; and prune (invalid and
 * expired records; everything: all of them) there. Exit codes; errors are
 * printed. */
int stc__cache_collect_remote(const stc_cache_tool *tool,
                              stc_cache_listing *out);
int stc__cache_remove_remote(const stc_cache_tool *tool, bool everything);
/* Opens the tier at url for a tool: 2 s timeout (unless
 * STC_CACHE_REMOTE_TIMEOUT_MS says otherwise), no backoff. An exit code;
 * errors are printed. */
struct stc_remote_cache;
int stc__cache_remote_open(const char *url, struct stc_remote_cache **out);
/* Deletes the value of kind (an stc_remote_kind) named name from the tier,
 * counting it in *removed; on failure, prints why for path and returns
 * exit 1. */
int stc__cache_remote_remove(struct stc_remote_cache *remote, int kind,
                             const char *name, const char *path,
                             size_t *removed);

/* Makes room for one item more than count in items (*capacity of them,
 * item_size bytes each; doubled, from 16): the array to use from now on,
 * or NULL, items unchanged, when out of memory. */
void *stc__cache_grow(void *items, size_t *capacity, size_t count,
                      size_t item_size);
/* The zeroed slot after listing's last item (*capacity: how many fit now;
 * grown as needed), which the caller fills and then counts; NULL when out
 * of memory. */
stc_cache_item *stc__cache_listing_slot(stc_cache_listing *listing,
                                        size_t *capacity);
/* Marks the valid items of listing older than ttl_seconds expired. */
void stc__cache_mark_expired(stc_cache_listing *listing, uint64_t ttl_seconds);

/* A record's state as one phrase: "fresh", "expired" or the problem. */
const char *stc__cache_item_state(const stc_cache_item *item);

/* ---- util.c (shared with stc-cache-testgen) ---------------------------- */

/* Parses "90", "90s", "15m", "2h", "7d" or "1w" into seconds (> 0). */
bool stc__cache_parse_duration(const char *text, uint64_t *out);
/* Parses a whole decimal integer, optionally negative. */
bool stc__cache_parse_i64(const char *text, int64_t *out);
bool stc__cache_parse_u64(const char *text, uint64_t *out);
/* "5s", "3m", "2h", "4d" (rounded down); "in 5s" for a negative age. */
void stc__cache_format_age(int64_t seconds, char *buf, size_t size);
/* The largest unit up to days that divides exactly: "7d", "90m", "45s". */
void stc__cache_format_duration(uint64_t seconds, char *buf, size_t size);

/* Copies text into buf with every byte outside printable ASCII (and '\')
 * written as \xNN, stopping at max_chars of output (then ending in "...");
 * max_chars 0 means no limit. buf must hold 4 * strlen(text) + 4 bytes, or
 * max_chars + 4 when a limit is given. */
void stc__cache_escape(const char *text, size_t max_chars, char *buf);
/* Size of the buffer stc__cache_escape needs. */
size_t stc__cache_escape_size(const char *text, size_t max_chars);

/* The tuner writes keys as "tag=LENGTH:BYTES;" fields (lib/tuner/tuner.c).
 * Finds field tag's value; false when the key is not in that form or lacks
 * the tag. */
bool stc__cache_key_field(const char *key, const char *tag, const char **value,
                          size_t *length);
/* Walks the fields of a tuner key: *cursor starts at key; returns false at
 * the end or on a malformed key. */
bool stc__cache_key_next(const char **cursor, const char **tag,
                         size_t *tag_length, const char **value,
                         size_t *value_length);

/* Writes into buf (caller frees) the short form of a key shown by list:
 * "OPERATION WORKLOAD" for tuner keys, else the key itself; escaped and cut
 * to max_chars (0: no limit). NULL on allocation failure. */
char *stc__cache_key_summary(const char *key, size_t max_chars);

/* "operator", "graph", "pipeline" or "unknown". */
const char *stc__cache_scope_name(unsigned scope);

#endif /* STC_CACHE_TOOL_H */
