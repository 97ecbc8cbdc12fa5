/* stc-cache-testgen: TEST FIXTURE, not a user tool (it is not installed).
 * Writes one tuner cache record with chosen fields through
 * stc_disk_cache_save, so that lit tests of stc-cache can build fresh,
 * expired and future-dated records, and corrupt ones by editing the written
 * file afterwards.
 *
 * In: --dir=DIR --winner=NAME and either --key=TEXT or --operation=OP
 * --workload=W [--environment=E] (which build a key in the tuner's
 * "tag=LENGTH:BYTES;" form, a subset of the fields lib/tuner/tuner.c
 * writes); optional --created=UNIX or --age=[-]DURATION (default: now),
 * --now=UNIX (what --age counts from), --ratio=X (0.5), --verified=0|1 (1),
 * --scope=N (0), --reference-ns=N (1000), --winner-ns=N (ratio times the
 * reference). Out: the record file's path on stdout; exit 0, 1 when the save
 * fails, 2 for bad usage. */
#include "cache_tool.h"

#include "stc/hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int stc_testgen_usage(const char *format, const char *arg) {
  fputs("stc-cache-testgen: error: ", stderr);
  fprintf(stderr, format, arg);
  fputs("\nusage: stc-cache-testgen --dir=DIR --winner=NAME "
        "(--key=TEXT | --operation=OP --workload=W [--environment=E])\n"
        "         [--created=UNIX | --age=[-]DURATION] [--now=UNIX] "
        "[--ratio=X] [--verified=0|1]\n"
        "         [--scope=N] [--reference-ns=N] [--winner-ns=N]\n",
        stderr);
  return STC_CACHE_EXIT_USAGE;
}

/* Appends "tag=LENGTH:VALUE;" to buf (size checked by the caller). */
static size_t stc_testgen_field(char *buf, const char *tag, const char *value) {
  return (size_t)sprintf(buf, "%s=%zu:%s;", tag, strlen(value), value);
}

static char *stc_testgen_tuner_key(unsigned scope, const char *operation,
                                   const char *environment,
                                   const char *workload) {
  size_t size =
      strlen(operation) + strlen(environment) + strlen(workload) + 256;
  char *key = malloc(size);
  if (!key)
    return NULL;
  char scope_text[16];
  snprintf(scope_text, sizeof scope_text, "%u", scope);
  size_t used = stc_testgen_field(key, "stc-tuner-key", "1");
  used += stc_testgen_field(key + used, "scope", scope_text);
  used += stc_testgen_field(key + used, "operation", operation);
  used += stc_testgen_field(key + used, "environment", environment);
  used += stc_testgen_field(key + used, "workload", workload);
  used += stc_testgen_field(key + used, "context", "");
  stc_testgen_field(key + used, "reference", "0");
  return key;
}

int main(int argc, char **argv) {
  const char *dir = NULL, *key_text = NULL, *operation = NULL;
  const char *workload = NULL, *environment = "cpu:test";
  const char *winner = NULL, *created_text = NULL, *age_text = NULL;
  const char *now_text = NULL, *ratio_text = "0.5", *verified_text = "1";
  const char *scope_text = "0", *reference_text = "1000",
             *winner_ns_text = NULL;
  struct {
    const char *name;
    const char **target;
  } options[] = {
      {"--dir=", &dir},
      {"--key=", &key_text},
      {"--operation=", &operation},
      {"--workload=", &workload},
      {"--environment=", &environment},
      {"--winner=", &winner},
      {"--created=", &created_text},
      {"--age=", &age_text},
      {"--now=", &now_text},
      {"--ratio=", &ratio_text},
      {"--verified=", &verified_text},
      {"--scope=", &scope_text},
      {"--reference-ns=", &reference_text},
      {"--winner-ns=", &winner_ns_text},
  };
  for (int i = 1; i < argc; ++i) {
    size_t k = 0;
    while (k < sizeof options / sizeof *options &&
           strncmp(argv[i], options[k].name, strlen(options[k].name)) != 0)
      ++k;
    if (k == sizeof options / sizeof *options)
      return stc_testgen_usage("unknown argument '%s'", argv[i]);
    *options[k].target = argv[i] + strlen(options[k].name);
  }
  if (!dir || !winner)
    return stc_testgen_usage("%s", "--dir and --winner are required");
  if (!key_text == !(operation && workload))
    return stc_testgen_usage(
        "%s", "give either --key or both --operation and --workload");
  if (created_text && age_text)
    return stc_testgen_usage("%s", "give --created or --age, not both");

  stc_cache_record record = {0};
  uint64_t scope, magnitude;
  int64_t now = stc_now_seconds();
  char *end;
  record.ratio = strtod(ratio_text, &end);
  if (*end || !isfinite(record.ratio) || record.ratio < 0)
    return stc_testgen_usage("bad --ratio '%s'", ratio_text);
  if (!stc__cache_parse_u64(scope_text, &scope) || scope > 255)
    return stc_testgen_usage("bad --scope '%s'", scope_text);
  record.scope = (uint8_t)scope;
  if (strcmp(verified_text, "0") != 0 && strcmp(verified_text, "1") != 0)
    return stc_testgen_usage("bad --verified '%s'", verified_text);
  record.verified = verified_text[0] == '1';
  if (!stc__cache_parse_u64(reference_text, &record.reference_ns))
    return stc_testgen_usage("bad --reference-ns '%s'", reference_text);
  record.winner_ns =
      (uint64_t)llround(record.ratio * (double)record.reference_ns);
  if (winner_ns_text &&
      !stc__cache_parse_u64(winner_ns_text, &record.winner_ns))
    return stc_testgen_usage("bad --winner-ns '%s'", winner_ns_text);
  if (now_text && !stc__cache_parse_i64(now_text, &now))
    return stc_testgen_usage("bad --now '%s'", now_text);
  record.created = now;
  if (created_text && !stc__cache_parse_i64(created_text, &record.created))
    return stc_testgen_usage("bad --created '%s'", created_text);
  if (age_text) {
    bool future = age_text[0] == '-';
    if (!stc__cache_parse_duration(age_text + future, &magnitude) ||
        magnitude > INT64_MAX)
      return stc_testgen_usage("bad --age '%s'", age_text);
    record.created =
        future ? now + (int64_t)magnitude : now - (int64_t)magnitude;
  }

  char *built = key_text ? NULL
                         : stc_testgen_tuner_key(record.scope, operation,
                                                 environment, workload);
  record.key = key_text ? (char *)key_text : built;
  record.winner = (char *)winner;
  stc_disk_cache *cache = NULL;
  stc_error err;
  stc_error_clear(&err);
  stc_status status =
      record.key ? stc_disk_cache_open(dir, SIZE_MAX, UINT64_MAX, &cache, &err)
                 : STC_ERR_NOMEM;
  if (status == STC_OK)
    status = stc_disk_cache_save(cache, &record, &err);
  int exit_code = STC_CACHE_EXIT_OK;
  if (status == STC_OK) {
    char digest[65];
    stc_sha256_hex(record.key, strlen(record.key), digest);
    printf("%s/%s.rec\n", stc_disk_cache_path(cache), digest);
  } else {
    char message[2048];
    stc_error_format(&err, message, sizeof message);
    fprintf(stderr, "stc-cache-testgen: error: %s\n",
            message[0] ? message : stc_status_str(status));
    exit_code = STC_CACHE_EXIT_FAILURE;
  }
  stc_disk_cache_close(cache);
  free(built);
  return exit_code;
}
