/* Unit tests of the vendor-BLAS entry points (runtime/blas.c): each entry
 * point against a plain double-precision loop, on row-major, column-major,
 * offset/padded and non-BLAS (strided both ways) operands, with the library
 * loaded (the default: tools/install-deps.sh installs OpenBLAS) and with it
 * refused (STC_BLAS=off, STC_BLAS_LIBRARY=<missing>): the entry points stay
 * correct and BLAS variants become ineligible with the reason. Eligibility
 * and identity are decided from the library's file without loading it
 * (library_lookup.c): a stand-in library (fake_blas.c) that appears,
 * disappears, changes or loses its dependency checks that. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif
#include "stc_test.h"

#include "../../runtime/dispatch_internal.h"
#include "stc/rt_blas.h"

#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deterministic values in [-1, 1). */
static double value(int64_t i) { return (double)((i * 7919 + 13) % 2003) / 1001.5 - 1.0; }

/* A 2-D operand laid out in a buffer of `span` elements. */
typedef struct operand {
  double *f64;
  float *f32;
  stc_rt_memref2 d;
} operand;

static operand make(bool f64, int64_t rows, int64_t cols, int64_t offset,
                    int64_t s0, int64_t s1, int64_t span) {
  operand o = {0};
  if (f64)
    o.f64 = calloc((size_t)span, sizeof(double));
  else
    o.f32 = calloc((size_t)span, sizeof(float));
  for (int64_t i = 0; i < span; i++) {
    if (f64)
      o.f64[i] = value(i + rows * 31);
    else
      o.f32[i] = (float)value(i + rows * 31);
  }
  o.d.allocated = o.d.aligned = f64 ? (void *)o.f64 : (void *)o.f32;
  o.d.offset = offset;
  o.d.sizes[0] = rows;
  o.d.sizes[1] = cols;
  o.d.strides[0] = s0;
  o.d.strides[1] = s1;
  return o;
}

static double get(const operand *o, int64_t i, int64_t j) {
  int64_t at = o->d.offset + i * o->d.strides[0] + j * o->d.strides[1];
  return o->f64 ? o->f64[at] : (double)o->f32[at];
}

static void release(operand *o) {
  free(o->f64);
  free(o->f32);
}

/* Layouts of an r x c operand: row-major padded and offset, column-major,
 * and strided both ways (only the loop can do it). */
enum { ROW, COL, STRIDED, NUM_LAYOUTS };
static operand shaped(bool f64, int layout, int64_t r, int64_t c) {
  switch (layout) {
  case ROW:
    return make(f64, r, c, 3, c + 5, 1, 3 + r * (c + 5));
  case COL:
    return make(f64, r, c, 0, 1, r, r * c);
  default:
    return make(f64, r, c, 1, 2 * c, 2, 1 + 2 * r * c);
  }
}

/* C += A B through the entry point, against the loop in double. */
static bool matmul_matches(bool f64, int la, int lb, int lc, int64_t m,
                           int64_t n, int64_t k) {
  operand a = shaped(f64, la, m, k), b = shaped(f64, lb, k, n),
          c = shaped(f64, lc, m, n);
  double *want = malloc(sizeof(double) * (size_t)(m * n + 1));
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = get(&c, i, j);
      for (int64_t x = 0; x < k; x++)
        acc += get(&a, i, x) * get(&b, x, j);
      want[i * n + j] = acc;
    }
  if (f64)
    _mlir_ciface_stc_rt_blas_matmul_f64(&a.d, &b.d, &c.d);
  else
    _mlir_ciface_stc_rt_blas_matmul_f32(&a.d, &b.d, &c.d);
  bool ok = true;
  double tolerance = f64 ? 1e-12 : 1e-4;
  for (int64_t i = 0; i < m && ok; i++)
    for (int64_t j = 0; j < n && ok; j++)
      ok = fabs(get(&c, i, j) - want[i * n + j]) <= tolerance * (1.0 + (double)k);
  if (!ok)
    fprintf(stderr, "matmul %s layouts %d,%d,%d %" PRId64 "x%" PRId64 "x%" PRId64
                    " differs\n", f64 ? "f64" : "f32", la, lb, lc, m, n, k);
  free(want);
  release(&a);
  release(&b);
  release(&c);
  return ok;
}

