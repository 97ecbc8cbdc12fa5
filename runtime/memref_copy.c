/* memref_copy.c - memrefCopy, the copy MLIR's memref-to-LLVM lowering calls
 * for a memref.copy whose layouts are not both contiguous (a strided
 * subview, a transposed view), with the same signature and behaviour as the
 * one in MLIR's libmlir_c_runner_utils.
 *
 * Why here: Debian's libmlir_c_runner_utils.so depends on libMLIR.so
 * (107 MB), so an AOT executable that needs nothing else from it paid
 * 20-25 ms of dynamic linking per process for one copy (a tuned convnet ran
 * 0.67x its default-lowered build, whose copies are all contiguous).
 * libstc_rt now defines it, and `-Wl,--as-needed` drops the runner
 * utilities from executables that do not print with them. Where both are
 * loaded, either definition does the same copy. */
#include "stc/runner_utils.h"

#include <stdint.h>
#include <string.h>

typedef stc_unranked_memref unranked_memref;

typedef struct ranked_view {
  char *data; /* aligned + offset * element size */
  const int64_t *sizes, *strides;
} ranked_view;

static ranked_view view_of(const unranked_memref *m, int64_t elem_size) {
  char *const *pointers = m->descriptor;
  const int64_t *words = (const int64_t *)(pointers + 2);
  return (ranked_view){pointers[1] + words[0] * elem_size, words + 1,
                       words + 1 + m->rank};
}

/* Whether a view's elements are one dense row-major block. */
static int contiguous(const ranked_view *v, int64_t rank) {
  int64_t expected = 1;
  for (int64_t d = rank - 1; d >= 0; d--) {
    if (v->sizes[d] != 1 && v->strides[d] != expected)
      return 0;
    expected *= v->sizes[d];
  }
  return 1;
}

void memrefCopy(int64_t elem_size, unranked_memref *src_arg,
                unranked_memref *dst_arg) {
  int64_t rank = src_arg->rank;
  ranked_view src = view_of(src_arg, elem_size);
  ranked_view dst = view_of(dst_arg, elem_size);
  int64_t total = 1;
  for (int64_t d = 0; d < rank; d++) {
    if (src.sizes[d] == 0)
      return;
    total *= src.sizes[d];
  }
  if (rank == 0 || (contiguous(&src, rank) && contiguous(&dst, rank))) {
    memmove(dst.data, src.data, (size_t)(total * elem_size));
    return;
  }
  /* An odometer over the indices, innermost fastest; the offsets of both
   * views move with it. Ranks are small (MLIR's own copy keeps them on the
   * stack the same way). */
  int64_t index[rank > 0 ? rank : 1];
  memset(index, 0, sizeof index);
  char *s = src.data, *t = dst.data;
  for (;;) {
    memcpy(t, s, (size_t)elem_size);
    int64_t d = rank - 1;
    for (; d >= 0; d--) {
      s += src.strides[d] * elem_size;
      t += dst.strides[d] * elem_size;
      if (++index[d] < src.sizes[d])
        break;
      s -= src.strides[d] * src.sizes[d] * elem_size;
      t -= dst.strides[d] * src.sizes[d] * elem_size;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
