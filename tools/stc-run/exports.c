/* exports.c - writes stc-run's dynamic list (a build step, run once): the
 * symbols a module linked into a shared library (object_merge.h) takes
 * from stc-run, which is what the JIT defines for it otherwise: libstc_rt's
 * entry points and memrefCopy, and the lazy libomp entry points under the
 * names `ld --wrap=__kmpc_<name>` gives references to them
 * (runtime/aot_omp.c). Not stc's runner utilities: the library links its
 * own (a module run without the default libraries must not find them, and
 * LLJIT looks up what the process exports). Out: the list, on stdout. */
#include "openmp_jit.h"
#include "stc/rt.h"

#include <stdio.h>

static void list(const stc_rt_symbol *symbols, size_t count,
                 const char *prefix) {
  for (size_t i = 0; i < count; i++)
    printf("  %s%s;\n", prefix, symbols[i].name);
}

int main(void) {
  size_t count;
  puts("{");
  const stc_rt_symbol *rt = stc_rt_symbols(&count);
  list(rt, count, "");
  const stc_rt_symbol *openmp = stc_rt__lazy_openmp_symbols(&count);
  list(openmp, count, "__wrap_");
  puts("  memrefCopy;\n};");
  return ferror(stdout) ? 1 : 0;
}
