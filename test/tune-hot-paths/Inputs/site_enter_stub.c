/* A test stand-in for libstc_rt's stc_rt_site_enter (include/stc/rt_dispatch.h),
 * loaded with stc-run --shared-libs while the runtime has none: runs variant
 * STC_STUB_VARIANT (index into the site's table; negative counts from the
 * end; default 0 = the reference) through its _mlir_ciface_ entry, whose
 * descriptor pointers point straight into `words` (an unpacked memref is
 * laid out exactly as its descriptor). With STC_STUB_PUBLISH=1 it also
 * publishes that variant's entry into the slot, so later calls take the
 * generated fast path. With STC_STUB_SITE=TEXT only sites whose id contains
 * TEXT take STC_STUB_VARIANT (the others run the reference): that is how a
 * differing output is traced to one site. With STC_STUB_TRACE=1 it prints
 * "stub: SITE -> NAME" on stderr at each slow-path call. Checks the site's
 * layout fields on the way. */
#include "stc/rt_dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*fn1)(void *);
typedef void (*fn2)(void *, void *);
typedef void (*fn3)(void *, void *, void *);
typedef void (*fn4)(void *, void *, void *, void *);
typedef void (*fn5)(void *, void *, void *, void *, void *);
typedef void (*fn6)(void *, void *, void *, void *, void *, void *);
typedef void (*fn7)(void *, void *, void *, void *, void *, void *, void *);
typedef void (*fn8)(void *, void *, void *, void *, void *, void *, void *, void *);

void stc_rt_site_enter(stc_rt_site *site, uint64_t *words, uint32_t num_words) {
  uint32_t total = 0;
  void *p[STC_RT_MAX_SITE_ARGS] = {0};
  if (site->abi_version != STC_RT_DISPATCH_ABI_VERSION || site->num_args == 0 ||
      site->num_args > STC_RT_MAX_SITE_ARGS || site->num_variants == 0 ||
      site->reference != 0) {
    fprintf(stderr, "stub: bad site descriptor\n");
    abort();
  }
  for (uint32_t i = 0; i < site->num_args; i++) {
    p[i] = &words[total];
    total += 3 + 2 * site->args[i].rank;
  }
  if (total != num_words) {
    fprintf(stderr, "stub: %s: %u words, descriptor says %u\n", site->site_id,
            num_words, total);
    abort();
  }
  const char *pick = getenv("STC_STUB_VARIANT");
  long k = pick ? strtol(pick, NULL, 10) : 0;
  const char *only = getenv("STC_STUB_SITE");
  if (only && !strstr(site->site_id, only))
    k = 0;
  long n = (long)site->num_variants;
  k = ((k % n) + n) % n;
  const stc_rt_variant *v = &site->variants[k];
  if (getenv("STC_STUB_TRACE"))
    fprintf(stderr, "stub: %s -> %s\n", site->site_id, v->name);
  if (getenv("STC_STUB_PUBLISH") && site->slot)
    __atomic_store_n(site->slot, v->entry, __ATOMIC_RELEASE);
  switch (site->num_args) {
  case 1: ((fn1)v->ciface)(p[0]); break;
  case 2: ((fn2)v->ciface)(p[0], p[1]); break;
  case 3: ((fn3)v->ciface)(p[0], p[1], p[2]); break;
  case 4: ((fn4)v->ciface)(p[0], p[1], p[2], p[3]); break;
  case 5: ((fn5)v->ciface)(p[0], p[1], p[2], p[3], p[4]); break;
  case 6: ((fn6)v->ciface)(p[0], p[1], p[2], p[3], p[4], p[5]); break;
  case 7: ((fn7)v->ciface)(p[0], p[1], p[2], p[3], p[4], p[5], p[6]); break;
  default: ((fn8)v->ciface)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]); break;
  }
}

/* The runtime's warning line (runtime/controls.c), which runtime/blas.c
 * uses when a vendor BLAS does not load. */
void stc_rt__warn(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  fputs("stc: warning: ", stderr);
  vfprintf(stderr, format, ap);
  fputc('\n', stderr);
  va_end(ap);
}
