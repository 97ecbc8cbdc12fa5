/* Unit tests of YAML profiles (include/stc/profile.h): round trips, the
 * reader's checks with their exact file:line:col, warnings, atomic writes,
 * weighted merges and the bridge to the hints store. */
#include "stc_test.h"

#include "stc/profile.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char design_example[] =
    "stc-profile: 1                      # format major version; readers reject others\n"
    "producer: \"stc 0.1.0\"\n"
    "environment: \"cpu:x86_64:avx2,fma:...\" # fingerprint of where it was recorded\n"
    "created: \"2026-12-02T10:00:00Z\"\n"
    "regions:\n"
    "  - id: \"main/linalg.matmul#9f2c41d0\"\n"
    "    count: 40                        # dispatches\n"
    "    total-ns: 1234567\n"
    "    max-ns: 40210\n"
    "    bytes: 7372800                   # optional, default 0\n"
    "  - id: main/linalg.fill#00aa11bb\n"
    "    count: 3\n"
    "    total-ns: 900\n"
    "    max-ns: 400\n";

static stc_status parse(const char *text, stc_profile **out, stc_error *err) {
  return stc_profile_read_string("in.yaml", text, strlen(text), out, err, NULL, NULL);
}

STC_TEST(profile_reads_the_design_example) {
  stc_profile *profile = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(parse(design_example, &profile, &err), STC_OK);
  STC_CHECK_STR_EQ(profile->producer, "stc 0.1.0");
  STC_CHECK_STR_EQ(profile->environment, "cpu:x86_64:avx2,fma:...");
  STC_CHECK_STR_EQ(profile->created, "2026-12-02T10:00:00Z");
  STC_CHECK_EQ_U64(profile->num_regions, 2);
  STC_CHECK_STR_EQ(profile->regions[0].id, "main/linalg.matmul#9f2c41d0");
  STC_CHECK_EQ_U64(profile->regions[0].count, 40);
  STC_CHECK_EQ_U64(profile->regions[0].total_ns, 1234567);
  STC_CHECK_EQ_U64(profile->regions[0].max_ns, 40210);
  STC_CHECK_EQ_U64(profile->regions[0].bytes, 7372800);
  /* A plain id with '#' (no space before it) is not a comment. */
  STC_CHECK_STR_EQ(profile->regions[1].id, "main/linalg.fill#00aa11bb");
  STC_CHECK_EQ_U64(profile->regions[1].bytes, 0); /* optional */
  stc_profile_destroy(profile);
}

static stc_profile *sample_profile(void) {
  stc_profile *profile = NULL;
  if (stc_profile_create("stc test", "cpu:x86_64:avx2", "2026-01-02T03:04:05Z", &profile) != STC_OK)
    return NULL;
  /* Ids that YAML would read as something else unless quoted. */
  const char *ids[] = {"main/linalg.matmul#9f2c41d0", "a: b", "123", "- dash",
                       "quote\"and\\backslash", "ünïcode/λ", "null", "multi\nline"};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
    if (stc_profile_add_region(profile, ids[i], i + 1, (i + 1) * 1000, 900, i * 7) != STC_OK) {
      stc_profile_destroy(profile);
      return NULL;
    }
  stc_profile_add_region(profile, "max", UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX);
  /* A long id must not be folded over several lines by the emitter. */
  char long_id[301];
  memset(long_id, 'x', 300);
  long_id[300] = 0;
  memcpy(long_id, "main/very long id with spaces ", 30);
  stc_profile_add_region(profile, long_id, 1, 2, 3, 4);
  return profile;
}