static bool every_layout_matches(void) {
  static const int64_t sizes[][3] = {{17, 13, 29}, {1, 9, 4}, {8, 1, 1}, {5, 6, 0}};
  for (int f64 = 0; f64 < 2; f64++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (int la = 0; la < NUM_LAYOUTS; la++)
        for (int lb = 0; lb < NUM_LAYOUTS; lb++)
          for (int lc = 0; lc < NUM_LAYOUTS; lc++)
            if (!matmul_matches(f64, la, lb, lc, sizes[s][0], sizes[s][1],
                                sizes[s][2]))
              return false;
  return true;
}

/* y += A x (matvec) or y += x A (vecmat) through the entry points. */
static bool gemv_matches(bool f64, bool vecmat, int layout, int64_t rows,
                         int64_t cols) {
  operand a = shaped(f64, layout, rows, cols);
  int64_t in = vecmat ? rows : cols, out = vecmat ? cols : rows;
  /* Vectors as n x 1 operands with a stride of 3 (increments > 1). */
  operand x = make(f64, in, 1, 2, 3, 1, 2 + 3 * in);
  operand y = make(f64, out, 1, 1, 3, 1, 1 + 3 * out);
  double *want = malloc(sizeof(double) * (size_t)(out + 1));
  for (int64_t o = 0; o < out; o++) {
    double acc = get(&y, o, 0);
    for (int64_t i = 0; i < in; i++)
      acc += get(&x, i, 0) * (vecmat ? get(&a, i, o) : get(&a, o, i));
    want[o] = acc;
  }
  stc_rt_memref1 xv = {x.d.allocated, x.d.aligned, x.d.offset, {in}, {3}};
  stc_rt_memref1 yv = {y.d.allocated, y.d.aligned, y.d.offset, {out}, {3}};
  if (vecmat && f64)
    _mlir_ciface_stc_rt_blas_vecmat_f64(&xv, &a.d, &yv);
  else if (vecmat)
    _mlir_ciface_stc_rt_blas_vecmat_f32(&xv, &a.d, &yv);
  else if (f64)
    _mlir_ciface_stc_rt_blas_matvec_f64(&a.d, &xv, &yv);
  else
    _mlir_ciface_stc_rt_blas_matvec_f32(&a.d, &xv, &yv);
  bool ok = true;
  for (int64_t o = 0; o < out && ok; o++)
    ok = fabs(get(&y, o, 0) - want[o]) <= (f64 ? 1e-12 : 1e-4) * (1.0 + (double)in);
  if (!ok)
    fprintf(stderr, "%s %s layout %d differs\n", vecmat ? "vecmat" : "matvec",
            f64 ? "f64" : "f32", layout);
  free(want);
  release(&a);
  release(&x);
  release(&y);
  return ok;
}

static bool every_gemv_matches(void) {
  for (int f64 = 0; f64 < 2; f64++)
    for (int vecmat = 0; vecmat < 2; vecmat++)
      for (int layout = 0; layout < NUM_LAYOUTS; layout++)
        if (!gemv_matches(f64, vecmat, layout, 23, 11) ||
            !gemv_matches(f64, vecmat, layout, 1, 7))
          return false;
  return true;
}

/* batch_matmul: three batches, the middle operand broadcast (stride 0). */
static bool batch_matches(void) {
  enum { B = 3, M = 6, N = 5, K = 7 };
  float a[B * M * K], b[K * N], c[B * M * N], want[B * M * N];
  for (int i = 0; i < B * M * K; i++)
    a[i] = (float)value(i);
  for (int i = 0; i < K * N; i++)
    b[i] = (float)value(i + 500);
  for (int i = 0; i < B * M * N; i++)
    c[i] = want[i] = (float)value(i + 900);
  for (int p = 0; p < B; p++)
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double acc = want[(p * M + i) * N + j];
        for (int x = 0; x < K; x++)
          acc += (double)a[(p * M + i) * K + x] * b[x * N + j];
        want[(p * M + i) * N + j] = (float)acc;
      }
  stc_rt_memref3 da = {a, a, 0, {B, M, K}, {M * K, K, 1}};
  stc_rt_memref3 db = {b, b, 0, {B, K, N}, {0, N, 1}};
  stc_rt_memref3 dc = {c, c, 0, {B, M, N}, {M * N, N, 1}};
  _mlir_ciface_stc_rt_blas_batch_matmul_f32(&da, &db, &dc);
  for (int i = 0; i < B * M * N; i++)
    if (fabsf(c[i] - want[i]) > 1e-4f)
      return false;
  return true;
}

