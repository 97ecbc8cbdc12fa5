/* show.c - `stc-cache show ID|KEY|FILE`: every field of one record.
 * In: a digest prefix (as list prints it), a prefix of the key or of its
 * "OPERATION WORKLOAD" form (escaped, as list prints it), the whole key, or
 * the path of a record file (any argument with a '/' or ending in ".rec").
 * Out: one "field: value" line per field on stdout, the tuner key also
 * split into its fields; exit 1 when nothing or several records match, or
 * the file is not a valid record. */
#include "cache_tool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static bool stc_show_is_file(const char *arg) {
  size_t length = strlen(arg);
  return strchr(arg, '/') ||
         (length > 4 && strcmp(arg + length - 4, ".rec") == 0);
}

/* Prints label and text with the text escaped. */
static bool stc_show_escaped(const char *label, const char *text,
                             size_t length) {
  char *plain = malloc(length + 1);
  char *escaped = plain ? malloc(4 * length + 4) : NULL;
  if (escaped) {
    memcpy(plain, text, length);
    plain[length] = 0;
    stc__cache_escape(plain, 0, escaped);
    printf("%s%s\n", label, escaped);
  }
  free(plain);
  free(escaped);
  return escaped != NULL;
}

/* path: the file as the user should see it (the argument they gave, or
 * the item's path). */
static int stc_show_item(const stc_cache_tool *tool,
                         const stc_cache_listing *listing,
                         const stc_cache_item *item, const char *path) {
  printf("file:         %s\n", path);
  if (item->status != STC_OK) {
    printf("state:        invalid: %s\n", stc__cache_item_state(item));
    return stc__cache_fail("%s: %s", path, stc__cache_item_state(item));
  }
  const stc_cache_record *record = &item->record;
  char ttl[32];
  stc__cache_format_duration(tool->ttl_seconds, ttl, sizeof ttl);
  printf("state:        %s (ttl %s)\n", stc__cache_item_state(item), ttl);
  bool ok =
      stc_show_escaped("key:          ", record->key, strlen(record->key));
  /* A tuner key's fields, one per line, since the key is one long line. */
  const char *cursor = record->key, *tag, *value;
  size_t tag_length, value_length;
  if (strncmp(record->key, "stc-tuner-key=", 14) == 0)
    while (ok && stc__cache_key_next(&cursor, &tag, &tag_length, &value,
                                     &value_length)) {
      char label[64];
      snprintf(label, sizeof label, "  %.*s: ", (int)tag_length, tag);
      ok = stc_show_escaped(label, value, value_length);
    }
  printf("scope:        %u (%s)\n", (unsigned)record->scope,
         stc__cache_scope_name(record->scope));
  ok = ok && stc_show_escaped("winner:       ", record->winner,
                              strlen(record->winner));
  printf("ratio:        %.3fx (%.17g)\n", record->ratio, record->ratio);
  printf("reference_ns: %" PRIu64 "\n", record->reference_ns);
  printf("winner_ns:    %" PRIu64 "\n", record->winner_ns);
  printf("verified:     %s\n", record->verified ? "yes" : "no");
  char age[32], when[64] = "";
  stc__cache_format_age(
      (int64_t)((uint64_t)listing->now - (uint64_t)record->created), age,
      sizeof age);
  time_t created = (time_t)record->created;
  struct tm utc;
  if (gmtime_r(&created, &utc))
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ, ", &utc);
  printf("created:      %" PRId64 " (%s%s%s)\n", record->created, when, age,
         age[0] == 'i' ? "" : " ago");
  return ok ? STC_CACHE_EXIT_OK : stc__cache_fail("out of memory");
}

/* The item that is the same file as path, or NULL. */
static const stc_cache_item *
stc_show_find_file(const stc_cache_listing *listing, const struct stat *file) {
  for (size_t i = 0; i < listing->count; ++i) {
    struct stat st;
    if (lstat(listing->items[i].path, &st) == 0 && st.st_dev == file->st_dev &&
        st.st_ino == file->st_ino)
      return &listing->items[i];
  }
  return NULL;
}

