/* stc/rt_dispatch.h - the ABI between compiled sites and libstc_rt's
 * dispatch (docs/dispatch-abi.md). The compiler (passes/lower_dispatch.c)
 * emits, per tunable site S, LLVM globals with exactly these layouts; the
 * runtime (runtime/dispatch.c) reads them. Changing a layout means bumping
 * STC_RT_DISPATCH_ABI_VERSION.
 *
 * Calling convention. After bufferization and buffer-results-to-out-params,
 * the reference and every variant of a site are `void f(memref a0, ...,
 * memref aN-1)` with identical types. Lowered to LLVM, each memref argument
 * is passed "unpacked" as 3 + 2*rank 64-bit words: allocated pointer,
 * aligned pointer, offset, sizes[rank], strides[rank] - the same words, in
 * the same order, as the C-interface descriptor struct
 *   struct { T *allocated; T *aligned; int64_t offset;
 *            int64_t sizes[rank]; int64_t strides[rank]; }
 * Every variant also has a C-interface wrapper `_mlir_ciface_<symbol>`
 * taking one pointer to such a descriptor per argument.
 *
 * The dispatch function @S (generated, unpacked signature):
 *   f = atomic-load-acquire(*slot)          (static-shaped sites only)
 *   if (f) { f(<unpacked args>); return; }   one load + one indirect call
 *   words = stack array of every unpacked arg word, in order
 *   stc_rt_site_enter(&S__site, words, total word count);
 * Dynamic-shaped sites have slot == NULL and always call stc_rt_site_enter,
 * which selects per workload (shapes, strides, element types). */
#ifndef STC_RT_DISPATCH_H
#define STC_RT_DISPATCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STC_RT_DISPATCH_ABI_VERSION 2 /* 2: stc_rt_variant.code_hash */
#define STC_RT_MAX_SITE_ARGS 8 /* sites with more memref args are not tunable */

/* How a variant uses an argument. The runtime gives every non-input
 * argument scratch copies during trials and validates them. */
typedef enum stc_rt_arg_role {
  STC_RT_ARG_INPUT = 0,  /* only read */
  STC_RT_ARG_OUTPUT = 1, /* only written (e.g. a result out-param) */
  STC_RT_ARG_INOUT = 2,  /* read and written (e.g. a DPS init / accumulator) */
} stc_rt_arg_role;

typedef enum stc_rt_element {
  STC_RT_F32 = 0,
  STC_RT_F64 = 1,
  STC_RT_I32 = 2,
  STC_RT_I64 = 3,
  STC_RT_I8 = 4,
  STC_RT_I16 = 5,
  STC_RT_F16 = 6,
  STC_RT_BF16 = 7,
} stc_rt_element;

/* Where an argument's data lives. Host memory is 0, what objects built
 * before GPU sites wrote in this (then reserved) field. */
typedef enum stc_rt_memory {
  STC_RT_MEMORY_HOST = 0,
  STC_RT_MEMORY_DEVICE = 1, /* CUDA device memory (--target=cuda sites):
                               tuned by the GPU trial runner, trial_gpu.c */
} stc_rt_memory;

/* LLVM layout: !llvm.struct<(i32, i32, i32, i32)> */
typedef struct stc_rt_arg {
  uint32_t role;    /* stc_rt_arg_role */
  uint32_t element; /* stc_rt_element */
  uint32_t rank;
  uint32_t memory;  /* stc_rt_memory */
} stc_rt_arg;

/* Run-time eligibility of a variant. */
typedef enum stc_rt_eligibility {
  STC_RT_ELIGIBLE_ALWAYS = 0,
  STC_RT_ELIGIBLE_STATIC_SHAPE = 1, /* only when every dim is as compiled */
  STC_RT_ELIGIBLE_BLAS = 2,         /* only where the vendor BLAS loads */
  STC_RT_ELIGIBLE_CUBLAS = 3,       /* only where cuBLAS loads (rt_gpu.h) */
  STC_RT_ELIGIBLE_TF32 = 4,         /* a TF32 tensor-core variant: only when
                                       the policy allows TF32 (allow_tf32,
                                       STC_TUNE_ALLOW_TF32=1), validated
                                       with the policy's TF32 tolerance */
} stc_rt_eligibility;

/* What a variant does besides computing (stc_rt_variant.flags). */
typedef enum stc_rt_variant_flags {
  /* Its code opens an OpenMP parallel region (a parallel schedule lowered
   * with convert-scf-to-openmp): the process's first such call starts
   * libomp's thread team. The dispatcher's rent-or-buy rule counts that
   * one-time cost (policy start_cost_ns). */
  STC_RT_VARIANT_STARTS_THREADS = 1u << 0,
} stc_rt_variant_flags;

/* LLVM layout: !llvm.struct<(ptr, ptr, ptr, ptr, i64, i32, i32, ptr)> */
typedef struct stc_rt_variant {
  const char *name;     /* schedule name ("reference" for the reference) */
  const char *revision; /* "1" unless the schedule changed */
  void *entry;          /* unpacked entry: what the slot holds */
  void *ciface;         /* _mlir_ciface_ entry: what the runtime calls */
  uint64_t workspace_bytes; /* UINT64_MAX = unknown */
  uint32_t eligibility;     /* stc_rt_eligibility */
  uint32_t flags;           /* stc_rt_variant_flags (formerly `reserved`,
                               0, which objects from before still hold:
                               no flags) */
  /* SHA-256 (64 hex digits) of the variant's lowered code: its function and
   * every function and global of the module it refers to, as printed after
   * its schedule and lowering; the same compile gives the same hash. NULL
   * or "" = unknown. The trust_verified policy keys records by it. */
  const char *code_hash;
} stc_rt_variant;

/* One site. A mutable global (the runtime owns `state`).
 * LLVM layout: !llvm.struct<(i32, i32, ptr, ptr, ptr, i32, i32, ptr, ptr, ptr)> */
typedef struct stc_rt_site {
  uint32_t abi_version;           /* STC_RT_DISPATCH_ABI_VERSION */
  uint32_t num_args;              /* <= STC_RT_MAX_SITE_ARGS */
  const char *site_id;            /* region id, NUL-terminated */
  const char *op_name;            /* e.g. "linalg.matmul" */
  const stc_rt_arg *args;         /* num_args entries */
  uint32_t num_variants;          /* reference included */
  uint32_t reference;             /* index of the reference */
  const stc_rt_variant *variants; /* num_variants entries */
  void **slot;                    /* static sites: published winner entry; else NULL */
  void *state;                    /* runtime-owned, starts NULL; atomic */
} stc_rt_site;

/* Slow path, called by generated code. `words` holds every argument's
 * unpacked words in order (num_words = sum of 3 + 2*rank). Selects (tuning
 * on the first call of a (site, workload) unless a decision is cached),
 * publishes the winner into *slot for static sites, and runs the selected
 * variant on the caller's arguments. Never fails: on any error it runs the
 * reference (and says why once on stderr). Thread-safe. */
void stc_rt_site_enter(stc_rt_site *site, uint64_t *words, uint32_t num_words);

#ifdef __cplusplus
}
#endif

#endif /* STC_RT_DISPATCH_H */
