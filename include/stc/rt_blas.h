/* stc/rt_blas.h - the vendor-BLAS entry points of libstc_rt.
 *
 * BLAS variants (schedules with stc.requires = "blas", e.g. matmul_blas) are
 * compiled by stc-lower-blas into a call of one of the functions below, with
 * every operand cast to a fully dynamic strided memref and the MLIR C
 * interface (llvm.emit_c_interface): compiled code calls
 * _mlir_ciface_stc_rt_blas_<op>_<type>(descriptor pointers...).
 *
 * The runtime loads a CBLAS library with dlopen the first time it is asked
 * (stc_rt_blas_available or an entry point): $STC_BLAS_LIBRARY when set
 * (a path or soname; only that one), else libopenblas.so.0, libopenblas.so,
 * libblas.so.3. STC_BLAS=off loads nothing. Nothing is linked at build time:
 * a model built with BLAS variants runs where no BLAS is installed, and its
 * BLAS variants are then ineligible (the tuning report says why).
 *
 * Semantics are exactly the linalg ops' (accumulate into the output):
 *   matmul        C[m][n]    += sum_k A[m][k]    * B[k][n]
 *   batch_matmul  C[b][m][n] += sum_k A[b][m][k] * B[b][k][n]
 *   matvec        y[m]       += sum_n A[m][n]    * x[n]
 *   vecmat        y[n]       += sum_k x[k]       * A[k][n]
 * Any strides are accepted: row- or column-major operands (unit stride on
 * one dimension) go to the library; anything else (zero, negative or two
 * non-unit strides, sizes over INT_MAX) and calls made when no library is
 * loaded take a plain loop, so an entry point is always correct. */
#ifndef STC_RT_BLAS_H
#define STC_RT_BLAS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The MLIR memref descriptors of ranks 1 to 3 (element type erased: the
 * entry point's name says it). */
typedef struct stc_rt_memref1 {
  void *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} stc_rt_memref1;
typedef struct stc_rt_memref2 {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} stc_rt_memref2;
typedef struct stc_rt_memref3 {
  void *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
} stc_rt_memref3;

/* True when a CBLAS library is loaded (loading it on the first call).
 * *library gets its name, *why (when false) the reason none is loaded:
 * "STC_BLAS=off", or every dlopen/dlsym error. Both point to static
 * storage valid for the life of the process; either may be NULL. */
bool stc_rt_blas_available(const char **library, const char **why);

void _mlir_ciface_stc_rt_blas_matmul_f32(stc_rt_memref2 *a, stc_rt_memref2 *b,
                                         stc_rt_memref2 *c);
void _mlir_ciface_stc_rt_blas_matmul_f64(stc_rt_memref2 *a, stc_rt_memref2 *b,
                                         stc_rt_memref2 *c);
void _mlir_ciface_stc_rt_blas_batch_matmul_f32(stc_rt_memref3 *a,
                                               stc_rt_memref3 *b,
                                               stc_rt_memref3 *c);
void _mlir_ciface_stc_rt_blas_batch_matmul_f64(stc_rt_memref3 *a,
                                               stc_rt_memref3 *b,
                                               stc_rt_memref3 *c);
void _mlir_ciface_stc_rt_blas_matvec_f32(stc_rt_memref2 *a, stc_rt_memref1 *x,
                                         stc_rt_memref1 *y);
void _mlir_ciface_stc_rt_blas_matvec_f64(stc_rt_memref2 *a, stc_rt_memref1 *x,
                                         stc_rt_memref1 *y);
void _mlir_ciface_stc_rt_blas_vecmat_f32(stc_rt_memref1 *x, stc_rt_memref2 *a,
                                         stc_rt_memref1 *y);
void _mlir_ciface_stc_rt_blas_vecmat_f64(stc_rt_memref1 *x, stc_rt_memref2 *a,
                                         stc_rt_memref1 *y);

#ifdef __cplusplus
}
#endif

#endif /* STC_RT_BLAS_H */
