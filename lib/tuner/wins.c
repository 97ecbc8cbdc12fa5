/* wins.c - what the tuner knows about which candidates won, per operation
 * kind (stc_tuner_win_counts, include/stc/tuner.h).
 *
 * In: tuner cache keys (memory records' and disk records') and winner
 * names. Out: whether a key belongs to an operation kind (and environment),
 * the disk records' decisions read once, and a tally of winners by name.
 * The runtime orders a site's candidates by it: schedules that won other
 * workloads of the same op kind are tried before the rest. tuner.c keeps
 * the state and the lock; nothing here locks. */
#include "wins.h"

#include "stc/hash.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

bool stc__tuner_key_field(const char *key, const char *tag,
                          const char **value, size_t *length) {
  const size_t tag_length = strlen(tag);
  const char *field = key;
  while (field && *field) {
    const char *equals = strchr(field, '=');
    if (!equals)
      return false;
    const char *bytes = equals + 1;
    size_t size = 0;
    if (!isdigit((unsigned char)*bytes))
      return false;
    for (; isdigit((unsigned char)*bytes); bytes++) {
      if (size > (SIZE_MAX - 9) / 10)
        return false;
      size = size * 10 + (size_t)(*bytes - '0');
    }
    /* The length prefix, not a delimiter, ends the bytes: they may hold
     * any character but NUL. */
    if (*bytes != ':')
      return false;
    bytes++;
    if (strnlen(bytes, size) < size || bytes[size] != ';')
      return false;
    if ((size_t)(equals - field) == tag_length &&
        memcmp(field, tag, tag_length) == 0) {
      *value = bytes;
      *length = size;
      return true;
    }
    field = bytes + size + 1;
  }
  return false;
}

/* The kind of an operation: after its last '|'. */
static void kind_of(const char *operation, size_t length, const char **kind,
                    size_t *kind_length) {
  size_t start = length;
  while (start > 0 && operation[start - 1] != '|')
    start--;
  *kind = operation + start;
  *kind_length = length - start;
}

static bool same_text(const char *bytes, size_t length, const char *text) {
  return strlen(text) == length && memcmp(bytes, text, length) == 0;
}

bool stc__tuner_key_matches(const char *key, const char *kind,
                            const char *environment) {
  const char *operation, *key_kind, *key_environment;
  size_t operation_length, kind_length, environment_length;
  if (!key || !stc__tuner_key_field(key, "operation", &operation,
                                    &operation_length))
    return false;
  kind_of(operation, operation_length, &key_kind, &kind_length);
  if (!same_text(key_kind, kind_length, kind))
    return false;
  return !environment ||
         (stc__tuner_key_field(key, "environment", &key_environment,
                               &environment_length) &&
          same_text(key_environment, environment_length, environment));
}

static char *copy_bytes(const char *bytes, size_t length) {
  char *text = malloc(length + 1);
  if (text) {
    memcpy(text, bytes, length);
    text[length] = 0;
  }
  return text;
}

static void won_record_clear(stc__won_record *r) {
  free(r->kind);
  free(r->environment);
  free(r->winner);
  memset(r, 0, sizeof *r);
}

typedef struct load_state {
  stc__won_records *records;
  stc_status status;
} load_state;

/* stc_disk_cache_list's callback: keeps one usable record's decision. */
static bool keep_record(void *user, const stc_cache_entry *entry) {
  load_state *state = user;
  const stc_cache_record *record = entry->record;
  const char *operation, *environment, *kind;
  size_t operation_length, environment_length, kind_length;
  if (entry->status != STC_OK || entry->problem || !record || !record->key ||
      !record->winner ||
      !stc__tuner_key_field(record->key, "operation", &operation,
                            &operation_length) ||
      !stc__tuner_key_field(record->key, "environment", &environment,
                            &environment_length))
    return true; /* not a decision we can use: skip it */
  stc__won_records *records = state->records;
  if (records->count == records->capacity) {
    size_t capacity = records->capacity ? records->capacity * 2 : 16;
    stc__won_record *items = realloc(records->items, capacity * sizeof *items);
    if (!items) {
      state->status = STC_ERR_NOMEM;
      return false;
    }
    records->items = items;
    records->capacity = capacity;
  }
  stc__won_record *r = &records->items[records->count];
  memset(r, 0, sizeof *r);
  kind_of(operation, operation_length, &kind, &kind_length);
  r->kind = copy_bytes(kind, kind_length);
  r->environment = copy_bytes(environment, environment_length);
  r->winner = strdup(record->winner);
  if (!r->kind || !r->environment || !r->winner) {
    won_record_clear(r);
    state->status = STC_ERR_NOMEM;
    return false;
  }
  r->key_hash = stc_hash64(record->key, strlen(record->key), STC_HASH_SEED);
  stc_sha256_hex(record->key, strlen(record->key), r->key_digest);
  r->created = record->created;
  records->count++;
  return true;
}

stc_status stc__won_records_load(stc_disk_cache *disk, stc__won_records *out) {
  load_state state = {out, STC_OK};
  stc_status status = stc_disk_cache_list(disk, keep_record, &state, NULL);
  return status != STC_OK ? status : state.status;
}

void stc__won_records_remove(stc__won_records *records, uint64_t key_hash,
                             const char *key_digest) {
  for (size_t i = 0; i < records->count;) {
    stc__won_record *r = &records->items[i];
    if (r->key_hash == key_hash && strcmp(r->key_digest, key_digest) == 0) {
      won_record_clear(r);
      *r = records->items[--records->count];
    } else {
      i++;
    }
  }
}

void stc__won_records_free(stc__won_records *records) {
  for (size_t i = 0; i < records->count; i++)
    won_record_clear(&records->items[i]);
  free(records->items);
  memset(records, 0, sizeof *records);
}

stc_status stc__tally_add(stc__tally *tally, const char *name) {
  for (size_t i = 0; i < tally->count; i++)
    if (strcmp(tally->counts[i].name, name) == 0) {
      tally->counts[i].wins++;
      return STC_OK;
    }
  if (tally->count == tally->capacity) {
    size_t capacity = tally->capacity ? tally->capacity * 2 : 8;
    stc_win_count *counts = realloc(tally->counts, capacity * sizeof *counts);
    if (!counts)
      return STC_ERR_NOMEM;
    tally->counts = counts;
    tally->capacity = capacity;
  }
  char *copy = strdup(name);
  if (!copy)
    return STC_ERR_NOMEM;
  tally->counts[tally->count++] = (stc_win_count){copy, 1};
  return STC_OK;
}

static int compare_counts(const void *a, const void *b) {
  const stc_win_count *x = a, *y = b;
  if (x->wins != y->wins)
    return x->wins > y->wins ? -1 : 1;
  return strcmp(x->name, y->name);
}

void stc__tally_sort(stc__tally *tally) {
  if (tally->count > 1)
    qsort(tally->counts, tally->count, sizeof *tally->counts, compare_counts);
}
