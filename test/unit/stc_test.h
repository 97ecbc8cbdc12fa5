/* stc_test.h - a tiny unit-test harness. Each STC_TEST(name) in a test file
 * becomes its own ctest entry (test/unit/CMakeLists.txt reads the names from
 * the source); STC_TEST_THREADED marks tests that also run under TSan.
 *
 *   STC_TEST(hints_capacity_zero_disables_recording) {
 *     STC_CHECK(stc_hints_is_empty(h));
 *   }
 *
 * A failed check prints file:line and the expression, marks the test failed
 * and returns from the test function. STC_SKIP(reason) ends a test that
 * cannot run here (ctest shows it as skipped). */
#ifndef STC_TEST_H
#define STC_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef void (*stc_test_fn)(void);
void stc_test_register(const char *name, stc_test_fn fn);
void stc_test_fail(const char *file, int line, const char *text);
int stc_test_failed(void);
/* Marks the running test skipped (printed with the reason). A run in which
 * every selected test skipped and none failed exits with
 * STC_TEST_SKIP_EXIT, which ctest reports as "Skipped" (SKIP_RETURN_CODE in
 * test/unit/CMakeLists.txt), never as "Passed". */
void stc_test_skip(const char *reason);
#define STC_TEST_SKIP_EXIT 77
/* A scratch directory for this test (created fresh, removed at exit unless
 * the test failed). Static storage. */
const char *stc_test_tmpdir(void);
/* The first MiB of the file at path in a new buffer (the caller frees it),
 * *size bytes of it; NULL when it cannot be opened. */
char *stc_test_read_file(const char *path, size_t *size);
/* Copies the file at `from` to `to` (created or truncated); false when
 * either cannot be opened or a read or write fails. */
bool stc_test_copy_file(const char *from, const char *to);
/* Replaces the file at path with size bytes of data; 0 or -1. */
int stc_test_write_file(const char *path, const char *data, size_t size);

#define STC_TEST_DEFINE(name)                                                 \
  static void name(void);                                                     \
  __attribute__((constructor)) static void stc_test_register_##name(void) {   \
    stc_test_register(#name, name);                                           \
  }                                                                           \
  static void name(void)
#define STC_TEST(name) STC_TEST_DEFINE(name)
#define STC_TEST_THREADED(name) STC_TEST_DEFINE(name)

/* Skips the rest of the test: use it only where the check cannot run here
 * (say why), never to hide a failure. */
#define STC_SKIP(reason)                                                      \
  do {                                                                        \
    stc_test_skip(reason);                                                    \
    return;                                                                   \
  } while (0)

#define STC_CHECK(cond)                                                       \
  do {                                                                        \
    if (!(cond)) {                                                            \
      stc_test_fail(__FILE__, __LINE__, #cond);                               \
      return;                                                                 \
    }                                                                         \
  } while (0)

#define STC_CHECK_EQ_U64(a, b)                                                \
  do {                                                                        \
    unsigned long long stc_a_ = (unsigned long long)(a);                      \
    unsigned long long stc_b_ = (unsigned long long)(b);                      \
    if (stc_a_ != stc_b_) {                                                   \
      char stc_m_[256];                                                       \
      snprintf(stc_m_, sizeof stc_m_, "%s == %s (%llu vs %llu)", #a, #b,      \
               stc_a_, stc_b_);                                               \
      stc_test_fail(__FILE__, __LINE__, stc_m_);                              \
      return;                                                                 \
    }                                                                         \
  } while (0)

#define STC_CHECK_EQ_INT(a, b)                                                \
  do {                                                                        \
    long long stc_a_ = (long long)(a);                                        \
    long long stc_b_ = (long long)(b);                                        \
    if (stc_a_ != stc_b_) {                                                   \
      char stc_m_[256];                                                       \
      snprintf(stc_m_, sizeof stc_m_, "%s == %s (%lld vs %lld)", #a, #b,      \
               stc_a_, stc_b_);                                               \
      stc_test_fail(__FILE__, __LINE__, stc_m_);                              \
      return;                                                                 \
    }                                                                         \
  } while (0)

#define STC_CHECK_STR_EQ(a, b)                                                \
  do {                                                                        \
    const char *stc_a_ = (a);                                                 \
    const char *stc_b_ = (b);                                                 \
    if (!stc_a_ || !stc_b_ || strcmp(stc_a_, stc_b_) != 0) {                  \
      char stc_m_[1024];                                                      \
      snprintf(stc_m_, sizeof stc_m_, "%.100s == %.100s (\"%.300s\" vs \"%.300s\")", #a, #b, \
               stc_a_ ? stc_a_ : "(null)", stc_b_ ? stc_b_ : "(null)");       \
      stc_test_fail(__FILE__, __LINE__, stc_m_);                              \
      return;                                                                 \
    }                                                                         \
  } while (0)

/* Checks that haystack contains needle. */
#define STC_CHECK_CONTAINS(haystack, needle)                                  \
  do {                                                                        \
    const char *stc_h_ = (haystack);                                          \
    const char *stc_n_ = (needle);                                            \
    if (!stc_h_ || !strstr(stc_h_, stc_n_)) {                                 \
      char stc_m_[1024];                                                      \
      snprintf(stc_m_, sizeof stc_m_, "\"%.400s\" contains \"%.400s\"",         \
               stc_h_ ? stc_h_ : "(null)", stc_n_);                           \
      stc_test_fail(__FILE__, __LINE__, stc_m_);                              \
      return;                                                                 \
    }                                                                         \
  } while (0)

#endif /* STC_TEST_H */