STC_TEST(profile_round_trips_through_yaml) {
  stc_profile *profile = sample_profile();
  STC_CHECK(profile);
  char *text = NULL;
  size_t length = 0;
  stc_error err;
  STC_CHECK_EQ_INT(stc_profile_write_string(profile, &text, &length, &err), STC_OK);
  STC_CHECK_EQ_U64(length, strlen(text));
  STC_CHECK(strncmp(text, "stc-profile: 1\n", 15) == 0);
  STC_CHECK_CONTAINS(text, "total-ns: 18446744073709551615");
  STC_CHECK_CONTAINS(text, "- id: \"main/very long id with spaces xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
  stc_profile *back = NULL;
  stc_status status = stc_profile_read_string("rt", text, length, &back, &err, NULL, NULL);
  if (status != STC_OK)
    fprintf(stderr, "%s:%u:%u: %s\n%s", err.file, err.line, err.column, err.message, text);
  free(text);
  STC_CHECK_EQ_INT(status, STC_OK);
  STC_CHECK_STR_EQ(back->producer, profile->producer);
  STC_CHECK_STR_EQ(back->environment, profile->environment);
  STC_CHECK_STR_EQ(back->created, profile->created);
  STC_CHECK_EQ_U64(back->num_regions, profile->num_regions);
  int same = 1;
  for (size_t i = 0; i < profile->num_regions; i++) {
    const stc_profile_region *a = &profile->regions[i], *b = &back->regions[i];
    same = same && strcmp(a->id, b->id) == 0 && a->count == b->count &&
           a->total_ns == b->total_ns && a->max_ns == b->max_ns && a->bytes == b->bytes;
  }
  STC_CHECK(same);
  stc_profile_destroy(back);
  stc_profile_destroy(profile);
}

STC_TEST(profile_empty_round_trip_and_defaults) {
  stc_profile *profile = NULL;
  STC_CHECK_EQ_INT(stc_profile_create(NULL, NULL, NULL, &profile), STC_OK);
  STC_CHECK_STR_EQ(profile->producer, "");
  /* created NULL means now: an ISO 8601 UTC stamp such as 2026-12-02T10:00:00Z */
  STC_CHECK_EQ_U64(strlen(profile->created), 20);
  STC_CHECK(profile->created[10] == 'T' && profile->created[19] == 'Z');
  char *text = NULL;
  STC_CHECK_EQ_INT(stc_profile_write_string(profile, &text, NULL, NULL), STC_OK);
  STC_CHECK_CONTAINS(text, "regions: []");
  stc_profile *back = NULL;
  stc_status status = parse(text, &back, NULL);
  free(text);
  STC_CHECK_EQ_INT(status, STC_OK);
  STC_CHECK_EQ_U64(back->num_regions, 0);
  stc_profile_destroy(back);
  stc_profile_destroy(profile);
  /* Header strings are optional when reading. */
  STC_CHECK_EQ_INT(parse("stc-profile: 1\nregions: []\n", &back, NULL), STC_OK);
  STC_CHECK_STR_EQ(back->producer, "");
  STC_CHECK_STR_EQ(back->created, "");
  stc_profile_destroy(back);
}

STC_TEST(profile_add_region_rejects_duplicates_and_empty_ids) {
  stc_profile *profile = NULL;
  STC_CHECK_EQ_INT(stc_profile_create("p", "e", "c", &profile), STC_OK);
  STC_CHECK_EQ_INT(stc_profile_add_region(profile, "a", 1, 2, 3, 4), STC_OK);
  STC_CHECK_EQ_INT(stc_profile_add_region(profile, "a", 1, 2, 3, 4), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_profile_add_region(profile, "", 1, 2, 3, 4), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_profile_add_region(profile, NULL, 1, 2, 3, 4), STC_ERR_INVALID);
  for (int i = 0; i < 100; i++) {
    char id[16];
    snprintf(id, sizeof id, "r%d", i);
    STC_CHECK_EQ_INT(stc_profile_add_region(profile, id, (uint64_t)i, 0, 0, 0), STC_OK);
  }
  STC_CHECK_EQ_U64(profile->num_regions, 101);
  STC_CHECK_STR_EQ(profile->regions[100].id, "r99");
  STC_CHECK_EQ_U64(profile->regions[100].count, 99);
  stc_profile_destroy(profile);
  stc_profile_destroy(NULL);
}

/* ---- malformed input: each rejected with its exact location ---- */

typedef struct bad_case {
  const char *text;
  stc_status status;
  unsigned line, column;
  const char *message; /* a substring of the message */
} bad_case;

static int check_bad_cases(const bad_case *cases, size_t n) {
  int failures = 0;
  for (size_t i = 0; i < n; i++) {
    stc_profile *profile = (stc_profile *)&failures; /* must be reset to NULL */
    stc_error err;
    stc_status status = parse(cases[i].text, &profile, &err);
    if (status != cases[i].status || profile != NULL || err.line != cases[i].line ||
        err.column != cases[i].column || strcmp(err.file, "in.yaml") != 0 ||
        !strstr(err.message, cases[i].message)) {
      fprintf(stderr,
              "case %zu: got status %d at %s:%u:%u: %s\n"
              "  expected status %d at in.yaml:%u:%u: ...%s...\n",
              i, status, err.file, err.line, err.column, err.message, cases[i].status,
              cases[i].line, cases[i].column, cases[i].message);
      failures++;
      if (status == STC_OK)
        stc_profile_destroy(profile);
    }
  }
  return failures;
}

#define REGION_HEAD "stc-profile: 1\nregions:\n  - id: a\n"

STC_TEST(profile_rejects_schema_errors_with_location) {
  static const bad_case cases[] = {
      /* 0: top level is not a mapping */
      {"- 1\n- 2\n", STC_ERR_PARSE, 1, 1, "expected a mapping at the top level"},
      /* 1: missing regions */
      {"stc-profile: 1\nproducer: x\n", STC_ERR_PARSE, 1, 1, "missing required key 'regions'"},
      /* 2: missing count (reported at the region) */
      {REGION_HEAD "    total-ns: 5\n    max-ns: 5\n", STC_ERR_PARSE, 3, 5,
       "missing required key 'count'"},
      /* 3: missing id */
      {"stc-profile: 1\nregions:\n  - count: 1\n    total-ns: 5\n    max-ns: 5\n", STC_ERR_PARSE,
       3, 5, "missing required key 'id'"},
      /* 4: wrong type for a number */
      {REGION_HEAD "    count: abc\n    total-ns: 5\n    max-ns: 5\n", STC_ERR_PARSE, 4, 12,
       "expected a non-negative integer for 'count', found 'abc'"},
      /* 5: a quoted number is a string, not a number */
      {REGION_HEAD "    count: \"5\"\n    total-ns: 5\n    max-ns: 5\n", STC_ERR_PARSE, 4, 12,
       "expected a non-negative integer for 'count'"},
      /* 6: negative */
      {REGION_HEAD "    count: 1\n    total-ns: -5\n    max-ns: 5\n", STC_ERR_PARSE, 5, 15,
       "negative value for 'total-ns'"},
      /* 7: out of uint64 range (2^64) */
      {REGION_HEAD "    count: 1\n    total-ns: 5\n    max-ns: 18446744073709551616\n",
       STC_ERR_PARSE, 6, 13, "value for 'max-ns' is out of range"},
      /* 8: duplicate region id (at the second id) */
      {REGION_HEAD "    count: 1\n    total-ns: 5\n    max-ns: 5\n"
                   "  - id: \"a\"\n    count: 1\n    total-ns: 5\n    max-ns: 5\n",
       STC_ERR_PARSE, 7, 9, "duplicate region id 'a'"},
      /* 9: duplicate key in a region (at the second key) */
      {REGION_HEAD "    count: 1\n    total-ns: 5\n    count: 2\n    max-ns: 5\n",
       STC_ERR_PARSE, 6, 5, "duplicate key 'count' in a region (first at line 4)"},
      /* 10: regions is not a sequence */
      {"stc-profile: 1\nregions: 5\n", STC_ERR_PARSE, 2, 10, "expected a sequence of regions"},
      /* 11: a region is not a mapping */
      {"stc-profile: 1\nregions:\n  - 5\n", STC_ERR_PARSE, 3, 5, "expected a region"},
      /* 12: an empty id */
      {"stc-profile: 1\nregions:\n  - id: \"\"\n    count: 1\n    total-ns: 5\n    max-ns: 5\n",
       STC_ERR_PARSE, 3, 9, "region id must not be empty"},
      /* 13: a header string that is a mapping */
      {"stc-profile: 1\nproducer: {a: 1}\nregions: []\n", STC_ERR_PARSE, 2, 11,
       "expected a string for 'producer', found a mapping"},
      /* 14: duplicate top-level key */
      {"stc-profile: 1\nregions: []\nregions: []\n", STC_ERR_PARSE, 3, 1,
       "duplicate key 'regions'"},
      /* 15: a key that is not a scalar */
      {"stc-profile: 1\nregions: []\n[a]: 1\n", STC_ERR_PARSE, 3, 1, "expected a key name"},
      /* 16: bytes, although optional, is still checked */
      {REGION_HEAD "    count: 1\n    total-ns: 5\n    max-ns: 5\n    bytes: 1.5\n",
       STC_ERR_PARSE, 7, 12, "expected a non-negative integer for 'bytes', found '1.5'"},
      /* 17: hexadecimal is not accepted */
      {REGION_HEAD "    count: 0x10\n    total-ns: 5\n    max-ns: 5\n", STC_ERR_PARSE, 4, 12,
       "found '0x10'"},
      /* 18: an empty file */
      {"", STC_ERR_PARSE, 1, 1, "empty file"},
  };
  STC_CHECK_EQ_INT(check_bad_cases(cases, sizeof cases / sizeof cases[0]), 0);
}

STC_TEST(profile_rejects_syntax_errors_and_trailing_garbage) {
  static const bad_case cases[] = {
      /* 0: trailing garbage after the mapping */
      {"stc-profile: 1\nregions: []\ngarbage\n", STC_ERR_PARSE, 4, 1,
       "could not find expected ':'"},
      /* 1: a second document */
      {"stc-profile: 1\nregions: []\n---\nfoo: 1\n", STC_ERR_PARSE, 3, 1,
       "unexpected second YAML document"},
      /* 2: a second document after an explicit end */
      {"stc-profile: 1\nregions: []\n...\nmore\n", STC_ERR_PARSE, 4, 1,
       "did not find expected <document start>"},
      /* 3: an unclosed flow sequence */
      {"stc-profile: 1\nregions: [\n", STC_ERR_PARSE, 3, 1, "did not find expected node content"},
      /* 4: an unterminated quoted string (a truncated file) */
      {"stc-profile: 1\nregions:\n  - id: \"main/linalg.mat", STC_ERR_PARSE, 3, 25,
       "found unexpected end of stream while scanning a quoted scalar"},
      /* 5: bad indentation */
      {"stc-profile: 1\nregions:\n  - id: a\n   count: 1\n", STC_ERR_PARSE, 4, 4,
       "did not find expected '-' indicator while parsing a block collection"},
      /* 6: a tab where indentation is expected */
      {"stc-profile: 1\n\tregions: []\n", STC_ERR_PARSE, 2, 1,
       "found a tab character that violates indentation"},
      /* 7: invalid UTF-8 */
      {"stc-profile: 1\nproducer: \"\xff\"\nregions: []\n", STC_ERR_PARSE, 2, 12,
       "invalid leading UTF-8 octet"},
      /* 8: an undefined alias */
      {"stc-profile: 1\nregions: *nowhere\n", STC_ERR_PARSE, 2, 10, "found undefined alias"},
  };
  STC_CHECK_EQ_INT(check_bad_cases(cases, sizeof cases / sizeof cases[0]), 0);
}

STC_TEST(profile_rejects_other_versions) {
  static const bad_case cases[] = {
      {"stc-profile: 2\nregions: []\n", STC_ERR_VERSION, 1, 14,
       "unsupported profile format version 2 (this reader supports 1)"},
      {"producer: x\nstc-profile: 0\nregions: []\n", STC_ERR_VERSION, 2, 14,
       "unsupported profile format version 0"},
      {"stc-profile: 1.5\nregions: []\n", STC_ERR_VERSION, 1, 14,
       "version must be an integer, found '1.5'"},
      {"stc-profile: \"1\"\nregions: []\n", STC_ERR_VERSION, 1, 14, "must be an integer"},
      {"producer: x\nregions: []\n", STC_ERR_VERSION, 1, 1, "missing 'stc-profile: 1'"},
      /* The version wins over schema errors a newer format might not have. */
      {"stc-profile: 2\nregions: {totally: different}\n", STC_ERR_VERSION, 1, 14,
       "version 2"},
  };
  STC_CHECK_EQ_INT(check_bad_cases(cases, sizeof cases / sizeof cases[0]), 0);
}

typedef struct warning_log {
  int count;
  unsigned line[4], column[4];
  char message[4][128];
  char file[64];
} warning_log;

static void log_warning(void *user, const char *file, unsigned line, unsigned column,
                        const char *message) {
  warning_log *log = user;
  if (log->count < 4) {
    log->line[log->count] = line;
    log->column[log->count] = column;
    snprintf(log->message[log->count], sizeof log->message[0], "%s", message);
    snprintf(log->file, sizeof log->file, "%s", file);
  }
  log->count++;
}

STC_TEST(profile_unknown_keys_warn_and_are_ignored) {
  const char *text = "stc-profile: 1\n"
                     "future-field: {nested: [1, 2, 3]}\n"
                     "regions:\n"
                     "  - id: a\n"
                     "    count: 1\n"
                     "    total-ns: 5\n"
                     "    max-ns: 5\n"
                     "    p99-ns: 4\n";
  warning_log log = {0};
  stc_profile *profile = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(stc_profile_read_string("w.yaml", text, strlen(text), &profile, &err,
                                           log_warning, &log),
                   STC_OK);
  STC_CHECK_EQ_INT(log.count, 2);
  STC_CHECK_STR_EQ(log.file, "w.yaml");
  STC_CHECK_EQ_U64(log.line[0], 2);
  STC_CHECK_EQ_U64(log.column[0], 1);
  STC_CHECK_STR_EQ(log.message[0], "unknown key 'future-field' ignored");
  STC_CHECK_EQ_U64(log.line[1], 8);
  STC_CHECK_EQ_U64(log.column[1], 5);
  STC_CHECK_STR_EQ(log.message[1], "unknown key 'p99-ns' ignored");
  STC_CHECK_EQ_U64(profile->num_regions, 1);
  STC_CHECK_EQ_U64(profile->regions[0].total_ns, 5);
  stc_profile_destroy(profile);
  /* A NULL callback is allowed. */
  STC_CHECK_EQ_INT(parse(text, &profile, &err), STC_OK);
  stc_profile_destroy(profile);
}

STC_TEST(profile_accepts_full_uint64_range) {
  stc_profile *profile = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(parse(REGION_HEAD "    count: 0\n    total-ns: 18446744073709551615\n"
                                     "    max-ns: 0018446744073709551615\n    bytes: +7\n",
                         &profile, &err),
                   STC_OK);
  STC_CHECK_EQ_U64(profile->regions[0].total_ns, UINT64_MAX);
  STC_CHECK_EQ_U64(profile->regions[0].max_ns, UINT64_MAX);
  STC_CHECK_EQ_U64(profile->regions[0].bytes, 7);
  stc_profile_destroy(profile);
}

/* Every prefix of a valid file either parses (YAML cannot tell "bytes: 73"
 * from a cut "bytes: 7372800") or fails with a location; none crashes, and a
 * failure never returns a profile. */
STC_TEST(profile_truncated_files_fail_cleanly) {
  size_t length = strlen(design_example);
  int failures = 0, rejected = 0;
  for (size_t cut = 0; cut < length; cut++) {
    char *prefix = malloc(cut + 1);
    STC_CHECK(prefix);
    memcpy(prefix, design_example, cut); /* not NUL-terminated on purpose */
    stc_profile *profile = NULL;
    stc_error err;
    stc_status status = stc_profile_read_string("cut.yaml", prefix, cut, &profile, &err,
                                                NULL, NULL);
    if (status == STC_OK) {
      stc_profile_destroy(profile);
    } else {
      rejected++;
      if (profile || err.line == 0 || err.column == 0)
        failures++;
    }
    free(prefix);
  }
  STC_CHECK_EQ_INT(failures, 0);
  STC_CHECK(rejected > (int)length / 2);
  /* Cut in the middle of the second region: its required keys are missing. */
  const char *cut_text = strstr(design_example, "    total-ns: 900");
  stc_profile *profile = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(stc_profile_read_string("cut.yaml", design_example,
                                           (size_t)(cut_text - design_example), &profile,
                                           &err, NULL, NULL),
                   STC_ERR_PARSE);
  STC_CHECK(profile == NULL);
  STC_CHECK_EQ_U64(err.line, 11);
  STC_CHECK_EQ_U64(err.column, 5);
  STC_CHECK_CONTAINS(err.message, "missing required key 'total-ns'");
}

/* Adversarial documents are rejected or ignored without traversing them. */
STC_TEST(profile_hostile_inputs_never_crash) {
  stc_profile *profile = NULL;
  stc_error err;
  /* A sequence that contains itself. */
  STC_CHECK_EQ_INT(parse("stc-profile: 1\nregions: &a [*a]\n", &profile, &err), STC_ERR_PARSE);
  STC_CHECK(profile == NULL);
  /* Deep nesting under an unknown key is ignored, under regions rejected. */
  size_t depth = 10000;
  char *deep = malloc(2 * depth + 64);
  STC_CHECK(deep);
  char *p = deep + sprintf(deep, "stc-profile: 1\nregions: []\nx: ");
  for (size_t i = 0; i < depth; i++)
    *p++ = '[';
  for (size_t i = 0; i < depth; i++)
    *p++ = ']';
  *p = 0;
  stc_status status = parse(deep, &profile, &err);
  free(deep);
  STC_CHECK(status == STC_OK || status == STC_ERR_PARSE);
  stc_profile_destroy(profile);
  /* An embedded NUL byte. */
  const char nul[] = "stc-profile: 1\nregions: []\n\0garbage";
  STC_CHECK_EQ_INT(stc_profile_read_string("n", nul, sizeof nul - 1, &profile, &err, NULL, NULL),
                   STC_ERR_PARSE);
  STC_CHECK(profile == NULL);
  STC_CHECK_EQ_U64(err.line, 3);
  /* Aliases that reuse a region produce a duplicate id, not a double count. */
  STC_CHECK_EQ_INT(parse("stc-profile: 1\nregions:\n  - &r {id: a, count: 1, total-ns: 1, "
                         "max-ns: 1}\n  - *r\n",
                         &profile, &err),
                   STC_ERR_PARSE);
  STC_CHECK_CONTAINS(err.message, "duplicate region id 'a'");
  /* Bad arguments. */
  STC_CHECK_EQ_INT(stc_profile_read_string("x", NULL, 5, &profile, &err, NULL, NULL),
                   STC_ERR_INVALID);
}

/* ---- files ---- */

static int count_directory_entries(const char *path) {
  DIR *dir = opendir(path);
  if (!dir)
    return -1;
  int count = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL)
    if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
      count++;
  closedir(dir);
  return count;
}

