/* wins.h - internal to lib/tuner (not installed): what stc_tuner_win_counts
 * needs besides the tuner's state: reading fields of a tuner cache key,
 * the disk records' winners read once, and a tally of winners by name. */
#ifndef STC_TUNER_WINS_H
#define STC_TUNER_WINS_H

#include "stc/tuner.h"
#include "stc/tuner_cache.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Finds the first field `tag` of a key written as "tag=<length>:<bytes>;"
 * fields (tuner.c's write_key): *value points into key, *length is its
 * length. False when absent or when the key is malformed before it. */
bool stc__tuner_key_field(const char *key, const char *tag,
                          const char **value, size_t *length);

/* True when key's operation has kind `kind` (the text after the last '|')
 * and, unless environment is NULL, its environment is environment. */
bool stc__tuner_key_matches(const char *key, const char *kind,
                            const char *environment);

/* One disk record's decision, as read once per tuner. Strings owned. */
typedef struct stc__won_record {
  uint64_t key_hash;   /* stc_hash64 of the key, as tuner.c hashes keys */
  char key_digest[65]; /* sha256 hex of the key */
  char *kind;
  char *environment;
  char *winner;
  int64_t created;
} stc__won_record;

typedef struct stc__won_records {
  stc__won_record *items;
  size_t count, capacity;
} stc__won_records;

/* Reads every usable record of disk into *out (which the caller frees with
 * stc__won_records_free, also after an error). */
stc_status stc__won_records_load(stc_disk_cache *disk, stc__won_records *out);
/* Forgets the record of one key (invalidated). */
void stc__won_records_remove(stc__won_records *records, uint64_t key_hash,
                             const char *key_digest);
void stc__won_records_free(stc__won_records *records);

/* Winner names and their counts. */
typedef struct stc__tally {
  stc_win_count *counts;
  size_t count, capacity;
} stc__tally;

/* Counts one win of name. */
stc_status stc__tally_add(stc__tally *tally, const char *name);
/* Sorts by wins (most first), then by name. */
void stc__tally_sort(stc__tally *tally);

#endif /* STC_TUNER_WINS_H */
