/* diagnostics.c - collects MLIR diagnostics and prints them the way
 * mlir-opt does.
 * In:  diagnostics (with notes) emitted on the context by the parser, the
 *      verifier and passes.
 * Out: stc_diagnostic records (severity, innermost file location,
 *      message; notes right after their parent; made by
 *      tools/common/stc_diagnostics.c), printed as
 *      "file:line:col: severity: message" plus the source line and a caret,
 *      or handed to verify.c. */
#include "stc_opt.h"

#include <stdlib.h>
#include <string.h>

/* Takes a record into the list; a record that does not fit is lost. */
static void keep_record(stc_diagnostic record, void *user) {
  stc_opt_diagnostics *diagnostics = user;
  if (diagnostics->count == diagnostics->capacity) {
    size_t capacity = diagnostics->capacity ? diagnostics->capacity * 2 : 8;
    stc_diagnostic *items =
        realloc(diagnostics->items, capacity * sizeof *items);
    if (!items) {
      stc_diagnostic_free(&record);
      diagnostics->failed = true;
      return;
    }
    diagnostics->items = items;
    diagnostics->capacity = capacity;
  }
  diagnostics->items[diagnostics->count++] = record;
}

static MlirLogicalResult handle(MlirDiagnostic diag, void *user_data) {
  stc_opt_diagnostics *diagnostics = user_data;
  if (!stc_diagnostic_record_all(diag, keep_record, diagnostics))
    diagnostics->failed = true;
  return mlirLogicalResultSuccess();
}

void stc_opt_diagnostics_attach(stc_opt_diagnostics *diagnostics,
                                MlirContext ctx) {
  mlirContextAttachDiagnosticHandler(ctx, handle, diagnostics, NULL);
}

void stc_opt_diagnostics_truncate(stc_opt_diagnostics *diagnostics,
                                  size_t keep) {
  for (size_t i = keep; i < diagnostics->count; i++)
    stc_diagnostic_free(&diagnostics->items[i]);
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
  stc_diagnostic_print_line(out, file, line, column, severity, message,
                            "<unknown>:0: ");
  if (file && source && line > 0)
    print_source_line(out, source, line, column);
}

void stc_opt_diagnostics_print(const stc_opt_diagnostics *diagnostics,
                               FILE *out, const char *file_name,
                               const char *source) {
  for (size_t i = 0; i < diagnostics->count; i++) {
    const stc_diagnostic *d = &diagnostics->items[i];
    bool own_file = d->file && file_name && strcmp(d->file, file_name) == 0;
    stc_opt_diagnostic_print_at(out, d->file, d->line, d->column,
                                stc_diagnostic_severity_name(d->severity), d->message,
                                own_file ? source : NULL);
  }
  if (diagnostics->failed)
    fputs("stc-opt: error: out of memory: some diagnostics were lost\n", out);
}
