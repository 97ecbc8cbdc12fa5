/* libFuzzer target: the YAML profile reader (lib/profile/profile.c).
 *
 * In: arbitrary bytes as a profile document. Checks: no crash, leak or
 * undefined behaviour (ASan+UBSan); a document that parses serializes, and
 * what it serializes to parses again to the same regions (the writer and
 * reader agree on every value the reader accepts). */
#include "stc/profile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void ignore_warning(void *user, const char *file, unsigned line,
                           unsigned column, const char *message) {
  (void)user, (void)file, (void)line, (void)column, (void)message;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  stc_profile *profile = NULL;
  stc_error err;
  if (stc_profile_read_string("fuzz.yaml", (const char *)data, size, &profile,
                              &err, ignore_warning, NULL) != STC_OK)
    return 0;
  char *text = NULL;
  size_t length = 0;
  if (stc_profile_write_string(profile, &text, &length, &err) == STC_OK) {
    stc_profile *again = NULL;
    if (stc_profile_read_string("again.yaml", text, length, &again, &err,
                                ignore_warning, NULL) != STC_OK)
      abort(); /* the writer produced what the reader refuses */
    if (again->num_regions != profile->num_regions)
      abort();
    for (size_t i = 0; i < profile->num_regions; i++)
      if (strcmp(again->regions[i].id, profile->regions[i].id) != 0 ||
          again->regions[i].count != profile->regions[i].count ||
          again->regions[i].total_ns != profile->regions[i].total_ns)
        abort();
    stc_profile_destroy(again);
  }
  free(text);
  stc_profile_destroy(profile);
  return 0;
}
