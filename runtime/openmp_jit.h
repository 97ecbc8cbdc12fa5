/* openmp_jit.h - libomp loaded on first use in a JIT host (stc-run): the
 * libomp entry points that convert-scf-to-openmp's code calls, as
 * runtime/aot_omp.c defines them for AOT executables, built as the
 * stc_rt_openmp_jit library. The host defines each in its JIT under
 * libomp's name (the pair's `name`), and exports each as __wrap_<name> to a
 * module linked into a shared library with `--wrap=<name>`, instead of
 * loading libomp before the module runs: the first call loads libomp
 * (LD_LIBRARY_PATH, then the LLVM library directory stc was built
 * against, then the system's; aot_load.c),
 * caps its idle spin (openmp_spin.h) and calls through; a process that runs
 * no parallel variant never loads it. A missing libomp is then an error on
 * that first call ("stc: error: cannot load ...", exit status 127), so a
 * host checks that the file is there before it runs anything. Not
 * installed. */
#ifndef STC_RT_OPENMP_JIT_H
#define STC_RT_OPENMP_JIT_H

#include "stc/rt.h"

#include <stddef.h>

/* The entry points, under libomp's names (static storage). */
const stc_rt_symbol *stc_rt__lazy_openmp_symbols(size_t *count);

#endif /* STC_RT_OPENMP_JIT_H */
