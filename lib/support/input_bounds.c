/* Bounds on what hostile input can cost (see include/stc/input_bounds.h):
 * whole-file reading with a size limit, the nesting scan, the big-stack
 * runner and the file-size-limit guard for writers.
 *
 * In: a path (or stdin), a limit and the variable that overrides it.
 * Out: an owned NUL-terminated buffer, or an error naming the file and the
 * limit. The buffer grows geometrically but never beyond limit + 1 bytes, so
 * an endless input (/dev/zero, a pipe that never closes its end early) costs
 * at most the limit in memory and ends with an error. */
#include "stc/input_bounds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void stc_format_bytes(unsigned long long bytes, char *buf, size_t size) {
  static const char *const units[] = {"GiB", "MiB", "KiB"};
  static const unsigned shifts[] = {30, 20, 10};
  for (int i = 0; i < 3; i++)
    if (bytes >= (1ull << shifts[i]) &&
        (bytes & ((1ull << shifts[i]) - 1)) == 0) {
      snprintf(buf, size, "%llu %s", bytes >> shifts[i], units[i]);
      return;
    }
  snprintf(buf, size, "%llu bytes", bytes);
}

stc_status stc_read_limit(stc_read_limit_spec spec, size_t *out,
                          stc_error *err) {
  *out = (size_t)spec.fallback;
  const char *text = spec.variable ? getenv(spec.variable) : NULL;
  if (!text || !text[0])
    return STC_OK;
  unsigned long long value = 0;
  const char *p = text;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned digit = (unsigned)(*p - '0');
    if (value > (ULLONG_MAX - digit) / 10)
      goto bad;
    value = value * 10 + digit;
  }
  if (p == text)
    goto bad;
  unsigned shift = 0;
  if (*p == 'K' || *p == 'k')
    shift = 10, p++;
  else if (*p == 'M' || *p == 'm')
    shift = 20, p++;
  else if (*p == 'G' || *p == 'g')
    shift = 30, p++;
  if (*p || value == 0 || value > (SIZE_MAX - 1) >> shift)
    goto bad;
  *out = (size_t)(value << shift);
  return STC_OK;
bad:
  stc_error_set(err, NULL, 0, 0,
                "%s='%.100s' is not a byte count (a positive number with an "
                "optional K, M or G suffix)",
                spec.variable, text);
  return STC_ERR_INVALID;
}

/* The "too large" error; shown is the path as the user wrote it. */
static stc_status stc_too_large(const char *shown, const char *what,
                                stc_read_limit_spec spec, size_t limit,
                                stc_error *err) {
  char amount[64];
  stc_format_bytes(limit, amount, sizeof amount);
  if (spec.variable)
    stc_error_set(err, shown, 0, 0, "%s larger than %s (%s)", what, amount,
                  spec.variable);
  else
    stc_error_set(err, shown, 0, 0, "%s larger than %s", what, amount);
  return STC_ERR_INVALID;
}

stc_status stc_read_file_limited(const char *path, int allow_stdin,
                                 const char *what, stc_read_limit_spec spec,
                                 char **out, size_t *size, stc_error *err) {
  if (!out || !path || !what) {
    stc_error_set(err, NULL, 0, 0, "invalid arguments");
    return STC_ERR_INVALID;
  }
  *out = NULL;
  if (size)
    *size = 0;
  size_t limit;
  stc_status status = stc_read_limit(spec, &limit, err);
  if (status != STC_OK)
    return status;
  errno = 0;
  bool from_stdin = allow_stdin && strcmp(path, "-") == 0;
  const char *shown = from_stdin ? "<stdin>" : path;
  int fd = from_stdin ? STDIN_FILENO
                      : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int error = errno;
    stc_error_set(err, shown, 0, 0, "cannot open %s: %s", what,
                  strerror(error));
    errno = error;
    return STC_ERR_IO;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      (unsigned long long)st.st_size > limit) {
    if (!from_stdin)
      close(fd);
    errno = 0;
    return stc_too_large(shown, what, spec, limit, err);
  }
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (!from_stdin)
      close(fd);
    stc_error_set(err, shown, 0, 0, "cannot read %s: %s", what,
                  strerror(EISDIR));
    errno = EISDIR;
    return STC_ERR_IO;
  }
  char *buffer = NULL;
  size_t used = 0, capacity = 0;
  for (;;) {
    /* Room for one byte beyond the limit, so that more input is noticed,
     * and for the terminating NUL. */
    if (used == capacity) {
      if (capacity > limit) {
        status = stc_too_large(shown, what, spec, limit, err);
        break;
      }
      size_t grown = capacity ? capacity * 2 : 65536;
      if (grown < capacity || grown > limit + 1)
        grown = limit + 1;
      char *bigger = realloc(buffer, grown + 1);
      if (!bigger) {
        stc_error_set(err, shown, 0, 0, "out of memory reading %s", what);
        status = STC_ERR_NOMEM;
        break;
      }
      buffer = bigger;
      capacity = grown;
    }
    ssize_t got = read(fd, buffer + used, capacity - used);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      stc_error_set(err, shown, 0, 0, "cannot read %s: %s", what,
                    strerror(errno));
      status = STC_ERR_IO;
      break;
    }
    if (got == 0)
      break;
    used += (size_t)got;
    if (used > limit) {
      status = stc_too_large(shown, what, spec, limit, err);
      break;
    }
  }
  int saved_errno = status == STC_ERR_IO ? errno : 0;
  if (!from_stdin)
    close(fd);
  if (status != STC_OK) {
    free(buffer);
    errno = saved_errno;
    return status;
  }
  if (!buffer && !(buffer = malloc(1))) {
    stc_error_set(err, shown, 0, 0, "out of memory reading %s", what);
    return STC_ERR_NOMEM;
  }
  buffer[used] = 0;
  *out = buffer;
  if (size)
    *size = used;
  return STC_OK;
}

