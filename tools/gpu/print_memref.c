/* print_memref.c - printMemrefF32 for executables carried to the GPU
 * machine, which has no LLVM: MLIR's libmlir_runner_utils.so needs
 * libLLVM.so (100+ MB). Prints the same header and nested-bracket table as
 * MLIR's (element text as C's %g, 6 significant digits, like iostream's
 * default), which test/e2e/compare-outputs.py compares numerically.
 * In: the unranked descriptor (rank, pointer to the ranked descriptor:
 * allocated, aligned, offset, sizes[rank], strides[rank]). */
#include <stdint.h>
#include <stdio.h>

static void print_level(const float *base, int64_t rank, const int64_t *sizes,
                        const int64_t *strides, int64_t level, int64_t at) {
  if (level == rank) {
    printf("%g", (double)base[at]);
    return;
  }
  putchar('[');
  for (int64_t i = 0; i < sizes[level]; i++) {
    if (i) {
      putchar(',');
      if (level + 1 < rank) {
        putchar('\n');
        for (int64_t s = 0; s <= level; s++)
          putchar(' ');
      } else {
        putchar(' ');
      }
    }
    print_level(base, rank, sizes, strides, level + 1, at + i * strides[level]);
  }
  putchar(']');
}

void printMemrefF32(int64_t rank, void *descriptor) {
  struct {
    float *allocated, *aligned;
    int64_t offset, rest[];
  } *d = descriptor;
  const int64_t *sizes = d->rest, *strides = d->rest + rank;
  printf("Unranked Memref base@ = %p rank = %lld offset = %lld sizes = [",
         (void *)d->aligned, (long long)rank, (long long)d->offset);
  for (int64_t i = 0; i < rank; i++)
    printf("%s%lld", i ? ", " : "", (long long)sizes[i]);
  printf("] strides = [");
  for (int64_t i = 0; i < rank; i++)
    printf("%s%lld", i ? ", " : "", (long long)strides[i]);
  printf("] data = \n");
  print_level(d->aligned, rank, sizes, strides, 0, d->offset);
  printf("\n");
}
