/* pipeline.c - stc-opt's textual pass pipeline: tokenizer, parser, splicer.
 *
 * In:  the pipeline sources of the command line (--pass-pipeline texts,
 *      pass flags as "name{opts}", --tune-hot-paths), in order.
 * Out: a syntax tree whose elements remember where they came from (source
 *      text and column, for errors), then a pass manager:
 *        - consecutive upstream elements at one nesting level become one
 *          mlirOpPassManagerAddPipeline call, on text re-assembled from the
 *          original slices (upstream options pass through untouched);
 *        - stc passes are built by their spec's factory from parsed {k=v}
 *          options and added with mlirOpPassManagerAddOwnedPass;
 *        - a nested group that holds an stc pass becomes
 *          mlirOpPassManagerGetNestedUnder + recursion.
 * MLIR cannot register C passes by name, hence this splicing (DESIGN.md 4).
 *
 * Grammar (MLIR's):  list    := element (',' element)*
 *                    element := name ['{' options '}'] | name '(' [list] ')'
 */
#include "stc_opt.h"

#include "stc_passes.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define TOP_LEVEL_OP "builtin.module"

/* ---- syntax tree --------------------------------------------------------- */

typedef struct stc_option {
  char *name;  /* owned */
  char *value; /* owned, quotes removed */
} stc_option;

typedef struct element element;
typedef struct element_list {
  element *items;
  size_t count, capacity;
} element_list;

struct element {
  const stc_opt_source *source;
  size_t begin, end; /* the element's slice of source->text */
  size_t name_begin, name_end;
  bool has_options;
  size_t options_begin, options_end; /* inside the braces */
  bool is_group;
  element_list children;
  bool is_tune;               /* --tune-hot-paths */
  const stc_pass_spec *spec;  /* an stc pass, else NULL */
  stc_option *stc_options;    /* parsed options of an stc pass */
  size_t num_stc_options;
  bool has_stc;               /* is or contains an stc pass or the tune hook */
};

struct stc_opt_pipeline {
  element_list top; /* the children of the top-level builtin.module */
};

static void list_free(element_list *list);

static void element_free(element *e) {
  list_free(&e->children);
  for (size_t i = 0; i < e->num_stc_options; i++) {
    free(e->stc_options[i].name);
    free(e->stc_options[i].value);
  }
  free(e->stc_options);
}

static void list_free(element_list *list) {
  for (size_t i = 0; i < list->count; i++)
    element_free(&list->items[i]);
  free(list->items);
  *list = (element_list){0};
}

/* Appends e (moved in); on failure frees it. */
static bool list_push(element_list *list, element *e) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 4;
    element *items = realloc(list->items, capacity * sizeof *items);
    if (!items) {
      element_free(e);
      stc_opt_error("out of memory");
      return false;
    }
    list->items = items;
    list->capacity = capacity;
  }
  list->items[list->count++] = *e;
  return true;
}

static char *slice_dup(const element *e, size_t begin, size_t end) {
  return strndup(e->source->text + begin, end - begin);
}

static bool name_is(const element *e, const char *name) {
  size_t length = e->name_end - e->name_begin;
  return strlen(name) == length &&
         strncmp(e->source->text + e->name_begin, name, length) == 0;
}

/* ---- errors pointing at a column ---------------------------------------- */

/* Prints "stc-opt: error: <where>: <message>", the source text and a caret
 * under offset. */
