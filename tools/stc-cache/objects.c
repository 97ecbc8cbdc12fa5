/* objects.c - `stc-cache --objects COMMAND`: the same commands on stc-run's
 * compiled-code cache (DIR/objects-v1, stc/object_cache.h) instead of the
 * tuning records: list (one row per entry file, oldest first), show (one
 * entry's fields), verify (one line per bad file, exit 1 when any), prune
 * (invalid, expired, then the oldest beyond --capacity, default 64) and
 * clear. Like the tuning commands, none creates a missing directory.
 * With --remote=URL the same commands on the objects a Redis server holds
 * for stc-run's STC_CACHE_REMOTE_OBJECTS (README "Fleet cache (Redis)"),
 * each judged as stc-run judges it: authenticated under the fleet key
 * (STC_CACHE_REMOTE_KEY_FILE), decoded strictly, holding the key its name
 * is the digest of, fresh under --ttl; items are named by their Redis keys
 * and listed in the server's order; prune removes the bad and expired ones
 * (Redis bounds the size); clear needs no key. */
#include "cache_tool.h"

#include "stc/cache_files.h"
#include "stc/hash.h"
#include "stc/object_cache.h"
#include "stc/object_remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int64_t objects_fixed_clock(void *user) {
  return *(const int64_t *)user;
}

/* Opens DIR/objects-v1; *out stays NULL (exit 0) when it does not exist and
 * nothing should be created. */
static int objects_open(const stc_cache_tool *tool, size_t capacity,
                        stc_object_cache **out) {
  *out = NULL;
  size_t size = strlen(tool->directory) + 32;
  char *path = malloc(size);
  if (!path)
    return stc__cache_fail("out of memory");
  snprintf(path, size, "%s/" STC_OBJECT_CACHE_DIRECTORY, tool->directory);
  struct stat st;
  bool absent = lstat(tool->directory, &st) != 0 || lstat(path, &st) != 0;
  free(path);
  if (absent)
    return STC_CACHE_EXIT_OK;
  stc_error err;
  stc_error_clear(&err);
  stc_status status = stc_object_cache_open(tool->directory, capacity,
                                            tool->ttl_seconds, out, &err);
  if (status != STC_OK)
    return stc__cache_fail_status(status, &err);
  if (tool->has_now)
    stc_object_cache_set_clock(*out, objects_fixed_clock, (void *)&tool->now);
  return STC_CACHE_EXIT_OK;
}

/* The value of a "label value" line of a key, up to the line's end. */
static void key_line(const char *key, const char *label, char *out,
                     size_t size) {
  size_t length = strlen(label);
  snprintf(out, size, "-");
  for (const char *line = key; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t line_length = end ? (size_t)(end - line) : strlen(line);
    if (line_length > length && strncmp(line, label, length) == 0 &&
        line[length] == ' ') {
      snprintf(out, size, "%.*s", (int)(line_length - length - 1),
               line + length + 1);
      return;
    }
    line = end ? end + 1 : NULL;
  }
}

typedef struct objects_walk {
  const stc_cache_tool *tool;
  int64_t now;
  size_t valid, invalid, shown;
  const char *wanted; /* show: an id prefix */
  bool verify;
} objects_walk;

/* Sets a walk up for command: show's wanted id is its argument after the
 * last separator ('/' of a path, ':' of a Redis key); list prints the
 * header (when there is a listing at all). */
static void objects_walk_start(objects_walk *walk, const char *command,
                               char separator, bool listing) {
  walk->verify = strcmp(command, "verify") == 0;
  if (strcmp(command, "show") == 0) {
    walk->wanted = walk->tool->args[0];
    const char *last = strrchr(walk->wanted, separator);
    if (last)
      walk->wanted = last + 1;
  }
  if (strcmp(command, "list") == 0 && listing)
    printf("%-12s  %10s  %-3s  %-14s  %-6s  %s\n", "ID", "BYTES", "OPT",
           "INPUT", "KIND", "STATE");
}

static void print_row(objects_walk *walk, const stc_object_listing *item) {
  char id[13];
  snprintf(id, sizeof id, "%.12s", item->name);
  if (item->status != STC_OK) {
    printf("%-12s  %10llu  %-3s  %-14s  %-6s  invalid: %s\n", id,
           (unsigned long long)item->file_size, "-", "-", "-",
           item->problem ? item->problem : stc_status_str(item->status));
    return;
  }
  const stc_object_entry *entry = item->entry;
  char opt[8], input[80], tune[8], age[32];
  key_line(entry->key, "opt", opt, sizeof opt);
  key_line(entry->key, "input", input, sizeof input);
  key_line(entry->key, "tune-hot-paths", tune, sizeof tune);
  stc__cache_format_age(
      (int64_t)((uint64_t)walk->now - (uint64_t)entry->created), age,
      sizeof age);
  /* "sha256:" and 12 digits identify the input. */
  printf("%-12s  %10llu  O%-2s  %-14.14s  %-6s  fresh (%s old)\n", id,
         (unsigned long long)item->file_size, opt,
         strncmp(input, "sha256:", 7) == 0 ? input + 7 : input,
         strcmp(tune, "1") == 0 ? "tuned" : "plain", age);
  if (walk->tool->long_keys) {
    char *escaped = malloc(stc__cache_escape_size(entry->key, 0));
    if (escaped) {
      stc__cache_escape(entry->key, 0, escaped);
      printf("    key: %s\n", escaped);
      free(escaped);
    }
  }
}

