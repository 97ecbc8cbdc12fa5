/* listing.c - opening the cache for stc-cache and reading every record file
 * into memory.
 * In: a directory and the tool's TTL and clock. Out: an open cache (or none,
 * when it does not exist yet) and a listing of items, oldest first.
 *
 * The cache is opened with an unlimited TTL so that the library hands back
 * expired records whole (list and show still display them); expiry is then
 * judged here, with the same stc_cache_record_is_fresh the library uses,
 * against the tool's own --ttl. */
#include "cache_tool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int64_t stc__cache_now(const stc_cache_tool *tool) {
  return tool->has_now ? tool->now : stc_now_seconds();
}

static int64_t stc_cache_fixed_clock(void *user) {
  return *(const int64_t *)user;
}

/* True when lstat says path is absent, so that opening would create it. */
static bool stc_cache_absent(const char *path) {
  struct stat st;
  return lstat(path, &st) != 0 && errno == ENOENT;
}

int stc__cache_open(const stc_cache_tool *tool, const char *directory,
                    size_t capacity, uint64_t ttl_seconds, bool create,
                    stc_disk_cache **out) {
  *out = NULL;
  if (!create) {
    /* Anything present, even a symlink or a file, goes on to the library,
     * which refuses it with the reason. */
    size_t size = strlen(directory) + 32;
    char *version_dir = malloc(size);
    if (!version_dir)
      return stc__cache_fail("out of memory");
    snprintf(version_dir, size, "%s/v%d", directory, STC_TUNER_CACHE_FORMAT);
    bool absent = stc_cache_absent(directory) || stc_cache_absent(version_dir);
    free(version_dir);
    if (absent)
      return STC_CACHE_EXIT_OK;
  }
  stc_error err;
  stc_error_clear(&err);
  stc_status status =
      stc_disk_cache_open(directory, capacity, ttl_seconds, out, &err);
  if (status != STC_OK)
    return stc__cache_fail_status(status, &err);
  if (tool->has_now)
    stc_disk_cache_set_clock(*out, stc_cache_fixed_clock, (void *)&tool->now);
  return STC_CACHE_EXIT_OK;
}

typedef struct stc_cache_collector {
  stc_cache_listing *listing;
  size_t capacity;
  stc_status status; /* STC_ERR_NOMEM once an allocation failed */
} stc_cache_collector;

static bool stc_cache_collect_one(void *user, const stc_cache_entry *entry) {
  stc_cache_collector *collector = user;
  stc_cache_listing *listing = collector->listing;
  stc_cache_item *item =
      stc__cache_listing_slot(listing, &collector->capacity);
  if (item)
    item->path = malloc(strlen(entry->path) + 1);
  if (!item || !item->path ||
      (entry->status == STC_OK &&
       stc_cache_record_copy(entry->record, &item->record) != STC_OK)) {
    if (item)
      free(item->path);
    collector->status = STC_ERR_NOMEM;
    return false;
  }
  strcpy(item->path, entry->path);
  const char *slash = strrchr(item->path, '/');
  item->name = slash ? slash + 1 : item->path;
  item->status = entry->status;
  item->problem = entry->problem;
  listing->count++;
  return true;
}

int stc__cache_collect(const stc_cache_tool *tool, const char *directory,
                       stc_cache_listing *out) {
  if (tool->remote)
    return stc__cache_collect_remote(tool, out);
  memset(out, 0, sizeof *out);
  out->now = stc__cache_now(tool);
  stc_disk_cache *cache;
  int exit_code =
      stc__cache_open(tool, directory, SIZE_MAX, UINT64_MAX, false, &cache);
  if (exit_code != STC_CACHE_EXIT_OK || !cache)
    return exit_code;
  stc_cache_collector collector = {out, 0, STC_OK};
  stc_error err;
  stc_error_clear(&err);
  stc_status status =
      stc_disk_cache_list(cache, stc_cache_collect_one, &collector, &err);
  stc_disk_cache_close(cache);
  if (status == STC_OK && collector.status != STC_OK) {
    status = collector.status;
    stc_error_set(&err, directory, 0, 0, "out of memory listing the cache");
  }
  if (status != STC_OK) {
    stc__cache_listing_free(out);
    return stc__cache_fail_status(status, &err);
  }
  stc__cache_mark_expired(out, tool->ttl_seconds);
  return STC_CACHE_EXIT_OK;
}

void *stc__cache_grow(void *items, size_t *capacity, size_t count,
                      size_t item_size) {
  if (count < *capacity)
    return items;
  size_t grown = *capacity ? 2 * *capacity : 16;
  void *moved = realloc(items, grown * item_size);
  if (moved)
    *capacity = grown;
  return moved;
}

stc_cache_item *stc__cache_listing_slot(stc_cache_listing *listing,
                                        size_t *capacity) {
  stc_cache_item *items = stc__cache_grow(listing->items, capacity,
                                          listing->count, sizeof *items);
  if (!items)
    return NULL;
  listing->items = items;
  memset(&items[listing->count], 0, sizeof *items);
  return &items[listing->count];
}

void stc__cache_mark_expired(stc_cache_listing *listing,
                             uint64_t ttl_seconds) {
  for (size_t i = 0; i < listing->count; ++i) {
    stc_cache_item *item = &listing->items[i];
    if (item->status == STC_OK &&
        !stc_cache_record_is_fresh(&item->record, listing->now, ttl_seconds))
      item->expired = true;
  }
}

void stc__cache_listing_free(stc_cache_listing *listing) {
  for (size_t i = 0; i < listing->count; ++i) {
    free(listing->items[i].path);
    stc_cache_record_clear(&listing->items[i].record);
  }
  free(listing->items);
  memset(listing, 0, sizeof *listing);
}

const char *stc__cache_item_state(const stc_cache_item *item) {
  if (item->status != STC_OK)
    return item->problem ? item->problem : stc_status_str(item->status);
  return item->expired ? "expired" : "fresh";
}
