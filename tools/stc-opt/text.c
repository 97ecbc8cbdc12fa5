/* text.c - whole-file reading and error lines for stc-opt's stages.
 * In: a path, printf formats. Out: an owned stc_text (passes/region_id.h), a
 * line on stderr. */
#include "stc_opt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool stc_opt_read_file(const char *path, stc_text *text) {
  bool from_stdin = strcmp(path, "-") == 0;
  FILE *file = from_stdin ? stdin : fopen(path, "rb");
  if (!file)
    return false;
  char block[65536];
  size_t got;
  while ((got = fread(block, 1, sizeof block, file)) > 0)
    stc_text_append(text, block, got);
  bool ok = !ferror(file) && !text->out_of_memory;
  int saved_errno = text->out_of_memory ? ENOMEM : errno;
  if (!from_stdin)
    fclose(file);
  /* An empty file still yields a valid empty string. */
  stc_text_append(text, "", 0);
  errno = saved_errno;
  return ok && !text->out_of_memory;
}

void stc_opt_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("stc-opt: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}