STC_TEST(profile_write_file_is_atomic_and_leaves_no_temporary) {
  char dir[4096], path[4200];
  snprintf(dir, sizeof dir, "%s/atomic", stc_test_tmpdir());
  STC_CHECK(mkdir(dir, 0700) == 0);
  snprintf(path, sizeof path, "%s/profile.yaml", dir);
  stc_profile *profile = sample_profile();
  STC_CHECK(profile);
  stc_error err;
  STC_CHECK_EQ_INT(stc_profile_write_file(profile, path, &err), STC_OK);
  STC_CHECK_EQ_INT(count_directory_entries(dir), 1);
  /* Overwriting replaces the file, still without leftovers. */
  stc_profile_add_region(profile, "added", 1, 1, 1, 1);
  STC_CHECK_EQ_INT(stc_profile_write_file(profile, path, &err), STC_OK);
  STC_CHECK_EQ_INT(count_directory_entries(dir), 1);
  stc_profile *back = NULL;
  STC_CHECK_EQ_INT(stc_profile_read_file(path, &back, &err, NULL, NULL), STC_OK);
  STC_CHECK_EQ_U64(back->num_regions, profile->num_regions);
  STC_CHECK_STR_EQ(back->regions[back->num_regions - 1].id, "added");
  stc_profile_destroy(back);

  /* A failing rename (the destination is a directory) keeps nothing. */
  char blocked[4300];
  snprintf(blocked, sizeof blocked, "%s/blocked", dir);
  STC_CHECK(mkdir(blocked, 0700) == 0);
  STC_CHECK_EQ_INT(stc_profile_write_file(profile, blocked, &err), STC_ERR_IO);
  STC_CHECK_STR_EQ(err.file, blocked);
  STC_CHECK_CONTAINS(err.message, "cannot replace profile");
  STC_CHECK_EQ_INT(count_directory_entries(dir), 2); /* profile.yaml + blocked/ */
  /* A missing directory is an I/O error too. */
  char missing[4300];
  snprintf(missing, sizeof missing, "%s/no/such/dir/p.yaml", dir);
  STC_CHECK_EQ_INT(stc_profile_write_file(profile, missing, &err), STC_ERR_IO);
  STC_CHECK_EQ_INT(count_directory_entries(dir), 2);
  stc_profile_destroy(profile);
}

