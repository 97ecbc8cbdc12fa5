/* Where the tuner's disk cache lives by default (DESIGN.md section 5,
 * "STC_CACHE_DIR"): one rule shared by the runtime and stc-cache, so that the
 * tool always inspects the directory the runtime writes.
 *
 * In: $STC_CACHE_DIR, $XDG_CACHE_HOME, $HOME (or the same three strings
 * passed explicitly). Out: a newly allocated directory path. Nothing is
 * created or checked on disk here; stc_disk_cache_open does that. */
#include "stc/tuner_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Joins base and suffix with exactly one '/' between them. */
static stc_status stc_cache_dir_join(const char *base, const char *suffix,
                                     char **out, stc_error *err) {
  size_t length = strlen(base);
  while (length > 1 && base[length - 1] == '/')
    length--;
  size_t size = length + 1 + strlen(suffix) + 1;
  char *path = malloc(size);
  if (!path) {
    stc_error_set(err, NULL, 0, 0, "out of memory resolving cache directory");
    return STC_ERR_NOMEM;
  }
  /* A base of "/" keeps its one slash rather than gaining a second. */
  snprintf(path, size, "%.*s%s%s", (int)length, base,
           base[length - 1] == '/' ? "" : "/", suffix);
  *out = path;
  return STC_OK;
}

stc_status stc_cache_directory_from(const char *stc_cache_dir,
                                    const char *xdg_cache_home,
                                    const char *home, char **out,
                                    stc_error *err) {
  if (!out)
    return STC_ERR_INVALID;
  *out = NULL;
  /* Empty variables count as unset, as the XDG base directory spec asks;
   * a relative XDG_CACHE_HOME is invalid there and is ignored likewise. */
  if (stc_cache_dir && stc_cache_dir[0]) {
    char *copy = malloc(strlen(stc_cache_dir) + 1);
    if (!copy) {
      stc_error_set(err, NULL, 0, 0, "out of memory resolving cache directory");
      return STC_ERR_NOMEM;
    }
    strcpy(copy, stc_cache_dir);
    *out = copy;
    return STC_OK;
  }
  if (xdg_cache_home && xdg_cache_home[0] == '/')
    return stc_cache_dir_join(xdg_cache_home, "stc", out, err);
  if (home && home[0])
    return stc_cache_dir_join(home, ".cache/stc", out, err);
  stc_error_set(err, NULL, 0, 0,
                "no cache directory: STC_CACHE_DIR, XDG_CACHE_HOME and HOME "
                "are all unset or empty");
  return STC_ERR_NOT_FOUND;
}

stc_status stc_cache_default_directory(char **out, stc_error *err) {
  return stc_cache_directory_from(getenv("STC_CACHE_DIR"),
                                  getenv("XDG_CACHE_HOME"), getenv("HOME"), out,
                                  err);
}
