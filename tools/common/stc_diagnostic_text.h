/* stc_diagnostic_text.h - the one-line form of a diagnostic, without MLIR:
 * stc-run replays a cached compile's diagnostics on an object-cache hit
 * without loading MLIR (stc_diagnostics.h reads them from MLIR). */
#ifndef STC_DIAGNOSTIC_TEXT_H
#define STC_DIAGNOSTIC_TEXT_H

#include <stdio.h>

/* MLIR's severities, numbered as MlirDiagnosticSeverity numbers them
 * (stc_diagnostics.c checks that). */
enum {
  STC_SEVERITY_ERROR = 0,
  STC_SEVERITY_WARNING = 1,
  STC_SEVERITY_NOTE = 2,
  STC_SEVERITY_REMARK = 3,
};

/* "error", "warning", "note" or "remark", as MLIR prints them;
 * "diagnostic" for any other number. */
const char *stc_diagnostic_severity_text(int severity);

/* Writes "file:line:col: severity: message\n", or, when file is NULL,
 * `unlocated` (the tool's prefix, e.g. "<unknown>:0: ") in place of
 * "file:line:col: ". */
void stc_diagnostic_print_line(FILE *out, const char *file, unsigned line,
                               unsigned column, const char *severity,
                               const char *message, const char *unlocated);

#endif /* STC_DIAGNOSTIC_TEXT_H */
