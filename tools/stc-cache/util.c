/* util.c - pure helpers of stc-cache, also linked into stc-cache-testgen:
 * number and duration parsing, human ages, escaping of arbitrary key bytes,
 * and reading the tuner's "tag=LENGTH:BYTES;" key fields.
 * In: strings. Out: numbers, formatted text. No I/O. */
#include "cache_tool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool stc__cache_parse_u64(const char *text, uint64_t *out) {
  /* strtoull accepts signs and spaces; a count must be plain digits. */
  if (!text || text[0] < '0' || text[0] > '9')
    return false;
  char *end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno || *end)
    return false;
  *out = (uint64_t)value;
  return true;
}

bool stc__cache_parse_i64(const char *text, int64_t *out) {
  if (!text)
    return false;
  const char *digits = text[0] == '-' ? text + 1 : text;
  if (digits[0] < '0' || digits[0] > '9')
    return false;
  char *end;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (errno || *end)
    return false;
  *out = (int64_t)value;
  return true;
}

static const struct {
  char suffix;
  uint64_t seconds;
} stc_cache_units[] = {
    {'w', 7u * 24u * 3600u},
    {'d', 24u * 3600u},
    {'h', 3600u},
    {'m', 60u},
    {'s', 1u},
};

bool stc__cache_parse_duration(const char *text, uint64_t *out) {
  if (!text || text[0] < '0' || text[0] > '9')
    return false;
  char *end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno || value == 0)
    return false;
  uint64_t unit = 0;
  if (end[0] == 0) {
    unit = 1;
  } else if (end[1] == 0) {
    for (size_t i = 0; i < sizeof stc_cache_units / sizeof *stc_cache_units;
         ++i)
      if (end[0] == stc_cache_units[i].suffix)
        unit = stc_cache_units[i].seconds;
  }
  if (unit == 0 || value > UINT64_MAX / unit)
    return false;
  *out = (uint64_t)value * unit;
  return true;
}

void stc__cache_format_age(int64_t seconds, char *buf, size_t size) {
  bool future = seconds < 0;
  /* Negating INT64_MIN overflows; going through uint64_t does not. */
  uint64_t magnitude = future ? 0 - (uint64_t)seconds : (uint64_t)seconds;
  /* Ages read best in one unit: the largest that is at least 1. */
  size_t i = 1; /* weeks are skipped: "30d" reads better than "4w" */
  while (i + 1 < sizeof stc_cache_units / sizeof *stc_cache_units &&
         magnitude < stc_cache_units[i].seconds)
    ++i;
  snprintf(buf, size, "%s%" PRIu64 "%c", future ? "in " : "",
           magnitude / stc_cache_units[i].seconds, stc_cache_units[i].suffix);
}

void stc__cache_format_duration(uint64_t seconds, char *buf, size_t size) {
  size_t i = 1; /* "7d" and "14d" read better than "1w" and "2w" */
  while (seconds % stc_cache_units[i].seconds != 0)
    ++i;
  snprintf(buf, size, "%" PRIu64 "%c", seconds / stc_cache_units[i].seconds,
           stc_cache_units[i].suffix);
}

static bool stc_cache_printable(unsigned char c) {
  return c >= 0x20 && c < 0x7f && c != '\\';
}

size_t stc__cache_escape_size(const char *text, size_t max_chars) {
  if (max_chars)
    return max_chars + 4;
  return 4 * strlen(text) + 4;
}

static size_t stc_cache_escaped_width(unsigned char c) {
  return stc_cache_printable(c) ? 1 : 4;
}

void stc__cache_escape(const char *text, size_t max_chars, char *buf) {
  const unsigned char *bytes = (const unsigned char *)text;
  size_t total = 0;
  for (const unsigned char *p = bytes; *p; ++p)
    total += stc_cache_escaped_width(*p);
  /* When the text is cut, "..." marks it; \xNN sequences are never split. */
  bool cut = max_chars && total > max_chars;
  size_t room = cut ? (max_chars > 3 ? max_chars - 3 : 0) : total;
  size_t used = 0;
  for (const unsigned char *p = bytes; *p; ++p) {
    size_t width = stc_cache_escaped_width(*p);
    if (used + width > room)
      break;
    if (width == 1)
      buf[used] = (char)*p;
    else
      snprintf(buf + used, 5, "\\x%02x", *p);
    used += width;
  }
  if (cut) {
    memcpy(buf + used, "...", 3);
    used += 3;
  }
  buf[used] = 0;
}

bool stc__cache_key_next(const char **cursor, const char **tag,
                         size_t *tag_length, const char **value,
                         size_t *value_length) {
  const char *p = *cursor;
  if (!*p)
    return false;
  const char *equals = strchr(p, '=');
  if (!equals || equals == p)
    return false;
  const char *digits = equals + 1;
  if (*digits < '0' || *digits > '9')
    return false;
  char *colon;
  errno = 0;
  unsigned long long length = strtoull(digits, &colon, 10);
  if (errno || *colon != ':')
    return false;
  const char *bytes = colon + 1;
  /* The value may hold any byte but NUL: check its length before use. */
  if (strnlen(bytes, (size_t)length + 1) < length + 1 || bytes[length] != ';')
    return false;
  *tag = p;
  *tag_length = (size_t)(equals - p);
  *value = bytes;
  *value_length = (size_t)length;
  *cursor = bytes + length + 1;
  return true;
}

bool stc__cache_key_field(const char *key, const char *tag, const char **value,
                          size_t *length) {
  static const char magic[] = "stc-tuner-key=";
  if (strncmp(key, magic, sizeof magic - 1) != 0)
    return false;
  const char *cursor = key, *field_tag, *field_value;
  size_t tag_length, value_length;
  while (stc__cache_key_next(&cursor, &field_tag, &tag_length, &field_value,
                             &value_length)) {
    if (tag_length == strlen(tag) && memcmp(field_tag, tag, tag_length) == 0) {
      *value = field_value;
      *length = value_length;
      return true;
    }
  }
  return false;
}

char *stc__cache_key_summary(const char *key, size_t max_chars) {
  const char *operation, *workload;
  size_t operation_length, workload_length;
  char *plain;
  if (stc__cache_key_field(key, "operation", &operation, &operation_length) &&
      stc__cache_key_field(key, "workload", &workload, &workload_length)) {
    plain = malloc(operation_length + 1 + workload_length + 1);
    if (!plain)
      return NULL;
    memcpy(plain, operation, operation_length);
    plain[operation_length] = ' ';
    memcpy(plain + operation_length + 1, workload, workload_length);
    plain[operation_length + 1 + workload_length] = 0;
  } else {
    plain = malloc(strlen(key) + 1);
    if (!plain)
      return NULL;
    strcpy(plain, key);
  }
  char *escaped = malloc(stc__cache_escape_size(plain, max_chars));
  if (escaped)
    stc__cache_escape(plain, max_chars, escaped);
  free(plain);
  return escaped;
}

const char *stc__cache_scope_name(unsigned scope) {
  static const char *const names[] = {"operator", "graph", "pipeline"};
  return scope < sizeof names / sizeof *names ? names[scope] : "unknown";
}