/* Issue 11: under `ulimit -f` below the profile's size, the write raised
 * SIGXFSZ and killed the process. It is an I/O error saying why, with no
 * temporary file left. Runs in a child with SIGXFSZ at its default action. */
STC_TEST(profile_write_under_file_size_limit_is_an_error_not_a_kill) {
  char dir[4096], path[4200];
  snprintf(dir, sizeof dir, "%s/fsize", stc_test_tmpdir());
  STC_CHECK(mkdir(dir, 0700) == 0);
  snprintf(path, sizeof path, "%s/profile.yaml", dir);
  stc_profile *profile = sample_profile();
  STC_CHECK(profile);
  fflush(NULL);
  pid_t child = fork();
  STC_CHECK(child >= 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_DFL);
    struct rlimit tiny;
    getrlimit(RLIMIT_FSIZE, &tiny);
    tiny.rlim_cur = 16;
    setrlimit(RLIMIT_FSIZE, &tiny);
    stc_error err;
    stc_status status = stc_profile_write_file(profile, path, &err);
    _exit(status != STC_ERR_IO                                    ? 10
          : !strstr(err.message, "file size limit exceeded")     ? 11
                                                                  : 0);
  }
  int wstatus = 0;
  STC_CHECK(waitpid(child, &wstatus, 0) == child);
  stc_profile_destroy(profile);
  STC_CHECK(!WIFSIGNALED(wstatus));
  STC_CHECK(WIFEXITED(wstatus));
  STC_CHECK_EQ_INT(WEXITSTATUS(wstatus), 0);
  STC_CHECK_EQ_INT(count_directory_entries(dir), 0);
}

