/* Shared pieces of stc-prof (see prof.h). In: paths, option text, profiles.
 * Out: loaded profiles or printed diagnostics, parsed values, formatted units
 * and tables on stdout. */
#include "prof.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int stc__prof_usage_error(const char *command, const char *format, ...) {
  char message[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof message, format, ap);
  va_end(ap);
  if (command)
    fprintf(stderr, "stc-prof %s: error: %s\n", command, message);
  else
    fprintf(stderr, "stc-prof: error: %s\n", message);
  fprintf(stderr, "run 'stc-prof --help' for usage\n");
  return STC_PROF_EXIT_USAGE;
}

void stc__prof_print_diagnostic(const char *severity, const stc_error *err) {
  if (err->file[0] && err->line)
    fprintf(stderr, "%s:%u:%u: %s: %s\n", err->file, err->line, err->column, severity,
            err->message);
  else if (err->file[0])
    fprintf(stderr, "%s: %s: %s\n", err->file, severity, err->message);
  else
    fprintf(stderr, "stc-prof: %s: %s\n", severity, err->message);
}

static void print_warning(void *user, const char *file, unsigned line, unsigned column,
                          const char *message) {
  (void)user;
  stc_error warning;
  stc_error_set(&warning, file, line, column, "%s", message);
  stc__prof_print_diagnostic("warning", &warning);
}

stc_profile *stc__prof_load(const char *path) {
  stc_profile *profile = NULL;
  stc_error err;
  if (stc_profile_read_file(path, &profile, &err, print_warning, NULL) != STC_OK) {
    stc__prof_print_diagnostic("error", &err);
    return NULL;
  }
  return profile;
}

static bool list_append(stc_prof_list *list, const char *item) {
  const char **items = realloc(list->items, (list->count + 1) * sizeof *items);
  if (!items)
    return false;
  items[list->count++] = item;
  list->items = items;
  return true;
}

/* Stores one option value; false when the value does not parse. */
static bool store_option(const stc_prof_option *option, const char *value) {
  uint64_t number = 0;
  switch (option->kind) {
  case STC_PROF_OPTION_DOUBLE:
    return stc__prof_parse_double(value, option->target);
  case STC_PROF_OPTION_U64:
    return stc__prof_parse_u64(value, option->target);
  case STC_PROF_OPTION_SIZE:
    if (!stc__prof_parse_u64(value, &number) || number > SIZE_MAX)
      return false;
    *(size_t *)option->target = (size_t)number;
    return true;
  case STC_PROF_OPTION_STRING:
    *(const char **)option->target = value;
    return true;
  case STC_PROF_OPTION_LIST:
    return list_append(option->target, value);
  }
  return false;
}

static const char *expected_value(stc_prof_option_kind kind) {
  switch (kind) {
  case STC_PROF_OPTION_DOUBLE: return "a number";
  case STC_PROF_OPTION_U64:
  case STC_PROF_OPTION_SIZE: return "a non-negative integer";
  default: return "a value";
  }
}

int stc__prof_parse_args(int argc, char **argv, const char *command,
                         const stc_prof_option *options, size_t num_options,
                         stc_prof_list *positional) {
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (arg[0] != '-' || arg[1] == 0) {
      if (!list_append(positional, arg))
        return stc__prof_usage_error(command, "out of memory");
      continue;
    }
    const stc_prof_option *option = NULL;
    const char *value = NULL;
    for (size_t k = 0; k < num_options && !option; k++) {
      size_t length = strlen(options[k].name);
      if (strncmp(arg, options[k].name, length) != 0)
        continue;
      if (arg[length] == '=') {
        option = &options[k];
        value = arg + length + 1;
      } else if (arg[length] == 0) {
        option = &options[k];
        if (i + 1 >= argc)
          return stc__prof_usage_error(command, "option '%s' needs a value", option->name);
        value = argv[++i];
      }
    }
    if (!option)
      return stc__prof_usage_error(command, "unknown option '%s'", arg);
    if (!store_option(option, value))
      return stc__prof_usage_error(command, "option '%s' expects %s, got '%s'", option->name,
                                   expected_value(option->kind), value);
  }
  return STC_PROF_EXIT_OK;
}

bool stc__prof_parse_double(const char *text, double *out) {
  char *end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (!text[0] || *end || errno != 0 || !isfinite(value))
    return false;
  *out = value;
  return true;
}

bool stc__prof_parse_u64(const char *text, uint64_t *out) {
  char *end = NULL;
  if (!(text[0] >= '0' && text[0] <= '9'))
    return false; /* strtoull would accept "-1" as a huge number */
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (*end || errno != 0)
    return false;
  *out = value;
  return true;
}

