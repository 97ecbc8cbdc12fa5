/* maintain.c - the commands that remove records: `prune` (invalid and
 * expired records, then the oldest beyond --capacity) and `clear` (every
 * record, and the warm-start index, DIR/warm-v1, runtime/warm_start.c).
 * Both go through the library, which never removes symlinks or files of
 * another owner.
 * In: the tool's directory, capacity and TTL. Out: "removed N records" on
 * stdout. A cache that does not exist is left uncreated: nothing to remove. */
#include "cache_tool.h"

#include "stc/cache_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* Removes the warm-start index files of DIR/warm-v1 (the directory stays;
 * one that does not exist is left uncreated). Clearing the records makes
 * the index stale anyway; this leaves nothing behind. */
static int clear_warm_start_index(const stc_cache_tool *tool) {
  char path[4200];
  snprintf(path, sizeof path, "%s/warm-v1", tool->directory);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? STC_CACHE_EXIT_OK
                           : stc__cache_fail("cannot open %s: %s", path,
                                             strerror(errno));
  stc__cache_files files = {fd, path, geteuid(), ".idx", "", NULL};
  size_t removed = 0;
  stc_error err;
  stc_error_clear(&err);
  stc_status status = stc__cache_files_clear(&files, &removed, &err);
  close(fd);
  if (status != STC_OK)
    return stc__cache_fail_status(status, &err);
  if (removed)
    printf("removed the warm-start index (%zu file%s)\n", removed,
           removed == 1 ? "" : "s");
  return STC_CACHE_EXIT_OK;
}

int stc__cache_clear(const stc_cache_tool *tool) {
  if (tool->remote)
    return stc__cache_remove_remote(tool, true);
  /* Capacity and TTL play no part in clearing; any valid values do. */
  int code = stc_cache_remove_with(tool, STC_CACHE_TOOL_DEFAULT_CAPACITY,
                                   STC_CACHE_TOOL_DEFAULT_TTL,
                                   stc_disk_cache_clear);
  return code == STC_CACHE_EXIT_OK ? clear_warm_start_index(tool) : code;
}
