/* Hot-path profiles as YAML files (include/stc/profile.h, DESIGN.md section 3).
 *
 * In:  YAML text or a file (read with libyaml's document API), profiles to
 *      merge, a hints store to snapshot.
 * Out: a fully checked stc_profile (or an stc_error with file:line:col and no
 *      profile: reading is all-or-nothing), YAML text written with libyaml's
 *      emitter, atomically replaced files, merged profiles.
 *
 * The reader walks exactly the schema below and nothing deeper, so a hostile
 * document (anchors referring to themselves, deep nesting under unknown keys)
 * is never traversed: it is either rejected where the schema expects
 * something else, or ignored with a warning. libyaml marks are 0-based; every
 * location reported here is 1-based. */
#include "stc/profile.h"
#include "stc/input_bounds.h"

#include <yaml.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KEY_VERSION "stc-profile"
#define KEY_PRODUCER "producer"
#define KEY_ENVIRONMENT "environment"
#define KEY_CREATED "created"
#define KEY_REGIONS "regions"
#define KEY_ID "id"
#define KEY_COUNT "count"
#define KEY_TOTAL_NS "total-ns"
#define KEY_MAX_NS "max-ns"
#define KEY_BYTES "bytes"

/* ---- building profiles ---- */

static char *copy_or_empty(const char *text) { return strdup(text ? text : ""); }

/* Writes the current UTC time as ISO 8601 ("2026-12-02T10:00:00Z"). */
static void format_now(char out[32]) {
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm) == NULL ||
      strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    out[0] = 0;
}

stc_status stc_profile_create(const char *producer, const char *environment,
                              const char *created, stc_profile **out) {
  if (!out)
    return STC_ERR_INVALID;
  *out = NULL;
  char now[32];
  if (!created) {
    format_now(now);
    created = now;
  }
  stc_profile *profile = calloc(1, sizeof *profile);
  if (!profile)
    return STC_ERR_NOMEM;
  profile->producer = copy_or_empty(producer);
  profile->environment = copy_or_empty(environment);
  profile->created = copy_or_empty(created);
  if (!profile->producer || !profile->environment || !profile->created) {
    stc_profile_destroy(profile);
    return STC_ERR_NOMEM;
  }
  *out = profile;
  return STC_OK;
}

void stc_profile_destroy(stc_profile *profile) {
  if (!profile)
    return;
  for (size_t i = 0; i < profile->num_regions; i++)
    free(profile->regions[i].id);
  free(profile->regions);
  free(profile->producer);
  free(profile->environment);
  free(profile->created);
  free(profile);
}

