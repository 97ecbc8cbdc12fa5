/* schedule_library.c - built-in schedule table and the YAML variant-library
 * loader (schedule_library.h). In: the embedded scripts, a YAML file. Out:
 * owned stc_schedule records with the file positions of their scripts. */
#include "schedule_library.h"

#include "stc/input_bounds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

bool stc_schedule_shapes_parse(const char *text, stc_schedule_shapes *out) {
  if (!text)
    return false;
  if (strcmp(text, "yes") == 0 || strcmp(text, "true") == 0)
    *out = STC_SCHEDULE_SHAPES_ANY;
  else if (strcmp(text, "static") == 0 || strcmp(text, "no") == 0 ||
           strcmp(text, "false") == 0)
    *out = STC_SCHEDULE_SHAPES_STATIC;
  else if (strcmp(text, "divisible") == 0)
    *out = STC_SCHEDULE_SHAPES_DIVISIBLE;
  else
    return false;
  return true;
}

const char *stc_schedule_shapes_str(stc_schedule_shapes shapes) {
  switch (shapes) {
  case STC_SCHEDULE_SHAPES_ANY:
    return "yes";
  case STC_SCHEDULE_SHAPES_STATIC:
    return "static";
  case STC_SCHEDULE_SHAPES_DIVISIBLE:
    return "divisible";
  default:
    return "unknown";
  }
}

static void schedule_free(stc_schedule *s) {
  free(s->name);
  free(s->kind);
  free(s->script);
  free(s->file);
  memset(s, 0, sizeof *s);
}

void stc_schedule_list_free(stc_schedule_list *list) {
  if (!list)
    return;
  for (size_t i = 0; i < list->count; i++)
    schedule_free(&list->items[i]);
  free(list->items);
  memset(list, 0, sizeof *list);
}

/* Takes ownership of *s (its fields) on success and on failure. */
static stc_status list_push(stc_schedule_list *list, stc_schedule *s) {
  if (list->count == list->capacity) {
    size_t grown = list->capacity ? list->capacity * 2 : 16;
    stc_schedule *bigger = realloc(list->items, grown * sizeof *bigger);
    if (!bigger) {
      schedule_free(s);
      return STC_ERR_NOMEM;
    }
    list->items = bigger;
    list->capacity = grown;
  }
  list->items[list->count++] = *s;
  memset(s, 0, sizeof *s);
  return STC_OK;
}

/* Drops the records from `from` on: undoes a partial load. */
static void list_truncate(stc_schedule_list *list, size_t from) {
  for (size_t i = from; i < list->count; i++)
    schedule_free(&list->items[i]);
  list->count = from;
}

stc_status stc_schedule_list_add_builtins(stc_schedule_list *list,
                                          stc_error *err) {
  size_t start = list->count;
  for (size_t i = 0; i < stc_num_builtin_schedules; i++) {
    stc_schedule s = {0};
    s.name = strdup(stc_builtin_schedules[i].name);
    s.script = strdup(stc_builtin_schedules[i].script);
    s.file = strdup("");
    s.builtin = true;
    s.line = s.column = 1;
    if (!s.name || !s.script || !s.file || list_push(list, &s) != STC_OK) {
      schedule_free(&s);
      list_truncate(list, start);
      stc_error_set(err, NULL, 0, 0, "out of memory loading built-in schedules");
      return STC_ERR_NOMEM;
    }
  }
  return STC_OK;
}

stc_status stc_schedule_list_add_text(stc_schedule_list *list, const char *name,
                                      const char *script, stc_error *err) {
  stc_schedule s = {0};
  s.name = strdup(name);
  s.script = strdup(script);
  s.file = strdup("");
  s.builtin = true;
  s.line = s.column = 1;
  if (!s.name || !s.script || !s.file || list_push(list, &s) != STC_OK) {
    schedule_free(&s);
    stc_error_set(err, NULL, 0, 0, "out of memory loading generated schedules");
    return STC_ERR_NOMEM;
  }
  return STC_OK;
}

void stc_schedule_locate(const stc_schedule *s, unsigned script_line,
                         unsigned script_column, unsigned *file_line,
                         unsigned *file_column) {
  if (!s->block || script_line == 0) {
    *file_line = s->line;
    *file_column = s->column;
    return;
  }
  *file_line = s->line + script_line - 1;
  *file_column = s->indent + (script_column ? script_column : 1);
}

/* ---- YAML ----------------------------------------------------------------- */

typedef struct yaml_load {
  const char *path;
  const char *text; /* the whole file, for block-scalar indentation */
  size_t size;
  yaml_document_t *doc;
  stc_error *err;
} yaml_load;

