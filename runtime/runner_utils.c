/* runner_utils.c - libstc_runner_utils: the printing and timing functions of
 * MLIR's runner utilities (libmlir_c_runner_utils, libmlir_runner_utils),
 * with their C ABI and byte-for-byte their output, for AOT executables.
 *
 * Why here: Debian's libmlir_runner_utils.so and libmlir_c_runner_utils.so
 * depend on libMLIR.so and libLLVM.so (100+ MB, ~47k relocations), so an
 * executable that prints its results with printMemrefF32 spent ~20 ms of a
 * ~30 ms process in the dynamic linker (docs/aot.md, "Start-up cost"). A
 * deployed binary never needs libMLIR or libLLVM (DESIGN.md section 2).
 * Also printF16 and printBF16, which upstream keeps in libmlir_float16_utils.
 * Depends on libc only; memrefCopy lives in libstc_rt (memref_copy.c).
 *
 * In:  what MLIR's lowering passes to these functions - an unranked memref
 *      as (rank, descriptor) for printMemrefX, a pointer to {rank,
 *      descriptor} for _mlir_ciface_printMemrefX, a pointer to a ranked
 *      descriptor for _mlir_ciface_printMemref<N>dX; scalars for the
 *      functions vector.print lowers to. A ranked descriptor is {allocated,
 *      aligned, offset, sizes[rank], strides[rank]}.
 * Out: text on stdout (printFlops: stderr), as upstream MLIR 22 writes it:
 *      elements as C++ iostreams print them (floats like %g, i8 as the raw
 *      byte, index unsigned, complex as "(re,im)"). One deliberate
 *      difference: a dimension of size 0 prints "[]"; upstream reads and
 *      prints the element at the offset, which is outside the memref.
 * Not provided: memrefCopy (libstc_rt), the sparse-tensor, sort, random and
 *      verifyMemRef functions, printMemrefVector4x4xf32. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, gettimeofday under -std=c11 */
#endif
#include <inttypes.h>
#include "stc/runner_utils.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

typedef stc_unranked_memref unranked_memref;

/* How one element type prints: its size and a printer for one element. */
typedef struct element_type {
  int64_t size;
  void (*print)(const void *element);
} element_type;

/* ---- elements ---- */

static void print_i8(const void *e) { putchar(*(const unsigned char *)e); }
static void print_i16(const void *e) { printf("%d", *(const int16_t *)e); }
static void print_i32(const void *e) { printf("%" PRId32, *(const int32_t *)e); }
static void print_i64(const void *e) { printf("%" PRId64, *(const int64_t *)e); }
static void print_index(const void *e) { printf("%" PRIu64, *(const uint64_t *)e); }
static void print_f32(const void *e) { printf("%g", (double)*(const float *)e); }
static void print_f64(const void *e) { printf("%g", *(const double *)e); }
static void print_c32(const void *e) {
  const float *c = e;
  printf("(%g,%g)", (double)c[0], (double)c[1]);
}
static void print_c64(const void *e) {
  const double *c = e;
  printf("(%g,%g)", c[0], c[1]);
}