static void print_entry(const objects_walk *walk,
                        const stc_object_listing *item) {
  printf("file:     %s\n", item->path);
  printf("size:     %llu bytes\n", (unsigned long long)item->file_size);
  if (item->status != STC_OK) {
    printf("state:    invalid: %s\n",
           item->problem ? item->problem : stc_status_str(item->status));
    return;
  }
  const stc_object_entry *entry = item->entry;
  char age[32];
  stc__cache_format_age(
      (int64_t)((uint64_t)walk->now - (uint64_t)entry->created), age,
      sizeof age);
  printf("state:    fresh\ncreated:  %lld (%s ago)\n",
         (long long)entry->created, age);
  printf("object:   %zu bytes\nmetadata: %zu bytes\nkey:\n", entry->object_size,
         entry->meta_size);
  for (const char *line = entry->key; *line;) {
    const char *end = strchr(line, '\n');
    size_t length = end ? (size_t)(end - line) : strlen(line);
    printf("  %.*s\n", (int)length, line);
    line = end ? end + 1 : line + length;
  }
}

static bool visit(void *user, const stc_object_listing *item) {
  objects_walk *walk = user;
  if (item->status == STC_OK)
    walk->valid++;
  else
    walk->invalid++;
  if (walk->wanted) {
    if (strncmp(item->name, walk->wanted, strlen(walk->wanted)) == 0) {
      if (walk->shown++ == 0)
        print_entry(walk, item);
    }
  } else if (walk->verify) {
    if (item->status != STC_OK)
      printf("%s: %s\n", item->path,
             item->problem ? item->problem : stc_status_str(item->status));
  } else {
    print_row(walk, item);
  }
  return true;
}

/* The summary after a listing (list, verify, show); an exit code. */
static int objects_report(const objects_walk *walk, const char *command) {
  size_t total = walk->valid + walk->invalid;
  if (strcmp(command, "list") == 0) {
    if (total == 0)
      printf("no object entries\n");
    else
      printf("%zu object entr%s: %zu fresh, %zu invalid\n", total,
             total == 1 ? "y" : "ies", walk->valid, walk->invalid);
  } else if (walk->verify) {
    printf("%zu object entr%s checked, %zu bad\n", total,
           total == 1 ? "y" : "ies", walk->invalid);
    if (walk->invalid)
      return STC_CACHE_EXIT_FAILURE;
  } else if (walk->wanted) {
    if (walk->shown == 0)
      return stc__cache_fail("no object entry matches '%s'", walk->wanted);
    if (walk->shown > 1)
      return stc__cache_fail("'%s' matches %zu object entries; give more "
                             "of the id",
                             walk->wanted, walk->shown);
  }
  return STC_CACHE_EXIT_OK;
}

/* ---- --remote ----------------------------------------------------------- */

typedef struct remote_item {
  char path[96];    /* "stc:v1:obj:<digest>" */
  const char *name; /* the digest, inside path */
  stc_status status;
  const char *problem;
  stc_object_entry entry; /* key and sizes only (buffers freed) */
  uint64_t value_size;
} remote_item;

typedef struct remote_walk {
  const stc_cache_tool *tool;
  const stc_fleet_key *key; /* NULL: not judged (clear) */
  int64_t now;
  remote_item *items;
  size_t count, capacity;
  bool out_of_memory;
} remote_walk;

static bool remote_collect_one(void *user, const stc_remote_entry *value) {
  remote_walk *walk = user;
  remote_item *items = stc__cache_grow(walk->items, &walk->capacity,
                                       walk->count, sizeof *items);
  if (!items) {
    walk->out_of_memory = true;
    return false;
  }
  walk->items = items;
  remote_item *item = &walk->items[walk->count++];
  memset(item, 0, sizeof *item);
  snprintf(item->path, sizeof item->path, "stc:v1:obj:%s", value->digest);
  item->name = item->path + strlen("stc:v1:obj:");
  item->value_size = value->size;
  if (!walk->key)
    return true;
  const char *body = NULL;
  size_t body_size = 0;
  item->status =
      stc_object_remote_unseal(walk->key, value->digest, value->data,
                               value->size, &body, &body_size, &item->problem);
  if (item->status == STC_OK)
    item->status =
        stc_object_entry_decode(body, body_size, &item->entry, &item->problem);
  if (item->status != STC_OK)
    return true;
  free(item->entry.object);
  free(item->entry.meta);
  item->entry.object = item->entry.meta = NULL;
  char digest[65];
  stc_sha256_hex(item->entry.key, strlen(item->entry.key), digest);
  if (strcmp(digest, value->digest) != 0) {
    item->status = STC_ERR_CORRUPT;
    item->problem = "Redis key does not match its entry's key";
  } else if ((item->problem = stc__cache_age_problem(
                  item->entry.created, walk->now, walk->tool->ttl_seconds))) {
    item->status = STC_ERR_NOT_FOUND;
  }
  if (item->status != STC_OK)
    stc_object_entry_clear(&item->entry);
  return true;
}

