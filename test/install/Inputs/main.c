/* The pkg-config build's main: includes every installed header (each must
 * compile on its own include path), prints the runtime version, then runs
 * the model's @main, renamed to __stc_aot_entry by objcopy. */
#include <stc/hints.h>
#include <stc/rt.h>
#include <stc/rt_blas.h>
#include <stc/rt_dispatch.h>
#include <stc/rt_gpu.h>
#include <stc/rt_region.h>
#include <stc/status.h>
#include <stc/tuner.h>

#include <stdio.h>

extern void __stc_aot_entry(void);

int main(void) {
  printf("pkg-config program: stc %s\n", stc_version());
  fflush(stdout);
  __stc_aot_entry();
  return 0;
}
