/* aot_load.c - loading for the AOT start-up stub (aot_load.h): the file
 * the executable's own dependencies would use, found through dlinfo
 * RTLD_DI_SERINFO (LD_LIBRARY_PATH, the executable's RUNPATH, the
 * system's), the first directory holding it. Not a plain dlopen(name):
 * that searches the RUNPATH of dlopen's caller, which under ASan or TSan is
 * the sanitizer's interceptor, not the executable. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlinfo, Dl_serinfo */
#endif
#include "aot_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

_Noreturn void stc_rt__aot_load_failed(const char *library, const char *what) {
  const char *why = dlerror();
  fprintf(stderr, "stc: error: cannot load %s (%s): %s\n", library, what,
          why ? why : "symbol not found");
  fflush(stderr);
  _exit(127);
}

void *stc_rt__aot_open(const char *name) {
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