static stc_status fail_at_mark(yaml_load *load, yaml_mark_t mark,
                               const char *what, const char *detail) {
  stc_error_set(load->err, load->path, (unsigned)mark.line + 1,
                (unsigned)mark.column + 1, "variant library: %s%s", what,
                detail ? detail : "");
  return STC_ERR_PARSE;
}

static const char *scalar_text(yaml_node_t *node) {
  return node && node->type == YAML_SCALAR_NODE
             ? (const char *)node->data.scalar.value
             : NULL;
}

/* A literal block scalar's content starts on the line after its '|' and is
 * indented by the first non-blank content line's leading spaces. */
static void block_position(yaml_load *load, yaml_node_t *node,
                           stc_schedule *s) {
  s->line = (unsigned)node->start_mark.line + 1;
  s->column = (unsigned)node->start_mark.column + 1;
  if (node->data.scalar.style != YAML_LITERAL_SCALAR_STYLE)
    return;
  const char *p = load->text + node->start_mark.index;
  const char *end = load->text + load->size;
  while (p < end && *p != '\n')
    p++;
  if (p == end)
    return;
  p++; /* first content line */
  for (const char *line = p; line < end;) {
    const char *q = line;
    while (q < end && *q == ' ')
      q++;
    if (q < end && *q != '\n' && *q != '\r') {
      s->indent = (unsigned)(q - line);
      break;
    }
    line = q < end ? q + 1 : end;
  }
  s->line = (unsigned)node->start_mark.line + 2;
  s->column = s->indent + 1;
  s->block = true;
}

bool stc_schedule_vector_sizes_exceed(const char *script, uint64_t limit,
                                      unsigned *line, unsigned *column,
                                      uint64_t *product) {
  static const char keyword[] = "vector_sizes";
  unsigned at_line = 1;
  const char *line_start = script;
  for (const char *p = script; *p; p++) {
    if (*p == '\n') {
      at_line++;
      line_start = p + 1;
      continue;
    }
    if (strncmp(p, keyword, sizeof keyword - 1) != 0)
      continue;
    const char *q = p + sizeof keyword - 1;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
      q++;
    if (*q != '[')
      continue;
    /* Literal sizes multiply; a scalable [n] counts as n; an SSA value
     * (%param) is unknown here and counts as 1. */
    uint64_t total = 1;
    int depth = 0;
    for (; *q; q++) {
      if (*q == '[') {
        depth++;
      } else if (*q == ']') {
        if (--depth == 0)
          break;
      } else if (*q == '%') {
        while (q[1] && q[1] != ',' && q[1] != ']')
          q++;
      } else if (*q >= '0' && *q <= '9') {
        uint64_t size = 0;
        for (; q[0] >= '0' && q[0] <= '9'; q++) {
          uint64_t digit = (uint64_t)(*q - '0');
          size = size > (UINT64_MAX - digit) / 10 ? UINT64_MAX
                                                  : size * 10 + digit;
        }
        q--;
        total = size && total > UINT64_MAX / size ? UINT64_MAX : total * size;
      }
    }
    if (total > limit) {
      *line = at_line;
      *column = (unsigned)(p - line_start) + 1;
      *product = total;
      return true;
    }
  }
  return false;
}

