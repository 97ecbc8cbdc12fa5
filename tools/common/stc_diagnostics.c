/* stc_diagnostics.c - MLIR diagnostics as the stc tools report them (see
 * stc_diagnostics.h).
 * In:  MlirDiagnostic / MlirLocation values.
 * Out: owned stc_diagnostic records handed to a sink, and printed lines. */
#include "stc_diagnostics.h"

#include <stdlib.h>
#include <string.h>

/* The text file's numbering is MLIR's. */
_Static_assert((int)MlirDiagnosticError == STC_SEVERITY_ERROR &&
                   (int)MlirDiagnosticWarning == STC_SEVERITY_WARNING &&
                   (int)MlirDiagnosticNote == STC_SEVERITY_NOTE &&
                   (int)MlirDiagnosticRemark == STC_SEVERITY_REMARK,
               "stc_diagnostic_text.h's severities are MLIR's");

const char *stc_diagnostic_severity_name(MlirDiagnosticSeverity severity) {
  return stc_diagnostic_severity_text((int)severity);
}

bool stc_diagnostic_file_location(MlirLocation loc, MlirStringRef *file,
                                  unsigned *line, unsigned *column) {
  if (mlirLocationIsAFileLineColRange(loc)) {
    *file = mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc));
    *line = (unsigned)mlirLocationFileLineColRangeGetStartLine(loc);
    *column = (unsigned)mlirLocationFileLineColRangeGetStartColumn(loc);
    return true;
  }
  if (mlirLocationIsAName(loc))
    return stc_diagnostic_file_location(mlirLocationNameGetChildLoc(loc), file,
                                        line, column);
  if (mlirLocationIsACallSite(loc))
    return stc_diagnostic_file_location(mlirLocationCallSiteGetCallee(loc),
                                        file, line, column) ||
           stc_diagnostic_file_location(mlirLocationCallSiteGetCaller(loc),
                                        file, line, column);
  if (mlirLocationIsAFused(loc)) {
    intptr_t count = mlirLocationFusedGetNumLocations(loc);
    if (count <= 0)
      return false;
    MlirLocation *parts = malloc((size_t)count * sizeof *parts);
    if (!parts)
      return false;
    mlirLocationFusedGetLocations(loc, parts);
    bool found = false;
    for (intptr_t i = 0; i < count && !found; i++)
      found = stc_diagnostic_file_location(parts[i], file, line, column);
    free(parts);
    return found;
  }
  return false;
}

static void write_piece(MlirStringRef piece, void *user) {
  fwrite(piece.data, 1, piece.length, user);
}

/* The printed message of diag; NULL when out of memory. */
static char *message_text(MlirDiagnostic diag) {
  char *text = NULL;
  size_t length = 0;
  FILE *stream = open_memstream(&text, &length);
  if (!stream)
    return NULL;
  mlirDiagnosticPrint(diag, write_piece, stream);
  bool failed = ferror(stream) != 0;
  if (fclose(stream) != 0 || failed) {
    free(text);
    return NULL;
  }
  return text; /* "" when the message is empty, never NULL */
}

static bool record_one(MlirDiagnostic diag, bool is_note,
                       stc_diagnostic_sink sink, void *user) {
  stc_diagnostic d = {.severity = mlirDiagnosticGetSeverity(diag),
                      .is_note = is_note};
  MlirStringRef file = {0};
  if (stc_diagnostic_file_location(mlirDiagnosticGetLocation(diag), &file,
                                   &d.line, &d.column))
    d.file = strndup(file.data, file.length);
  d.message = message_text(diag);
  if (!d.message || (file.data && !d.file)) {
    stc_diagnostic_free(&d);
    return false;
  }
  sink(d, user);
  return true;
}

/* A remark's "see current operation: <the whole op>" note is added by
 * MLIR itself (the C API cannot turn printOpOnDiagnostic off). stc's passes
 * emit one remark per region, and the note would print each function body
 * again: drop it for remarks, keep it for errors and warnings. */
typedef struct remark_note_filter {
  stc_diagnostic_sink sink;
  void *user;
} remark_note_filter;

static void drop_current_operation_note(stc_diagnostic record, void *user) {
  remark_note_filter *filter = user;
  static const char prefix[] = "see current operation: ";
  if (record.is_note &&
      strncmp(record.message, prefix, sizeof prefix - 1) == 0) {
    stc_diagnostic_free(&record);
    return;
  }
  filter->sink(record, filter->user);
}

bool stc_diagnostic_record_all(MlirDiagnostic diag, stc_diagnostic_sink sink,
                               void *user) {
  remark_note_filter filter = {sink, user};
  stc_diagnostic_sink note_sink = sink;
  void *note_user = user;
  if (mlirDiagnosticGetSeverity(diag) == MlirDiagnosticRemark) {
    note_sink = drop_current_operation_note;
    note_user = &filter;
  }
  bool ok = record_one(diag, false, sink, user);
  intptr_t notes = mlirDiagnosticGetNumNotes(diag);
  for (intptr_t i = 0; i < notes; i++)
    ok = record_one(mlirDiagnosticGetNote(diag, i), true, note_sink,
                    note_user) && ok;
  return ok;
}

void stc_diagnostic_free(stc_diagnostic *record) {
  if (!record)
    return;
  free(record->file);
  free(record->message);
  record->file = NULL;
  record->message = NULL;
}