static int objects_remote(const stc_cache_tool *tool) {
  const char *command = tool->command;
  bool clear = strcmp(command, "clear") == 0;
  stc_fleet_key *key = NULL;
  int code = STC_CACHE_EXIT_OK;
  if (!clear) {
    const char *path = getenv("STC_CACHE_REMOTE_KEY_FILE");
    if (!path || !path[0])
      return stc__cache_fail("'--objects --remote' %s needs the fleet key: "
                             "set STC_CACHE_REMOTE_KEY_FILE",
                             command);
    key = malloc(sizeof *key);
    if (!key)
      return stc__cache_fail("out of memory");
    stc_error err;
    stc_error_clear(&err);
    stc_status status = stc_fleet_key_load(path, key, &err);
    if (status != STC_OK) {
      free(key);
      return stc__cache_fail_status(status, &err);
    }
  }
  stc_remote_cache *remote = NULL;
  code = stc__cache_remote_open(tool->remote, &remote);
  remote_walk collected = {
      .tool = tool, .key = key, .now = stc__cache_now(tool)};
  stc_error err;
  stc_error_clear(&err);
  stc_status status = STC_OK;
  if (code == STC_CACHE_EXIT_OK) {
    status = stc_remote_cache_scan(remote, STC_REMOTE_OBJECT,
                                   remote_collect_one, &collected, &err);
    if (status == STC_OK && collected.out_of_memory) {
      status = STC_ERR_NOMEM;
      stc_error_set(&err, NULL, 0, 0, "out of memory listing %s", tool->remote);
    }
    if (status != STC_OK)
      code = stc__cache_fail_status(status, &err);
  }
  if (code == STC_CACHE_EXIT_OK && (clear || strcmp(command, "prune") == 0)) {
    size_t removed = 0;
    for (size_t i = 0; code == STC_CACHE_EXIT_OK && i < collected.count; ++i) {
      const remote_item *item = &collected.items[i];
      if (clear || item->status != STC_OK)
        code = stc__cache_remote_remove(remote, STC_REMOTE_OBJECT, item->name,
                                        item->path, &removed);
    }
    if (code == STC_CACHE_EXIT_OK)
      printf("removed %zu object entr%s\n", removed,
             removed == 1 ? "y" : "ies");
  } else if (code == STC_CACHE_EXIT_OK) {
    objects_walk walk = {.tool = tool, .now = collected.now};
    objects_walk_start(&walk, command, ':', true);
    for (size_t i = 0; i < collected.count; ++i) {
      const remote_item *item = &collected.items[i];
      stc_object_listing listing = {.path = item->path,
                                    .name = item->name,
                                    .status = item->status,
                                    .entry = &item->entry,
                                    .problem = item->problem,
                                    .file_size = item->value_size};
      visit(&walk, &listing);
    }
    code = objects_report(&walk, command);
  }
  for (size_t i = 0; i < collected.count; ++i)
    stc_object_entry_clear(&collected.items[i].entry);
  free(collected.items);
  stc_remote_cache_close(remote);
  if (key) {
    stc_fleet_key_clear(key);
    free(key);
  }
  return code;
}

int stc__cache_objects(const stc_cache_tool *tool) {
  if (tool->remote)
    return objects_remote(tool);
  size_t capacity =
      tool->capacity_set ? tool->capacity : STC_OBJECT_CACHE_CAPACITY;
  stc_object_cache *cache = NULL;
  int code = objects_open(tool, capacity, &cache);
  if (code != STC_CACHE_EXIT_OK)
    return code;
  objects_walk walk = {.tool = tool, .now = stc__cache_now(tool)};
  const char *command = tool->command;
  stc_error err;
  stc_error_clear(&err);
  stc_status status = STC_OK;
  if (strcmp(command, "prune") == 0 || strcmp(command, "clear") == 0) {
    size_t removed = 0;
    if (cache)
      status = strcmp(command, "prune") == 0
                   ? stc_object_cache_prune(cache, &removed, &err)
                   : stc_object_cache_clear(cache, &removed, &err);
    if (status == STC_OK)
      printf("removed %zu object entr%s\n", removed, removed == 1 ? "y" : "ies");
  } else {
    objects_walk_start(&walk, command, '/', cache != NULL);
    if (cache)
      status = stc_object_cache_list(cache, visit, &walk, &err);
    if (status == STC_OK)
      code = objects_report(&walk, command);
  }
  if (status != STC_OK)
    code = stc__cache_fail_status(status, &err);
  stc_object_cache_close(cache);
  return code;
}