static void report(const stc_opt_source *source, size_t offset,
                   const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void report(const stc_opt_source *source, size_t offset,
                   const char *format, ...) {
  va_list args;
  va_start(args, format);
  if (source->kind == STC_OPT_SOURCE_PIPELINE)
    fprintf(stderr, "stc-opt: error: in '--pass-pipeline' at column %zu: ",
            offset + 1);
  else
    fprintf(stderr, "stc-opt: error: in option '%s': ", source->flag);
  vfprintf(stderr, format, args);
  va_end(args);
  fprintf(stderr, "\n  %s\n  %*s^\n", source->text, (int)offset, "");
}

/* Prints MLIR's own explanation (from a pipeline callback), one line each. */
static void report_mlir_message(const stc_text *message) {
  const char *line = message->data ? message->data : "";
  while (*line) {
    const char *end = strchr(line, '\n');
    size_t length = end ? (size_t)(end - line) : strlen(line);
    bool blank = true;
    for (size_t i = 0; i < length; i++)
      blank = blank && isspace((unsigned char)line[i]);
    if (!blank)
      fprintf(stderr, "  mlir: %.*s\n", (int)length, line);
    line += length + (end ? 1 : 0);
  }
}

/* ---- tokenizer ------------------------------------------------------------ */

typedef enum token_kind {
  TOKEN_NAME,
  TOKEN_OPTIONS, /* a whole balanced '{...}' */
  TOKEN_LPAREN,
  TOKEN_RPAREN,
  TOKEN_COMMA,
  TOKEN_END,
  TOKEN_ERROR, /* already reported */
} token_kind;

typedef struct token {
  token_kind kind;
  size_t begin, end;
} token;

typedef struct lexer {
  const stc_opt_source *source;
  const char *text;
  size_t pos;
  token peeked;
  bool has_peeked;
} lexer;

static bool is_name_char(char c) {
  return c && !isspace((unsigned char)c) && !strchr(",(){}\"'=", c);
}

/* Finds the end of a quoted string starting at text[pos]; returns the
 * offset after the closing quote, or 0 when it is unterminated. */
static size_t skip_quoted(const char *text, size_t pos) {
  const char *close = strchr(text + pos + 1, text[pos]);
  return close ? (size_t)(close - text) + 1 : 0;
}

/* Scans a balanced '{...}' at text[pos] (nested braces and quoted strings
 * pass through untouched); returns the offset after '}', or 0 after
 * reporting the problem. */
static size_t scan_braces(const stc_opt_source *source, size_t pos) {
  const char *text = source->text;
  size_t depth = 0;
  for (size_t i = pos; text[i]; i++) {
    if (text[i] == '"' || text[i] == '\'') {
      size_t after = skip_quoted(text, i);
      if (!after) {
        report(source, i, "unterminated quoted string");
        return 0;
      }
      i = after - 1;
    } else if (text[i] == '{') {
      depth++;
    } else if (text[i] == '}' && --depth == 0) {
      return i + 1;
    }
  }
  report(source, pos, "unbalanced '{': missing '}'");
  return 0;
}

static token lex(lexer *lx) {
  if (lx->has_peeked) {
    lx->has_peeked = false;
    return lx->peeked;
  }
  const char *text = lx->text;
  while (isspace((unsigned char)text[lx->pos]))
    lx->pos++;
  size_t begin = lx->pos;
  char c = text[begin];
  token t = {TOKEN_END, begin, begin};
  switch (c) {
  case '\0':
    return t;
  case '(':
    t.kind = TOKEN_LPAREN;
    break;
  case ')':
    t.kind = TOKEN_RPAREN;
    break;
  case ',':
    t.kind = TOKEN_COMMA;
    break;
  case '{': {
    size_t end = scan_braces(lx->source, begin);
    if (!end)
      return (token){TOKEN_ERROR, begin, begin};
    lx->pos = end;
    return (token){TOKEN_OPTIONS, begin, end};
  }
  case '}':
    report(lx->source, begin, "unbalanced '}': no '{' before it");
    return (token){TOKEN_ERROR, begin, begin};
  default:
    if (!is_name_char(c)) {
      report(lx->source, begin, "unexpected character '%c'", c);
      return (token){TOKEN_ERROR, begin, begin};
    }
    while (is_name_char(text[lx->pos]))
      lx->pos++;
    return (token){TOKEN_NAME, begin, lx->pos};
  }
  lx->pos = begin + 1;
  t.end = lx->pos;
  return t;
}

static token peek(lexer *lx) {
  if (!lx->has_peeked) {
    lx->peeked = lex(lx);
    lx->has_peeked = true;
  }
  return lx->peeked;
}

/* ---- parser --------------------------------------------------------------- */

static bool parse_list(lexer *lx, element_list *list, size_t open_paren,
                       bool nested);

static const char *token_text(token_kind kind) {
  switch (kind) {
  case TOKEN_NAME:
    return "a name";
  case TOKEN_OPTIONS:
    return "'{'";
  case TOKEN_LPAREN:
    return "'('";
  case TOKEN_RPAREN:
    return "')'";
  case TOKEN_COMMA:
    return "','";
  default:
    return "the end";
  }
}

/* element := name ['{' options '}'] | name '(' [list] ')' */
static bool parse_element(lexer *lx, element *e) {
  token name = lex(lx);
  if (name.kind == TOKEN_ERROR)
    return false;
  if (name.kind != TOKEN_NAME) {
    report(lx->source, name.begin, "expected a pass or operation name, found %s",
           token_text(name.kind));
    return false;
  }
  *e = (element){.source = lx->source,
                 .begin = name.begin,
                 .end = name.end,
                 .name_begin = name.begin,
                 .name_end = name.end};
  token next = peek(lx);
  if (next.kind == TOKEN_OPTIONS) {
    lex(lx);
    e->has_options = true;
    e->options_begin = next.begin + 1;
    e->options_end = next.end - 1;
    e->end = next.end;
  } else if (next.kind == TOKEN_LPAREN) {
    lex(lx);
    e->is_group = true;
    if (!parse_list(lx, &e->children, next.begin, true)) {
      element_free(e);
      return false;
    }
    token close = lex(lx); /* parse_list stopped at ')' */
    e->end = close.end;
  }
  return true;
}

/* list := element (',' element)*, empty allowed inside '()'. Stops before
 * ')' (nested) or at the end (top level). */
static bool parse_list(lexer *lx, element_list *list, size_t open_paren,
                       bool nested) {
  token t = peek(lx);
  if (nested && t.kind == TOKEN_RPAREN)
    return true;
  for (;;) {
    element e;
    if (!parse_element(lx, &e))
      return false;
    if (!list_push(list, &e))
      return false;
    t = peek(lx);
    if (t.kind == TOKEN_COMMA) {
      lex(lx);
      continue;
    }
    if (t.kind == TOKEN_ERROR)
      return false;
    if (nested && t.kind == TOKEN_RPAREN)
      return true;
    if (t.kind == TOKEN_END) {
      if (nested)
        report(lx->source, open_paren, "unbalanced '(': missing ')'");
      return !nested;
    }
    if (t.kind == TOKEN_RPAREN)
      report(lx->source, t.begin, "unbalanced ')': no '(' before it");
    else
      report(lx->source, t.begin, "expected ',' or ')' after '%.*s', found %s",
             (int)(list->items[list->count - 1].name_end -
                   list->items[list->count - 1].name_begin),
             lx->text + list->items[list->count - 1].name_begin,
             token_text(t.kind));
    return false;
  }
}

/* ---- stc pass options: {k=v k2="v 2" flag} -------------------------------- */

static const stc_pass_option_spec *find_option_spec(const stc_pass_spec *spec,
                                                    const char *name) {
  for (size_t i = 0; i < spec->num_options; i++)
    if (strcmp(spec->options[i].name, name) == 0)
      return &spec->options[i];
  return NULL;
}

static void list_option_names(const stc_pass_spec *spec, stc_text *out) {
  for (size_t i = 0; i < spec->num_options; i++)
    stc_text_appendf(out, "%s%s", i ? ", " : "", spec->options[i].name);
  if (spec->num_options == 0)
    stc_text_appendf(out, "none");
}

/* Parses e's options for its stc pass; a key without '=' means "true", as
 * for MLIR's boolean options. */
static bool parse_stc_options(element *e) {
  const char *text = e->source->text;
  size_t pos = e->options_begin;
  while (pos < e->options_end) {
    if (isspace((unsigned char)text[pos])) {
      pos++;
      continue;
    }
    size_t key_begin = pos;
    while (pos < e->options_end && text[pos] != '=' &&
           !isspace((unsigned char)text[pos]))
      pos++;
    if (pos == key_begin) {
      report(e->source, key_begin, "expected an option name before '='");
      return false;
    }
    size_t key_end = pos, value_begin = pos, value_end = pos;
    bool has_value = pos < e->options_end && text[pos] == '=';
    if (has_value) {
      value_begin = ++pos;
      if (pos < e->options_end && (text[pos] == '"' || text[pos] == '\'')) {
        /* scan_braces already proved the quote is closed. */
        pos = skip_quoted(text, pos);
        value_begin++;
        value_end = pos - 1;
      } else {
        size_t depth = 0;
        while (pos < e->options_end &&
               (depth > 0 || !isspace((unsigned char)text[pos]))) {
          if (text[pos] == '{')
            depth++;
          else if (text[pos] == '}' && depth > 0)
            depth--;
          pos++;
        }
        value_end = pos;
      }
    }
    stc_option option = {
        .name = strndup(text + key_begin, key_end - key_begin),
        .value = has_value ? strndup(text + value_begin, value_end - value_begin)
                           : strdup("true")};
    stc_option *grown = realloc(e->stc_options,
                                (e->num_stc_options + 1) * sizeof *grown);
    if (!option.name || !option.value || !grown) {
      free(option.name);
      free(option.value);
      if (grown)
        e->stc_options = grown;
      stc_opt_error("out of memory");
      return false;
    }
    e->stc_options = grown;
    e->stc_options[e->num_stc_options++] = option;
    if (!find_option_spec(e->spec, option.name)) {
      stc_text valid = {0};
      list_option_names(e->spec, &valid);
      report(e->source, key_begin,
             "unknown option '%s' for pass '%s' (valid options: %s)",
             option.name, e->spec->argument,
             valid.data ? valid.data : "?");
      stc_text_free(&valid);
      return false;
    }
  }
  return true;
}

/* ---- resolution: stc passes, anchors -------------------------------------- */

static bool anchor_matches(const stc_pass_spec *spec, const char *level) {
  return !spec->op_name || !spec->op_name[0] || strcmp(level, "any") == 0 ||
         strcmp(spec->op_name, level) == 0;
}

/* Marks stc passes in list (nested under op `level`) and checks their
 * options and anchors. Flags nest implicitly, as mlir-opt's pass flags do. */
static bool resolve(element_list *list, const char *level) {
  for (size_t i = 0; i < list->count; i++) {
    element *e = &list->items[i];
    if (e->is_tune) {
      e->has_stc = true;
      continue;
    }
    char *name = slice_dup(e, e->name_begin, e->name_end);
    if (!name) {
      stc_opt_error("out of memory");
      return false;
    }
    bool ok = true;
    if (e->is_group) {
      ok = resolve(&e->children, name);
      for (size_t k = 0; ok && k < e->children.count; k++)
        e->has_stc = e->has_stc || e->children.items[k].has_stc;
    } else if ((e->spec = stc_pass_find(name))) {
      e->has_stc = true;
      bool implicit = e->source->kind == STC_OPT_SOURCE_FLAG;
      if (!implicit && !anchor_matches(e->spec, level)) {
        report(e->source, e->name_begin,
               "pass '%s' runs on '%s' but is nested under '%s'; write "
               "'%s(%s)'",
               name, e->spec->op_name, level, e->spec->op_name, name);
        ok = false;
      }
      ok = ok && (!e->has_options || parse_stc_options(e));
    }
    free(name);
    if (!ok)
      return false;
  }
  return true;
}

/* ---- parsing every source into the top-level list ------------------------- */

/* Moves the elements of a parsed source into the top-level list. A
 * --pass-pipeline must be 'builtin.module(...)'; a flag is one element. */
static bool add_source(stc_opt_pipeline *pipeline, const stc_opt_source *source) {
  if (source->kind == STC_OPT_SOURCE_TUNE) {
    element e = {.source = source, .is_tune = true};
    return list_push(&pipeline->top, &e);
  }
  lexer lx = {.source = source, .text = source->text};
  element_list parsed = {0};
  bool ok = true;
  if (peek(&lx).kind != TOKEN_END)
    ok = parse_list(&lx, &parsed, 0, false);
  for (size_t i = 0; ok && i < parsed.count; i++) {
    element *e = &parsed.items[i];
    if (source->kind == STC_OPT_SOURCE_FLAG) {
      ok = !e->is_group && parsed.count == 1;
      if (!ok)
        report(source, e->begin, "not a pass name");
    } else if (!e->is_group || !name_is(e, TOP_LEVEL_OP)) {
      report(source, e->begin,
             "the pipeline must be anchored on '" TOP_LEVEL_OP
             "', as in '" TOP_LEVEL_OP "(%.*s)'",
             (int)(e->end - e->begin), source->text + e->begin);
      ok = false;
    }
  }
  for (size_t i = 0; ok && i < parsed.count; i++) {
    element *e = &parsed.items[i];
    if (e->is_group) {
      element_list children = e->children;
      e->children = (element_list){0};
      for (size_t k = 0; ok && k < children.count; k++) {
        ok = list_push(&pipeline->top, &children.items[k]);
        children.items[k] = (element){0};
      }
      list_free(&children);
    } else {
      ok = list_push(&pipeline->top, e);
      *e = (element){0};
    }
  }
  list_free(&parsed);
  return ok;
}

stc_opt_pipeline *stc_opt_pipeline_parse(const stc_opt_options *options) {
  stc_opt_pipeline *pipeline = calloc(1, sizeof *pipeline);
  if (!pipeline) {
    stc_opt_error("out of memory");
    return NULL;
  }
  for (size_t i = 0; i < options->num_sources; i++)
    if (!add_source(pipeline, &options->sources[i])) {
      stc_opt_pipeline_destroy(pipeline);
      return NULL;
    }
  if (!resolve(&pipeline->top, TOP_LEVEL_OP)) {
    stc_opt_pipeline_destroy(pipeline);
    return NULL;
  }
  return pipeline;
}

void stc_opt_pipeline_destroy(stc_opt_pipeline *pipeline) {
  if (!pipeline)
    return;
  list_free(&pipeline->top);
  free(pipeline);
}

/* ---- building the pass manager -------------------------------------------- */

typedef struct builder {
  MlirContext ctx;
  const stc_opt_options *options;
} builder;

/* Adds elements' re-assembled text at a scratch pass manager on `level`,
 * so that a failure can be pinned on one element. */
static bool try_upstream(const builder *b, const char *level,
                         const element *e, bool name_only,
                         stc_text *message) {
  MlirPassManager scratch =
      strcmp(level, "any") == 0
          ? mlirPassManagerCreate(b->ctx)
          : mlirPassManagerCreateOnOperation(
                b->ctx, mlirStringRefCreateFromCString(level));
  size_t end = name_only ? e->name_end : e->end;
  stc_text_free(message);
  MlirLogicalResult result = mlirOpPassManagerAddPipeline(
      mlirPassManagerGetAsOpPassManager(scratch),
      mlirStringRefCreate(e->source->text + e->begin, end - e->begin),
      stc_text_callback, message);
  mlirPassManagerDestroy(scratch);
  return mlirLogicalResultIsSuccess(result);
}

/* Says why MLIR rejected e under `level`: an unknown name (rejected even
 * under 'any'), a pass that cannot nest there (its bare name is rejected
 * under `level`), or bad options. Options are not parsed again: LLVM's
 * option parser prints some complaints straight to stderr. */
static void report_rejected(const builder *b, const char *level,
                            const element *e, const stc_text *message) {
  int name_length = (int)(e->name_end - e->name_begin);
  const char *name = e->source->text + e->name_begin;
  stc_text ignored = {0};
  bool name_known = e->is_group || try_upstream(b, "any", e, true, &ignored);
  bool nests = e->is_group || try_upstream(b, level, e, true, &ignored);
  stc_text_free(&ignored);
  if (!name_known && e->source->kind == STC_OPT_SOURCE_FLAG)
    stc_opt_error("unknown option '%s': no pass named '%.*s' (see --help)",
                  e->source->flag, name_length, name);
  else if (!name_known)
    report(e->source, e->name_begin, "unknown pass '%.*s'", name_length, name);
  else if (!nests)
    report(e->source, e->name_begin, "'%.*s' cannot be nested under '%s'",
           name_length, name, level);
  else if (e->has_options)
    report(e->source, e->options_begin - 1, "invalid options for pass '%.*s'",
           name_length, name);
  else
    report(e->source, e->name_begin, "MLIR rejected '%.*s' under '%s'",
           name_length, name, level);
  report_mlir_message(message);
}

static bool validate_list(const builder *b, const char *level,
                          const element *items, size_t count);

/* Checks one upstream element alone, innermost first, so that an error
 * points at the element that causes it (and MLIR's own messages on stderr
 * appear once). */
static bool validate_element(const builder *b, const char *level,
                             const element *e) {
  if (e->is_group) {
    char *name = slice_dup(e, e->name_begin, e->name_end);
    bool ok = name && validate_list(b, name, e->children.items,
                                    e->children.count);
    if (!name)
      stc_opt_error("out of memory");
    free(name);
    if (!ok)
      return false;
  }
  stc_text message = {0};
  bool ok = try_upstream(b, level, e, false, &message);
  if (!ok)
    report_rejected(b, level, e, &message);
  stc_text_free(&message);
  return ok;
}

static bool validate_list(const builder *b, const char *level,
                          const element *items, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (!validate_element(b, level, &items[i]))
      return false;
  return true;
}

/* Adds a run of upstream elements with one mlirOpPassManagerAddPipeline. */
static bool add_upstream_run(const builder *b, MlirOpPassManager pm,
                             const char *level, const element *items,
                             size_t count) {
  if (!validate_list(b, level, items, count))
    return false;
  stc_text text = {0}, message = {0};
  for (size_t i = 0; i < count; i++) {
    const element *e = &items[i];
    stc_text_appendf(&text, "%s%.*s", i ? "," : "", (int)(e->end - e->begin),
                         e->source->text + e->begin);
  }
  bool ok = !text.out_of_memory &&
            mlirLogicalResultIsSuccess(mlirOpPassManagerAddPipeline(
                pm, mlirStringRefCreate(text.data, text.length),
                stc_text_callback, &message));
  if (!ok) {
    report(items[0].source, items[0].begin,
           "MLIR rejected the pass pipeline '%s'", text.data ? text.data : "");
    report_mlir_message(&message);
  }
  stc_text_free(&text);
  stc_text_free(&message);
  return ok;
}

static bool add_stc_pass(const element *e, MlirOpPassManager pm) {
  stc_pass_option_value *values =
      calloc(e->num_stc_options ? e->num_stc_options : 1, sizeof *values);
  if (!values) {
    stc_opt_error("out of memory");
    return false;
  }
  for (size_t i = 0; i < e->num_stc_options; i++)
    values[i] = (stc_pass_option_value){e->stc_options[i].name,
                                        e->stc_options[i].value};
  stc_error err;
  stc_error_clear(&err);
  MlirPass pass = e->spec->create(values, e->num_stc_options, &err);
  free(values);
  if (!pass.ptr) {
    report(e->source, e->has_options ? e->options_begin - 1 : e->name_begin,
           "cannot create pass '%s': %s", e->spec->argument,
           err.message[0] ? err.message : "no reason given");
    return false;
  }
  mlirOpPassManagerAddOwnedPass(pm, pass);
  return true;
}

static bool add_list(const builder *b, MlirOpPassManager pm, const char *level,
                     const element_list *list);

static bool add_element(const builder *b, MlirOpPassManager pm,
                        const char *level, const element *e) {
  if (e->is_tune) {
    stc_error err;
    stc_error_clear(&err);
    if (stc_opt_tune_hot_paths(pm, &b->options->tune, &err) == STC_OK)
      return true;
    stc_opt_error("%s: %s", e->source->flag, err.message);
    return false;
  }
  if (e->spec) {
    /* A flag for a pass anchored elsewhere nests implicitly. */
    if (!anchor_matches(e->spec, level))
      pm = mlirOpPassManagerGetNestedUnder(
          pm, mlirStringRefCreateFromCString(e->spec->op_name));
    return add_stc_pass(e, pm);
  }
  char *name = slice_dup(e, e->name_begin, e->name_end);
  if (!name) {
    stc_opt_error("out of memory");
    return false;
  }
  MlirOpPassManager nested =
      mlirOpPassManagerGetNestedUnder(pm, mlirStringRefCreateFromCString(name));
  bool ok = add_list(b, nested, name, &e->children);
  free(name);
  return ok;
}

static bool add_list(const builder *b, MlirOpPassManager pm, const char *level,
                     const element_list *list) {
  size_t i = 0;
  while (i < list->count) {
    size_t run = i;
    while (run < list->count && !list->items[run].has_stc)
      run++;
    if (run > i) {
      if (!add_upstream_run(b, pm, level, &list->items[i], run - i))
        return false;
      i = run;
      continue;
    }
    if (!add_element(b, pm, level, &list->items[i]))
      return false;
    i++;
  }
  return true;
}

int stc_opt_pipeline_build(const stc_opt_pipeline *pipeline,
                           const stc_opt_options *options, MlirContext ctx,
                           MlirPassManager pm) {
  builder b = {ctx, options};
  return add_list(&b, mlirPassManagerGetAsOpPassManager(pm), TOP_LEVEL_OP,
                  &pipeline->top)
             ? STC_OPT_EXIT_OK
             : STC_OPT_EXIT_USAGE;
}
