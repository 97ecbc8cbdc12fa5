/* maintain.c - the commands that remove records: `prune` (invalid and
 * expired records, then the oldest beyond --capacity) and `clear` (every
 * record). Both go through the library, which never removes symlinks or
 * files of another owner.
 * In: the tool's directory, capacity and TTL. Out: "removed N records" on
 * stdout. A cache that does not exist is left uncreated: nothing to remove. */
#include "cache_tool.h"

#include <stdio.h>

typedef stc_status (*stc_cache_remover)(stc_disk_cache *cache, size_t *removed,
                                        stc_error *err);

static int stc_cache_remove_with(const stc_cache_tool *tool, size_t capacity,
                                 uint64_t ttl_seconds,
                                 stc_cache_remover remove) {
  stc_disk_cache *cache;
  int exit_code = stc__cache_open(tool, tool->directory, capacity, ttl_seconds,
                                  false, &cache);
  if (exit_code != STC_CACHE_EXIT_OK)
    return exit_code;
  size_t removed = 0;
  if (cache) {
    stc_error err;
    stc_error_clear(&err);
    stc_status status = remove(cache, &removed, &err);
    stc_disk_cache_close(cache);
    if (status != STC_OK)
      return stc__cache_fail_status(status, &err);
  }
  printf("removed %zu record%s\n", removed, removed == 1 ? "" : "s");
  return STC_CACHE_EXIT_OK;
}

int stc__cache_prune(const stc_cache_tool *tool) {
  if (tool->remote)
    return stc__cache_remove_remote(tool, false);
  return stc_cache_remove_with(tool, tool->capacity, tool->ttl_seconds,
                               stc_disk_cache_prune);
}

int stc__cache_clear(const stc_cache_tool *tool) {
  if (tool->remote)
    return stc__cache_remove_remote(tool, true);
  /* Capacity and TTL play no part in clearing; any valid values do. */
  return stc_cache_remove_with(tool, STC_CACHE_TOOL_DEFAULT_CAPACITY,
                               STC_CACHE_TOOL_DEFAULT_TTL,
                               stc_disk_cache_clear);
}