/* Issue 11: reading /dev/zero as a profile allocated until memory ran out.
 * Reading stops one byte past STC_MAX_PROFILE_BYTES; exactly the limit is
 * read. */
STC_TEST(profile_read_file_is_bounded) {
  stc_profile *profile = NULL;
  stc_error err;
  STC_CHECK(setenv("STC_MAX_PROFILE_BYTES", "4K", 1) == 0);
  stc_status endless = stc_profile_read_file("/dev/zero", &profile, &err,
                                             NULL, NULL);
  char message[2048];
  stc_error_format(&err, message, sizeof message);
  char path[4200];
  snprintf(path, sizeof path, "%s/exact.yaml", stc_test_tmpdir());
  FILE *file = fopen(path, "w");
  STC_CHECK(file);
  fputs(design_example, file);
  fclose(file);
  char exact[32], short_by_one[32];
  snprintf(exact, sizeof exact, "%zu", strlen(design_example));
  snprintf(short_by_one, sizeof short_by_one, "%zu",
           strlen(design_example) - 1);
  setenv("STC_MAX_PROFILE_BYTES", exact, 1);
  stc_status at_limit = stc_profile_read_file(path, &profile, &err, NULL, NULL);
  stc_profile_destroy(profile);
  profile = NULL;
  setenv("STC_MAX_PROFILE_BYTES", short_by_one, 1);
  stc_status over = stc_profile_read_file(path, &profile, &err, NULL, NULL);
  unsetenv("STC_MAX_PROFILE_BYTES");
  STC_CHECK_EQ_INT(endless, STC_ERR_INVALID);
  STC_CHECK_CONTAINS(message,
                     "/dev/zero: profile larger than 4 KiB (STC_MAX_PROFILE_BYTES)");
  STC_CHECK_EQ_INT(at_limit, STC_OK);
  STC_CHECK_EQ_INT(over, STC_ERR_INVALID);
  STC_CHECK(profile == NULL);
}

