/* prof.h - what the stc-prof subcommands share: loading a profile with
 * diagnostics printed the way users expect (file:line:col: error: ...),
 * option parsing, human units, ranking and plain-text tables. Internal to
 * tools/stc-prof. */
#ifndef STC_PROF_H
#define STC_PROF_H

#include "stc/hints.h"
#include "stc/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes: bad usage is distinguished from bad input. */
enum { STC_PROF_EXIT_OK = 0, STC_PROF_EXIT_BAD_INPUT = 1, STC_PROF_EXIT_USAGE = 2 };

int stc__prof_show(int argc, char **argv);
int stc__prof_merge(int argc, char **argv);
int stc__prof_diff(int argc, char **argv);

/* Prints "stc-prof COMMAND: error: ..." and a hint to stderr; returns
 * STC_PROF_EXIT_USAGE. */
int stc__prof_usage_error(const char *command, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints an stc_error as "file:line:col: SEVERITY: message" (or the parts
 * that are known) on stderr. */
void stc__prof_print_diagnostic(const char *severity, const stc_error *err);

/* Reads a profile, printing warnings and errors; NULL after an error. The
 * caller owns the result. */
stc_profile *stc__prof_load(const char *path);

/* Command-line options of a subcommand, parsed by one function. Each option
 * is accepted as "--name=VALUE" and "--name VALUE". */
typedef enum stc_prof_option_kind {
  STC_PROF_OPTION_DOUBLE, /* target: double */
  STC_PROF_OPTION_U64,    /* target: uint64_t */
  STC_PROF_OPTION_SIZE,   /* target: size_t */
  STC_PROF_OPTION_STRING, /* target: const char * (the last one wins) */
  STC_PROF_OPTION_LIST,   /* target: stc_prof_list (every occurrence) */
} stc_prof_option_kind;

typedef struct stc_prof_option {
  const char *name; /* "--hot-share", "-o" */
  stc_prof_option_kind kind;
  void *target;
} stc_prof_option;

/* A growable list of borrowed argv strings; free items with free(). */
typedef struct stc_prof_list {
  const char **items;
  size_t count;
} stc_prof_list;

/* Parses argv into the options' targets and the positional arguments ("-"
 * alone is positional). Returns STC_PROF_EXIT_OK, or STC_PROF_EXIT_USAGE after
 * printing why (unknown option, missing or malformed value). */
int stc__prof_parse_args(int argc, char **argv, const char *command,
                         const stc_prof_option *options, size_t num_options,
                         stc_prof_list *positional);
/* Strict number parsing for option values: the whole text must be a number. */
bool stc__prof_parse_double(const char *text, double *out);
bool stc__prof_parse_u64(const char *text, uint64_t *out);

/* "123 ns", "1.23 us", "45.60 ms", "2.00 s". */
void stc__prof_format_duration(uint64_t ns, char *buf, size_t size);
/* "90.0%". */
void stc__prof_format_share(double share, char *buf, size_t size);

/* Ranks and classifies a profile's regions; *rows (caller frees with free())
 * has profile->num_regions rows whose region pointers refer to the profile. */
stc_status stc__prof_rank(const stc_profile *profile,
                          const stc_classify_options *options,
                          stc_ranked_region **rows, stc_error *err);

/* A plain-text table: cells are copied; columns are sized to fit. */
typedef struct stc_prof_table stc_prof_table;
/* align: one character per column, 'l' or 'r'. NULL on allocation failure. */
stc_prof_table *stc__prof_table_create(const char *align, const char *const *headers);
/* Adds a row of as many cells as there are columns; false on allocation failure. */
bool stc__prof_table_add(stc_prof_table *table, const char *const *cells);
void stc__prof_table_print(const stc_prof_table *table);
void stc__prof_table_destroy(stc_prof_table *table);

#endif /* STC_PROF_H */
