/* libFuzzer target: stc-opt's --verify-diagnostics expectation parser and
 * matcher (tools/stc-opt/verify.c): the `expected-error@+1 {{...}}`,
 * `expected-remark-re`, `@below`, `@unknown`, ... comments of a test file.
 *
 * In: bytes split at the first NUL: the source text with its expectation
 * comments, then a diagnostic message. Three diagnostics are matched against
 * the expectations - that message as an error on a line chosen from the
 * input, a note attached to it, and a warning with no location - so both
 * the parser and the matcher (regular expressions included) see arbitrary
 * text. Checks: no crash, leak or undefined behaviour. */
#include "stc_opt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *sink;
  if (!sink && !(sink = fopen("/dev/null", "w")))
    abort();
  const uint8_t *split = memchr(data, 0, size);
  size_t source_size = split ? (size_t)(split - data) : size;
  char *source = strndup((const char *)data, source_size);
  char *message = split ? strndup((const char *)split + 1,
                                  size - source_size - 1)
                        : strdup("error");
  if (!source || !message)
    abort();
  unsigned lines = 1;
  for (size_t i = 0; i < source_size; i++)
    lines += data[i] == '\n';
  stc_diagnostic items[3] = {
      {MlirDiagnosticError, strdup("fuzz.mlir"),
       (unsigned)(size % (lines + 1)), (unsigned)(size % 7), strdup(message),
       false},
      {MlirDiagnosticNote, strdup("fuzz.mlir"), 1, 1, strdup(message), true},
      {MlirDiagnosticWarning, NULL, 0, 0, strdup(message), false},
  };
  stc_opt_diagnostics diagnostics = {items, 3, 3, false};
  (void)stc_opt_verify_diagnostics(&diagnostics, "fuzz.mlir", source, sink);
  for (int i = 0; i < 3; i++) {
    free(items[i].file);
    free(items[i].message);
  }
  free(source);
  free(message);
  return 0;
}