bool stc_text_nesting_exceeds(const char *text, size_t length, size_t limit,
                              unsigned *line, unsigned *column) {
  size_t depth = 0;
  unsigned at_line = 1, at_column = 1;
  for (size_t i = 0; i < length; i++, at_column++) {
    char c = text[i];
    if (c == '\n') {
      at_line++;
      at_column = 0;
    } else if (c == '"') {
      /* A string literal: brackets inside do not nest. */
      for (i++, at_column++; i < length && text[i] != '"'; i++, at_column++) {
        if (text[i] == '\\' && i + 1 < length)
          i++, at_column++;
        else if (text[i] == '\n')
          at_line++, at_column = 0;
      }
    } else if (c == '/' && i + 1 < length && text[i + 1] == '/') {
      while (i + 1 < length && text[i + 1] != '\n')
        i++;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit) {
        *line = at_line;
        *column = at_column;
        return true;
      }
    } else if ((c == ')' || c == ']' || c == '}' ||
                (c == '>' && !(i > 0 && text[i - 1] == '-'))) &&
               depth > 0) {
      /* '>' also appears in '>=' of integer sets: an unmatched closer only
       * lowers the count, which errs on the lenient side. */
      depth--;
    }
  }
  return false;
}

typedef struct stc_big_stack_call {
  int (*fn)(void *arg);
  void *arg;
  int result;
} stc_big_stack_call;

static void *stc_big_stack_main(void *data) {
  stc_big_stack_call *call = data;
  call->result = call->fn(call->arg);
  return NULL;
}

int stc_run_on_big_stack(size_t stack_bytes, int (*fn)(void *arg), void *arg) {
  stc_big_stack_call call = {fn, arg, 0};
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init(&attr) != 0)
    return fn(arg);
  bool started = pthread_attr_setstacksize(&attr, stack_bytes) == 0 &&
                 pthread_create(&thread, &attr, stc_big_stack_main, &call) == 0;
  pthread_attr_destroy(&attr);
  if (!started)
    return fn(arg);
  pthread_join(thread, NULL);
  return call.result;
}

void stc_file_size_guard_begin(stc_file_size_guard *guard) {
  sigset_t file_size_signal;
  sigemptyset(&file_size_signal);
  sigaddset(&file_size_signal, SIGXFSZ);
  guard->blocked =
      pthread_sigmask(SIG_BLOCK, &file_size_signal, &guard->old_mask) == 0;
}

void stc_file_size_guard_end(stc_file_size_guard *guard) {
  if (!guard->blocked)
    return;
  sigset_t file_size_signal, pending;
  sigemptyset(&file_size_signal);
  sigaddset(&file_size_signal, SIGXFSZ);
  /* A signal the caller blocked is theirs to handle. */
  if (!sigismember(&guard->old_mask, SIGXFSZ) && sigpending(&pending) == 0 &&
      sigismember(&pending, SIGXFSZ)) {
    struct timespec no_wait = {0, 0};
    while (sigtimedwait(&file_size_signal, NULL, &no_wait) == SIGXFSZ)
      ;
  }
  pthread_sigmask(SIG_SETMASK, &guard->old_mask, NULL);
  guard->blocked = false;
}
