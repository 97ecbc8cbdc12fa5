/* aot_load.c - loading for the AOT start-up stub (aot_load.h): the file
 * the executable's own dependencies would use. In order: LD_LIBRARY_PATH
 * (the loader searches it before a RUNPATH; not for a set-id program, as
 * the loader), the caller's built-in directories (aot_omp.c: the LLVM
 * library directory stc was built against, where the recipes' RUNPATH
 * used to point: an executable with the static runtime has no RUNPATH, so
 * that the loader does not probe two directories' hardware-capability
 * subdirectories for libm and libc at every start; docs/aot.md, "Start-up
 * cost"), then the executable's search path through dlinfo
 * RTLD_DI_SERINFO (LD_LIBRARY_PATH, its RUNPATH, the system's), the first
 * directory holding the file. Not a plain dlopen(name): that searches the
 * RUNPATH of dlopen's caller, which under ASan or TSan is the sanitizer's
 * interceptor, not the executable. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlinfo, Dl_serinfo */
#endif
#include "aot_load.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Noreturn void stc_rt__aot_load_failed(const char *library, const char *what) {
  const char *why = dlerror();
  fprintf(stderr, "stc: error: cannot load %s (%s): %s\n", library, what,
          why ? why : "symbol not found");
  fflush(stderr);
  _exit(127);
}

/* dir/name for the first directory of dirs (separated by ':' or ';', an
 * empty one being the current directory, as the loader reads
 * LD_LIBRARY_PATH) that holds name: opened, its dlopen error if it does
 * not load; *found false when none holds it. */
static void *open_in(const char *dirs, const char *name, bool *found) {
  *found = false;
  for (const char *at = dirs; at;) {
    size_t length = strcspn(at, ":;");
    char path[4096];
    int n = length ? snprintf(path, sizeof path, "%.*s/%s", (int)length, at,
                              name)
                   : snprintf(path, sizeof path, "./%s", name);
    if (n > 0 && (size_t)n < sizeof path && access(path, F_OK) == 0) {
      *found = true;
      return dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    at = at[length] ? at + length + 1 : NULL;
  }
  return NULL;
}

void *stc_rt__aot_open(const char *name, const char *built_in_dirs) {
  bool found;
  void *h = open_in(secure_getenv("LD_LIBRARY_PATH"), name, &found);
  if (found)
    return h;
  if (built_in_dirs && *built_in_dirs) {
    h = open_in(built_in_dirs, name, &found);
    if (found)
      return h;
  }
  int flags = RTLD_NOW | RTLD_LOCAL;
  void *self = dlopen(NULL, RTLD_NOW);
  Dl_serinfo size;
  if (self && dlinfo(self, RTLD_DI_SERINFOSIZE, &size) == 0) {
    Dl_serinfo *info = malloc(size.dls_size);
    if (info) {
      info->dls_size = size.dls_size;
      info->dls_cnt = size.dls_cnt;
      if (dlinfo(self, RTLD_DI_SERINFO, info) == 0) {
        for (unsigned i = 0; i < info->dls_cnt; i++) {
          char path[4096];
          int n = snprintf(path, sizeof path, "%s/%s",
                           info->dls_serpath[i].dls_name, name);
          if (n > 0 && (size_t)n < sizeof path && access(path, F_OK) == 0) {
            free(info);
            return dlopen(path, flags); /* found: this one, or its error */
          }
        }
      }
      free(info);
    }
  }
  return dlopen(name, flags); /* not in the search path: dlerror says so */
}

void *stc_rt__aot_symbol(void *handle, const char *library, const char *name) {
  (void)dlerror();
  void *p = dlsym(handle, name);
  if (!p)
    stc_rt__aot_load_failed(library, name);
  return p;
}
