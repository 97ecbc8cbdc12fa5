/* stc-prof merge A.yaml B.yaml ... [--weight A.yaml=2] -o OUT.yaml
 * In: profiles and per-file weights. Out: one merged profile written
 * atomically to OUT ("-" writes to stdout), and a one-line summary. */
#include "prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const command = "merge";

/* Applies "--weight FILE=W" (split at the last '=', since a file name may
 * contain '=') to every input named FILE. */
static int apply_weight(const char *spec, const stc_prof_list *inputs, double *weights) {
  const char *equals = strrchr(spec, '=');
  if (!equals || equals == spec)
    return stc__prof_usage_error(command, "--weight expects FILE=WEIGHT, got '%s'", spec);
  size_t length = (size_t)(equals - spec);
  double weight = 0;
  if (!stc__prof_parse_double(equals + 1, &weight) || !(weight > 0))
    return stc__prof_usage_error(command, "weight of '%.*s' must be a finite number > 0, got '%s'",
                                 (int)length, spec, equals + 1);
  bool found = false;
  for (size_t i = 0; i < inputs->count; i++)
    if (strlen(inputs->items[i]) == length && strncmp(inputs->items[i], spec, length) == 0) {
      weights[i] = weight;
      found = true;
    }
  if (!found)
    return stc__prof_usage_error(command, "--weight names '%.*s', which is not an input",
                                 (int)length, spec);
  return STC_PROF_EXIT_OK;
}

static int write_merged(const stc_profile *merged, const char *output) {
  stc_error err;
  if (strcmp(output, "-") == 0) {
    char *text = NULL;
    size_t length = 0;
    if (stc_profile_write_string(merged, &text, &length, &err) != STC_OK) {
      stc__prof_print_diagnostic("error", &err);
      return STC_PROF_EXIT_BAD_INPUT;
    }
    fwrite(text, 1, length, stdout);
    free(text);
    return STC_PROF_EXIT_OK;
  }
  if (stc_profile_write_file(merged, output, &err) != STC_OK) {
    stc__prof_print_diagnostic("error", &err);
    return STC_PROF_EXIT_BAD_INPUT;
  }
  printf("merged %zu regions into %s\n", merged->num_regions, output);
  return STC_PROF_EXIT_OK;
}

int stc__prof_merge(int argc, char **argv) {
  const char *output = NULL;
  stc_prof_list weight_specs = {0}, inputs = {0};
  const stc_prof_option specs[] = {
      {"--weight", STC_PROF_OPTION_LIST, &weight_specs},
      {"-o", STC_PROF_OPTION_STRING, &output},
      {"--output", STC_PROF_OPTION_STRING, &output},
  };
  int exit_code = stc__prof_parse_args(argc, argv, command, specs,
                                       sizeof specs / sizeof specs[0], &inputs);
  if (exit_code == STC_PROF_EXIT_OK && inputs.count == 0)
    exit_code = stc__prof_usage_error(command, "expected at least one profile to merge");
  if (exit_code == STC_PROF_EXIT_OK && !output)
    exit_code = stc__prof_usage_error(command, "missing output file (-o OUT.yaml)");

  double *weights = inputs.count ? calloc(inputs.count, sizeof *weights) : NULL;
  stc_profile **profiles = inputs.count ? calloc(inputs.count, sizeof *profiles) : NULL;
  if (exit_code == STC_PROF_EXIT_OK && (!weights || !profiles))
    exit_code = stc__prof_usage_error(command, "out of memory");
  for (size_t i = 0; exit_code == STC_PROF_EXIT_OK && i < inputs.count; i++)
    weights[i] = 1.0;
  for (size_t i = 0; exit_code == STC_PROF_EXIT_OK && i < weight_specs.count; i++)
    exit_code = apply_weight(weight_specs.items[i], &inputs, weights);
  /* Every input is read (and every bad one reported) before anything is
   * written: a merge is all-or-nothing like reading a profile. */
  bool usable = exit_code == STC_PROF_EXIT_OK;
  for (size_t i = 0; usable && i < inputs.count; i++) {
    profiles[i] = stc__prof_load(inputs.items[i]);
    if (!profiles[i])
      exit_code = STC_PROF_EXIT_BAD_INPUT;
  }
  if (exit_code == STC_PROF_EXIT_OK) {
    stc_profile *merged = NULL;
    stc_error err;
    if (stc_profile_merge((const stc_profile *const *)profiles, weights, inputs.count, &merged,
                          &err) != STC_OK) {
      stc__prof_print_diagnostic("error", &err);
      exit_code = STC_PROF_EXIT_BAD_INPUT;
    } else {
      exit_code = write_merged(merged, output);
    }
    stc_profile_destroy(merged);
  }
  for (size_t i = 0; profiles && i < inputs.count; i++)
    stc_profile_destroy(profiles[i]);
  free(profiles);
  free(weights);
  free(inputs.items);
  free(weight_specs.items);
  return exit_code;
}