static bool is_power_of_two(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

/* Appends without the duplicate check; callers that already know the id is
 * new (the reader, from_hints) use this so that building n regions is O(n).
 * The array's allocated size is implied by num_regions (the next power of
 * two), so the public struct needs no capacity field. */
static stc_status append_region(stc_profile *profile, const char *id,
                                uint64_t count, uint64_t total_ns,
                                uint64_t max_ns, uint64_t bytes) {
  size_t n = profile->num_regions;
  if (n == 0 || is_power_of_two(n)) {
    size_t grown = n == 0 ? 4 : n * 2;
    if (grown < n || grown > SIZE_MAX / sizeof *profile->regions)
      return STC_ERR_NOMEM;
    stc_profile_region *regions = realloc(profile->regions, grown * sizeof *regions);
    if (!regions)
      return STC_ERR_NOMEM;
    profile->regions = regions;
  }
  char *copy = strdup(id);
  if (!copy)
    return STC_ERR_NOMEM;
  profile->regions[n] = (stc_profile_region){
      .id = copy, .count = count, .total_ns = total_ns, .max_ns = max_ns, .bytes = bytes};
  profile->num_regions = n + 1;
  return STC_OK;
}

stc_status stc_profile_add_region(stc_profile *profile, const char *id,
                                  uint64_t count, uint64_t total_ns,
                                  uint64_t max_ns, uint64_t bytes) {
  if (!profile || !id || !id[0])
    return STC_ERR_INVALID;
  for (size_t i = 0; i < profile->num_regions; i++)
    if (strcmp(profile->regions[i].id, id) == 0)
      return STC_ERR_INVALID;
  return append_region(profile, id, count, total_ns, max_ns, bytes);
}

/* A set of region ids with O(1) insertion, for duplicate detection. A hints
 * store is exactly a hash map keyed by region id, so it serves as the set. */
static stc_status create_id_set(stc_hints **set) {
  return stc_hints_create(SIZE_MAX, set);
}

/* Inserts id; *is_new tells whether it was absent before. */
static stc_status insert_id(stc_hints *set, const char *id, bool *is_new) {
  size_t before = stc_hints_len(set);
  stc_status status = stc_hints_record(set, id, 0, 0);
  *is_new = stc_hints_len(set) > before;
  return status;
}

/* ---- reading ---- */

typedef struct reader {
  const char *name;
  const char *text;
  size_t length;
  yaml_document_t *document;
  stc_error *err;
  stc_profile_warning_fn warn;
  void *user;
} reader;

static void set_error_at(reader *r, unsigned line, unsigned column,
                         const char *format, va_list ap) {
  char message[sizeof r->err->message];
  vsnprintf(message, sizeof message, format, ap);
  stc_error_set(r->err, r->name, line, column, "%s", message);
}

/* Reports an error at a libyaml mark and returns status, so that every check
 * is `return fail(...)`. */
static stc_status fail(reader *r, stc_status status, yaml_mark_t mark,
                       const char *format, ...) __attribute__((format(printf, 4, 5)));
static stc_status fail(reader *r, stc_status status, yaml_mark_t mark,
                       const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  set_error_at(r, (unsigned)mark.line + 1, (unsigned)mark.column + 1, format, ap);
  va_end(ap);
  return status;
}

static void warn_at(reader *r, yaml_mark_t mark, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void warn_at(reader *r, yaml_mark_t mark, const char *format, ...) {
  if (!r->warn)
    return;
  char message[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof message, format, ap);
  va_end(ap);
  r->warn(r->user, r->name, (unsigned)mark.line + 1, (unsigned)mark.column + 1,
          message);
}

static yaml_node_t *node_at(reader *r, int index) {
  return yaml_document_get_node(r->document, index);
}

static const char *scalar_text(const yaml_node_t *node) {
  return (const char *)node->data.scalar.value;
}

/* What a user would call the node in "expected X, found Y". Quotes at most
 * 64 bytes of a scalar so that a message never drowns in a huge value. */
static const char *describe(const yaml_node_t *node, char *buf, size_t size) {
  switch (node->type) {
  case YAML_MAPPING_NODE: return "a mapping";
  case YAML_SEQUENCE_NODE: return "a sequence";
  case YAML_SCALAR_NODE:
    if (node->data.scalar.length == 0)
      return "an empty value";
    snprintf(buf, size, "'%.*s%s'",
             (int)(node->data.scalar.length > 64 ? 64 : node->data.scalar.length),
             scalar_text(node), node->data.scalar.length > 64 ? "..." : "");
    return buf;
  default: return "nothing";
  }
}

/* Reads a plain decimal scalar as uint64. YAML 1.1 would read 010 as octal
 * and 1_000 as 1000; a profile is written by stc, so accepting only plain
 * decimal digits keeps every reader of the file in agreement. */
static stc_status read_u64(reader *r, const yaml_node_t *node, const char *key,
                           uint64_t *out) {
  char found[80];
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
      node->data.scalar.length == 0)
    return fail(r, STC_ERR_PARSE, node->start_mark,
                "expected a non-negative integer for '%s', found %s", key,
                describe(node, found, sizeof found));
  const char *text = scalar_text(node);
  size_t length = node->data.scalar.length;
  size_t i = text[0] == '+' ? 1 : 0;
  bool digits = i < length;
  for (size_t j = i; j < length; j++)
    digits = digits && text[j] >= '0' && text[j] <= '9';
  if (!digits) {
    bool negative = text[0] == '-' && length > 1 && text[1] >= '0' && text[1] <= '9';
    return fail(r, STC_ERR_PARSE, node->start_mark,
                negative ? "negative value for '%s': %s"
                         : "expected a non-negative integer for '%s', found %s",
                key, describe(node, found, sizeof found));
  }
  uint64_t value = 0;
  for (; i < length; i++) {
    uint64_t digit = (uint64_t)(text[i] - '0');
    if (value > (UINT64_MAX - digit) / 10)
      return fail(r, STC_ERR_PARSE, node->start_mark,
                  "value for '%s' is out of range (more than %llu): %s", key,
                  (unsigned long long)UINT64_MAX, describe(node, found, sizeof found));
    value = value * 10 + digit;
  }
  *out = value;
  return STC_OK;
}

/* Any scalar is a string; a region id must also be non-empty. */
static stc_status read_string(reader *r, const yaml_node_t *node, const char *key,
                              char **out) {
  char found[80];
  if (node->type != YAML_SCALAR_NODE)
    return fail(r, STC_ERR_PARSE, node->start_mark,
                "expected a string for '%s', found %s", key,
                describe(node, found, sizeof found));
  if (memchr(scalar_text(node), 0, node->data.scalar.length))
    return fail(r, STC_ERR_PARSE, node->start_mark,
                "string for '%s' contains a NUL character", key);
  char *copy = strdup(scalar_text(node));
  if (!copy)
    return fail(r, STC_ERR_NOMEM, node->start_mark, "out of memory");
  free(*out);
  *out = copy;
  return STC_OK;
}

/* The keys of one mapping that the schema knows; `nodes[i]` is the value
 * node of keys[i] once seen. Unknown keys are warned about right here so that
 * every mapping is walked once. Duplicates of known keys are errors (which
 * value would win is ambiguous); unknown keys are ignored, duplicates or not. */
typedef struct key_table {
  const char *const *keys;
  size_t count;
  yaml_node_t *nodes[8];
  yaml_mark_t marks[8];
} key_table;

static stc_status collect_keys(reader *r, yaml_node_t *mapping, key_table *table,
                               const char *where) {
  memset(table->nodes, 0, sizeof table->nodes);
  for (yaml_node_pair_t *pair = mapping->data.mapping.pairs.start;
       pair < mapping->data.mapping.pairs.top; pair++) {
    yaml_node_t *key = node_at(r, pair->key);
    yaml_node_t *value = node_at(r, pair->value);
    char found[80];
    if (!key || !value)
      return fail(r, STC_ERR_PARSE, mapping->start_mark, "malformed mapping");
    if (key->type != YAML_SCALAR_NODE)
      return fail(r, STC_ERR_PARSE, key->start_mark,
                  "expected a key name in %s, found %s", where,
                  describe(key, found, sizeof found));
    size_t k = 0;
    while (k < table->count && strcmp(table->keys[k], scalar_text(key)) != 0)
      k++;
    if (k == table->count) {
      warn_at(r, key->start_mark, "unknown key '%.*s' ignored",
              (int)(key->data.scalar.length > 200 ? 200 : key->data.scalar.length),
              scalar_text(key));
      continue;
    }
    if (table->nodes[k])
      return fail(r, STC_ERR_PARSE, key->start_mark,
                  "duplicate key '%s' in %s (first at line %u)", table->keys[k],
                  where, (unsigned)table->marks[k].line + 1);
    table->nodes[k] = value;
    table->marks[k] = key->start_mark;
  }
  return STC_OK;
}

static stc_status require(reader *r, const key_table *table, size_t k,
                          const yaml_node_t *mapping, const char *where) {
  if (table->nodes[k])
    return STC_OK;
  return fail(r, STC_ERR_PARSE, mapping->start_mark,
              "%s is missing required key '%s'", where, table->keys[k]);
}

enum { REGION_ID, REGION_COUNT, REGION_TOTAL_NS, REGION_MAX_NS, REGION_BYTES };
static const char *const region_keys[] = {KEY_ID, KEY_COUNT, KEY_TOTAL_NS,
                                          KEY_MAX_NS, KEY_BYTES};

static stc_status read_region(reader *r, yaml_node_t *node, stc_hints *seen,
                              stc_profile *profile) {
  char found[80];
  if (node->type != YAML_MAPPING_NODE)
    return fail(r, STC_ERR_PARSE, node->start_mark,
                "expected a region (a mapping with id, count, total-ns, max-ns), found %s",
                describe(node, found, sizeof found));
  key_table table = {region_keys, 5, {0}, {{0}}};
  stc_status status = collect_keys(r, node, &table, "a region");
  for (size_t k = REGION_ID; status == STC_OK && k <= REGION_MAX_NS; k++)
    status = require(r, &table, k, node, "region");
  if (status != STC_OK)
    return status;

  char *id = NULL;
  uint64_t values[5] = {0};
  status = read_string(r, table.nodes[REGION_ID], KEY_ID, &id);
  for (size_t k = REGION_COUNT; status == STC_OK && k <= REGION_BYTES; k++)
    if (table.nodes[k])
      status = read_u64(r, table.nodes[k], region_keys[k], &values[k]);
  bool is_new = true;
  if (status == STC_OK && id[0] == 0)
    status = fail(r, STC_ERR_PARSE, table.nodes[REGION_ID]->start_mark,
                  "region id must not be empty");
  if (status == STC_OK && insert_id(seen, id, &is_new) != STC_OK)
    status = fail(r, STC_ERR_NOMEM, node->start_mark, "out of memory");
  if (status == STC_OK && !is_new)
    status = fail(r, STC_ERR_PARSE, table.nodes[REGION_ID]->start_mark,
                  "duplicate region id '%.*s'", 200, id);
  if (status == STC_OK &&
      append_region(profile, id, values[REGION_COUNT], values[REGION_TOTAL_NS],
                    values[REGION_MAX_NS], values[REGION_BYTES]) != STC_OK)
    status = fail(r, STC_ERR_NOMEM, node->start_mark, "out of memory");
  free(id);
  return status;
}

/* The format version is checked before anything else: a file of another
 * major version may follow a different schema, so the useful message is
 * "unsupported version", not whatever schema error it would trigger. */
static stc_status check_version(reader *r, yaml_node_t *root, yaml_node_t *version) {
  if (!version)
    return fail(r, STC_ERR_VERSION, root->start_mark,
                "missing '" KEY_VERSION ": %d' format version header",
                STC_PROFILE_FORMAT_VERSION);
  char found[80];
  uint64_t value = 0;
  stc_error scratch;
  reader quiet = *r;
  quiet.err = &scratch;
  if (read_u64(&quiet, version, KEY_VERSION, &value) != STC_OK)
    return fail(r, STC_ERR_VERSION, version->start_mark,
                "profile format version must be an integer, found %s",
                describe(version, found, sizeof found));
  if (value != STC_PROFILE_FORMAT_VERSION)
    return fail(r, STC_ERR_VERSION, version->start_mark,
                "unsupported profile format version %llu (this reader supports %d)",
                (unsigned long long)value, STC_PROFILE_FORMAT_VERSION);
  return STC_OK;
}

enum { TOP_VERSION, TOP_PRODUCER, TOP_ENVIRONMENT, TOP_CREATED, TOP_REGIONS };
static const char *const top_keys[] = {KEY_VERSION, KEY_PRODUCER, KEY_ENVIRONMENT,
                                       KEY_CREATED, KEY_REGIONS};

static stc_status read_document(reader *r, stc_profile **out) {
  yaml_node_t *root = yaml_document_get_root_node(r->document);
  char found[80];
  if (!root) {
    yaml_mark_t start = {0, 0, 0};
    return fail(r, STC_ERR_PARSE, start,
                "empty file: expected a profile starting with '" KEY_VERSION ": %d'",
                STC_PROFILE_FORMAT_VERSION);
  }
  if (root->type != YAML_MAPPING_NODE)
    return fail(r, STC_ERR_PARSE, root->start_mark,
                "expected a mapping at the top level of a profile, found %s",
                describe(root, found, sizeof found));
  /* Find the version first without warning twice about unknown keys: scan
   * for it directly, then walk the mapping once for everything else. */
  yaml_node_t *version = NULL;
  for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
       pair < root->data.mapping.pairs.top; pair++) {
    yaml_node_t *key = node_at(r, pair->key);
    if (key && key->type == YAML_SCALAR_NODE && strcmp(scalar_text(key), KEY_VERSION) == 0) {
      version = node_at(r, pair->value);
      break;
    }
  }
  stc_status status = check_version(r, root, version);
  key_table table = {top_keys, 5, {0}, {{0}}};
  if (status == STC_OK)
    status = collect_keys(r, root, &table, "the profile header");
  if (status == STC_OK)
    status = require(r, &table, TOP_REGIONS, root, "profile");
  if (status != STC_OK)
    return status;
  yaml_node_t *regions = table.nodes[TOP_REGIONS];
  if (regions->type != YAML_SEQUENCE_NODE)
    return fail(r, STC_ERR_PARSE, regions->start_mark,
                "expected a sequence of regions for '" KEY_REGIONS "', found %s",
                describe(regions, found, sizeof found));

  stc_profile *profile = NULL;
  stc_hints *seen = NULL;
  if (stc_profile_create("", "", "", &profile) != STC_OK || create_id_set(&seen) != STC_OK) {
    stc_profile_destroy(profile);
    return fail(r, STC_ERR_NOMEM, root->start_mark, "out of memory");
  }
  if (table.nodes[TOP_PRODUCER])
    status = read_string(r, table.nodes[TOP_PRODUCER], KEY_PRODUCER, &profile->producer);
  if (status == STC_OK && table.nodes[TOP_ENVIRONMENT])
    status = read_string(r, table.nodes[TOP_ENVIRONMENT], KEY_ENVIRONMENT,
                         &profile->environment);
  if (status == STC_OK && table.nodes[TOP_CREATED])
    status = read_string(r, table.nodes[TOP_CREATED], KEY_CREATED, &profile->created);
  for (yaml_node_item_t *item = regions->data.sequence.items.start;
       status == STC_OK && item < regions->data.sequence.items.top; item++) {
    yaml_node_t *node = node_at(r, *item);
    status = node ? read_region(r, node, seen, profile)
                  : fail(r, STC_ERR_PARSE, regions->start_mark, "malformed sequence");
  }
  stc_hints_destroy(seen);
  if (status != STC_OK) {
    stc_profile_destroy(profile);
    return status;
  }
  *out = profile;
  return STC_OK;
}