STC_TEST(profile_read_file_reports_io_errors_and_locations) {
  stc_profile *profile = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(stc_profile_read_file("/nonexistent/p.yaml", &profile, &err, NULL, NULL),
                   STC_ERR_IO);
  STC_CHECK(profile == NULL);
  STC_CHECK_STR_EQ(err.file, "/nonexistent/p.yaml");
  STC_CHECK_EQ_U64(err.line, 0);
  STC_CHECK_CONTAINS(err.message, "No such file or directory");
  STC_CHECK_EQ_INT(stc_profile_read_file(stc_test_tmpdir(), &profile, &err, NULL, NULL),
                   STC_ERR_IO); /* a directory */
  char path[4200];
  snprintf(path, sizeof path, "%s/bad.yaml", stc_test_tmpdir());
  FILE *file = fopen(path, "w");
  STC_CHECK(file);
  fputs("stc-profile: 1\nregions:\n  - id: x\n    count: -3\n    total-ns: 1\n    max-ns: 1\n",
        file);
  fclose(file);
  STC_CHECK_EQ_INT(stc_profile_read_file(path, &profile, &err, NULL, NULL), STC_ERR_PARSE);
  STC_CHECK_STR_EQ(err.file, path);
  char formatted[2048];
  stc_error_format(&err, formatted, sizeof formatted);
  char expected[4400];
  snprintf(expected, sizeof expected, "%s:4:12: negative value for 'count'", path);
  STC_CHECK_CONTAINS(formatted, expected);
}

