/* stc_diagnostic_text.c - diagnostics as lines of text (see
 * stc_diagnostic_text.h). In: a severity number, a location, a message.
 * Out: the line on a stream. */
#include "stc_diagnostic_text.h"

const char *stc_diagnostic_severity_text(int severity) {
  switch (severity) {
  case STC_SEVERITY_ERROR:
    return "error";
  case STC_SEVERITY_WARNING:
    return "warning";
  case STC_SEVERITY_NOTE:
    return "note";
  case STC_SEVERITY_REMARK:
    return "remark";
  }
  return "diagnostic";
}

void stc_diagnostic_print_line(FILE *out, const char *file, unsigned line,
                               unsigned column, const char *severity,
                               const char *message, const char *unlocated) {
  if (file)
    fprintf(out, "%s:%u:%u: %s: %s\n", file, line, column, severity, message);
  else
    fprintf(out, "%s%s: %s\n", unlocated, severity, message);
}