/* libyaml's reader errors (bad encoding, control characters) carry a byte
 * offset instead of a mark; turn it into a line and a column in characters
 * like the scanner's marks. */
static yaml_mark_t mark_at_offset(const char *text, size_t length, size_t offset) {
  yaml_mark_t mark = {0, 0, 0};
  for (size_t i = 0; i < offset && i < length; i++) {
    if (text[i] == '\n') {
      mark.line++;
      mark.column = 0;
    } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
      mark.column++;
    }
  }
  mark.index = offset;
  return mark;
}

static stc_status syntax_error(reader *r, const yaml_parser_t *parser) {
  if (parser->error == YAML_MEMORY_ERROR) {
    yaml_mark_t start = {0, 0, 0};
    return fail(r, STC_ERR_NOMEM, start, "out of memory");
  }
  const char *problem = parser->problem ? parser->problem : "malformed YAML";
  if (parser->error == YAML_READER_ERROR)
    return fail(r, STC_ERR_PARSE, mark_at_offset(r->text, r->length, parser->problem_offset),
                "%s", problem);
  if (parser->context)
    return fail(r, STC_ERR_PARSE, parser->problem_mark, "%s %s", problem, parser->context);
  return fail(r, STC_ERR_PARSE, parser->problem_mark, "%s", problem);
}

