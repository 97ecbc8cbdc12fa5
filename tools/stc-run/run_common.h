/* run_common.h - what stc-run's driver (stc-run.c, MLIR-free: an
 * object-cache hit starts without loading MLIR) and its compiler module
 * (compiler.c, loaded on a miss) share: exit codes, messages, the entry
 * point's facts and their check, growable byte buffers. Depends on libc. */
#ifndef STC_RUN_COMMON_H
#define STC_RUN_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum {
  EXIT_OK = 0,
  EXIT_FAILURE_RUN = 1,
  EXIT_USAGE = 2,
  EXIT_INPUT = 3,
};

typedef enum result_kind {
  RESULT_VOID,
  RESULT_I32,
  RESULT_I64,
  RESULT_F32,
} result_kind;

/* What the table of a loadable part of stc-run begins with (compiler.h,
 * jit.h): the driver refuses a part of another build. */
typedef struct stc_run_part_header {
  unsigned abi;        /* the table's interface version */
  const char *version; /* stc_version() of the part's build */
} stc_run_part_header;

/* "void", "i32", "i64", "f32": --entry-point-result's values. */
extern const char *const stc_run_result_names[4];

/* The input's name in messages: the file, or "<stdin>". Each side sets
 * its own (the module gets it with its request). */
extern const char *stc_run_input_name;

/* "stc-run: error: <message>\n" on stderr. */
void stc_run_error(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/* Prints "file:line:col: severity: message" the way stc-run names files,
 * with "stc-run: " in place of the location when there is none; a file
 * "-" or "" (the parser's name for its buffer) is the input's name. */
void stc_run_print_line(const char *file, unsigned line, unsigned column,
                        const char *severity, const char *message);

double stc_run_seconds_since(const struct timespec *start);

/* A growable buffer (the object cache's key and metadata). */
typedef struct byte_buffer {
  char *data;
  size_t size, capacity;
  bool failed; /* out of memory: the buffer is incomplete */
} byte_buffer;

void buffer_append(byte_buffer *buffer, const void *bytes, size_t size);
void buffer_printf(byte_buffer *buffer, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* A length-prefixed string: "<length>:<bytes>", or "-" for NULL. */
void buffer_string(byte_buffer *buffer, const char *text, size_t length);

/* What the entry-point check needs to know about the entry symbol: read
 * from the module on a compile, from the object cache's metadata on a hit,
 * so that both say the same. */
typedef struct entry_facts {
  bool found;
  bool is_llvm_func;
  bool has_body;
  bool has_type;
  intptr_t num_inputs;
  unsigned matches; /* bit k: the result type matches result_kind k */
  char result_text[256];
} entry_facts;

/* Exit code of the entry-point checks (after printing why), or -1 when
 * entry can be called with no arguments and returns `result`. */
int stc_run_check_entry_facts(const entry_facts *facts, const char *entry,
                              result_kind result);

#endif /* STC_RUN_COMMON_H */
