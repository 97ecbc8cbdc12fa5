/* text.c - whole-file reading and error lines for stc-opt's stages.
 * In: a path, printf formats. Out: an owned stc_text (passes/region_id.h), a
 * line on stderr. */
#include "stc_opt.h"

#include "stc/input_bounds.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool stc_opt_read_file(const char *path, stc_text *text, stc_error *err) {
  char *data = NULL;
  size_t size = 0;
  stc_read_limit_spec limit = {"STC_MAX_INPUT_BYTES",
                               STC_MAX_INPUT_BYTES_DEFAULT};
  if (stc_read_file_limited(path, 1, "input", limit, &data, &size, err) !=
      STC_OK)
    return false;
  stc_text_free(text);
  text->data = data;
  text->length = size;
  text->capacity = size + 1;
  text->out_of_memory = false;
  return true;
}

bool stc_opt_check_nesting(const stc_text *input, const char *file_name) {
  stc_read_limit_spec spec = {"STC_MAX_NESTING", STC_MAX_NESTING_DEFAULT};
  size_t limit;
  stc_error err;
  stc_error_clear(&err);
  if (stc_read_limit(spec, &limit, &err) != STC_OK) {
    stc_opt_error("%s", err.message);
    return false;
  }
  unsigned line, column;
  if (!stc_text_nesting_exceeds(input->data, input->length, limit, &line,
                                &column))
    return true;
  fprintf(stderr,
          "%s:%u:%u: error: brackets nested deeper than %zu levels "
          "(STC_MAX_NESTING)\n",
          file_name, line, column, limit);
  return false;
}

void stc_opt_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("stc-opt: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}
