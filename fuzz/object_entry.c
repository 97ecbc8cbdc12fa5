/* libFuzzer target: stc-run's object-cache entry reader
 * (lib/support/object_cache.c) through its public API, the way a planted or
 * damaged entry file reaches it.
 *
 * In: arbitrary bytes as the entry file of a fixed key, tried as given and
 * repaired (fuzz/cache_harness.h). Checks: no crash, leak or undefined
 * behaviour; a load that succeeds returns the fixed key and a non-empty
 * object; a miss with a problem text leaves nothing allocated; listing never
 * fails on a bad file. */
#include "cache_harness.h"

#include "stc/object_cache.h"

static const char key[] = "stc-run object key 1\nopt 2\ninput sha256:00\n";
static stc_object_cache *cache;
static char entry_path[4096];

static bool count_entry(void *user, const stc_object_listing *item) {
  (*(size_t *)user)++;
  if (item->status == STC_OK && (!item->entry || !item->entry->key))
    abort();
  return true;
}

static void setup(void) {
  char directory[4096];
  fuzz_cache_directory("stc-fuzz-objects-", directory);
  stc_error err;
  if (stc_object_cache_open(directory, 16, 3600, &cache, &err) != STC_OK) {
    fprintf(stderr, "cannot open cache: %s\n", err.message);
    abort();
  }
  stc_object_cache_set_clock(cache, fuzz_fixed_clock, NULL);
  fuzz_entry_path(stc_object_cache_path(cache), key, ".obj", entry_path);
}

static void try_entry(const uint8_t *data, size_t size) {
  fuzz_write_file(entry_path, data, size);
  stc_object_entry entry;
  const char *problem = NULL;
  stc_error err;
  if (stc_object_cache_load(cache, key, &entry, &problem, &err) == STC_OK) {
    if (!entry.key || strcmp(entry.key, key) != 0 || !entry.object ||
        entry.object_size == 0)
      abort();
    stc_object_entry_clear(&entry);
  }
  size_t entries = 0;
  if (stc_object_cache_list(cache, count_entry, &entries, &err) != STC_OK)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!cache)
    setup();
  fuzz_try_with_repair(data, size, try_entry, fuzz_xxh64_hex);
  return 0;
}
