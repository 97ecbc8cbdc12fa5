/* The unit-test runner: `<binary> NAME` runs one test, `<binary>` runs all,
 * `<binary> --list` prints the names. Exit status 0 iff every run test passed
 * and at least one did not skip; STC_TEST_SKIP_EXIT when every run test
 * skipped; 1 when any failed. */
#define _GNU_SOURCE
#include "stc_test.h"

#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

#define STC_TEST_MAX 512

static struct {
  const char *name;
  stc_test_fn fn;
} tests[STC_TEST_MAX];
static int num_tests;
static int current_failed;
static int current_skipped;
static char tmpdir[4096];

void stc_test_register(const char *name, stc_test_fn fn) {
  if (num_tests < STC_TEST_MAX) {
    tests[num_tests].name = name;
    tests[num_tests].fn = fn;
    num_tests++;
  }
}

void stc_test_fail(const char *file, int line, const char *text) {
  fprintf(stderr, "%s:%d: check failed: %s\n", file, line, text);
  current_failed = 1;
}

int stc_test_failed(void) { return current_failed; }

void stc_test_skip(const char *reason) {
  fprintf(stderr, "skipped: %s\n", reason);
  current_skipped = 1;
}

const char *stc_test_tmpdir(void) {
  if (!tmpdir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/stc-test-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
      perror("mkdtemp");
      exit(2);
    }
  }
  return tmpdir;
}

char *stc_test_read_file(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  char *data = malloc(1 << 20);
  *size = data ? fread(data, 1, 1 << 20, file) : 0;
  fclose(file);
  return data;
}

int stc_test_write_file(const char *path, const char *data, size_t size) {
  FILE *file = fopen(path, "wb");
  if (!file)
    return -1;
  size_t wrote = fwrite(data, 1, size, file);
  return fclose(file) == 0 && wrote == size ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* Runs test i: 1 if it failed, 0 if it passed, -1 if it skipped. */
static int run_one(int i) {
  current_failed = 0;
  current_skipped = 0;
  tests[i].fn();
  const char *verdict = current_failed    ? "FAIL"
                        : current_skipped ? "SKIP"
                                          : "ok  ";
  printf("%s %s\n", verdict, tests[i].name);
  fflush(stdout);
  return current_failed ? 1 : current_skipped ? -1 : 0;
}

int main(int argc, char **argv) {
  int failures = 0, ran = 0, skipped = 0;
  if (argc > 1 && strcmp(argv[1], "--list") == 0) {
    for (int i = 0; i < num_tests; i++)
      printf("%s\n", tests[i].name);
    return 0;
  }
  for (int i = 0; i < num_tests; i++) {
    int selected = argc <= 1;
    for (int a = 1; a < argc; a++)
      if (strcmp(argv[a], tests[i].name) == 0)
        selected = 1;
    if (!selected)
      continue;
    ran++;
    int result = run_one(i);
    failures += result > 0;
    skipped += result < 0;
  }
  if (argc > 1 && ran == 0) {
    fprintf(stderr, "no test named %s\n", argv[1]);
    return 2;
  }
  if (tmpdir[0] && failures == 0)
    nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  else if (tmpdir[0])
    fprintf(stderr, "scratch files kept in %s\n", tmpdir);
  if (failures)
    return 1;
  return ran > 0 && skipped == ran ? STC_TEST_SKIP_EXIT : 0;
}

bool stc_test_copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
  char buffer[65536];
  size_t got;
  bool ok = in && out;
  while (ok && (got = fread(buffer, 1, sizeof buffer, in)) > 0)
    ok = fwrite(buffer, 1, got, out) == got;
  if (in)
    fclose(in);
  if (out && fclose(out) != 0)
    ok = false;
  return ok;
}