stc_status stc_profile_read_string(const char *name, const char *text,
                                   size_t length, stc_profile **out,
                                   stc_error *err, stc_profile_warning_fn warn,
                                   void *user) {
  stc_error_clear(err);
  if (out)
    *out = NULL;
  if (!out || (!text && length != 0)) {
    stc_error_set(err, name, 0, 0, "invalid arguments");
    return STC_ERR_INVALID;
  }
  reader r = {name ? name : "<string>", text ? text : "", length, NULL, err, warn, user};
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    stc_error_set(err, r.name, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)r.text, length);
  yaml_document_t document;
  stc_status status;
  if (!yaml_parser_load(&parser, &document)) {
    status = syntax_error(&r, &parser);
    yaml_parser_delete(&parser);
    return status;
  }
  r.document = &document;
  stc_profile *profile = NULL;
  status = read_document(&r, &profile);
  if (status == STC_OK) {
    /* A second document, or anything after the first that is not YAML, is
     * trailing garbage: the profile would silently depend on which part a
     * reader chose to believe. */
    yaml_document_t next;
    if (!yaml_parser_load(&parser, &next)) {
      status = syntax_error(&r, &parser);
    } else {
      yaml_node_t *extra = yaml_document_get_root_node(&next);
      if (extra)
        status = fail(&r, STC_ERR_PARSE, next.start_mark,
                      "unexpected second YAML document after the profile");
      yaml_document_delete(&next);
    }
  }
  yaml_document_delete(&document);
  yaml_parser_delete(&parser);
  if (status != STC_OK) {
    stc_profile_destroy(profile);
    return status;
  }
  *out = profile;
  return STC_OK;
}

