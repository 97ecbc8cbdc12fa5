/* A host program on the installed runtime's public API only. */
#include <stc/rt.h>
#include <stc/rt_blas.h>
#include <stc/rt_dispatch.h>
#include <stc/rt_gpu.h>
#include <stc/rt_region.h>

#include <stdio.h>

int main(void) {
  printf("host: stc %s, runtime ABI %d (header %d)\n", stc_version(),
         stc_rt_abi_version(), STC_RT_ABI_VERSION);
  return stc_rt_abi_version() == STC_RT_ABI_VERSION ? 0 : 1;
}
