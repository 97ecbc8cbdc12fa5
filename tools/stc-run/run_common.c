/* run_common.c - stc-run's shared pieces (run_common.h). */
#include "run_common.h"

#include "stc_diagnostic_text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const stc_run_result_names[4] = {"void", "i32", "i64", "f32"};

const char *stc_run_input_name = "<stdin>";

void stc_run_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("stc-run: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

void stc_run_print_line(const char *file, unsigned line, unsigned column,
                        const char *severity, const char *message) {
  if (file && (!*file || strcmp(file, "-") == 0))
    file = stc_run_input_name;
  stc_diagnostic_print_line(stderr, file, line, column, severity, message,
                            "stc-run: ");
}

double stc_run_seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) +
         (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

void buffer_append(byte_buffer *buffer, const void *bytes, size_t size) {
  if (buffer->failed)
    return;
  if (buffer->size + size + 1 > buffer->capacity) {
    size_t grown = buffer->capacity ? buffer->capacity * 2 : 4096;
    while (grown < buffer->size + size + 1)
      grown *= 2;
    char *data = realloc(buffer->data, grown);
    if (!data) {
      buffer->failed = true;
      return;
    }
    buffer->data = data;
    buffer->capacity = grown;
  }
  if (size) /* bytes may be NULL then (an empty buffer's data) */
    memcpy(buffer->data + buffer->size, bytes, size);
  buffer->size += size;
  buffer->data[buffer->size] = 0;
}

void buffer_printf(byte_buffer *buffer, const char *format, ...) {
  char text[256];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(text, sizeof text, format, args);
  va_end(args);
  if (length < 0 || (size_t)length >= sizeof text)
    buffer->failed = true;
  else
    buffer_append(buffer, text, (size_t)length);
}

void buffer_string(byte_buffer *buffer, const char *text, size_t length) {
  if (!text) {
    buffer_append(buffer, "-", 1);
    return;
  }
  buffer_printf(buffer, "%zu:", length);
  buffer_append(buffer, text, length);
}

int stc_run_check_entry_facts(const entry_facts *facts, const char *entry,
                              result_kind result) {
  if (!facts->found) {
    stc_run_error("entry point '@%s' not found in '%s'", entry,
                  stc_run_input_name);
    return EXIT_FAILURE_RUN;
  }
  if (!facts->is_llvm_func) {
    stc_run_error("entry point '@%s' is not an llvm.func", entry);
    return EXIT_FAILURE_RUN;
  }
  if (!facts->has_body) {
    stc_run_error("entry point '@%s' is only declared, it has no body", entry);
    return EXIT_FAILURE_RUN;
  }
  if (!facts->has_type) {
    stc_run_error("entry point '@%s' has no function type", entry);
    return EXIT_FAILURE_RUN;
  }
  if (facts->num_inputs != 0) {
    stc_run_error("entry point '@%s' takes %" PRIdPTR
                  " argument(s); stc-run calls it without arguments",
                  entry, facts->num_inputs);
    return EXIT_FAILURE_RUN;
  }
  if (!(facts->matches & (1u << result))) {
    stc_run_error("entry point '@%s' returns '%s' but --entry-point-result=%s",
                  entry, facts->result_text, stc_run_result_names[result]);
    return EXIT_FAILURE_RUN;
  }
  return -1;
}