stc_status stc_profile_read_file(const char *path, stc_profile **out,
                                 stc_error *err, stc_profile_warning_fn warn,
                                 void *user) {
  stc_error_clear(err);
  if (out)
    *out = NULL;
  if (!path || !out) {
    stc_error_set(err, path, 0, 0, "invalid arguments");
    return STC_ERR_INVALID;
  }
  char *text = NULL;
  size_t length = 0;
  /* A profile is a few lines per region; the bound keeps a wrong path such
   * as /dev/zero from allocating until memory runs out. */
  stc_read_limit_spec limit = {"STC_MAX_PROFILE_BYTES",
                               STC_MAX_PROFILE_BYTES_DEFAULT};
  stc_status status =
      stc_read_file_limited(path, 0, "profile", limit, &text, &length, err);
  if (status == STC_OK)
    status = stc_profile_read_string(path, text, length, out, err, warn, user);
  free(text);
  return status;
}

/* ---- writing ---- */

typedef struct output_buffer {
  char *data;
  size_t size;
  size_t capacity;
  bool failed;
} output_buffer;

static int write_to_buffer(void *data, unsigned char *bytes, size_t size) {
  output_buffer *out = data;
  if (out->size + size + 1 > out->capacity) {
    size_t grown = out->capacity ? out->capacity : 4096;
    while (grown < out->size + size + 1)
      grown *= 2;
    char *bigger = realloc(out->data, grown);
    if (!bigger) {
      out->failed = true;
      return 0;
    }
    out->data = bigger;
    out->capacity = grown;
  }
  memcpy(out->data + out->size, bytes, size);
  out->size += size;
  out->data[out->size] = 0;
  return 1;
}

