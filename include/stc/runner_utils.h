/* runner_utils.h - MLIR's runner utilities without libMLIR: the printing
 * and timing functions of libstc_runner_utils (runtime/runner_utils.c) and
 * libstc_rt's memrefCopy (runtime/memref_copy.c), which upstream keeps in
 * libmlir_c_runner_utils.so and libmlir_runner_utils.so (both load
 * libMLIR.so and libLLVM.so). AOT programs link them; a JIT host defines
 * them by name (stc-run, with its default libraries). */
#ifndef STC_RUNNER_UTILS_H
#define STC_RUNNER_UTILS_H

#include "stc/rt.h"

#include <stddef.h>
#include <stdint.h>

/* MLIR's UnrankedMemRefType: the rank and a pointer to a ranked descriptor
 * {allocated, aligned, offset, sizes[rank], strides[rank]}. */
typedef struct stc_unranked_memref {
  int64_t rank;
  void *descriptor;
} stc_unranked_memref;

/* libstc_rt: the copy MLIR's memref-to-LLVM lowering calls for a
 * memref.copy whose layouts are not both contiguous. */
void memrefCopy(int64_t elem_size, stc_unranked_memref *src,
                stc_unranked_memref *dst);

/* libstc_runner_utils: every function it defines, by its upstream name
 * (static storage). memrefCopy is not among them (libstc_rt's). */
const stc_rt_symbol *stc_runner_utils_symbols(size_t *count);

#endif /* STC_RUNNER_UTILS_H */
