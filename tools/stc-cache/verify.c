/* verify.c - `stc-cache verify`: checks every record file (shape,
 * checksum, format version, file name, ownership, freshness against --ttl).
 * In: the listing of the cache. Out: one "PATH: reason" line per bad file
 * and a summary on stdout; exit 1 when any file is bad, 0 otherwise
 * (an empty or missing cache is good). Nothing is removed: prune does that. */
#include "cache_tool.h"

#include <stdio.h>

int stc__cache_verify(const stc_cache_tool *tool) {
  stc_cache_listing listing;
  int exit_code = stc__cache_collect(tool, tool->directory, &listing);
  if (exit_code != STC_CACHE_EXIT_OK)
    return exit_code;
  size_t bad = 0;
  for (size_t i = 0; i < listing.count; ++i) {
    const stc_cache_item *item = &listing.items[i];
    if (item->status == STC_OK && !item->expired)
      continue;
    bad++;
    if (item->expired) {
      char age[32], ttl[32];
      stc__cache_format_age(
          (int64_t)((uint64_t)listing.now - (uint64_t)item->record.created),
          age, sizeof age);
      stc__cache_format_duration(tool->ttl_seconds, ttl, sizeof ttl);
      printf("%s: expired (created %s ago, ttl %s)\n", item->path, age, ttl);
    } else {
      printf("%s: %s\n", item->path, stc__cache_item_state(item));
    }
  }
  if (listing.count == 0)
    printf("no records\n");
  else if (bad == 0)
    printf("%zu record%s, all valid\n", listing.count,
           listing.count == 1 ? "" : "s");
  else
    printf("%zu of %zu record files bad\n", bad, listing.count);
  stc__cache_listing_free(&listing);
  return bad ? STC_CACHE_EXIT_FAILURE : STC_CACHE_EXIT_OK;
}
