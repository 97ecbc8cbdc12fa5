/* split.c - --split-input-file.
 * In:  the whole input. Out: chunks separated by lines that are exactly
 * "// -----". Each chunk is preceded by one blank line per input line before
 * it, so the parser, the diagnostics and the expected-* comments all use the
 * line numbers of the input file. */
#include "stc_opt.h"

#include <stdlib.h>
#include <string.h>

static const char split_marker[] = "// -----";

/* Whether the line at `line` (ending at '\n', '\r\n' or the end) is the
 * marker; sets *next to the start of the following line. */
static bool is_marker_line(const char *line, const char *end,
                           const char **next) {
  const char *newline = memchr(line, '\n', (size_t)(end - line));
  const char *line_end = newline ? newline : end;
  *next = newline ? newline + 1 : end;
  size_t length = (size_t)(line_end - line);
  if (length > 0 && line[length - 1] == '\r')
    length--;
  return length == sizeof split_marker - 1 &&
         memcmp(line, split_marker, length) == 0;
}

static bool push_chunk(stc_opt_chunk **chunks, size_t *count,
                       unsigned first_line, const char *begin,
                       const char *end) {
  stc_opt_chunk *grown = realloc(*chunks, (*count + 1) * sizeof *grown);
  if (!grown)
    return false;
  *chunks = grown;
  stc_opt_chunk *chunk = &grown[*count];
  *chunk = (stc_opt_chunk){.first_line = first_line};
  (*count)++; /* owned by chunks from here on, even if an append fails */
  for (unsigned i = 1; i < first_line; i++)
    stc_text_append(&chunk->text, "\n", 1);
  stc_text_append(&chunk->text, begin, (size_t)(end - begin));
  return !chunk->text.out_of_memory;
}

bool stc_opt_split_input(const char *input, size_t length, bool split,
                         stc_opt_chunk **chunks, size_t *count) {
  *chunks = NULL;
  *count = 0;
  const char *end = input + length;
  const char *chunk_begin = input;
  unsigned chunk_line = 1, line_number = 1;
  for (const char *line = input; split && line < end; line_number++) {
    const char *next;
    if (is_marker_line(line, end, &next)) {
      if (!push_chunk(chunks, count, chunk_line, chunk_begin, line))
        return false;
      chunk_begin = next;
      chunk_line = line_number + 1;
    }
    line = next;
  }
  return push_chunk(chunks, count, chunk_line, chunk_begin, end);
}

void stc_opt_chunks_free(stc_opt_chunk *chunks, size_t count) {
  for (size_t i = 0; i < count; i++)
    stc_text_free(&chunks[i].text);
  free(chunks);
}
