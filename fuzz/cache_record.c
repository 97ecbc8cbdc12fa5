/* libFuzzer target: the tuner's disk-cache record reader (lib/tuner/cache.c)
 * through its public API, the way a planted or damaged file reaches it.
 *
 * In: arbitrary bytes as the record file of a fixed key, tried as given and
 * repaired (fuzz/cache_harness.h). Checks: no crash, leak or undefined
 * behaviour; a load that succeeds returns the fixed key and a non-empty
 * winner; listing never fails on a bad file. The cache lives in a private
 * directory under $TMPDIR (use a tmpfs such as /dev/shm for speed). */
#include "cache_harness.h"

#include "stc/tuner_cache.h"

static const char key[] = "op=linalg.matmul;env=fuzz;workload=f32[8x8:8,1]";
static stc_disk_cache *cache;
static char record_path[4096];

static bool count_entry(void *user, const stc_cache_entry *entry) {
  (*(size_t *)user)++;
  if (entry->status == STC_OK && (!entry->record || !entry->record->key))
    abort();
  return true;
}

static void setup(void) {
  char directory[4096];
  fuzz_cache_directory("stc-fuzz-cache-", directory);
  stc_error err;
  if (stc_disk_cache_open(directory, 16, 3600, &cache, &err) != STC_OK) {
    fprintf(stderr, "cannot open cache: %s\n", err.message);
    abort();
  }
  stc_disk_cache_set_clock(cache, fuzz_fixed_clock, NULL);
  fuzz_entry_path(stc_disk_cache_path(cache), key, ".rec", record_path);
}

static void try_record(const uint8_t *data, size_t size) {
  fuzz_write_file(record_path, data, size);
  stc_cache_record record;
  stc_error err;
  if (stc_disk_cache_load(cache, key, &record, &err) == STC_OK) {
    if (!record.key || strcmp(record.key, key) != 0 || !record.winner ||
        !record.winner[0])
      abort();
    stc_cache_record_clear(&record);
  }
  size_t entries = 0;
  if (stc_disk_cache_list(cache, count_entry, &entries, &err) != STC_OK)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!cache)
    setup();
  fuzz_try_with_repair(data, size, try_record, fuzz_sha256_hex);
  return 0;
}
