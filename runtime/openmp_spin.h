/* openmp_spin.h - the KMP_BLOCKTIME cap (rt.c explains why), shared by
 * libstc_rt's constructor (rt.c) and the AOT start-up stub's (aot_boot.c),
 * which runs it at load time in executables that load libstc_rt only at
 * their first site call. Not installed. */
#ifndef STC_RT_OPENMP_SPIN_H
#define STC_RT_OPENMP_SPIN_H

#include <stdlib.h>

#define STC_KMP_BLOCKTIME "1"

/* Sets KMP_BLOCKTIME=1 unless the user chose a blocktime (non-empty) or an
 * OMP_WAIT_POLICY (which sets the blocktime itself). Before libomp reads
 * its environment (its first parallel region); setenv: call it while the
 * process has one thread (a constructor). */
static inline void stc_rt__openmp_spin_cap(void) {
  const char *own = getenv("KMP_BLOCKTIME");
  const char *policy = getenv("OMP_WAIT_POLICY");
  if ((own && *own) || (policy && *policy))
    return;
  (void)setenv("KMP_BLOCKTIME", STC_KMP_BLOCKTIME, 1); /* unset or empty */
}

#endif /* STC_RT_OPENMP_SPIN_H */
