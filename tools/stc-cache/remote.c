/* remote.c - stc-cache on the fleet tier (--remote=URL, README "Fleet cache
 * (Redis)"): the records a Redis server holds for the runtime's
 * STC_CACHE_REMOTE, listed, shown and verified like record files, and
 * pruned or cleared there.
 * In: the url and the tool's TTL and clock. Out: a listing whose items are
 * named by their Redis keys ("stc:v1:rec:<digest>"), checked with the disk
 * cache's own parser (stc_cache_record_decode) plus the key-to-name check a
 * file gets; removals through stc_remote_cache_delete. A server that cannot
 * be reached is an error (exit 1) naming the url and the reason. */
#include "cache_tool.h"

#include "stc/hash.h"
#include "stc/tuner_remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tool waits longer than a running program would (2 s unless
 * STC_CACHE_REMOTE_TIMEOUT_MS says otherwise), and never backs off. */
int stc__cache_remote_open(const char *url, stc_remote_cache **out) {
  stc_remote_options options;
  stc_remote_options_init(&options);
  options.timeout_ms = 2000;
  options.backoff_ms = 0;
  stc_error err;
  stc_error_clear(&err);
  if (stc_remote_options_from_environment(&options, &err) != STC_OK)
    return stc__cache_fail("%s", err.message);
  stc_error_clear(&err);
  stc_status status = stc_remote_cache_open(url, &options, out, &err);
  if (status != STC_OK)
    return stc__cache_fail_status(status, &err);
  return STC_CACHE_EXIT_OK;
}

int stc__cache_remote_remove(stc_remote_cache *remote, int kind,
                             const char *name, const char *path,
                             size_t *removed) {
  if (stc_remote_cache_delete(remote, (stc_remote_kind)kind, name) !=
      STC_OK) {
    char why[512];
    stc_remote_cache_last_fault(remote, why, sizeof why, NULL);
    return stc__cache_fail("%s: cannot remove: %s", path, why);
  }
  (*removed)++;
  return STC_CACHE_EXIT_OK;
}

typedef struct stc_remote_collector {
  stc_cache_listing *listing;
  size_t capacity;
  bool out_of_memory;
} stc_remote_collector;

static bool stc_remote_collect_one(void *user, const stc_remote_entry *entry) {
  stc_remote_collector *collector = user;
  stc_cache_listing *listing = collector->listing;
  stc_cache_item *item =
      stc__cache_listing_slot(listing, &collector->capacity);
  static const char prefix[] = "stc:v1:rec:";
  if (item)
    item->path = malloc(sizeof prefix + 64);
  if (!item || !item->path) {
    collector->out_of_memory = true;
    return false;
  }
  snprintf(item->path, sizeof prefix + 64, "%s%s", prefix, entry->digest);
  item->name = item->path + sizeof prefix - 1;
  item->status = stc_cache_record_decode(entry->data, entry->size,
                                         &item->record, &item->problem);
  if (item->status == STC_OK) {
    char digest[65];
    stc_sha256_hex(item->record.key, strlen(item->record.key), digest);
    if (strcmp(digest, entry->digest) != 0) {
      stc_cache_record_clear(&item->record);
      item->status = STC_ERR_CORRUPT;
      item->problem = "Redis key does not match its record's key";
    }
  }
  listing->count++;
  return true;
}

/* Lists what the server holds, in its own order (Redis keeps no creation
 * order), then judges expiry against the tool's TTL as for files. */
static int stc_remote_collect(const stc_cache_tool *tool,
                              stc_remote_cache *remote,
                              stc_cache_listing *out) {
  memset(out, 0, sizeof *out);
  out->now = stc__cache_now(tool);
  stc_remote_collector collector = {out, 0, false};
  stc_error err;
  stc_error_clear(&err);
  stc_status status = stc_remote_cache_scan(
      remote, STC_REMOTE_RECORD, stc_remote_collect_one, &collector, &err);
  if (status == STC_OK && collector.out_of_memory) {
    status = STC_ERR_NOMEM;
    stc_error_set(&err, NULL, 0, 0, "out of memory listing %s",
                  stc_remote_cache_url(remote));
  }
  if (status != STC_OK) {
    stc__cache_listing_free(out);
    return stc__cache_fail_status(status, &err);
  }
  stc__cache_mark_expired(out, tool->ttl_seconds);
  return STC_CACHE_EXIT_OK;
}

int stc__cache_collect_remote(const stc_cache_tool *tool,
                              stc_cache_listing *out) {
  memset(out, 0, sizeof *out);
  stc_remote_cache *remote;
  int exit_code = stc__cache_remote_open(tool->remote, &remote);
  if (exit_code != STC_CACHE_EXIT_OK)
    return exit_code;
  exit_code = stc_remote_collect(tool, remote, out);
  stc_remote_cache_close(remote);
  return exit_code;
}

int stc__cache_remove_remote(const stc_cache_tool *tool, bool everything) {
  stc_remote_cache *remote;
  int exit_code = stc__cache_remote_open(tool->remote, &remote);
  if (exit_code != STC_CACHE_EXIT_OK)
    return exit_code;
  stc_cache_listing listing;
  exit_code = stc_remote_collect(tool, remote, &listing);
  size_t removed = 0;
  for (size_t i = 0; exit_code == STC_CACHE_EXIT_OK && i < listing.count;
       ++i) {
    const stc_cache_item *item = &listing.items[i];
    if (everything || item->status != STC_OK || item->expired)
      exit_code = stc__cache_remote_remove(remote, STC_REMOTE_RECORD,
                                           item->name, item->path, &removed);
  }
  if (exit_code == STC_CACHE_EXIT_OK)
    printf("removed %zu record%s\n", removed, removed == 1 ? "" : "s");
  stc__cache_listing_free(&listing);
  stc_remote_cache_close(remote);
  return exit_code;
}
