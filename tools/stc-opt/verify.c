/* verify.c - --verify-diagnostics, mlir-opt's way.
 * In:  the chunk's text (its expected-* comments) and the diagnostics the
 *      chunk produced.
 * Out: true when every diagnostic was expected and every expectation was
 *      produced; otherwise the mismatches, printed at their locations.
 *
 * Designators (as in MLIR):
 *   expected-(error|warning|remark|note)[-re][@+N|@-N|@above|@below|@unknown]
 *   {{message}}
 * The message must occur in the diagnostic; with -re, '{{regex}}' parts of it
 * are POSIX extended regular expressions. @above / @below refer to the
 * nearest line above / below that is not only a designator comment. */
#include "stc_opt.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

typedef struct expectation {
  MlirDiagnosticSeverity severity;
  char *text;       /* owned */
  bool is_regex;    /* -re: text holds {{regex}} parts */
  bool unknown_loc; /* @unknown */
  unsigned line;    /* the line the diagnostic must be on; 0 = unresolved */
  unsigned designator_line, designator_column;
  bool matched;
} expectation;

typedef struct expectations {
  expectation *items;
  size_t count;
  bool failed;
} expectations;

static void expectations_free(expectations *list) {
  for (size_t i = 0; i < list->count; i++)
    free(list->items[i].text);
  free(list->items);
}

static bool parse_severity(const char **p, MlirDiagnosticSeverity *severity) {
  static const struct {
    const char *name;
    MlirDiagnosticSeverity severity;
  } kinds[] = {{"error", MlirDiagnosticError},
               {"warning", MlirDiagnosticWarning},
               {"remark", MlirDiagnosticRemark},
               {"note", MlirDiagnosticNote}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    size_t length = strlen(kinds[i].name);
    if (strncmp(*p, kinds[i].name, length) == 0) {
      *p += length;
      *severity = kinds[i].severity;
      return true;
    }
  }
  return false;
}

typedef enum offset_kind { AT_SAME, AT_RELATIVE, AT_ABOVE, AT_BELOW, AT_UNKNOWN } offset_kind;