/* A record file names its cache: FILE's folder must be the v1 folder of
 * its parent, so that the library (which checks ownership and symlinks)
 * opens exactly that folder. */
static int stc_show_file(const stc_cache_tool *tool, const char *path) {
  struct stat file, folder, version;
  if (lstat(path, &file) != 0)
    return stc__cache_fail("%s: %s", path, strerror(errno));
  const char *slash = strrchr(path, '/');
  size_t folder_length = slash ? (size_t)(slash - path) : 1;
  size_t size = folder_length + 32;
  char *folder_path = malloc(size), *base = malloc(size);
  char *version_path = malloc(size);
  int exit_code = STC_CACHE_EXIT_OK;
  if (!folder_path || !base || !version_path) {
    exit_code = stc__cache_fail("out of memory");
  } else {
    if (slash == path)
      snprintf(folder_path, size, "/");
    else
      snprintf(folder_path, size, "%.*s", (int)folder_length,
               slash ? path : ".");
    snprintf(base, size, "%s/..", folder_path);
    snprintf(version_path, size, "%s/v%d", base, STC_TUNER_CACHE_FORMAT);
    if (stat(folder_path, &folder) != 0 || lstat(version_path, &version) != 0 ||
        folder.st_dev != version.st_dev || folder.st_ino != version.st_ino)
      exit_code =
          stc__cache_fail("%s: not in the v%d folder of a cache directory",
                          path, STC_TUNER_CACHE_FORMAT);
  }
  stc_cache_listing listing = {0};
  if (exit_code == STC_CACHE_EXIT_OK)
    exit_code = stc__cache_collect(tool, base, &listing);
  if (exit_code == STC_CACHE_EXIT_OK) {
    const stc_cache_item *item = stc_show_find_file(&listing, &file);
    exit_code = item ? stc_show_item(tool, &listing, item, path)
                     : stc__cache_fail("%s: not a record file", path);
  }
  stc__cache_listing_free(&listing);
  free(folder_path);
  free(base);
  free(version_path);
  return exit_code;
}

static bool stc_show_prefix(const char *text, const char *prefix) {
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* A key matches by its own prefix, or by that of "OPERATION WORKLOAD",
 * the form list prints. */
static bool stc_show_summary_prefix(const char *key, const char *prefix) {
  if (stc_show_prefix(key, prefix))
    return true;
  char *summary = stc__cache_key_summary(key, 0);
  bool match = summary && stc_show_prefix(summary, prefix);
  free(summary);
  return match;
}

int stc__cache_show(const stc_cache_tool *tool) {
  const char *wanted = tool->args[0];
  if (!wanted[0])
    return stc__cache_usage_error("'show' needs a non-empty ID, KEY or FILE");
  if (!tool->remote && stc_show_is_file(wanted))
    return stc_show_file(tool, wanted);
  stc_cache_listing listing;
  int exit_code = stc__cache_collect(tool, tool->directory, &listing);
  if (exit_code != STC_CACHE_EXIT_OK)
    return exit_code;
  /* A whole key wins over keys it is a prefix of; otherwise the match must
   * be unique, among digests (file names) and keys alike. */
  const stc_cache_item *match = NULL;
  size_t matches = 0;
  for (size_t i = 0; i < listing.count && matches != SIZE_MAX; ++i) {
    const stc_cache_item *item = &listing.items[i];
    bool has_key = item->status == STC_OK;
    if (has_key && strcmp(item->record.key, wanted) == 0) {
      match = item;
      matches = SIZE_MAX; /* exact: stop looking */
    } else if (stc_show_prefix(item->name, wanted) ||
               (has_key && stc_show_summary_prefix(item->record.key, wanted))) {
      match = item;
      matches++;
    }
  }
  if (matches == 0)
    exit_code = stc__cache_fail("no record matches '%s' in %s", wanted,
                                tool->remote ? tool->remote : tool->directory);
  else if (matches != 1 && matches != SIZE_MAX)
    exit_code =
        stc__cache_fail("'%s' matches %zu records; give more of the ID or key",
                        wanted, matches);
  else
    exit_code = stc_show_item(tool, &listing, match, match->path);
  stc__cache_listing_free(&listing);
  return exit_code;
}
