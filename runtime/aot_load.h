/* aot_load.h - what the AOT start-up stub's two halves share (aot_load.c):
 * loading a library the way the executable's own dependencies are found,
 * and failing in one line. aot_boot.c loads libstc_rt on the first site
 * call, aot_omp.c libomp on the first OpenMP call; separate objects of
 * libstc_rt_aot.a so that an executable linking the static runtime takes
 * only the libomp half (docs/aot.md, "Start-up cost"). Not installed. */
#ifndef STC_RT_AOT_LOAD_H
#define STC_RT_AOT_LOAD_H

/* dlopen(RTLD_NOW | RTLD_LOCAL) of `name` from the first of:
 * LD_LIBRARY_PATH, built_in_dirs (':'-separated, may be NULL), the
 * executable's own search path (aot_load.c); NULL with dlerror() set when
 * it is in none of them or does not load. */
void *stc_rt__aot_open(const char *name, const char *built_in_dirs);

/* One line, "stc: error: cannot load <library> (<what>): <dlerror>", and
 * exit status 127 (what the dynamic loader does for a missing dependency
 * at start). */
_Noreturn void stc_rt__aot_load_failed(const char *library, const char *what);

/* dlsym, or stc_rt__aot_load_failed naming the symbol. */
void *stc_rt__aot_symbol(void *handle, const char *library, const char *name);

#endif /* STC_RT_AOT_LOAD_H */
