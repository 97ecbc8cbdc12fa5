/* tune_pipeline_cuda.h - the --tune-hot-paths pipeline for --target=cuda
 * (DESIGN.md section 4, docs/gpu.md): linalg on tensors in, an LLVM-dialect
 * host module out whose kernels are embedded (gpu.binary, PTX or cubin) and
 * launched through libstc_rt's mgpu* functions (include/stc/rt_gpu.h). */
#ifndef STC_TUNE_PIPELINE_CUDA_H
#define STC_TUNE_PIPELINE_CUDA_H

#include "tune_pipeline.h"

#include "stc_passes.h"

#include <mlir-c/IR.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Appends the CUDA pipeline to pm (anchored on builtin.module), reading the
 * gpu_* fields of options (NULL fields: sm_90, PTX, 16x16 block tiles).
 * STC_ERR_INVALID with err set for a bad option or an unparsable step. */
stc_status stc_tune_pipeline_add_cuda(MlirOpPassManager pm,
                                      const stc_tune_pipeline_options *options,
                                      stc_error *err);

/* stc-hot-path-schedule as --tune-hot-paths adds it (tune_pipeline.c):
 * `defaults` (a target's option values, may be NULL), then the profile and
 * the user's --hot-path-options, which override them. */
stc_status stc_tune_pipeline_add_schedule(MlirOpPassManager pm,
                                          const stc_tune_pipeline_options *options,
                                          const stc_pass_option_value *defaults,
                                          size_t num_defaults, stc_error *err);

/* The stc-gpu-map-loops pass (tools/common/gpu_map_loops.c): the mapping
 * of tiled scf.parallel loops to blocks / threads, the last dimension on x
 * (inner_x) or the first (upstream gpu-map-parallel-loops' order). NULL
 * pass when out of memory. */
MlirPass stc_gpu_map_loops_pass_create(bool inner_x);

/* Which host-code buffers must live in device memory
 * (tools/common/gpu_placement.c): alias classes of a module after
 * gpu-kernel-outlining, a class being "device" when it reaches a kernel.
 * create returns NULL when out of memory; symbols is borrowed. on_device is
 * true for values the analysis never saw (the safe answer) and for NULL p;
 * destroy accepts NULL. */
typedef struct stc_gpu_placement stc_gpu_placement;
stc_gpu_placement *stc_gpu_placement_create(MlirOperation module,
                                            MlirSymbolTable symbols);
bool stc_gpu_placement_on_device(stc_gpu_placement *placement, MlirValue value);
void stc_gpu_placement_destroy(stc_gpu_placement *placement);

/* The stc-gpu-host-memory pass (tools/common/gpu_host_memory.c): device
 * allocations and explicit host mirrors; run after gpu-kernel-outlining.
 * The caller owns the pass until it is added to a pass manager. */
MlirPass stc_gpu_host_memory_pass_create(void);

/* --gpu-schedule=BMxBN/TMxTN/kBK[/shared[/splitS]] (tools/common/gpu_schedule.c):
 * block tile BM x BN of C, thread tile (registers) TM x TN, reduction step BK. */
typedef struct stc_gpu_schedule {
  int bm, bn, tm, tn, bk;
  bool shared; /* "/shared": A and B tiles staged in workgroup memory */
  int split;   /* "/splitS" (with /shared): K split over S blocks, C += with
                * atomic adds; 0 or 1: no split */
  bool tf32;   /* "BMxBN/WMxWN/kBK/tf32": the TF32 tensor-core kernel
                * (gpu_mma_kernel.c); tm x tn is then a warp's tile, and
                * shared is set too (same placement rules as /shared) */
} stc_gpu_schedule;

/* false with a reason in why for a malformed or unusable spec (more than
 * 1024 threads per block, or a /shared kernel over 48 KiB of shared
 * memory: --gpu-schedule's kernel has no fallback). */
bool stc_gpu_schedule_parse(const char *text, stc_gpu_schedule *out, char *why,
                            size_t why_size);
/* The same for a --gpu-sites item, whose /shared kernel may take up to
 * STC_GPU_SITE_MAX_SHARED bytes: the device's limit (48 KiB without
 * opt-in; 227 KiB on sm_90, 163 on sm_80, 99 on sm_86/89) is only known
 * where the PTX runs, and a site's variant the device cannot launch is
 * rejected there with the launch failure as its note (the runtime opts in
 * above 48 KiB). */