/* Emits one scalar; strings are double-quoted so that ids such as "a: b" or
 * "123" read back as the same strings, numbers are plain. */
static bool emit_scalar(yaml_emitter_t *emitter, const char *text, bool quoted) {
  yaml_event_t event;
  if (!yaml_scalar_event_initialize(&event, NULL, NULL, (yaml_char_t *)text,
                                    (int)strlen(text), 1, 1,
                                    quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                           : YAML_PLAIN_SCALAR_STYLE))
    return false;
  return yaml_emitter_emit(emitter, &event) != 0;
}

static bool emit_string_pair(yaml_emitter_t *emitter, const char *key, const char *value) {
  return emit_scalar(emitter, key, false) && emit_scalar(emitter, value, true);
}

static bool emit_u64_pair(yaml_emitter_t *emitter, const char *key, uint64_t value) {
  char text[32];
  snprintf(text, sizeof text, "%llu", (unsigned long long)value);
  return emit_scalar(emitter, key, false) && emit_scalar(emitter, text, false);
}

static bool emit_event(yaml_emitter_t *emitter, int initialized, yaml_event_t *event) {
  return initialized && yaml_emitter_emit(emitter, event);
}

static bool emit_profile(yaml_emitter_t *emitter, const stc_profile *profile) {
  yaml_event_t event;
  bool ok = emit_event(emitter, yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING), &event) &&
            emit_event(emitter, yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 1), &event) &&
            emit_event(emitter, yaml_mapping_start_event_initialize(&event, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE), &event) &&
            emit_u64_pair(emitter, KEY_VERSION, STC_PROFILE_FORMAT_VERSION) &&
            emit_string_pair(emitter, KEY_PRODUCER, profile->producer ? profile->producer : "") &&
            emit_string_pair(emitter, KEY_ENVIRONMENT, profile->environment ? profile->environment : "") &&
            emit_string_pair(emitter, KEY_CREATED, profile->created ? profile->created : "") &&
            emit_scalar(emitter, KEY_REGIONS, false) &&
            emit_event(emitter, yaml_sequence_start_event_initialize(&event, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE), &event);
  for (size_t i = 0; ok && i < profile->num_regions; i++) {
    const stc_profile_region *region = &profile->regions[i];
    ok = region->id &&
         emit_event(emitter, yaml_mapping_start_event_initialize(&event, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE), &event) &&
         emit_string_pair(emitter, KEY_ID, region->id) &&
         emit_u64_pair(emitter, KEY_COUNT, region->count) &&
         emit_u64_pair(emitter, KEY_TOTAL_NS, region->total_ns) &&
         emit_u64_pair(emitter, KEY_MAX_NS, region->max_ns) &&
         emit_u64_pair(emitter, KEY_BYTES, region->bytes) &&
         emit_event(emitter, yaml_mapping_end_event_initialize(&event), &event);
  }
  return ok &&
         emit_event(emitter, yaml_sequence_end_event_initialize(&event), &event) &&
         emit_event(emitter, yaml_mapping_end_event_initialize(&event), &event) &&
         emit_event(emitter, yaml_document_end_event_initialize(&event, 1), &event) &&
         emit_event(emitter, yaml_stream_end_event_initialize(&event), &event) &&
         yaml_emitter_flush(emitter);
}