/* IEEE half (1-5-10) to float, subnormals, infinities and NaNs included. */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { /* subnormal: normalise the mantissa */
    int32_t e = 127 - 15 + 1;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      e--;
    }
    bits = sign | ((uint32_t)e << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* bfloat16 is the upper half of a float. */
static float bfloat_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static void print_f16(const void *e) {
  printf("%g", (double)half_to_float(*(const uint16_t *)e));
}
static void print_bf16(const void *e) {
  printf("%g", (double)bfloat_to_float(*(const uint16_t *)e));
}

/* ---- memrefs ---- */

typedef struct ranked_view {
  const char *aligned;
  int64_t rank, offset;
  const int64_t *sizes, *strides;
} ranked_view;

static ranked_view view_of(int64_t rank, const void *descriptor) {
  char *const *pointers = descriptor;
  const int64_t *words = (const int64_t *)(pointers + 2);
  return (ranked_view){pointers[1], rank, words[0], words + 1, words + 1 + rank};
}

static void print_list(const int64_t *values, int64_t count) {
  for (int64_t i = 0; i < count; i++)
    printf(i ? ", %" PRId64 : "%" PRId64, values[i]);
}

/* "base@ = 0x... rank = R offset = O sizes = [..] strides = [..]": the
 * address as iostream's std::hex with std::showbase writes it (0 as "0",
 * which %# does too). */
static void print_shape(const ranked_view *v) {
  printf("base@ = %#" PRIxPTR " rank = %" PRId64 " offset = %" PRId64 " sizes = [",
         (uintptr_t)v->aligned, v->rank, v->offset);
  print_list(v->sizes, v->rank);
  printf("] strides = [");
  print_list(v->strides, v->rank);
  putchar(']');
}

/* Dimension `level` of the view, starting at element `at`: "[e, e, e]",
 * where between two entries come ", ", a newline if the entries are
 * themselves lists, and level + 1 spaces (upstream's layout: "[1,  2]" for a
 * vector, rows of a matrix under each other, one column in). */
static void print_level(const ranked_view *v, const element_type *type,
                        int64_t level, int64_t at) {
  if (level == v->rank) {
    type->print(v->aligned + at * type->size);
    return;
  }
  putchar('[');
  for (int64_t i = 0; i < v->sizes[level]; i++) {
    if (i > 0) {
      fputs(level + 1 < v->rank ? ", \n" : ", ", stdout);
      for (int64_t s = 0; s <= level; s++)
        putchar(' ');
    }
    print_level(v, type, level + 1, at + i * v->strides[level]);
  }
  putchar(']');
}

/* prefix: "Unranked Memref " or, for the ranked forms, "Memref ". */
static void print_memref(const char *prefix, const ranked_view *v,
                         const element_type *type) {
  fputs(prefix, stdout);
  print_shape(v);
  fputs(" data = \n", stdout);
  if (v->rank == 0)
    putchar('[');
  print_level(v, type, 0, v->offset);
  if (v->rank == 0)
    putchar(']');
  putchar('\n');
  fflush(stdout);
}

static void print_unranked(const unranked_memref *m, const element_type *type) {
  ranked_view v = view_of(m->rank, m->descriptor);
  print_memref("Unranked Memref ", &v, type);
}

static void print_ranked(int64_t rank, const void *descriptor,
                         const element_type *type) {
  ranked_view v = view_of(rank, descriptor);
  print_memref("Memref ", &v, type);
}

static void print_unranked_shape(const unranked_memref *m) {
  ranked_view v = view_of(m->rank, m->descriptor);
  fputs("Unranked Memref ", stdout);
  print_shape(&v);
  putchar('\n');
}

/* The element types of printMemrefX, printMemrefShapeX and
 * printMemref<N>dX, as X-macro lists: X(name, element_type). */
#define STC_MEMREF_TYPES(X)                                                    \
  X(I8, i8) X(I16, i16) X(I32, i32) X(I64, i64) X(Ind, index_type) X(F16, f16) \
  X(BF16, bf16) X(F32, f32) X(F64, f64) X(C32, c32) X(C64, c64)
#define STC_MEMREF_SHAPE_TYPES(X)                                              \
  X(I8) X(I32) X(I64) X(Ind) X(F32) X(F64) X(C32) X(C64)
/* X(rank, name, element_type) */
#define STC_MEMREF_RANKED_TYPES(X)                                             \
  X(0, F32, f32) X(1, F32, f32) X(2, F32, f32) X(3, F32, f32) X(4, F32, f32)  \
  X(1, I8, i8) X(1, I32, i32) X(1, I64, i64) X(1, Ind, index_type)            \
  X(1, F64, f64) X(1, C32, c32) X(1, C64, c64)

/* printMemrefX(rank, descriptor) and _mlir_ciface_printMemrefX(memref) for
 * element type X. */
#define STC_PRINT_MEMREF(X, type)                                              \
  void printMemref##X(int64_t rank, void *descriptor);                         \
  void _mlir_ciface_printMemref##X(unranked_memref *m);                        \
  void printMemref##X(int64_t rank, void *descriptor) {                        \
    unranked_memref m = {rank, descriptor};                                    \
    print_unranked(&m, &type);                                                 \
  }                                                                            \
  void _mlir_ciface_printMemref##X(unranked_memref *m) { print_unranked(m, &type); }

/* _mlir_ciface_printMemrefShapeX(memref): the header line without " data = ". */
#define STC_PRINT_MEMREF_SHAPE(X)                                              \
  void _mlir_ciface_printMemrefShape##X(unranked_memref *m);                   \
  void _mlir_ciface_printMemrefShape##X(unranked_memref *m) { print_unranked_shape(m); }