void stc__prof_format_duration(uint64_t ns, char *buf, size_t size) {
  static const struct {
    const char *unit;
    double scale;
  } units[] = {{"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  if (ns < 1000) {
    snprintf(buf, size, "%llu ns", (unsigned long long)ns);
    return;
  }
  /* Move to the next unit when rounding to two decimals would print 1000.00
   * (999999 ns is "1.00 ms", not "1000.00 us"). */
  size_t u = 0;
  while (u + 1 < sizeof units / sizeof units[0] && (double)ns / units[u].scale >= 999.995)
    u++;
  snprintf(buf, size, "%.2f %s", (double)ns / units[u].scale, units[u].unit);
}

void stc__prof_format_share(double share, char *buf, size_t size) {
  snprintf(buf, size, "%.1f%%", share * 100.0);
}

stc_status stc__prof_rank(const stc_profile *profile, const stc_classify_options *options,
                          stc_ranked_region **rows, stc_error *err) {
  *rows = NULL;
  size_t n = profile->num_regions;
  if (n == 0)
    return STC_OK;
  stc_hints_entry *entries = calloc(n, sizeof *entries);
  stc_ranked_region *ranked = calloc(n, sizeof *ranked);
  stc_status status = entries && ranked ? STC_OK : STC_ERR_NOMEM;
  for (size_t i = 0; status == STC_OK && i < n; i++) {
    const stc_profile_region *region = &profile->regions[i];
    /* The entries only borrow the ids; they are never freed through them. */
    entries[i].region = region->id;
    entries[i].record = (stc_region_record){region->count, region->total_ns, region->max_ns,
                                            region->bytes};
  }
  if (status == STC_OK)
    status = stc_classify(entries, n, options, ranked, err);
  free(entries);
  if (status != STC_OK) {
    free(ranked);
    return status;
  }
  *rows = ranked;
  return STC_OK;
}

/* ---- tables ---- */

#define STC_PROF_MAX_COLUMNS 12

struct stc_prof_table {
  size_t columns;
  char align[STC_PROF_MAX_COLUMNS];
  char **cells; /* rows * columns, row 0 is the header */
  size_t rows;
  size_t capacity;
};

stc_prof_table *stc__prof_table_create(const char *align, const char *const *headers) {
  size_t columns = strlen(align);
  if (columns == 0 || columns > STC_PROF_MAX_COLUMNS)
    return NULL;
  stc_prof_table *table = calloc(1, sizeof *table);
  if (!table)
    return NULL;
  table->columns = columns;
  memcpy(table->align, align, columns);
  if (!stc__prof_table_add(table, headers)) {
    stc__prof_table_destroy(table);
    return NULL;
  }
  return table;
}

bool stc__prof_table_add(stc_prof_table *table, const char *const *cells) {
  if (table->rows == table->capacity) {
    size_t grown = table->capacity ? table->capacity * 2 : 16;
    char **bigger = realloc(table->cells, grown * table->columns * sizeof *bigger);
    if (!bigger)
      return false;
    table->cells = bigger;
    table->capacity = grown;
  }
  char **row = table->cells + table->rows * table->columns;
  for (size_t c = 0; c < table->columns; c++) {
    row[c] = strdup(cells[c] ? cells[c] : "");
    if (!row[c]) {
      while (c-- > 0)
        free(row[c]);
      return false;
    }
  }
  table->rows++;
  return true;
}

/* Columns are measured in characters, not bytes, so that UTF-8 region ids
 * keep the table aligned. */
static size_t display_width(const char *text) {
  size_t width = 0;
  for (; *text; text++)
    width += ((unsigned char)*text & 0xC0) != 0x80;
  return width;
}

static void print_padding(size_t count) {
  while (count-- > 0)
    putchar(' ');
}

void stc__prof_table_print(const stc_prof_table *table) {
  size_t width[STC_PROF_MAX_COLUMNS] = {0};
  for (size_t r = 0; r < table->rows; r++)
    for (size_t c = 0; c < table->columns; c++) {
      size_t length = display_width(table->cells[r * table->columns + c]);
      if (length > width[c])
        width[c] = length;
    }
  for (size_t r = 0; r < table->rows; r++) {
    for (size_t c = 0; c < table->columns; c++) {
      const char *cell = table->cells[r * table->columns + c];
      size_t pad = width[c] - display_width(cell);
      bool last = c + 1 == table->columns;
      if (table->align[c] == 'r')
        print_padding(pad);
      fputs(cell, stdout);
      if (last) {
        putchar('\n'); /* no trailing blanks */
      } else {
        if (table->align[c] != 'r')
          print_padding(pad);
        fputs("  ", stdout);
      }
    }
  }
}

void stc__prof_table_destroy(stc_prof_table *table) {
  if (!table)
    return;
  for (size_t i = 0; i < table->rows * table->columns; i++)
    free(table->cells[i]);
  free(table->cells);
  free(table);
}