stc_status stc_profile_write_string(const stc_profile *profile, char **out,
                                    size_t *length, stc_error *err) {
  stc_error_clear(err);
  if (!profile || !out) {
    stc_error_set(err, NULL, 0, 0, "invalid arguments");
    return STC_ERR_INVALID;
  }
  *out = NULL;
  if (length)
    *length = 0;
  yaml_emitter_t emitter;
  if (!yaml_emitter_initialize(&emitter)) {
    stc_error_set(err, NULL, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  output_buffer buffer = {0};
  yaml_emitter_set_output(&emitter, write_to_buffer, &buffer);
  yaml_emitter_set_unicode(&emitter, 1);
  yaml_emitter_set_width(&emitter, -1); /* never fold a long id over lines */
  bool ok = emit_profile(&emitter, profile);
  stc_status status = STC_OK;
  if (!ok) {
    if (buffer.failed || emitter.error == YAML_MEMORY_ERROR) {
      stc_error_set(err, NULL, 0, 0, "out of memory");
      status = STC_ERR_NOMEM;
    } else {
      /* The one thing the emitter refuses in a well-formed profile is text
       * that is not UTF-8 (or a region without an id). */
      stc_error_set(err, NULL, 0, 0, "cannot write profile: %s",
                    emitter.problem ? emitter.problem
                                    : "a string is not valid UTF-8 or a region has no id");
      status = STC_ERR_INVALID;
    }
  }
  yaml_emitter_delete(&emitter);
  if (status != STC_OK) {
    free(buffer.data);
    return status;
  }
  *out = buffer.data;
  if (length)
    *length = buffer.size;
  return STC_OK;
}

static bool write_all(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t wrote = write(fd, data, size);
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote <= 0)
      return false;
    data += wrote;
    size -= (size_t)wrote;
  }
  return true;
}

/* Flushes the directory entry of a rename; best effort, because some file
 * systems cannot fsync a directory and the data itself is already safe. */
static void sync_parent_directory(const char *path) {
  char *dir = strdup(path);
  if (!dir)
    return;
  char *slash = strrchr(dir, '/');
  const char *name = ".";
  if (slash == dir)
    name = "/";
  else if (slash) {
    *slash = 0;
    name = dir;
  }
  int fd = open(name, O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  free(dir);
}

/* Creates a fresh temporary file next to path with O_EXCL and mode 0666 so
 * that the umask decides the final permissions, as for any new file. */
static int create_temporary(const char *path, char **temp_path) {
  static atomic_uint counter;
  size_t size = strlen(path) + 64;
  char *name = malloc(size);
  if (!name)
    return -1;
  for (int attempt = 0; attempt < 100; attempt++) {
    snprintf(name, size, "%s.tmp.%ld.%u", path, (long)getpid(),
             atomic_fetch_add(&counter, 1));
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      *temp_path = name;
      return fd;
    }
    if (errno != EEXIST)
      break;
  }
  free(name);
  return -1;
}

stc_status stc_profile_write_file(const stc_profile *profile, const char *path,
                                  stc_error *err) {
  if (!path) {
    stc_error_set(err, NULL, 0, 0, "invalid arguments");
    return STC_ERR_INVALID;
  }
  char *text = NULL;
  size_t length = 0;
  stc_status status = stc_profile_write_string(profile, &text, &length, err);
  if (status != STC_OK)
    return status;
  char *temp_path = NULL;
  int fd = create_temporary(path, &temp_path);
  if (fd < 0) {
    stc_error_set(err, path, 0, 0, "cannot create a temporary file next to the profile: %s",
                  strerror(errno));
    free(text);
    return STC_ERR_IO;
  }
  const char *step = NULL;
  /* A file size limit (ulimit -f) must fail the write, not kill us. */
  stc_file_size_guard guard;
  stc_file_size_guard_begin(&guard);
  if (!write_all(fd, text, length))
    step = "cannot write";
  else if (fsync(fd) != 0)
    step = "cannot sync";
  int saved_errno = errno;
  if (close(fd) != 0 && !step) {
    step = "cannot write";
    saved_errno = errno;
  }
  stc_file_size_guard_end(&guard);
  if (!step && rename(temp_path, path) != 0) {
    step = "cannot replace";
    saved_errno = errno;
  }
  if (step) {
    unlink(temp_path);
    stc_error_set(err, path, 0, 0, "%s profile: %s", step,
                  saved_errno == EFBIG
                      ? "file size limit exceeded (ulimit -f)"
                      : strerror(saved_errno));
    status = STC_ERR_IO;
  } else {
    sync_parent_directory(path);
  }
  free(temp_path);
  free(text);
  return status;
}

/* ---- hints, merging ---- */