static stc_status load_entry(yaml_load *load, yaml_node_t *entry,
                             stc_schedule *s) {
  if (entry->type != YAML_MAPPING_NODE)
    return fail_at_mark(load, entry->start_mark,
                        "each entry must be a mapping with name, kind, "
                        "dynamic and script", NULL);
  yaml_node_t *fields[4] = {NULL, NULL, NULL, NULL};
  static const char *const names[4] = {"name", "kind", "dynamic", "script"};
  for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
       pair < entry->data.mapping.pairs.top; pair++) {
    yaml_node_t *key = yaml_document_get_node(load->doc, pair->key);
    yaml_node_t *value = yaml_document_get_node(load->doc, pair->value);
    const char *key_text = scalar_text(key);
    if (!key_text || !value)
      return fail_at_mark(load, key ? key->start_mark : entry->start_mark,
                          "expected a scalar key", NULL);
    int index = -1;
    for (int i = 0; i < 4; i++)
      if (strcmp(key_text, names[i]) == 0)
        index = i;
    if (index < 0)
      return fail_at_mark(load, key->start_mark,
                          "unknown field (expected name, kind, dynamic, "
                          "script): ", key_text);
    if (fields[index])
      return fail_at_mark(load, key->start_mark, "duplicate field ", key_text);
    if (value->type != YAML_SCALAR_NODE)
      return fail_at_mark(load, value->start_mark, "expected a scalar for ",
                          key_text);
    fields[index] = value;
  }
  for (int i = 0; i < 4; i++)
    if (!fields[i])
      return fail_at_mark(load, entry->start_mark, "entry lacks field ",
                          names[i]);
  const char *name = scalar_text(fields[0]);
  if (!*name)
    return fail_at_mark(load, fields[0]->start_mark, "empty name", NULL);
  for (const char *p = name; *p; p++)
    if (!(*p == '_' || *p == '.' || (*p >= '0' && *p <= '9') ||
          (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
      return fail_at_mark(load, fields[0]->start_mark,
                          "name must be a symbol name ([A-Za-z0-9_.]): ", name);
  if (!*scalar_text(fields[1]))
    return fail_at_mark(load, fields[1]->start_mark, "empty kind", NULL);
  if (!stc_schedule_shapes_parse(scalar_text(fields[2]), &s->shapes))
    return fail_at_mark(load, fields[2]->start_mark,
                        "dynamic must be yes, static or divisible, got ",
                        scalar_text(fields[2]));
  s->name = strdup(name);
  s->kind = strdup(scalar_text(fields[1]));
  s->script = strdup(scalar_text(fields[3]));
  s->file = strdup(load->path);
  if (!s->name || !s->kind || !s->script || !s->file) {
    stc_error_set(load->err, load->path, 0, 0,
                  "out of memory loading the variant library");
    return STC_ERR_NOMEM;
  }
  block_position(load, fields[3], s);
  unsigned script_line, script_column, line, column;
  uint64_t product;
  if (stc_schedule_vector_sizes_exceed(s->script,
                                       STC_SCHEDULE_MAX_VECTOR_ELEMENTS,
                                       &script_line, &script_column,
                                       &product)) {
    stc_schedule_locate(s, script_line, script_column, &line, &column);
    stc_error_set(load->err, load->path, line, column,
                  "variant library: schedule '%s' vectorizes with "
                  "vector_sizes whose product (%" PRIu64 " elements) exceeds "
                  "%u; refused: compile time would be unbounded",
                  s->name, product, STC_SCHEDULE_MAX_VECTOR_ELEMENTS);
    return STC_ERR_PARSE;
  }
  return STC_OK;
}

stc_status stc_schedule_list_load_yaml(stc_schedule_list *list,
                                       const char *path, stc_error *err) {
  size_t size = 0;
  char *text = NULL;
  stc_read_limit_spec limit = {"STC_MAX_LIBRARY_BYTES",
                               STC_MAX_LIBRARY_BYTES_DEFAULT};
  stc_status status = stc_read_file_limited(path, 0, "variant library", limit,
                                            &text, &size, err);
  if (status != STC_OK)
    return status;
  yaml_parser_t parser;
  yaml_document_t doc;
  if (!yaml_parser_initialize(&parser)) {
    free(text);
    stc_error_set(err, path, 0, 0, "out of memory loading the variant library");
    return STC_ERR_NOMEM;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
  if (!yaml_parser_load(&parser, &doc)) {
    yaml_mark_t mark = parser.problem_mark;
    stc_error_set(err, path, (unsigned)mark.line + 1, (unsigned)mark.column + 1,
                  "variant library: malformed YAML: %s%s%s",
                  parser.problem ? parser.problem : "error",
                  parser.context ? " " : "", parser.context ? parser.context : "");
    yaml_parser_delete(&parser);
    free(text);
    return STC_ERR_PARSE;
  }
  yaml_load load = {path, text, size, &doc, err};
  size_t start = list->count;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root) {
    /* An empty file is an empty library. */
  } else if (root->type != YAML_SEQUENCE_NODE) {
    status = fail_at_mark(&load, root->start_mark,
                          "expected a list of schedules", NULL);
  } else {
    for (yaml_node_item_t *item = root->data.sequence.items.start;
         item < root->data.sequence.items.top && status == STC_OK; item++) {
      stc_schedule s = {0};
      status = load_entry(&load, yaml_document_get_node(&doc, *item), &s);
      if (status == STC_OK) {
        for (size_t i = start; i < list->count; i++)
          if (strcmp(list->items[i].name, s.name) == 0) {
            yaml_node_t *node = yaml_document_get_node(&doc, *item);
            status = fail_at_mark(&load, node->start_mark,
                                  "duplicate schedule name ", s.name);
          }
      }
      if (status == STC_OK && list_push(list, &s) != STC_OK) {
        stc_error_set(err, path, 0, 0, "out of memory loading the variant library");
        status = STC_ERR_NOMEM;
      }
      schedule_free(&s);
    }
  }
  if (status != STC_OK)
    list_truncate(list, start);
  yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  free(text);
  return status;
}