/* ---- merging and hints ---- */

STC_TEST(profile_merge_sums_with_weights) {
  stc_profile *a = NULL, *b = NULL, *merged = NULL;
  STC_CHECK_EQ_INT(stc_profile_create("x", "cpu:a", "t", &a), STC_OK);
  STC_CHECK_EQ_INT(stc_profile_create("y", "cpu:b", "t", &b), STC_OK);
  stc_profile_add_region(a, "shared", 10, 1000, 300, 50);
  stc_profile_add_region(a, "only-a", 1, 7, 7, 0);
  stc_profile_add_region(b, "shared", 4, 600, 500, 8);
  stc_profile_add_region(b, "only-b", 3, 2001, 900, 3);
  const stc_profile *inputs[2] = {a, b};
  stc_error err;
  /* Unweighted: plain sums, max of max, ranked by total time. */
  STC_CHECK_EQ_INT(stc_profile_merge(inputs, NULL, 2, &merged, &err), STC_OK);
  STC_CHECK_EQ_U64(merged->num_regions, 3);
  STC_CHECK_STR_EQ(merged->regions[0].id, "only-b");
  STC_CHECK_STR_EQ(merged->regions[1].id, "shared");
  STC_CHECK_EQ_U64(merged->regions[1].count, 14);
  STC_CHECK_EQ_U64(merged->regions[1].total_ns, 1600);
  STC_CHECK_EQ_U64(merged->regions[1].max_ns, 500);
  STC_CHECK_EQ_U64(merged->regions[1].bytes, 58);
  STC_CHECK_STR_EQ(merged->environment, "mixed");
  STC_CHECK_STR_EQ(merged->producer, "stc " STC_VERSION_STRING);
  stc_profile_destroy(merged);
  /* a counts twice, b half: shared = 2*a + b/2 (rounded to nearest). */
  const double weights[2] = {2.0, 0.5};
  STC_CHECK_EQ_INT(stc_profile_merge(inputs, weights, 2, &merged, &err), STC_OK);
  STC_CHECK_STR_EQ(merged->regions[0].id, "shared");
  STC_CHECK_EQ_U64(merged->regions[0].count, 22);
  STC_CHECK_EQ_U64(merged->regions[0].total_ns, 2300);
  STC_CHECK_EQ_U64(merged->regions[0].max_ns, 500); /* max is not weighted */
  STC_CHECK_EQ_U64(merged->regions[0].bytes, 104);
  STC_CHECK_STR_EQ(merged->regions[1].id, "only-b");
  STC_CHECK_EQ_U64(merged->regions[1].count, 2);      /* 1.5 rounds to 2 */
  STC_CHECK_EQ_U64(merged->regions[1].total_ns, 1001); /* 1000.5 rounds up */
  STC_CHECK_EQ_U64(merged->regions[2].total_ns, 14);
  stc_profile_destroy(merged);
  /* One environment everywhere is kept. */
  const stc_profile *same[2] = {a, a};
  STC_CHECK_EQ_INT(stc_profile_merge(same, NULL, 2, &merged, &err), STC_OK);
  STC_CHECK_STR_EQ(merged->environment, "cpu:a");
  STC_CHECK_EQ_U64(merged->regions[0].count, 20);
  stc_profile_destroy(merged);
  stc_profile_destroy(a);
  stc_profile_destroy(b);
}