stc_status stc_profile_from_hints(stc_hints *hints, const char *producer,
                                  const char *environment, stc_profile **out) {
  if (!hints || !out)
    return STC_ERR_INVALID;
  *out = NULL;
  stc_hints_entry *entries = NULL;
  size_t count = 0;
  stc_status status = stc_hints_snapshot(hints, &entries, &count);
  if (status != STC_OK)
    return status;
  /* Written in rank order (most total time first) so that the file reads
   * like `stc-prof show` and is deterministic whatever the recording order. */
  stc_ranked_region *ranked = count ? calloc(count, sizeof *ranked) : NULL;
  stc_profile *profile = NULL;
  if (count && !ranked)
    status = STC_ERR_NOMEM;
  if (status == STC_OK)
    status = stc_classify(entries, count, NULL, ranked, NULL);
  if (status == STC_OK)
    status = stc_profile_create(producer, environment, NULL, &profile);
  for (size_t i = 0; status == STC_OK && i < count; i++) {
    const stc_region_record *record = &ranked[i].record;
    status = append_region(profile, ranked[i].region, record->dispatch_count,
                           record->total_ns, record->max_ns, record->bytes_total);
  }
  free(ranked);
  stc_hints_entries_free(entries, count);
  if (status != STC_OK) {
    stc_profile_destroy(profile);
    return status;
  }
  *out = profile;
  return STC_OK;
}

static stc_region_record region_record(const stc_profile_region *region) {
  return (stc_region_record){.dispatch_count = region->count,
                             .total_ns = region->total_ns,
                             .max_ns = region->max_ns,
                             .bytes_total = region->bytes};
}

stc_status stc_profile_to_hints(const stc_profile *profile, stc_hints *hints) {
  if (!profile || !hints)
    return STC_ERR_INVALID;
  for (size_t i = 0; i < profile->num_regions; i++) {
    stc_region_record record = region_record(&profile->regions[i]);
    stc_status status = stc_hints_accumulate(hints, profile->regions[i].id, &record);
    if (status != STC_OK)
      return status;
  }
  return STC_OK;
}

/* value * weight rounded to nearest, saturating at UINT64_MAX. */
static uint64_t scale(uint64_t value, double weight) {
  if (weight == 1.0)
    return value; /* exact even above 2^53 */
  double scaled = (double)value * weight + 0.5;
  if (scaled >= 18446744073709551616.0) /* 2^64 */
    return UINT64_MAX;
  return (uint64_t)scaled;
}

stc_status stc_profile_merge(const stc_profile *const *profiles,
                             const double *weights, size_t n,
                             stc_profile **out, stc_error *err) {
  stc_error_clear(err);
  if (!out || !profiles || n == 0) {
    stc_error_set(err, NULL, 0, 0, "nothing to merge");
    return STC_ERR_INVALID;
  }
  *out = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!profiles[i]) {
      stc_error_set(err, NULL, 0, 0, "profile %zu is missing", i);
      return STC_ERR_INVALID;
    }
    if (weights && !(isfinite(weights[i]) && weights[i] > 0)) {
      stc_error_set(err, NULL, 0, 0, "weight %g of profile %zu is not a finite number > 0",
                    weights[i], i);
      return STC_ERR_INVALID;
    }
  }
  /* Summing saturating counts and keeping the max of max is exactly what a
   * hints store does on accumulate, so the merge is one pass through one. */
  stc_hints *sum = NULL;
  stc_status status = stc_hints_create(SIZE_MAX, &sum);
  for (size_t i = 0; status == STC_OK && i < n; i++) {
    double weight = weights ? weights[i] : 1.0;
    for (size_t j = 0; status == STC_OK && j < profiles[i]->num_regions; j++) {
      const stc_profile_region *region = &profiles[i]->regions[j];
      stc_region_record record = region_record(region);
      record.dispatch_count = scale(record.dispatch_count, weight);
      record.total_ns = scale(record.total_ns, weight);
      record.bytes_total = scale(record.bytes_total, weight);
      status = region->id ? stc_hints_accumulate(sum, region->id, &record) : STC_ERR_INVALID;
    }
  }
  const char *environment = profiles[0]->environment ? profiles[0]->environment : "";
  for (size_t i = 1; i < n; i++)
    if (strcmp(environment, profiles[i]->environment ? profiles[i]->environment : "") != 0)
      environment = "mixed";
  stc_profile *merged = NULL;
  if (status == STC_OK)
    status = stc_profile_from_hints(sum, "stc " STC_VERSION_STRING, environment, &merged);
  stc_hints_destroy(sum);
  if (status != STC_OK) {
    stc_error_set(err, NULL, 0, 0, "cannot merge profiles: %s", stc_status_str(status));
    return status;
  }
  *out = merged;
  return STC_OK;
}
