/* list.c - `stc-cache list`: one table row per record file, oldest first.
 * In: the listing of the cache. Out: a table on stdout whose columns are
 * sized to fit, then a count; "no records" for an empty or missing cache.
 * Keys are long (every candidate and policy field is in them), so the table
 * shows a digest prefix to name a record and the operation and workload to
 * recognize it; --long prints whole keys and winners. */
#include "cache_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STC_LIST_COLUMNS = 7 };
/* Display limits without --long. */
#define STC_LIST_ID_CHARS 12
#define STC_LIST_KEY_CHARS 48
#define STC_LIST_WINNER_CHARS 24

static const char *const stc_list_headers[STC_LIST_COLUMNS] = {
    "ID", "KEY", "WINNER", "RATIO", "VERIFIED", "AGE", "STATE"};
/* Numbers align right, text left. */
static const bool stc_list_right[STC_LIST_COLUMNS] = {false, false, false, true,
                                                      false, true,  false};

/* The digest prefix that `show` accepts back: the file name without its
 * ".rec", cut to STC_LIST_ID_CHARS. */
static char *stc_list_id(const char *name) {
  size_t length = strlen(name);
  if (length > 4 && strcmp(name + length - 4, ".rec") == 0)
    length -= 4;
  if (length > STC_LIST_ID_CHARS)
    length = STC_LIST_ID_CHARS;
  char *plain = malloc(length + 1);
  if (!plain)
    return NULL;
  memcpy(plain, name, length);
  plain[length] = 0;
  char *id = malloc(stc__cache_escape_size(plain, 0));
  if (id)
    stc__cache_escape(plain, 0, id);
  free(plain);
  return id;
}

static char *stc_list_text(const char *text) {
  char *copy = malloc(strlen(text) + 1);
  if (copy)
    strcpy(copy, text);
  return copy;
}

/* Fills one row's cells (each malloc'ed); false on allocation failure. */
static bool stc_list_row(const stc_cache_tool *tool,
                         const stc_cache_listing *listing,
                         const stc_cache_item *item, char **cells) {
  cells[0] = stc_list_id(item->name);
  if (item->status != STC_OK) {
    for (int c = 1; c < STC_LIST_COLUMNS - 1; ++c)
      cells[c] = stc_list_text("-");
    const char *problem = stc__cache_item_state(item);
    size_t size = strlen(problem) + 16;
    if ((cells[STC_LIST_COLUMNS - 1] = malloc(size)))
      snprintf(cells[STC_LIST_COLUMNS - 1], size, "invalid: %s", problem);
  } else {
    const stc_cache_record *record = &item->record;
    size_t key_chars = tool->long_keys ? 0 : STC_LIST_KEY_CHARS;
    size_t winner_chars = tool->long_keys ? 0 : STC_LIST_WINNER_CHARS;
    /* --long shows the key as stored; the summary is for recognition. */
    if (tool->long_keys) {
      if ((cells[1] = malloc(stc__cache_escape_size(record->key, 0))))
        stc__cache_escape(record->key, 0, cells[1]);
    } else {
      cells[1] = stc__cache_key_summary(record->key, key_chars);
    }
    if ((cells[2] =
             malloc(stc__cache_escape_size(record->winner, winner_chars))))
      stc__cache_escape(record->winner, winner_chars, cells[2]);
    char number[64];
    snprintf(number, sizeof number, "%.3fx", record->ratio);
    cells[3] = stc_list_text(number);
    cells[4] = stc_list_text(record->verified ? "yes" : "no");
    /* Subtracting in uint64_t cannot overflow; the cast back is exact for
     * any age a real record has. */
    stc__cache_format_age(
        (int64_t)((uint64_t)listing->now - (uint64_t)record->created), number,
        sizeof number);
    cells[5] = stc_list_text(number);
    cells[6] = stc_list_text(stc__cache_item_state(item));
  }
  for (int c = 0; c < STC_LIST_COLUMNS; ++c)
    if (!cells[c])
      return false;
  return true;
}

static void stc_list_print_row(char *const *cells, const size_t *widths) {
  for (int c = 0; c < STC_LIST_COLUMNS; ++c) {
    bool last = c == STC_LIST_COLUMNS - 1;
    if (last)
      printf("%s\n", cells[c]); /* no trailing blanks */
    else if (stc_list_right[c])
      printf("%*s  ", (int)widths[c], cells[c]);
    else
      printf("%-*s  ", (int)widths[c], cells[c]);
  }
}

int stc__cache_list(const stc_cache_tool *tool) {
  stc_cache_listing listing;
  int exit_code = stc__cache_collect(tool, tool->directory, &listing);
  if (exit_code != STC_CACHE_EXIT_OK)
    return exit_code;
  if (listing.count == 0) {
    printf("no records\n");
    stc__cache_listing_free(&listing);
    return STC_CACHE_EXIT_OK;
  }
  char **cells = calloc(listing.count * STC_LIST_COLUMNS, sizeof *cells);
  bool ok = cells != NULL;
  size_t widths[STC_LIST_COLUMNS];
  for (int c = 0; c < STC_LIST_COLUMNS; ++c)
    widths[c] = strlen(stc_list_headers[c]);
  size_t fresh = 0, expired = 0, invalid = 0;
  for (size_t i = 0; ok && i < listing.count; ++i) {
    const stc_cache_item *item = &listing.items[i];
    char **row = cells + i * STC_LIST_COLUMNS;
    ok = stc_list_row(tool, &listing, item, row);
    for (int c = 0; ok && c < STC_LIST_COLUMNS; ++c)
      if (strlen(row[c]) > widths[c])
        widths[c] = strlen(row[c]);
    if (item->status != STC_OK)
      invalid++;
    else if (item->expired)
      expired++;
    else
      fresh++;
  }
  if (ok) {
    stc_list_print_row((char *const *)stc_list_headers, widths);
    for (size_t i = 0; i < listing.count; ++i)
      stc_list_print_row(cells + i * STC_LIST_COLUMNS, widths);
    printf("%zu record%s: %zu fresh, %zu expired, %zu invalid\n", listing.count,
           listing.count == 1 ? "" : "s", fresh, expired, invalid);
  }
  if (cells)
    for (size_t i = 0; i < listing.count * STC_LIST_COLUMNS; ++i)
      free(cells[i]);
  free(cells);
  stc__cache_listing_free(&listing);
  return ok ? STC_CACHE_EXIT_OK : stc__cache_fail("out of memory");
}