#define STC_GPU_SITE_MAX_SHARED (1024L * 1024)
bool stc_gpu_schedule_parse_site(const char *text, stc_gpu_schedule *out, char *why,
                                 size_t why_size);
/* The TF32 kernel (tools/common/gpu_mma_kernel.c): whether the tiles of a
 * /tf32 schedule allow one (false with a reason), and its text for an
 * M x N x K matmul (N, K multiples of BN, BK; any M) appended to *text: a
 * module holding func.func private @stc_gpu_mma_kernel(A, B, C) whose body
 * is one gpu.launch. False when the tiles do not allow it or out of memory. */
struct stc_text;
bool stc_gpu_mma_check(const stc_gpu_schedule *schedule, char *why, size_t why_size);
bool stc_gpu_mma_kernel_text(const stc_gpu_schedule *schedule, int64_t m, int64_t n,
                             int64_t k, struct stc_text *text);
/* "gpu_b64x64_t4x4_k8", "gpu_b128x128_w64x32_k16_tf32" */
void stc_gpu_schedule_name(const stc_gpu_schedule *schedule, char *out, size_t size);
/* stc-gpu-schedule (on tensors) and stc-gpu-map-forall (after
 * bufferization); NULL pass when out of memory. */
MlirPass stc_gpu_schedule_pass_create(const stc_gpu_schedule *schedule);
MlirPass stc_gpu_map_forall_pass_create(void);

/* The schedule as a stc-multi-variant script (GPU variant sites): a
 * transform module whose named sequence @<stc_gpu_schedule_name> carries
 * stc.kind (matmul or batch_matmul), stc.dynamic = "static", stc.tier and
 * stc.divides = [BM, BN, BK] (the op's M, N, K must be multiples), tiles
 * the op like stc-gpu-schedule and annotates its function with
 * stc.gpu_tiles for stc-gpu-map-forall. Owned string; NULL when out of
 * memory. */
char *stc_gpu_schedule_site_script(const stc_gpu_schedule *schedule, bool batch,
                                   int tier);

/* Generated GPU kernels for convolutions and row reductions as site
 * variants (tools/common/gpu_conv_schedule.c), --gpu-sites items:
 *   conv:PxF   linalg.conv_2d_nhwc_hwcf (f32): each thread P output pixels
 *              times F output channels in registers (implicit GEMM, no
 *              im2col), 256 threads per block;
 *   red:warp, red:warp/v4, red:block   a linalg.generic reducing its
 *              innermost dimension (f32, add/mul/max/min combiner): one warp
 *              per row (v4: 128-bit loads) or one 256-thread block per row,
 *              shuffle / shared-memory trees. */
typedef struct stc_gpu_kernel {
  enum { STC_GPU_KERNEL_CONV, STC_GPU_KERNEL_ROWS } kind;
  int pixels, channels; /* conv: per thread */
  bool block;           /* rows: a block (256 threads) per row, else a warp */
  int vector;           /* rows: 1 or 4 elements per load */
} stc_gpu_kernel;

/* true when `item` is a conv:/red: item (*is_kernel), false with why when
 * it is one but malformed; *is_kernel false for any other item. */
bool stc_gpu_kernel_parse(const char *item, stc_gpu_kernel *out, bool *is_kernel, char *why,
                          size_t why_size);
/* "gpu_conv_p4_f4", "gpu_red_warp", "gpu_red_warp_v4", "gpu_red_block" */
void stc_gpu_kernel_name(const stc_gpu_kernel *kernel, char *out, size_t size);
/* The site script (stc.kind conv_2d_nhwc_hwcf or reduction, stc.tier): it
 * annotates the variant function with stc.gpu_kernel; owned, NULL when out
 * of memory. */
char *stc_gpu_kernel_site_script(const stc_gpu_kernel *kernel, int tier);
/* stc_site_accepts_fn for these scripts: whether the kernel named
 * `schedule` is correct for op (shape, element type, body), why not. */
bool stc_gpu_kernel_accepts(MlirOperation op, const char *schedule, char *why,
                            size_t why_size);
/* After bufferization (called by stc-gpu-map-forall): replaces the op of a
 * function marked stc.gpu_kernel by the generated gpu.launch. 0: not
 * marked, 1: done, -1: an error was emitted. */
int stc_gpu_kernel_replace(MlirOperation func);

#endif /* STC_TUNE_PIPELINE_CUDA_H */