static bool ineligible(const char **reason) {
  static const stc_rt_variant variants[2] = {
      {"reference", "1", NULL, NULL, 0, STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
      {"matmul_blas", "1", NULL, NULL, 0, STC_RT_ELIGIBLE_BLAS, 0, NULL}};
  stc_rt_site site = {.num_variants = 2, .variants = variants};
  *reason = stc_rt__ineligible_reason(&site, 1);
  return *reason != NULL;
}

STC_TEST(blas_loads_by_default_and_variants_are_eligible) {
  unsetenv("STC_BLAS");
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
  const char *library = NULL, *why = NULL;
  STC_CHECK(stc_rt_blas_available(&library, &why));
  STC_CHECK(library != NULL && why == NULL);
  STC_CHECK_CONTAINS(library, "blas");
  const char *reason = NULL;
  STC_CHECK(!ineligible(&reason));
}

STC_TEST(blas_entry_points_match_a_loop_on_every_layout) {
  unsetenv("STC_BLAS");
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
  STC_CHECK(stc_rt_blas_available(NULL, NULL));
  STC_CHECK(every_layout_matches());
  STC_CHECK(every_gemv_matches());
  STC_CHECK(batch_matches());
}

/* The identity trust_verified keys BLAS variants by: the file loaded (real
 * path, size, mtime, build id), the same whichever name loaded it. */
STC_TEST(blas_identity_names_the_file_loaded) {
  unsetenv("STC_BLAS");
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
  STC_CHECK(stc_rt_blas_available(NULL, NULL));
  const char *identity = stc_rt__blas_identity();
  STC_CHECK(identity != NULL);
  char first[PATH_MAX + 256], path[PATH_MAX];
  snprintf(first, sizeof first, "%s", identity ? identity : "");
  STC_CHECK_EQ_INT(strncmp(first, "blas=/", 6), 0);
  STC_CHECK_CONTAINS(first, ";build-id=");
  /* The path is real (no symlink left) and the size is the file's. */
  const char *end = strstr(first, ";size=");
  STC_CHECK(end != NULL);
  if (end) {
    snprintf(path, sizeof path, "%.*s", (int)(end - first - 5), first + 5);
    char resolved[PATH_MAX];
    struct stat st;
    STC_CHECK(realpath(path, resolved) && strcmp(resolved, path) == 0);
    STC_CHECK(stat(path, &st) == 0);
    char size[64];
    snprintf(size, sizeof size, ";size=%" PRIu64 ";", (uint64_t)st.st_size);
    STC_CHECK_CONTAINS(first, size);
    /* Loaded by its real path instead of a soname: the same identity. */
    setenv("STC_BLAS_LIBRARY", path, 1);
    stc_rt__blas_reset();
    STC_CHECK(stc_rt_blas_available(NULL, NULL));
    identity = stc_rt__blas_identity();
    STC_CHECK(identity && strcmp(identity, first) == 0);
    unsetenv("STC_BLAS_LIBRARY");
  }
  /* No library: no identity. */
  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
  STC_CHECK(stc_rt__blas_identity() == NULL);
  unsetenv("STC_BLAS");
  stc_rt__blas_reset();
}

STC_TEST(blas_off_makes_variants_ineligible_and_entry_points_still_right) {
  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
  const char *library = NULL, *why = NULL;
  STC_CHECK(!stc_rt_blas_available(&library, &why));
  STC_CHECK(library == NULL && why != NULL);
  STC_CHECK_CONTAINS(why, "STC_BLAS=off");
  const char *reason = NULL;
  STC_CHECK(ineligible(&reason));
  STC_CHECK_CONTAINS(reason, "vendor BLAS not loaded: STC_BLAS=off");
  STC_CHECK(every_layout_matches());
  STC_CHECK(every_gemv_matches());
  STC_CHECK(batch_matches());
  unsetenv("STC_BLAS");
  stc_rt__blas_reset();
}

STC_TEST(blas_missing_library_says_which_and_why) {
  unsetenv("STC_BLAS");
  setenv("STC_BLAS_LIBRARY", "/nonexistent/libnoblas.so", 1);
  stc_rt__blas_reset();
  const char *why = NULL;
  STC_CHECK(!stc_rt_blas_available(NULL, &why));
  STC_CHECK_CONTAINS(why, "/nonexistent/libnoblas.so");
  const char *reason = NULL;
  STC_CHECK(ineligible(&reason));
  STC_CHECK_CONTAINS(reason, "vendor BLAS not loaded: /nonexistent/libnoblas.so");
  /* A library without CBLAS: loads, but lacks the routines. */
  setenv("STC_BLAS_LIBRARY", "libm.so.6", 1);
  stc_rt__blas_reset();
  STC_CHECK(!stc_rt_blas_available(NULL, &why));
  STC_CHECK_CONTAINS(why, "libm.so.6 lacks cblas_sgemm");
  STC_CHECK(batch_matches());
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
}

/* Eight threads make the first BLAS call of the process at once: one loads
 * the library, every call computes the right product. */
static void *concurrent_matmul(void *arg) {
  bool *ok = arg;
  *ok = matmul_matches(false, ROW, COL, ROW, 17, 13, 29) &&
        matmul_matches(true, ROW, ROW, COL, 9, 11, 7);
  return NULL;
}

STC_TEST_THREADED(blas_first_calls_race_safely) {
  unsetenv("STC_BLAS");
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
  enum { THREADS = 8 };
  pthread_t threads[THREADS];
  bool ok[THREADS] = {false};
  for (int i = 0; i < THREADS; i++)
    STC_CHECK(pthread_create(&threads[i], NULL, concurrent_matmul, &ok[i]) == 0);
  for (int i = 0; i < THREADS; i++)
    pthread_join(threads[i], NULL);
  for (int i = 0; i < THREADS; i++)
    STC_CHECK(ok[i]);
  STC_CHECK(stc_rt_blas_available(NULL, NULL));
}

/* ---- eligibility without loading (runtime/library_lookup.c) ---- */

/* A directory of the test's own holding copies of the fake CBLAS library
 * and its dependency (test/unit/fake_blas.c); lib and dep get their paths.
 * Each test uses its own name: a copy loaded once stays loaded. */
static bool fake_blas_in(const char *name, char *lib, char *dep,
                         size_t size) {
  char dir[PATH_MAX - 32];
  snprintf(dir, sizeof dir, "%s/%s", stc_test_tmpdir(), name);
  mkdir(dir, 0700);
  snprintf(lib, size, "%s/libstc_fake_blas.so", dir);
  snprintf(dep, size, "%s/libstc_fake_blas_dep.so", dir);
  return stc_test_copy_file(STC_FAKE_BLAS, lib) && stc_test_copy_file(STC_FAKE_BLAS_DEP, dep);
}

/* Whether an object whose path contains `part` is mapped in the process. */
static int find_mapped(struct dl_phdr_info *info, size_t size, void *part) {
  (void)size;
  return info->dlpi_name && strstr(info->dlpi_name, part) ? 1 : 0;
}
static bool mapped(const char *part) {
  return dl_iterate_phdr(find_mapped, (void *)part) != 0;
}

/* The installed library: eligibility and identity come from its file, and
 * only a BLAS variant about to run loads it - as the same identity. */
STC_TEST(blas_eligibility_and_identity_need_no_load) {
  unsetenv("STC_BLAS");
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
  const char *reason = NULL;
  if (ineligible(&reason))
    STC_SKIP("no vendor BLAS installed (tools/install-deps.sh installs "
             "libopenblas0)");
  STC_CHECK(stc_rt__blas_probed());
  STC_CHECK(!stc_rt__blas_attempted());
  STC_CHECK(!mapped("blas"));
  const char *identity = stc_rt__blas_identity();
  STC_CHECK(identity && strncmp(identity, "blas=/", 6) == 0);
  char before[PATH_MAX + 256];
  snprintf(before, sizeof before, "%s", identity ? identity : "");
  STC_CHECK(!stc_rt__blas_attempted());
  STC_CHECK(stc_rt__blas_load(NULL));
  STC_CHECK(stc_rt__blas_attempted());
  STC_CHECK(mapped("blas"));
  identity = stc_rt__blas_identity();
  STC_CHECK(identity && strcmp(identity, before) == 0);
  STC_CHECK(!ineligible(&reason));
  STC_CHECK(every_layout_matches());
}

/* A library named by path that is missing, then appears (found, not
 * loaded), then disappears before anything runs: its load fails with a
 * warning, BLAS variants become ineligible, nothing crashes, and the entry
 * points stay right (the loop). */
STC_TEST(blas_library_that_appears_and_disappears) {
  char lib[PATH_MAX], dep[PATH_MAX];
  STC_CHECK(fake_blas_in("appears", lib, dep, sizeof lib));
  STC_CHECK(unlink(lib) == 0);
  unsetenv("STC_BLAS");
  setenv("STC_BLAS_LIBRARY", lib, 1);
  stc_rt__blas_reset();
  const char *reason = NULL;
  STC_CHECK(ineligible(&reason));
  STC_CHECK_CONTAINS(reason, "No such file or directory");
  STC_CHECK(stc_rt__blas_identity() == NULL);
  STC_CHECK(!stc_rt__blas_attempted());
  /* It appears: found by its file alone. */
  STC_CHECK(stc_test_copy_file(STC_FAKE_BLAS, lib));
  stc_rt__blas_reset();
  STC_CHECK(!ineligible(&reason));
  const char *identity = stc_rt__blas_identity();
  STC_CHECK(identity != NULL);
  char real[PATH_MAX], expected[PATH_MAX + 16];
  STC_CHECK(realpath(lib, real) != NULL);
  snprintf(expected, sizeof expected, "blas=%s;size=", real);
  STC_CHECK(identity && strncmp(identity, expected, strlen(expected)) == 0);
  STC_CHECK(!stc_rt__blas_attempted());
  STC_CHECK(!mapped("libstc_fake_blas"));
  /* It disappears before a BLAS variant runs. */
  STC_CHECK(unlink(lib) == 0);
  const char *why = NULL;
  STC_CHECK(!stc_rt__blas_load(&why));
  STC_CHECK(why != NULL);
  STC_CHECK_CONTAINS(why, "libstc_fake_blas.so");
  STC_CHECK(ineligible(&reason));
  STC_CHECK_CONTAINS(reason, "vendor BLAS not loaded: ");
  STC_CHECK(stc_rt__blas_identity() == NULL);
  STC_CHECK(!stc_rt_blas_available(NULL, NULL));
  STC_CHECK(every_layout_matches());
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
}

/* Present, of unchanged identity, but broken (its dependency is gone): the
 * lookup finds it, the load fails, and says why. */
STC_TEST(blas_present_but_broken_library_fails_its_load_cleanly) {
  char lib[PATH_MAX], dep[PATH_MAX];
  STC_CHECK(fake_blas_in("broken", lib, dep, sizeof lib));
  STC_CHECK(unlink(dep) == 0);
  unsetenv("STC_BLAS");
  setenv("STC_BLAS_LIBRARY", lib, 1);
  stc_rt__blas_reset();
  const char *reason = NULL;
  STC_CHECK(!ineligible(&reason)); /* the file is there */
  STC_CHECK(stc_rt__blas_identity() != NULL);
  const char *why = NULL;
  STC_CHECK(!stc_rt__blas_load(&why));
  STC_CHECK(why != NULL);
  STC_CHECK_CONTAINS(why, "libstc_fake_blas_dep.so");
  STC_CHECK(ineligible(&reason));
  STC_CHECK_CONTAINS(reason, "libstc_fake_blas_dep.so");
  STC_CHECK(batch_matches());
  /* Files that are no shared object of this machine are not found. */
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/broken/libtext.so", stc_test_tmpdir());
  FILE *text = fopen(path, "w");
  STC_CHECK(text != NULL);
  if (text) {
    fputs("INPUT(-lopenblas)\n", text); /* a linker script */
    fclose(text);
  }
  setenv("STC_BLAS_LIBRARY", path, 1);
  stc_rt__blas_reset();
  STC_CHECK(ineligible(&reason));
  STC_CHECK_CONTAINS(reason, "libtext.so: not an ELF file");
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
}

/* A fake BLAS copied into its own directory `name`, chosen by
 * STC_BLAS_LIBRARY and looked up afresh; lib gets its path. */
static bool select_fake_blas(const char *name, char lib[PATH_MAX]) {
  char dep[PATH_MAX];
  if (!fake_blas_in(name, lib, dep, PATH_MAX))
    return false;
  unsetenv("STC_BLAS");
  setenv("STC_BLAS_LIBRARY", lib, 1);
  stc_rt__blas_reset();
  return true;
}

/* Makes path another file: bytes appended (a different size). */
static bool append_to(const char *path) {
  FILE *f = fopen(path, "ab");
  return f && fputs("appended", f) >= 0 && fclose(f) == 0;
}

/* The identity keys were made from the file found; if that file changes
 * before its load, what would run is not what the keys name: not loaded. */
STC_TEST(blas_library_changed_after_its_lookup_is_not_used) {
  char lib[PATH_MAX];
  STC_CHECK(select_fake_blas("changed", lib));
  const char *reason = NULL;
  STC_CHECK(!ineligible(&reason));
  STC_CHECK(append_to(lib));
  const char *why = NULL;
  STC_CHECK(!stc_rt__blas_load(&why));
  STC_CHECK(why != NULL);
  STC_CHECK_CONTAINS(why, "changed between its lookup and its load");
  STC_CHECK(ineligible(&reason));
  /* Unchanged, the same copy loads: the lookup and the load agree. */
  char lib2[PATH_MAX], dep2[PATH_MAX];
  STC_CHECK(fake_blas_in("unchanged", lib2, dep2, sizeof lib2));
  setenv("STC_BLAS_LIBRARY", lib2, 1);
  stc_rt__blas_reset();
  STC_CHECK(!ineligible(&reason));
  STC_CHECK(stc_rt__blas_load(&why));
  STC_CHECK(mapped("unchanged/libstc_fake_blas.so"));
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
}

/* The lookup reads no identity (real path, notes: only trust_verified keys
 * need them); asked for later, the identity is of the file the lookup
 * found, or unknown when that file changed in between - never the new
 * file's. */
STC_TEST(blas_identity_is_read_when_asked_and_only_of_the_file_found) {
  char lib[PATH_MAX];
  STC_CHECK(select_fake_blas("late", lib));
  const char *reason = NULL;
  STC_CHECK(!ineligible(&reason)); /* the lookup: found */
  const char *identity = stc_rt__blas_identity();
  STC_CHECK(identity != NULL);
  char expected[PATH_MAX + 256], why[PATH_MAX + 64];
  STC_CHECK_EQ_INT(stc_rt__library_examine(lib, expected, sizeof expected,
                                           why, sizeof why),
                   STC_RT__LIBRARY_FOUND);
  STC_CHECK(identity && strncmp(identity, "blas=", 5) == 0 &&
            strcmp(identity + 5, expected) == 0);

  stc_rt__blas_reset();
  STC_CHECK(!ineligible(&reason));
  STC_CHECK(append_to(lib)); /* another file since the lookup */
  STC_CHECK(stc_rt__blas_identity() == NULL);
  const char *load_why = NULL;
  STC_CHECK(!stc_rt__blas_load(&load_why));
  STC_CHECK_CONTAINS(load_why ? load_why : "",
                     "changed between its lookup and its load");
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__blas_reset();
}

/* OpenBLAS's idle workers spin about 0.1 s after each call, taking the
 * cores of whatever runs next (an OpenMP variant the tuner times right
 * after matmul_blas ran at half speed): loading caps the spin unless the
 * user chose a value, and STC_BLAS=off leaves the environment alone. */
STC_TEST(blas_caps_openblas_idle_spin_unless_the_user_set_it) {
  unsetenv("STC_BLAS");
  unsetenv("STC_BLAS_LIBRARY");
  unsetenv("OPENBLAS_THREAD_TIMEOUT");
  unsetenv("GOTO_THREAD_TIMEOUT");
  stc_rt__blas_reset();
  (void)stc_rt_blas_available(NULL, NULL);
  const char *cap = getenv("OPENBLAS_THREAD_TIMEOUT");
  STC_CHECK(cap != NULL);
  STC_CHECK_STR_EQ(cap ? cap : "", "22");

  setenv("OPENBLAS_THREAD_TIMEOUT", "10", 1);
  stc_rt__blas_reset();
  (void)stc_rt_blas_available(NULL, NULL);
  STC_CHECK_STR_EQ(getenv("OPENBLAS_THREAD_TIMEOUT"), "10");

  unsetenv("OPENBLAS_THREAD_TIMEOUT");
  setenv("GOTO_THREAD_TIMEOUT", "12", 1);
  stc_rt__blas_reset();
  (void)stc_rt_blas_available(NULL, NULL);
  STC_CHECK(getenv("OPENBLAS_THREAD_TIMEOUT") == NULL);
  unsetenv("GOTO_THREAD_TIMEOUT");

  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
  (void)stc_rt_blas_available(NULL, NULL);
  STC_CHECK(getenv("OPENBLAS_THREAD_TIMEOUT") == NULL);
  unsetenv("STC_BLAS");
  stc_rt__blas_reset();
}

/* A library reached through links (relative and absolute, a linked
 * directory, as Debian's /etc/alternatives chains are) is identified by the
 * real path realpath(3) gives, read from the open file's descriptor. */
STC_TEST(library_identity_names_the_real_path_through_links) {
  char dir[PATH_MAX - 64], lib[PATH_MAX], dep[PATH_MAX];
  STC_CHECK(fake_blas_in("linked", lib, dep, sizeof lib));
  snprintf(dir, sizeof dir, "%s/linked", stc_test_tmpdir());
  char alt[PATH_MAX], hop[PATH_MAX], link_dir[PATH_MAX], entry[PATH_MAX];
  snprintf(alt, sizeof alt, "%s/alternatives", dir);
  snprintf(hop, sizeof hop, "%s/alternatives/libblas.so.3", dir);
  snprintf(link_dir, sizeof link_dir, "%s/lib", dir);
  snprintf(entry, sizeof entry, "%s/lib/libblas.so.3", dir);
  STC_CHECK(mkdir(alt, 0700) == 0);
  STC_CHECK(symlink("../libstc_fake_blas.so", hop) == 0); /* relative */
  STC_CHECK(symlink(alt, link_dir) == 0);           /* a linked directory */
  char real[PATH_MAX];
  STC_CHECK(realpath(entry, real) != NULL);
  STC_CHECK(strstr(real, "/alternatives") == NULL);
  char identity[PATH_MAX + 256], why[PATH_MAX + 256];
  STC_CHECK_EQ_INT(stc_rt__library_examine(entry, identity, sizeof identity,
                                           why, sizeof why),
                   STC_RT__LIBRARY_FOUND);
  char expected[PATH_MAX + 16];
  snprintf(expected, sizeof expected, "%s;size=", real);
  STC_CHECK(strncmp(identity, expected, strlen(expected)) == 0);
  /* A name with a space at its end keeps it (not mistaken for a removed
   * file's "(deleted)"). */
  char spaced[PATH_MAX];
  snprintf(spaced, sizeof spaced, "%s/lib (deleted)", dir);
  STC_CHECK(stc_test_copy_file(STC_FAKE_BLAS, spaced));
  STC_CHECK_EQ_INT(stc_rt__library_examine(spaced, identity, sizeof identity,
                                           why, sizeof why),
                   STC_RT__LIBRARY_FOUND);
  STC_CHECK(realpath(spaced, real) != NULL);
  snprintf(expected, sizeof expected, "%s;size=", real);
  STC_CHECK(strncmp(identity, expected, strlen(expected)) == 0);
}
