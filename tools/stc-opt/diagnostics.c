/* diagnostics.c - collects MLIR diagnostics and prints them the way
 * mlir-opt does.
 * In:  diagnostics (with notes) emitted on the context by the parser, the
 *      verifier and passes.
 * Out: stc_opt_diagnostic records (severity, innermost file location,
 *      message; notes right after their parent), printed as
 *      "file:line:col: severity: message" plus the source line and a caret,
 *      or handed to verify.c. */
#include "stc_opt.h"

#include <stdlib.h>
#include <string.h>

const char *stc_opt_severity_name(MlirDiagnosticSeverity severity) {
  switch (severity) {
  case MlirDiagnosticError:
    return "error";
  case MlirDiagnosticWarning:
    return "warning";
  case MlirDiagnosticNote:
    return "note";
  case MlirDiagnosticRemark:
    return "remark";
  }
  return "diagnostic";
}

/* Finds the file location to show for loc, as MLIR's SourceMgr handler
 * does: a name's child, a call site's callee (else its caller), the first
 * fused location that has one. */
static bool find_file_location(MlirLocation loc, MlirStringRef *file,
                               unsigned *line, unsigned *column) {
  if (mlirLocationIsAFileLineColRange(loc)) {
    *file = mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc));
    *line = (unsigned)mlirLocationFileLineColRangeGetStartLine(loc);
    *column = (unsigned)mlirLocationFileLineColRangeGetStartColumn(loc);
    return true;
  }
  if (mlirLocationIsAName(loc))
    return find_file_location(mlirLocationNameGetChildLoc(loc), file, line,
                              column);
  if (mlirLocationIsACallSite(loc))
    return find_file_location(mlirLocationCallSiteGetCallee(loc), file, line,
                              column) ||
           find_file_location(mlirLocationCallSiteGetCaller(loc), file, line,
                              column);
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
      found = find_file_location(parts[i], file, line, column);
    free(parts);
    return found;
  }
  return false;
}

static void collect(stc_opt_diagnostics *diagnostics, MlirDiagnostic diag,
                    bool is_note) {
  if (diagnostics->count == diagnostics->capacity) {
    size_t capacity = diagnostics->capacity ? diagnostics->capacity * 2 : 8;
    stc_opt_diagnostic *items =
        realloc(diagnostics->items, capacity * sizeof *items);
    if (!items) {
      diagnostics->failed = true;
      return;
    }
    diagnostics->items = items;
    diagnostics->capacity = capacity;
  }
  stc_opt_diagnostic d = {.severity = mlirDiagnosticGetSeverity(diag),
                          .is_note = is_note};
  MlirStringRef file = {0};
  if (find_file_location(mlirDiagnosticGetLocation(diag), &file, &d.line,
                         &d.column))
    d.file = strndup(file.data, file.length);
  stc_opt_text message = {0};
  mlirDiagnosticPrint(diag, stc_opt_text_callback, &message);
  stc_opt_text_append(&message, "", 0); /* never NULL, even when empty */
  d.message = message.data;
  if (!d.message || (file.data && !d.file)) {
    free(d.file);
    free(d.message);
    diagnostics->failed = true;
    return;
  }
  diagnostics->items[diagnostics->count++] = d;
}

static MlirLogicalResult handle(MlirDiagnostic diag, void *user_data) {
  stc_opt_diagnostics *diagnostics = user_data;
  collect(diagnostics, diag, false);
  intptr_t notes = mlirDiagnosticGetNumNotes(diag);
  for (intptr_t i = 0; i < notes; i++)
    collect(diagnostics, mlirDiagnosticGetNote(diag, i), true);
  return mlirLogicalResultSuccess();
}

void stc_opt_diagnostics_attach(stc_opt_diagnostics *diagnostics,
                                MlirContext ctx) {
  mlirContextAttachDiagnosticHandler(ctx, handle, diagnostics, NULL);
}

void stc_opt_diagnostics_truncate(stc_opt_diagnostics *diagnostics,
                                  size_t keep) {
  for (size_t i = keep; i < diagnostics->count; i++) {
    free(diagnostics->items[i].file);
    free(diagnostics->items[i].message);
  }
  if (keep < diagnostics->count)
    diagnostics->count = keep;
}

void stc_opt_diagnostics_clear(stc_opt_diagnostics *diagnostics) {
  stc_opt_diagnostics_truncate(diagnostics, 0);
  diagnostics->failed = false;
}

bool stc_opt_diagnostics_has_errors(const stc_opt_diagnostics *diagnostics) {
  for (size_t i = 0; i < diagnostics->count; i++)
    if (diagnostics->items[i].severity == MlirDiagnosticError)
      return true;
  return diagnostics->failed;
}

/* Writes line `line` (1-based) of source and a caret under `column`. */
static void print_source_line(FILE *out, const char *source, unsigned line,
                              unsigned column) {
  const char *start = source;
  for (unsigned i = 1; i < line && start; i++) {
    start = strchr(start, '\n');
    if (start)
      start++;
  }
  if (!start || !*start)
    return;
  size_t length = strcspn(start, "\r\n");
  fprintf(out, "%.*s\n", (int)length, start);
  for (unsigned i = 1; i < column && i <= length; i++)
    fputc(start[i - 1] == '\t' ? '\t' : ' ', out);
  fputs("^\n", out);
}

void stc_opt_diagnostic_print_at(FILE *out, const char *file, unsigned line,
                                 unsigned column, const char *severity,
                                 const char *message, const char *source) {
  if (file)
    fprintf(out, "%s:%u:%u: %s: %s\n", file, line, column, severity, message);
  else
    fprintf(out, "<unknown>:0: %s: %s\n", severity, message);
  if (file && source && line > 0)
    print_source_line(out, source, line, column);
}

void stc_opt_diagnostics_print(const stc_opt_diagnostics *diagnostics,
                               FILE *out, const char *file_name,
                               const char *source) {
  for (size_t i = 0; i < diagnostics->count; i++) {
    const stc_opt_diagnostic *d = &diagnostics->items[i];
    bool own_file = d->file && file_name && strcmp(d->file, file_name) == 0;
    stc_opt_diagnostic_print_at(out, d->file, d->line, d->column,
                                stc_opt_severity_name(d->severity), d->message,
                                own_file ? source : NULL);
  }
  if (diagnostics->failed)
    fputs("stc-opt: error: out of memory: some diagnostics were lost\n", out);
}
