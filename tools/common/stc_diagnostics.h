/* stc_diagnostics.h - reading MLIR diagnostics the way the stc tools report
 * them, shared by stc-opt (which collects them, to print or to match against
 * expected-* comments) and stc-run (which prints them as they come).
 *
 * In:  an MlirDiagnostic (with its notes) or an MlirLocation.
 * Out: owned records (severity, innermost file location, message text) and
 *      the one-line form "file:line:col: severity: message". */
#ifndef STC_DIAGNOSTICS_H
#define STC_DIAGNOSTICS_H

#include "stc_diagnostic_text.h"

#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>
#include <stdbool.h>
#include <stdio.h>

/* "error", "warning", "note" or "remark", as MLIR prints them. */
const char *stc_diagnostic_severity_name(MlirDiagnosticSeverity severity);

/* Finds the file location to show for loc, as MLIR's SourceMgr handler
 * does: a name's child, a call site's callee (else its caller), the first
 * fused location that has one. *file points into the context (not owned).
 * False when loc holds no file location. */
bool stc_diagnostic_file_location(MlirLocation loc, MlirStringRef *file,
                                  unsigned *line, unsigned *column);

/* One diagnostic as text. */
typedef struct stc_diagnostic {
  MlirDiagnosticSeverity severity;
  char *file; /* owned; NULL = no file location */
  unsigned line, column;
  char *message; /* owned; never NULL in a record handed out */
  bool is_note;  /* attached to the previous non-note diagnostic */
} stc_diagnostic;

/* Receives one record and takes ownership of its file and message. */
typedef void (*stc_diagnostic_sink)(stc_diagnostic record, void *user);

/* Records `diag`, then each of its notes (is_note set), and hands each
 * record to `sink` in that order. Returns false when a record was lost to
 * out of memory (the others are still handed over). */
bool stc_diagnostic_record_all(MlirDiagnostic diag, stc_diagnostic_sink sink,
                               void *user);

/* Frees the record's strings (accepts NULL and empty records). */
void stc_diagnostic_free(stc_diagnostic *record);

#endif /* STC_DIAGNOSTICS_H */