STC_TEST(profile_merge_saturates_and_rejects_bad_weights) {
  stc_profile *a = NULL, *merged = NULL;
  STC_CHECK_EQ_INT(stc_profile_create("x", "e", "t", &a), STC_OK);
  stc_profile_add_region(a, "r", UINT64_MAX - 1, UINT64_MAX / 2, 5, 1);
  const stc_profile *inputs[3] = {a, a, a};
  stc_error err;
  STC_CHECK_EQ_INT(stc_profile_merge(inputs, NULL, 3, &merged, &err), STC_OK);
  STC_CHECK_EQ_U64(merged->regions[0].count, UINT64_MAX);
  STC_CHECK_EQ_U64(merged->regions[0].total_ns, UINT64_MAX);
  STC_CHECK_EQ_U64(merged->regions[0].bytes, 3);
  stc_profile_destroy(merged);
  const double big[1] = {1e300};
  STC_CHECK_EQ_INT(stc_profile_merge(inputs, big, 1, &merged, &err), STC_OK);
  STC_CHECK_EQ_U64(merged->regions[0].total_ns, UINT64_MAX);
  stc_profile_destroy(merged);
  const double bad[] = {0.0, -1.0, NAN, INFINITY};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    double weights[3] = {1.0, bad[i], 1.0};
    merged = (stc_profile *)&err;
    STC_CHECK_EQ_INT(stc_profile_merge(inputs, weights, 3, &merged, &err), STC_ERR_INVALID);
    STC_CHECK(merged == NULL);
    STC_CHECK_CONTAINS(err.message, "weight");
  }
  STC_CHECK_EQ_INT(stc_profile_merge(inputs, NULL, 0, &merged, &err), STC_ERR_INVALID);
  stc_profile_destroy(a);
}

STC_TEST(profile_from_and_to_hints) {
  stc_hints *hints = NULL;
  STC_CHECK_EQ_INT(stc_hints_create(16, &hints), STC_OK);
  stc_hints_record(hints, "cold", 10, 1);
  stc_hints_record(hints, "hot", 5000, 100);
  stc_hints_record(hints, "hot", 7000, 100);
  stc_profile *profile = NULL;
  STC_CHECK_EQ_INT(stc_profile_from_hints(hints, "stc 0.1.0", "cpu:test", &profile), STC_OK);
  STC_CHECK_EQ_U64(profile->num_regions, 2);
  STC_CHECK_STR_EQ(profile->regions[0].id, "hot"); /* rank order */
  STC_CHECK_EQ_U64(profile->regions[0].count, 2);
  STC_CHECK_EQ_U64(profile->regions[0].total_ns, 12000);
  STC_CHECK_EQ_U64(profile->regions[0].max_ns, 7000);
  STC_CHECK_EQ_U64(profile->regions[0].bytes, 200);
  STC_CHECK_STR_EQ(profile->environment, "cpu:test");
  /* Loading the profile into a store accumulates onto what is there. */
  STC_CHECK_EQ_INT(stc_profile_to_hints(profile, hints), STC_OK);
  stc_region_record record;
  STC_CHECK(stc_hints_record_for(hints, "hot", &record));
  STC_CHECK_EQ_U64(record.dispatch_count, 4);
  STC_CHECK_EQ_U64(record.total_ns, 24000);
  STC_CHECK_EQ_U64(record.max_ns, 7000);
  stc_hints *fresh = NULL;
  STC_CHECK_EQ_INT(stc_hints_create(16, &fresh), STC_OK);
  STC_CHECK_EQ_INT(stc_profile_to_hints(profile, fresh), STC_OK);
  STC_CHECK_EQ_U64(stc_hints_mean_ns(fresh, "hot"), 6000);
  STC_CHECK(stc_hints_is_hot(fresh, "hot") == false); /* 6 us < 100 us */
  STC_CHECK_EQ_U64(stc_hints_len(fresh), 2);
  stc_hints_destroy(fresh);
  stc_profile_destroy(profile);
  /* An empty store gives an empty profile. */
  stc_hints_clear(hints);
  STC_CHECK_EQ_INT(stc_profile_from_hints(hints, NULL, NULL, &profile), STC_OK);
  STC_CHECK_EQ_U64(profile->num_regions, 0);
  stc_profile_destroy(profile);
  stc_hints_destroy(hints);
}

STC_TEST(profile_write_rejects_invalid_utf8) {
  stc_profile *profile = NULL;
  STC_CHECK_EQ_INT(stc_profile_create("p", "e", "c", &profile), STC_OK);
  stc_profile_add_region(profile, "bad\xff", 1, 1, 1, 1);
  char *text = (char *)"untouched";
  stc_error err;
  STC_CHECK_EQ_INT(stc_profile_write_string(profile, &text, NULL, &err), STC_ERR_INVALID);
  STC_CHECK(text == NULL);
  STC_CHECK_CONTAINS(err.message, "cannot write profile");
  stc_profile_destroy(profile);
}
