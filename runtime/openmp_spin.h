/* openmp_spin.h - the KMP_BLOCKTIME cap (rt.c explains why): libomp's idle
 * workers spin 1 ms instead of 200 after a parallel region, unless the user
 * chose a blocktime (non-empty KMP_BLOCKTIME) or a wait policy
 * (OMP_WAIT_POLICY, which sets the blocktime itself).
 *
 * Set in libomp itself, through its kmp_set_defaults (which libomp applies
 * like its environment when it starts: before its first parallel region),
 * never with setenv: the process's environment, which its children
 * inherit, stays the user's, and nothing runs at load time but a null
 * check (the setenv in a constructor was ~20 us of every AOT process's
 * start, docs/aot.md "Start-up cost"). Who applies it: the AOT stub's lazy
 * libomp load (aot_omp.c), libstc_rt's and the stub's constructors for a
 * libomp the program links (loaded before them, not yet started), and a
 * host that loads libomp itself (stc-run) through stc_rt_cap_openmp_spin.
 * Not installed. */
#ifndef STC_RT_OPENMP_SPIN_H
#define STC_RT_OPENMP_SPIN_H

#include <stdbool.h>
#include <stdlib.h>

#define STC_KMP_BLOCKTIME "1"

/* libomp's kmp_set_defaults("NAME=value ..."). */
typedef void (*stc_rt__kmp_set_defaults_fn)(const char *);

/* Whether the cap applies: neither a blocktime nor a wait policy chosen. */
static inline bool stc_rt__openmp_spin_wanted(void) {
  const char *own = getenv("KMP_BLOCKTIME");
  const char *policy = getenv("OMP_WAIT_POLICY");
  return !((own && *own) || (policy && *policy));
}

/* Caps the blocktime of the libomp whose kmp_set_defaults this is (NULL:
 * no libomp, nothing to do); true when it did. Call before that libomp's
 * first parallel region; a started libomp keeps its own. */
static inline bool stc_rt__openmp_spin_cap(stc_rt__kmp_set_defaults_fn set) {
  if (!set || !stc_rt__openmp_spin_wanted())
    return false;
  set("KMP_BLOCKTIME=" STC_KMP_BLOCKTIME);
  return true;
}

#endif /* STC_RT_OPENMP_SPIN_H */
