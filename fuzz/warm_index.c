/* libFuzzer target: the warm-start index reader (runtime/warm_start.c),
 * the way a damaged or planted index file reaches it.
 *
 * In: arbitrary bytes as the body of the index file (after a valid stamp,
 * which a first "process" wrote), tried three ways: as the whole file, as
 * the body after the stamp, and that body with its checksum line appended
 * ("end <hash>"), so that the fuzzer explores entry lines that pass the
 * checksum instead of stopping at it. Each try is a new "process"
 * (stc_rt__warm_reset) whose first lookup reads the file. Checks: no
 * crash, leak or undefined behaviour; an answer names a deferred winner
 * only with a saving in [0, 1). */
#include "cache_harness.h"

#include "../runtime/warm_start.h"

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

static stc_rt_dispatch_config config;
static char index_path[4200];
static char *stamp; /* the file's text up to its "entries " line */
static size_t stamp_size;

static const stc_rt_arg args[1] = {{STC_RT_ARG_INOUT, STC_RT_F32, 1, 0}};
static const stc_rt_variant variants[2] = {
    {"reference", "1", NULL, NULL, 0, STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
    {"fast", "1", NULL, NULL, 0, STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
};
static stc_rt_site site = {STC_RT_DISPATCH_ABI_VERSION, 1, "fuzz/site#1",
                           "linalg.generic", args, 2, 0, variants, NULL, NULL};

static void setup(void) {
  char directory[4096], records[4200], sub[4200];
  fuzz_cache_directory("stc-fuzz-warm-", directory);
  snprintf(records, sizeof records, "%s/v1", directory);
  if (mkdir(records, 0700) != 0)
    abort();
  /* Records last changed an hour ago: settled. */
  struct timespec old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
  if (utimensat(AT_FDCWD, records, old, 0) != 0)
    abort();
  /* stc_rt_dispatch_config_init's defaults (controls.c is not linked). */
  memset(&config, 0, sizeof config);
  stc_tuner_policy_init(&config.policy);
  config.warm_start = true;
  config.use_cache = true;
  snprintf(config.cache_directory, sizeof config.cache_directory, "%s",
           directory);
  /* A first process answers one first call and writes the index. */
  uint64_t fingerprint = stc_rt__warm_site_fingerprint(&site);
  stc_rt__warm_lookup(&config, fingerprint, "w");
  stc_rt__warm_note(&config, fingerprint, "w",
                    (stc_rt__warm_answer){STC_RT__WARM_REFERENCE, 0, 0, false},
                    (int64_t)time(NULL));
  stc_rt__warm_flush();
  snprintf(sub, sizeof sub, "%s/warm-v1", directory);
  DIR *d = opendir(sub);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".idx"))
      snprintf(index_path, sizeof index_path, "%s/%s", sub, e->d_name);
  if (d)
    closedir(d);
  FILE *f = fopen(index_path, "rb");
  if (!f)
    abort();
  static char text[4096];
  size_t size = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[size] = 0;
  char *entries = strstr(text, "entries ");
  if (!entries)
    abort();
  stamp = text;
  stamp_size = (size_t)(entries - text);
}

static void try_file(const uint8_t *data, size_t size) {
  fuzz_write_file(index_path, data, size);
  stc_rt__warm_reset();
  stc_rt__warm_answer answer = stc_rt__warm_lookup(
      &config, stc_rt__warm_site_fingerprint(&site), "w");
  if (answer.outcome == STC_RT__WARM_DEFERRED &&
      !(answer.saving >= 0 && answer.saving < 1))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!stamp)
    setup();
  try_file(data, size);
  /* After the stamp, then with its checksum line. */
  uint8_t *text = malloc(stamp_size + size + 32);
  if (!text)
    return 0;
  memcpy(text, stamp, stamp_size);
  memcpy(text + stamp_size, data, size);
  try_file(text, stamp_size + size);
  size_t used = stamp_size + size;
  used += (size_t)snprintf((char *)text + used, 32, "end %016llx\n",
                           (unsigned long long)stc_hash64(text, used,
                                                          STC_HASH_SEED));
  try_file(text, used);
  free(text);
  return 0;
}