/* Parses one designator starting at "expected-" (p) within [p, end). */
static bool parse_designator(const char *p, const char *end, expectation *e,
                             offset_kind *kind, long *offset) {
  p += strlen("expected-");
  if (!parse_severity(&p, &e->severity))
    return false;
  if (strncmp(p, "-re", 3) == 0) {
    e->is_regex = true;
    p += 3;
  }
  while (p < end && *p == ' ')
    p++;
  *kind = AT_SAME;
  if (p < end && *p == '@') {
    p++;
    if ((*p == '+' || *p == '-') && p + 1 < end && p[1] >= '0' && p[1] <= '9') {
      char *after;
      *offset = strtol(p, &after, 10);
      p = after;
      *kind = AT_RELATIVE;
    } else if (strncmp(p, "above", 5) == 0) {
      p += 5;
      *kind = AT_ABOVE;
    } else if (strncmp(p, "below", 5) == 0) {
      p += 5;
      *kind = AT_BELOW;
    } else if (strncmp(p, "unknown", 7) == 0) {
      p += 7;
      *kind = AT_UNKNOWN;
    } else {
      return false;
    }
  }
  while (p < end && *p == ' ')
    p++;
  /* The message runs from '{{' to the last '}}' on the line. */
  const char *stop = end;
  while (stop > p && (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\r'))
    stop--;
  if (end - p < 4 || strncmp(p, "{{", 2) != 0 || stop - p < 4 ||
      strncmp(stop - 2, "}}", 2) != 0)
    return false;
  e->text = strndup(p + 2, (size_t)(stop - 2 - (p + 2)));
  return e->text != NULL;
}

static void push(expectations *list, const expectation *e) {
  expectation *grown = realloc(list->items, (list->count + 1) * sizeof *grown);
  if (!grown) {
    free(e->text);
    list->failed = true;
    return;
  }
  list->items = grown;
  list->items[list->count++] = *e;
}

/* Finds needle in [p, end), or NULL. */
static const char *find_in(const char *p, const char *end, const char *needle) {
  size_t length = strlen(needle);
  for (; p + length <= end; p++)
    if (memcmp(p, needle, length) == 0)
      return p;
  return NULL;
}

/* Scans source for designators; resolves @above / @below. */
static void scan(const char *source, expectations *list) {
  unsigned last_plain_line = 0; /* last line that is not only a designator */
  size_t first_pending_below = (size_t)-1;
  unsigned number = 1;
  for (const char *line = source; *line; number++) {
    const char *end = strchr(line, '\n');
    if (!end)
      end = line + strlen(line);
    bool only_designators = false;
    const char *p = line;
    while ((p = find_in(p, end, "expected-")) != NULL) {
      expectation e = {.designator_line = number,
                       .designator_column = (unsigned)(p - line) + 1};
      offset_kind kind;
      long offset = 0;
      if (parse_designator(p, end, &e, &kind, &offset)) {
        /* A line is "only a designator" when "//" is all that precedes it. */
        const char *q = line;
        while (q < p && (*q == ' ' || *q == '\t'))
          q++;
        if (q + 2 <= p && q[0] == '/' && q[1] == '/') {
          q += 2;
          while (q < p && (*q == ' ' || *q == '\t'))
            q++;
          only_designators = only_designators || q == p;
        }
        switch (kind) {
        case AT_SAME:
          e.line = number;
          break;
        case AT_RELATIVE: /* a line outside the file can never match */
          e.line = offset > -(long)number && offset < 1000000000L
                       ? (unsigned)(offset + (long)number)
                       : 0;
          break;
        case AT_ABOVE:
          e.line = last_plain_line;
          break;
        case AT_BELOW:
          e.line = 0;
          if (first_pending_below == (size_t)-1)
            first_pending_below = list->count;
          break;
        case AT_UNKNOWN:
          e.unknown_loc = true;
          break;
        }
        push(list, &e);
      } else {
        free(e.text);
      }
      p += 9;
    }
    if (!only_designators) {
      for (size_t i = first_pending_below;
           first_pending_below != (size_t)-1 && i < list->count; i++)
        if (!list->items[i].unknown_loc && list->items[i].line == 0)
          list->items[i].line = number;
      first_pending_below = (size_t)-1;
      last_plain_line = number;
    }
    line = *end ? end + 1 : end;
  }
}

/* Builds an ERE from a -re message: '{{re}}' parts verbatim, the rest
 * escaped. */
static char *regex_of(const char *text) {
  stc_text out = {0};
  for (const char *p = text; *p;) {
    if (strncmp(p, "{{", 2) == 0) {
      const char *close = strstr(p + 2, "}}");
      if (close) {
        stc_text_appendf(&out, "(%.*s)", (int)(close - p - 2), p + 2);
        p = close + 2;
        continue;
      }
    }
    if (strchr(".[]{}()\\*+?|^$", *p))
      stc_text_append(&out, "\\", 1);
    stc_text_append(&out, p, 1);
    p++;
  }
  stc_text_append(&out, "", 0);
  if (out.out_of_memory) {
    stc_text_free(&out);
    return NULL;
  }
  return out.data;
}

/* glibc's regcomp copies a repeated atom once per repetition, and nested
 * repetitions multiply: ((a{1000}){1000}){1000} asks it for 10^9 nodes and
 * it allocates until the process dies. Optional copies ({1,n}, (a?){n})
 * cost memory and time quadratic in their number: 10 MB for 1000, 34 MB for
 * 2000, 790 MB for 10000. Patterns whose expansion, as over-estimated below,
 * passes this bound (or nest deeper than REGEX_MAX_DEPTH groups) are refused
 * before regcomp sees them; the largest accepted ones take regcomp under
 * 12 MB and 10 ms. */
#define REGEX_MAX_EXPANSION 1000
#define REGEX_MAX_DEPTH 64

static size_t saturating_mul(size_t a, size_t b) {
  return b && a > (REGEX_MAX_EXPANSION + 1) / b ? REGEX_MAX_EXPANSION + 1
                                                : a * b;
}

/* The end of the bracket expression that starts at p ('['), or NULL. */
static const char *bracket_end(const char *p) {
  p++;
  if (*p == '^')
    p++;
  if (*p == ']')
    p++;
  for (; *p && *p != ']'; p++)
    if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
      char kind = p[1];
      const char *close = p + 2;
      while (*close && !(close[0] == kind && close[1] == ']'))
        close++;
      if (!*close)
        return NULL;
      p = close + 1;
    }
  return *p ? p : NULL;
}

/* Whether re has a back-reference (\1 .. \9 outside a bracket
 * expression). glibc's regexec backtracks on them without bound:
 * (a*)*\1b took 5 s on a 200-character message, more than 20 s and 1.9 GB
 * on 2000; so they are refused (MLIR's llvm::Regex has them; no test of
 * stc's uses them). */
static bool has_back_reference(const char *re) {
  for (const char *p = re; *p;) {
    if (*p == '\\' && p[1] >= '1' && p[1] <= '9')
      return true;
    if (*p == '\\' && p[1]) {
      p += 2;
    } else if (*p == '[') {
      const char *close = bracket_end(p);
      p = close ? close + 1 : p + strlen(p);
    } else {
      p++;
    }
  }
  return false;
}

/* Parses the interval {m}, {m,}, {m,n} or {,n} at p into the number of copies
 * regcomp makes of its atom; returns the end of it, or NULL if p does not
 * start an interval. */
static const char *interval(const char *p, size_t *copies) {
  size_t m = 0, n = 0;
  const char *q = p + 1;
  if ((*q < '0' || *q > '9') && *q != ',') /* glibc reads {,n} as {0,n} */
    return NULL;
  for (; *q >= '0' && *q <= '9'; q++)
    m = m > REGEX_MAX_EXPANSION ? m : m * 10 + (size_t)(*q - '0');
  n = m;
  if (*q == ',') {
    q++;
    n = m + 1; /* {m,}: m copies and a starred one */
    if (*q >= '0' && *q <= '9')
      for (n = 0; *q >= '0' && *q <= '9'; q++)
        n = n > REGEX_MAX_EXPANSION ? n : n * 10 + (size_t)(*q - '0');
  }
  if (*q != '}')
    return NULL;
  *copies = n > m ? n : m;
  return q + 1;
}

/* An upper bound of the atoms regcomp builds for the ERE re, saturated at
 * REGEX_MAX_EXPANSION + 1. Alternatives add; a repeated atom counts once per
 * copy ('+' as two, '*' and '?' as one). */
static size_t regex_expansion(const char *re) {
  struct {
    size_t done, current, last;
  } frames[REGEX_MAX_DEPTH + 1] = {{0}};
  size_t depth = 0;
  for (const char *p = re; *p;) {
    size_t atom = 1, copies = 1;
    bool repeat = false; /* of the last atom, copies times in all */
    const char *next = p + 1;
    switch (*p) {
    case '\\':
      next = p[1] ? p + 2 : p + 1;
      break;
    case '[':
      if (!(next = bracket_end(p)))
        return 0; /* regcomp refuses it */
      next++;
      break;
    case '(':
      if (++depth > REGEX_MAX_DEPTH)
        return REGEX_MAX_EXPANSION + 1;
      frames[depth].done = frames[depth].current = frames[depth].last = 0;
      p = next;
      continue;
    case ')':
      if (depth == 0)
        break;
      atom = frames[depth].done + frames[depth].current + 1;
      depth--;
      break;
    case '|':
      frames[depth].done += frames[depth].current;
      frames[depth].current = frames[depth].last = 0;
      p = next;
      continue;
    case '*':
    case '?':
      repeat = true;
      break;
    case '+':
      repeat = true;
      copies = 2;
      break;
    case '{':
      if ((next = interval(p, &copies)))
        repeat = true;
      else
        next = p + 1;
      break;
    default:
      break;
    }
    if (repeat && copies > 1) {
      size_t extra = saturating_mul(frames[depth].last, copies - 1);
      frames[depth].current += extra;
      frames[depth].last += extra;
    } else if (!repeat) {
      frames[depth].current += atom;
      frames[depth].last = atom;
    }
    if (frames[depth].current + frames[depth].done > REGEX_MAX_EXPANSION)
      return REGEX_MAX_EXPANSION + 1;
    p = next;
  }
  size_t total = 0;
  for (size_t i = 0; i <= depth; i++)
    total += frames[i].done + frames[i].current;
  return total;
}

typedef enum {
  REGEX_OK,
  REGEX_INVALID,
  REGEX_TOO_LARGE,
  REGEX_BACK_REFERENCE
} regex_status;

/* Whether e matches message (NULL: none); *status (may be NULL) tells
 * whether e's regex compiles. Compiled for each use and freed at once: kept
 * for the file, an 8 KB file's expectations held 1.4 GB. */
static bool regex_matches(const expectation *e, const char *message,
                          regex_status *status) {
  char *pattern = regex_of(e->text);
  regex_t regex;
  regex_status result = REGEX_INVALID;
  if (pattern && has_back_reference(pattern))
    result = REGEX_BACK_REFERENCE;
  else if (pattern && regex_expansion(pattern) > REGEX_MAX_EXPANSION)
    result = REGEX_TOO_LARGE;
  else if (pattern && regcomp(&regex, pattern, REG_EXTENDED | REG_NOSUB) == 0)
    result = REGEX_OK;
  bool matched = result == REGEX_OK && message &&
                 regexec(&regex, message, 0, NULL, 0) == 0;
  if (result == REGEX_OK)
    regfree(&regex);
  free(pattern);
  if (status)
    *status = result;
  return matched;
}

static bool message_matches(const expectation *e, const char *message) {
  if (!e->is_regex)
    return strstr(message, e->text) != NULL;
  return regex_matches(e, message, NULL);
}

static bool located_at(const expectation *e, const stc_diagnostic *d,
                       const char *file_name) {
  if (e->unknown_loc)
    return d->file == NULL;
  return d->file && strcmp(d->file, file_name) == 0 && d->line == e->line;
}

/* Matches one diagnostic; reports it when nothing expected it. */
static bool match_one(expectations *list, const stc_diagnostic *d,
                      const char *file_name, const char *source, FILE *out) {
  const expectation *near_miss = NULL;
  for (size_t i = 0; i < list->count; i++) {
    expectation *e = &list->items[i];
    if (e->matched || !located_at(e, d, file_name) ||
        !message_matches(e, d->message))
      continue;
    if (e->severity == d->severity) {
      e->matched = true;
      return true;
    }
    near_miss = e;
  }
  const char *kind = stc_diagnostic_severity_name(d->severity);
  if (near_miss) {
    char message[128];
    snprintf(message, sizeof message,
             "'%s' diagnostic emitted when expecting a '%s'", kind,
             stc_diagnostic_severity_name(near_miss->severity));
    stc_opt_diagnostic_print_at(out, file_name, near_miss->designator_line,
                                near_miss->designator_column, "error", message,
                                source);
    return false;
  }
  stc_text message = {0};
  stc_text_appendf(&message, "unexpected %s: %s", kind, d->message);
  bool own_file = d->file && strcmp(d->file, file_name) == 0;
  stc_opt_diagnostic_print_at(out, d->file, d->line, d->column, "error",
                              message.data ? message.data : d->message,
                              own_file ? source : NULL);
  stc_text_free(&message);
  return false;
}

/* mlir-opt turns MLIR's "see current operation" notes off while verifying;
 * the C API cannot, so they are skipped here instead. */
static bool is_current_operation_note(const stc_diagnostic *d) {
  static const char prefix[] = "see current operation: ";
  return d->is_note && strncmp(d->message, prefix, sizeof prefix - 1) == 0;
}

bool stc_opt_verify_diagnostics(const stc_opt_diagnostics *diagnostics,
                                const char *file_name, const char *source,
                                FILE *out) {
  expectations list = {0};
  scan(source, &list);
  bool ok = !list.failed && !diagnostics->failed;
  for (size_t i = 0; i < diagnostics->count; i++)
    if (!is_current_operation_note(&diagnostics->items[i]))
      ok = match_one(&list, &diagnostics->items[i], file_name, source, out) &&
           ok;
  for (size_t i = 0; i < list.count; i++) {
    const expectation *e = &list.items[i];
    if (e->matched)
      continue;
    stc_text message = {0};
    regex_status status = REGEX_OK;
    if (e->is_regex)
      regex_matches(e, NULL, &status);
    if (status == REGEX_INVALID)
      stc_text_appendf(&message, "expected %s \"%s\" has an invalid "
                           "regular expression",
                           stc_diagnostic_severity_name(e->severity), e->text);
    else if (status == REGEX_TOO_LARGE)
      stc_text_appendf(&message, "expected %s \"%s\" has a regular "
                           "expression whose repetitions expand past %d "
                           "elements", stc_diagnostic_severity_name(e->severity),
                           e->text, REGEX_MAX_EXPANSION);
    else if (status == REGEX_BACK_REFERENCE)
      stc_text_appendf(&message, "expected %s \"%s\" has a back-reference "
                           "(\\1 .. \\9), which --verify-diagnostics does "
                           "not support", stc_diagnostic_severity_name(e->severity),
                           e->text);
    else if (!e->unknown_loc && e->line == 0)
      stc_text_appendf(&message, "expected %s \"%s\" has no line to refer "
                           "to", stc_diagnostic_severity_name(e->severity), e->text);
    else
      stc_text_appendf(&message, "expected %s \"%s\" was not produced",
                           stc_diagnostic_severity_name(e->severity), e->text);
    stc_opt_diagnostic_print_at(out, file_name, e->designator_line,
                                e->designator_column, "error",
                                message.data ? message.data : e->text, source);
    stc_text_free(&message);
    ok = false;
  }
  if (list.failed || diagnostics->failed)
    fputs("stc-opt: error: out of memory while verifying diagnostics\n", out);
  expectations_free(&list);
  return ok;
}
