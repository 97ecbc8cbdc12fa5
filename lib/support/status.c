/* Status names and located error records (see include/stc/status.h). */
#include "stc/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *stc_version(void) { return STC_VERSION_STRING; }

const char *stc_status_str(stc_status status) {
  switch (status) {
  case STC_OK: return "ok";
  case STC_ERR_INVALID: return "invalid";
  case STC_ERR_NOMEM: return "out of memory";
  case STC_ERR_IO: return "i/o error";
  case STC_ERR_PARSE: return "parse error";
  case STC_ERR_VERSION: return "unsupported version";
  case STC_ERR_NOT_FOUND: return "not found";
  case STC_ERR_CORRUPT: return "corrupt";
  case STC_ERR_QUARANTINED: return "quarantined";
  case STC_ERR_UNAVAILABLE: return "unavailable";
  case STC_ERR_DEVICE: return "device error";
  case STC_ERR_REJECTED: return "rejected";
  case STC_ERR_PERMISSION: return "permission denied";
  }
  return "unknown status";
}

void stc_error_clear(stc_error *err) {
  if (err)
    memset(err, 0, sizeof *err);
}

void stc_error_set(stc_error *err, const char *file, unsigned line,
                   unsigned column, const char *format, ...) {
  if (!err)
    return;
  stc_error_clear(err);
  if (file)
    snprintf(err->file, sizeof err->file, "%s", file);
  err->line = line;
  err->column = column;
  va_list ap;
  va_start(ap, format);
  vsnprintf(err->message, sizeof err->message, format, ap);
  va_end(ap);
}

void stc_error_format(const stc_error *err, char *buf, size_t size) {
  if (!buf || size == 0)
    return;
  if (!err) {
    buf[0] = 0;
    return;
  }
  if (err->file[0] && err->line)
    snprintf(buf, size, "%s:%u:%u: %s", err->file, err->line, err->column,
             err->message);
  else if (err->file[0])
    snprintf(buf, size, "%s: %s", err->file, err->message);
  else
    snprintf(buf, size, "%s", err->message);
}
