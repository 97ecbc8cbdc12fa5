/* text.c - growable strings and whole-file reading for stc-opt's stages.
 * In: bytes, printf formats, a path. Out: an owned NUL-terminated buffer. */
#include "stc_opt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool text_reserve(stc_opt_text *text, size_t extra) {
  if (text->failed)
    return false;
  size_t needed = text->length + extra + 1;
  if (needed <= text->capacity)
    return true;
  size_t capacity = text->capacity ? text->capacity : 64;
  while (capacity < needed)
    capacity *= 2;
  char *data = realloc(text->data, capacity);
  if (!data) {
    text->failed = true;
    return false;
  }
  text->data = data;
  text->capacity = capacity;
  return true;
}

void stc_opt_text_append(stc_opt_text *text, const char *bytes, size_t count) {
  if (!text_reserve(text, count))
    return;
  if (count)
    memcpy(text->data + text->length, bytes, count);
  text->length += count;
  text->data[text->length] = '\0';
}

void stc_opt_text_appendf(stc_opt_text *text, const char *format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int needed = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (needed >= 0 && text_reserve(text, (size_t)needed)) {
    vsnprintf(text->data + text->length, (size_t)needed + 1, format, args);
    text->length += (size_t)needed;
  }
  va_end(args);
}

void stc_opt_text_free(stc_opt_text *text) {
  free(text->data);
  *text = (stc_opt_text){0};
}

void stc_opt_text_callback(MlirStringRef piece, void *user_data) {
  stc_opt_text_append(user_data, piece.data, piece.length);
}

bool stc_opt_read_file(const char *path, stc_opt_text *text) {
  bool from_stdin = strcmp(path, "-") == 0;
  FILE *file = from_stdin ? stdin : fopen(path, "rb");
  if (!file)
    return false;
  char block[65536];
  size_t got;
  while ((got = fread(block, 1, sizeof block, file)) > 0)
    stc_opt_text_append(text, block, got);
  bool ok = !ferror(file) && !text->failed;
  int saved_errno = text->failed ? ENOMEM : errno;
  if (!from_stdin)
    fclose(file);
  /* An empty file still yields a valid empty string. */
  stc_opt_text_append(text, "", 0);
  errno = saved_errno;
  return ok && !text->failed;
}

void stc_opt_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("stc-opt: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}
