/* stc/input_bounds.h - bounds on what hostile or mistaken input can cost:
 * whole-file reading with a size limit, one function for every file stc
 * reads (MLIR input, profiles, variant libraries), so that /dev/zero ends
 * with an error naming the file and the limit instead of allocating until
 * memory runs out; a nesting-depth scan of MLIR text, so that deep nesting
 * is a located error before MLIR's recursive parser sees it; and a way to
 * run a tool's work on a thread with a big stack.
 *
 * Thread safety: the functions keep no state; stc_read_limit reads the
 * environment with getenv, so it must not race with setenv. */
#ifndef STC_INPUT_BOUNDS_H
#define STC_INPUT_BOUNDS_H

#include "stc/status.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Default limits per kind of input; each can be raised (or lowered) through
 * the environment variable named next to it. Cache records have their own
 * fixed bound (lib/tuner/cache.c). */
#define STC_MAX_INPUT_BYTES_DEFAULT (256ull << 20)   /* STC_MAX_INPUT_BYTES */
#define STC_MAX_PROFILE_BYTES_DEFAULT (64ull << 20)  /* STC_MAX_PROFILE_BYTES */
#define STC_MAX_LIBRARY_BYTES_DEFAULT (16ull << 20)  /* STC_MAX_LIBRARY_BYTES */

/* One kind of input: its limit and the variable that overrides it. */
typedef struct stc_read_limit_spec {
  const char *variable;        /* e.g. "STC_MAX_INPUT_BYTES"; may be NULL */
  unsigned long long fallback; /* used when the variable is unset or empty */
} stc_read_limit_spec;

/* The limit for one kind: the variable's value (decimal bytes with an
 * optional K, M or G suffix, binary multiples) or the fallback.
 * STC_ERR_INVALID with err naming the variable when the value is malformed
 * or zero; *out is then the fallback. */
stc_status stc_read_limit(stc_read_limit_spec spec, size_t *out,
                          stc_error *err);

/* Reads the whole of path ("-" means stdin when allow_stdin) into a
 * NUL-terminated buffer that the caller frees with free(); *size (may be
 * NULL) gets the length without the NUL. Fails with STC_ERR_INVALID and
 * "<what> larger than <limit> (<variable>)" (err's file is
 * the path, or "<stdin>") once more than limit
 * bytes arrive (a regular file larger than the limit fails before any read),
 * STC_ERR_IO when the file cannot be opened or read (errno is then the
 * cause; it is 0 after every other failure), STC_ERR_NOMEM. what
 * names the kind in messages ("input", "profile", "variant library"). */
stc_status stc_read_file_limited(const char *path, int allow_stdin,
                                 const char *what, stc_read_limit_spec spec,
                                 char **out, size_t *size, stc_error *err);

/* Writes a byte count as people read it ("256 MiB", "1000 bytes") into buf. */
void stc_format_bytes(unsigned long long bytes, char *buf, size_t size);

/* Bracket nesting ('(' '[' '{' '<') allowed in MLIR text before the parser
 * sees it; MLIR's parser recurses once or more per level (STC_MAX_NESTING). */
#define STC_MAX_NESTING_DEFAULT 4096ull

/* Scans MLIR text for bracket nesting deeper than limit, skipping string
 * literals and '//' comments. Returns true and sets *line and *column
 * (1-based) at the bracket that went one level too deep; false when the
 * text stays within the limit. */
bool stc_text_nesting_exceeds(const char *text, size_t length, size_t limit,
                              unsigned *line, unsigned *column);

/* Stack given to the thread of stc_run_on_big_stack: MLIR's parser, verifier
 * and printer recurse per nesting level, and a default 8 MiB stack holds a
 * few thousand levels. Address space only: pages are touched on use. */
#define STC_BIG_STACK_BYTES (1024ull << 20)

/* Runs fn(arg) on a new thread with a stack of stack_bytes and returns its
 * result; runs it on the calling thread when such a thread cannot be made
 * (address-space limits). */
int stc_run_on_big_stack(size_t stack_bytes, int (*fn)(void *arg), void *arg);

/* A file size limit (ulimit -f, RLIMIT_FSIZE) makes a write that crosses it
 * raise SIGXFSZ, whose default action kills the process. Writers of files
 * stc can do without (cache records, profiles) bracket their writes with
 * these two calls on one thread: in between, SIGXFSZ is blocked for that
 * thread, so the write fails with EFBIG instead; the end consumes the
 * signal such a write left pending (unless the caller had blocked SIGXFSZ
 * itself) and restores the mask. */
typedef struct stc_file_size_guard {
  sigset_t old_mask;
  bool blocked;
} stc_file_size_guard;
void stc_file_size_guard_begin(stc_file_size_guard *guard);
void stc_file_size_guard_end(stc_file_size_guard *guard);

#ifdef __cplusplus
}
#endif

#endif /* STC_INPUT_BOUNDS_H */