/* _mlir_ciface_printMemref<N>d<X>(descriptor of rank N). */
#define STC_PRINT_MEMREF_RANKED(N, X, type)                                    \
  void _mlir_ciface_printMemref##N##d##X(void *descriptor);                    \
  void _mlir_ciface_printMemref##N##d##X(void *descriptor) {                   \
    print_ranked(N, descriptor, &type);                                        \
  }

static const element_type i8 = {1, print_i8}, i16 = {2, print_i16},
                          i32 = {4, print_i32}, i64 = {8, print_i64},
                          index_type = {8, print_index}, f16 = {2, print_f16},
                          bf16 = {2, print_bf16}, f32 = {4, print_f32},
                          f64 = {8, print_f64}, c32 = {8, print_c32},
                          c64 = {16, print_c64};

STC_MEMREF_TYPES(STC_PRINT_MEMREF)
STC_MEMREF_SHAPE_TYPES(STC_PRINT_MEMREF_SHAPE)
STC_MEMREF_RANKED_TYPES(STC_PRINT_MEMREF_RANKED)

/* ---- scalars: what vector.print lowers to ---- */

void printI64(int64_t i);
void printU64(uint64_t u);
void printF32(float f);
void printF64(double d);
void printF16(uint16_t bits);
void printBF16(uint16_t bits);
void printString(const char *s);
void printOpen(void);
void printClose(void);
void printComma(void);
void printNewline(void);

void printI64(int64_t i) { printf("%" PRId64, i); }
void printU64(uint64_t u) { printf("%" PRIu64, u); }
/* glibc's %g writes a negative NaN as "-nan", as upstream does on purpose. */
void printF32(float f) { printf("%g", (double)f); }
void printF64(double d) { printf("%g", d); }
/* f16 and bf16 arrive as their bits (upstream: libmlir_float16_utils). */
void printF16(uint16_t bits) { print_f16(&bits); }
void printBF16(uint16_t bits) { print_bf16(&bits); }
void printString(const char *s) { fputs(s, stdout); }
void printOpen(void) { fputs("( ", stdout); }
void printClose(void) { fputs(" )", stdout); }
void printComma(void) { fputs(", ", stdout); }
void printNewline(void) { putchar('\n'); }

/* ---- timing ---- */

void printFlops(double flops);
double rtclock(void);
int64_t _mlir_ciface_nanoTime(void);

void printFlops(double flops) { fprintf(stderr, "%lf GFLOPS\n", flops / 1.0e9); }

/* Wall-clock seconds, microsecond resolution, as upstream (gettimeofday). */
double rtclock(void) {
  struct timeval now;
  if (gettimeofday(&now, NULL) != 0)
    return 0.0;
  return (double)now.tv_sec + (double)now.tv_usec * 1.0e-6;
}

/* Nanoseconds of a monotonic clock (upstream: std::chrono::steady_clock,
 * which is CLOCK_MONOTONIC in libstdc++). */
int64_t _mlir_ciface_nanoTime(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* ---- by name, for a JIT host ---- */

#define STC_SYMBOL(name) {#name, (void *)name},
#define STC_MEMREF_SYMBOLS(X, type)                                            \
  STC_SYMBOL(printMemref##X) STC_SYMBOL(_mlir_ciface_printMemref##X)
#define STC_MEMREF_SHAPE_SYMBOL(X) STC_SYMBOL(_mlir_ciface_printMemrefShape##X)
#define STC_MEMREF_RANKED_SYMBOL(N, X, type)                                   \
  STC_SYMBOL(_mlir_ciface_printMemref##N##d##X)

const stc_rt_symbol *stc_runner_utils_symbols(size_t *count) {
  static const stc_rt_symbol symbols[] = {
      STC_MEMREF_TYPES(STC_MEMREF_SYMBOLS)
      STC_MEMREF_SHAPE_TYPES(STC_MEMREF_SHAPE_SYMBOL)
      STC_MEMREF_RANKED_TYPES(STC_MEMREF_RANKED_SYMBOL)
      STC_SYMBOL(printI64) STC_SYMBOL(printU64) STC_SYMBOL(printF32)
      STC_SYMBOL(printF64) STC_SYMBOL(printF16) STC_SYMBOL(printBF16)
      STC_SYMBOL(printString) STC_SYMBOL(printOpen) STC_SYMBOL(printClose)
      STC_SYMBOL(printComma) STC_SYMBOL(printNewline) STC_SYMBOL(printFlops)
      STC_SYMBOL(rtclock) STC_SYMBOL(_mlir_ciface_nanoTime)};
  *count = sizeof symbols / sizeof *symbols;
  return symbols;
}
