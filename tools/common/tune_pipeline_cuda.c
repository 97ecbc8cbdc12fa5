/* tune_pipeline_cuda.c - the --tune-hot-paths pipeline for --target=cuda,
 * in one function, stc_tune_pipeline_add_cuda (called by
 * stc_tune_pipeline_add when options->target is "cuda").
 * In:  a pass manager on builtin.module; the gpu_* options (chip, binary
 *      format, block tile, loop mapping).
 * Out: the passes appended; after a run the module is LLVM dialect plus
 *      gpu.binary (the kernels, PTX or cubin) and gpu.launch_func, which the
 *      LLVM translation turns into mgpuModuleLoad* from a global constructor
 *      and mgpuLaunchKernel calls (libstc_rt, runtime/gpu.c).
 *
 * This is the default lowering (every op on the GPU, one correct kernel
 * each), or for matmul / batch_matmul the one schedule --gpu-schedule names
 * (gpu_schedule.c). Without --gpu-schedule, every static matmul /
 * batch_matmul that a GPU schedule fits becomes a dispatch site
 * (stc-multi-variant with the schedules of gpu_sites, as scripts made by
 * stc_gpu_schedule_site_script, and cuBLAS): its reference is the default
 * kernel, the runtime tunes it on first execution with the GPU trial runner
 * (runtime/trial_gpu.c). */
#include "tune_pipeline_cuda.h"

#include "stc_passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void append_message(MlirStringRef part, void *user) {
  stc_error *err = user;
  size_t used = strlen(err->message);
  size_t room = sizeof err->message - 1 - used;
  size_t n = part.length < room ? part.length : room;
  memcpy(err->message + used, part.data, n);
  err->message[used + n] = 0;
}

static stc_status add_upstream(MlirOpPassManager pm, const char *text, stc_error *err) {
  stc_error_clear(err);
  if (mlirLogicalResultIsSuccess(mlirOpPassManagerAddPipeline(
          pm, mlirStringRefCreateFromCString(text), append_message, err)))
    return STC_OK;
  return STC_ERR_INVALID;
}

/* "sm_90", "sm_90a", "sm_80", ... */
static bool valid_chip(const char *chip) {
  if (strncmp(chip, "sm_", 3) != 0 || !chip[3])
    return false;
  const char *p = chip + 3;
  while (*p >= '0' && *p <= '9')
    p++;
  return p > chip + 3 && (*p == 0 || (p[0] == 'a' && p[1] == 0));
}

/* "16,16" or "8,32" or "256": 1 to 3 positive sizes whose product (threads
 * per block) is at most 1024. Writes the normalized list into out. */
static bool valid_block(const char *text, char *out, size_t size) {
  long product = 1;
  int count = 0;
  const char *p = text;
  out[0] = 0;
  while (*p) {
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p || v <= 0 || v > 1024 || ++count > 3)
      return false;
    product *= v;
    size_t used = strlen(out);
    snprintf(out + used, size - used, "%s%ld", count > 1 ? "," : "", v);
    p = end;
    if (*p == ',')
      p++;
    else if (*p)
      return false;
  }
  return count > 0 && product <= 1024;
}

/* An stc pass by name, with at most one option. */
static stc_status add_stc(MlirOpPassManager pm, const char *name, const char *option,
                          const char *value, stc_error *err) {
  const stc_pass_spec *spec = stc_pass_find(name);
  if (!spec) {
    stc_error_set(err, NULL, 0, 0, "internal error: no stc pass '%s'", name);
    return STC_ERR_INVALID;
  }
  stc_pass_option_value values[1] = {{option, value}};
  MlirPass pass = spec->create(values, option ? 1 : 0, err);
  if (!pass.ptr)
    return STC_ERR_INVALID;
  mlirOpPassManagerAddOwnedPass(pm, pass);
  return STC_OK;
}

/* The variants GPU sites get by default: cuBLAS; the fastest generated
 * kernels of bench/results/gpu-table.csv (H200), the /shared kernels
 * (matmul, f32; any M), split-K for skinny shapes; and two register-tiled
 * schedules (also for batch_matmul, which /shared does not take). Each only
 * where it divides the op. */
#define DEFAULT_SITES                                                         \
  "cublas,128x128/8x8/k8/shared,128x64/8x4/k16/shared,64x64/4x4/k16/shared,"   \
  "64x64/4x4/k16/shared/split4,32x64/2x4/k16/shared/split4,64x64/4x4/k8,"       \
  "32x32/2x2/k8," DEFAULT_CONV_SITES

/* Convolutions and row reductions (gpu_conv_schedule.c): register tiles of
 * pixels x output channels (the three fastest of eight on the H200,
 * bench/results/gpu-conv.csv); a warp or a block per row. */
#define DEFAULT_CONV_SITES "conv:1x4,conv:1x2,conv:2x4,red:warp,red:warp/v4,red:block"

/* With --gpu-tf32=on: the TF32 tensor-core kernels added to the built-in
 * family, the fastest of bench/results/gpu-tf32.csv on the H200: 64x64
 * warp tiles in 128x256 blocks (54 KiB of shared memory) at 2048 and
 * above, in 128x128 blocks on 4096x768x3072, 32x32 in 128x64 blocks at
 * 1024 and on the skinny shapes (docs/gpu.md "TF32 tensor-core variants"). */
#define DEFAULT_TF32_SITES                                                    \
  "128x256/64x64/k16/tf32,128x128/64x64/k16/tf32,128x64/32x32/k16/tf32"

#define CUBLAS_SCRIPT                                                          \
  "module attributes {transform.with_named_sequence} {\n"                     \
  "  transform.named_sequence @gpu_cublas(%%op: !transform.any_op "           \
  "{transform.readonly}) attributes {stc.kind = \"%s\", stc.dynamic = "       \
  "\"yes\", stc.requires = \"cublas\", stc.tier = 0 : i64} {\n"               \
  "    %%p = transform.param.constant \"cublas\" -> !transform.any_param\n"    \
  "    transform.annotate %%op \"stc.blas\" = %%p : !transform.any_op, "        \
  "!transform.any_param\n"                                                    \
  "    transform.yield\n  }\n}\n"

typedef struct site_scripts {
  stc_schedule_text items[64];
  char *owned[64];
  size_t count;
} site_scripts;

static void site_scripts_free(site_scripts *list) {
  for (size_t i = 0; i < list->count; i++)
    free(list->owned[i]);
  list->count = 0;
}

static bool site_scripts_add(site_scripts *list, const char *name, char *script) {
  if (!script || list->count == 64) {
    free(script);
    return false;
  }
  list->owned[list->count] = script;
  list->items[list->count++] = (stc_schedule_text){name, script, NULL};
  return true;
}

/* The scripts of a --gpu-sites list: per schedule one for matmul and (not
 * /shared) one for batch_matmul, per "cublas" one of each. Names point into
 * names[][] (64 bytes each). */
/* How many variants of the list can fit each op kind (the plan's caps). */
typedef struct site_kinds {
  size_t matmul, batch_matmul, conv, rows;
} site_kinds;

static stc_status site_scripts_make(const char *list, bool tf32, site_scripts *out,
                                    char (*names)[64], size_t *num_items,
                                    site_kinds *kinds, stc_error *err) {
  char *copy = strdup(list);
  if (!copy) {
    stc_error_set(err, NULL, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  stc_status status = STC_OK;
  size_t n = 0;
  char *save = NULL;
  for (char *item = strtok_r(copy, ",", &save); item && status == STC_OK;
       item = strtok_r(NULL, ",", &save), n++) {
    char why[200] = "expected off, or schedules BMxBN/TMxTN/kBK[/shared[/splitS]], "
                    "conv:PxF, red:warp[/v4], red:block and cublas, comma-separated",
         text[1024];
    stc_gpu_schedule schedule;
    stc_gpu_kernel kernel;
    bool ok = n < 32, is_kernel = false;
    if (ok && stc_gpu_kernel_parse(item, &kernel, &is_kernel, why, sizeof why)) {
      /* conv:PxF / red:... (gpu_conv_schedule.c): each kernel checks the
       * op itself (accepts), declining with a remark. */
      stc_gpu_kernel_name(&kernel, names[n], 64);
      if (kernel.kind == STC_GPU_KERNEL_CONV)
        kinds->conv++;
      else
        kinds->rows++;
      ok = site_scripts_add(out, names[n], stc_gpu_kernel_site_script(&kernel, 1));
      if (ok)
        out->items[out->count - 1].accepts = stc_gpu_kernel_accepts;
    } else if (ok && is_kernel) {
      stc_error_set(err, NULL, 0, 0, "invalid --gpu-sites item '%s' (%s)", item, why);
      status = STC_ERR_INVALID;
      break;
    } else if (ok && strcmp(item, "cublas") == 0) {
      snprintf(names[n], 64, "gpu_cublas");
      kinds->matmul++;
      kinds->batch_matmul++;
      for (int batch = 0; batch < 2 && ok; batch++) {
        snprintf(text, sizeof text, CUBLAS_SCRIPT, batch ? "batch_matmul" : "matmul");
        ok = site_scripts_add(out, names[n], strdup(text));
      }
    } else if (ok && stc_gpu_schedule_parse_site(item, &schedule, why, sizeof why) &&
               (!schedule.tf32 || tf32 ||
                (snprintf(why, sizeof why, "a TF32 tensor-core variant changes f32 "
                                           "results: it needs --gpu-tf32=on"),
                 false))) {
      stc_gpu_schedule_name(&schedule, names[n], 64);
      kinds->matmul++;
      kinds->batch_matmul += !schedule.shared;
      /* Tiers: the /shared kernels are 2.4-2.7x the register-tiled ones
       * on the H200 (docs/gpu.md), so they are tried first. */
      /* TF32 kernels: tier 0 with cuBLAS (several times the f32 kernels
       * where the policy lets the runtime try them). */
      ok = site_scripts_add(out, names[n],
                            stc_gpu_schedule_site_script(&schedule, false,
                                                         schedule.tf32     ? 0
                                                         : schedule.shared ? 1
                                                                           : 2));
      if (ok && !schedule.shared)
        ok = site_scripts_add(out, names[n],
                              stc_gpu_schedule_site_script(&schedule, true, 2));
    } else {
      stc_error_set(err, NULL, 0, 0,
                    "invalid --gpu-sites item '%s' (%s)", item,
                    n >= 32 ? "at most 32 items" : why);
      status = STC_ERR_INVALID;
      break;
    }
    for (size_t k = 0; ok && k < n; k++)
      if (strcmp(names[k], names[n]) == 0) {
        stc_error_set(err, NULL, 0, 0, "invalid --gpu-sites: '%s' twice", item);
        status = STC_ERR_INVALID;
      }
    if (!ok && status == STC_OK) {
      stc_error_set(err, NULL, 0, 0, "out of memory");
      status = STC_ERR_NOMEM;
    }
  }
  free(copy);
  *num_items = n;
  if (status == STC_OK && out->count == 0) {
    stc_error_set(err, NULL, 0, 0, "invalid --gpu-sites '%s' (no variants)", list);
    status = STC_ERR_INVALID;
  }
  return status;
}

stc_status stc_tune_pipeline_add_cuda(MlirOpPassManager pm,
                                      const stc_tune_pipeline_options *options,
                                      stc_error *err) {
  const char *chip = options->gpu_chip ? options->gpu_chip : "sm_90";
  const char *format = options->gpu_format ? options->gpu_format : "isa";
  const char *block = options->gpu_block ? options->gpu_block : "16,16";
  const char *mapping = options->gpu_mapping ? options->gpu_mapping : "inner-x";
  char tile[64], why[160];
  stc_gpu_schedule schedule;
  if (!valid_chip(chip)) {
    stc_error_set(err, NULL, 0, 0, "invalid --gpu-chip '%s' (expected sm_<N>, e.g. sm_90)",
                  chip);
    return STC_ERR_INVALID;
  }
  if (strcmp(format, "isa") != 0 && strcmp(format, "bin") != 0 &&
      strcmp(format, "fatbin") != 0) {
    stc_error_set(err, NULL, 0, 0,
                  "invalid --gpu-format '%s' (expected isa (PTX, JIT-compiled "
                  "by the driver at load), bin (cubin, by the toolkit's "
                  "ptxas) or fatbin)",
                  format);
    return STC_ERR_INVALID;
  }
  if (!valid_block(block, tile, sizeof tile)) {
    stc_error_set(err, NULL, 0, 0,
                  "invalid --gpu-block '%s' (expected 1 to 3 positive sizes, "
                  "e.g. 16,16, at most 1024 threads in all)",
                  block);
    return STC_ERR_INVALID;
  }
  if (strcmp(mapping, "inner-x") != 0 && strcmp(mapping, "outer-x") != 0) {
    stc_error_set(err, NULL, 0, 0,
                  "invalid --gpu-mapping '%s' (expected inner-x: the last, "
                  "contiguous dimension on threads' x, or outer-x: the first)",
                  mapping);
    return STC_ERR_INVALID;
  }
  if (options->gpu_schedule &&
      !stc_gpu_schedule_parse(options->gpu_schedule, &schedule, why, sizeof why)) {
    stc_error_set(err, NULL, 0, 0, "invalid --gpu-schedule '%s' (%s)",
                  options->gpu_schedule, why);
    return STC_ERR_INVALID;
  }
  /* TF32 mma.sync needs sm_80 or later (LLVM's NVPTX backend aborts on
   * the intrinsic for an older chip). */
  if (options->gpu_tf32 && atoi(chip + 3) < 80) {
    stc_error_set(err, NULL, 0, 0,
                  "--gpu-tf32=on needs --gpu-chip sm_80 or later (TF32 tensor-core "
                  "mma.sync), not %s",
                  chip);
    return STC_ERR_INVALID;
  }
  if (options->gpu_schedule && schedule.tf32 && !options->gpu_tf32) {
    stc_error_set(err, NULL, 0, 0,
                  "invalid --gpu-schedule '%s' (a TF32 tensor-core kernel changes f32 "
                  "results: it needs --gpu-tf32=on)",
                  options->gpu_schedule);
    return STC_ERR_INVALID;
  }
  /* The toolkit (libdevice for math functions, ptxas for bin/fatbin):
   * $STC_CUDA_TOOLKIT, else /usr/local/cuda where it exists, else MLIR's
   * default (a path that does not exist is an error, even for PTX, so a
   * machine without a toolkit must not be given one). */
  const char *toolkit = getenv("STC_CUDA_TOOLKIT");
  struct stat info;
  if ((!toolkit || !*toolkit) && stat("/usr/local/cuda", &info) == 0 &&
      S_ISDIR(info.st_mode))
    toolkit = "/usr/local/cuda";
  char toolkit_option[1100] = "";
  if (toolkit && *toolkit)
    snprintf(toolkit_option, sizeof toolkit_option, " toolkit=%.1000s", toolkit);
  char text[4096];
  stc_status s = STC_OK;
  /* 0. GPU dispatch sites (unless one schedule is forced on the module). */
  const char *sites_list = options->gpu_sites     ? options->gpu_sites
                           : options->gpu_tf32 ? DEFAULT_SITES "," DEFAULT_TF32_SITES
                                               : DEFAULT_SITES;
  bool sites = !options->gpu_schedule && strcmp(sites_list, "off") != 0;
  /* The hot-path plan picks the sites (DESIGN.md section 4, docs/gpu.md
   * "The plan"): stc-hot-path-schedule ranks the regions (profile, else
   * static cost) and gives a hot matmul / batch_matmul the whole list, a
   * warm one the first 2 by tier (cuBLAS, then the best /shared kernel),
   * a cold one no site, within a budget of 4 whole lists. An explicit
   * --gpu-sites list without --hot-path-profile / --hot-path-options forces
   * a site on every op the list fits, with the whole list (all=true). */
  bool planned = sites && (!options->gpu_sites || options->hot_path_profile ||
                           options->schedule_options);
  if (sites) {
    site_scripts scripts = {0};
    char names[32][64];
    size_t items = 0;
    site_kinds kinds = {0};
    s = site_scripts_make(sites_list, options->gpu_tf32, &scripts, names, &items, &kinds,
                          err);
    if (s == STC_OK && planned) {
      /* At most this many variants fit: the matmul items a matmul, cuBLAS
       * and the register-tiled ones a batch_matmul, the conv: items a
       * convolution, the red: items a reduction (a linalg.generic with a
       * reduction loop), cuBLAS alone a dynamic shape; the budget is
       * charged no more. An op kind the list has nothing for is not
       * planned (it keeps the default kernel). */
      char per_hot[32], budget[32], ops[160] = "";
      size_t most = kinds.matmul;
      if (kinds.conv > most)
        most = kinds.conv;
      if (kinds.rows > most)
        most = kinds.rows;
      if (!most)
        most = 1;
      snprintf(per_hot, sizeof per_hot, "%zu", most);
      snprintf(budget, sizeof budget, "%zu", 4 * most);
      const struct {
        const char *op;
        size_t count;
      } caps[] = {{"linalg.matmul", kinds.matmul},
                  {"linalg.batch_matmul", kinds.batch_matmul},
                  {"linalg.conv_2d_nhwc_hwcf", kinds.conv},
                  {"linalg.generic", kinds.rows}};
      for (size_t c = 0; c < sizeof caps / sizeof *caps; c++)
        if (caps[c].count)
          snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s:%zu",
                   ops[0] ? "," : "", caps[c].op, caps[c].count);
      if (!ops[0]) /* cannot happen: the list has at least one variant */
        snprintf(ops, sizeof ops, "linalg.matmul:1");
      const stc_pass_option_value defaults[] = {
          {"variants-per-hot", per_hot},
          {"variants-per-warm", "2"},
          {"budget", budget},
          {"variant-ops", ops},
          {"dynamic-variants", "1"},
      };
      s = stc_tune_pipeline_add_schedule(pm, options, defaults,
                                         sizeof defaults / sizeof *defaults, err);
    }
    if (s == STC_OK) {
      stc_pass_option_value all = {"all", "true"};
      MlirPass pass = stc_multi_variant_pass_create_for_target(
          planned ? NULL : &all, planned ? 0 : 1, "cuda", scripts.items, scripts.count,
          err);
      if (pass.ptr)
        mlirOpPassManagerAddOwnedPass(pm, pass);
      else
        s = STC_ERR_INVALID;
    }
    site_scripts_free(&scripts);
    if (s != STC_OK)
      return s;
  }
  /* 0. --gpu-schedule: matmul / batch_matmul tiled to blocks, threads and
   *    register tiles on tensors (tools/common/gpu_schedule.c). */
  if (options->gpu_schedule) {
    MlirPass pass = stc_gpu_schedule_pass_create(&schedule);
    if (!pass.ptr) {
      stc_error_set(err, NULL, 0, 0, "out of memory");
      return STC_ERR_NOMEM;
    }
    mlirOpPassManagerAddOwnedPass(pm, pass);
  }
  /* 1. Bufferize (function boundaries with identity layouts, so that every
   *    buffer crossing a call is a plain device buffer). */
  if (s == STC_OK)
    s = add_upstream(pm,
                   "one-shot-bufferize{bufferize-function-boundaries "
                   "function-boundary-type-conversion=identity-layout-map},"
                   "canonicalize",
                   err);
  /* 1a. Sites: every function of a site `void f(memrefs...)`, as on the CPU
   *     (tune_pipeline.c step 3-4), and the cuBLAS variants' op a call of
   *     the runtime's cuBLAS entry point (stc-lower-blas). */
  if (s == STC_OK && sites)
    s = add_stc(pm, "stc-site-results-in-place", NULL, NULL, err);
  if (s == STC_OK && sites)
    s = add_upstream(pm, "drop-equivalent-buffer-results,drop-equivalent-buffer-results",
                     err);
  if (s == STC_OK && sites)
    s = add_stc(pm, "stc-out-params-scope", NULL, NULL, err);
  if (s == STC_OK && sites)
    s = add_upstream(pm, "buffer-results-to-out-params", err);
  if (s == STC_OK && sites)
    s = add_stc(pm, "stc-out-params-scope", "restore", "true", err);
  if (s == STC_OK && sites)
    s = add_stc(pm, "stc-lower-blas", NULL, NULL, err);
  /* 1b. Deallocation, as on the CPU: every buffer is freed where its last
   *     owner lets go (device buffers by gpu.dealloc after step 3; the
   *     ownership helper's metadata buffers stay on the host). */
  /*     stc-buffer-deallocation runs upstream's ownership-based
   *     deallocation, or leaves a program that frees memory itself
   *     (memref.dealloc) as it is (upstream refuses those), as on the CPU;
   *     stc-gpu-host-memory then makes a device buffer's dealloc a
   *     gpu.dealloc. */
  if (s == STC_OK)
    s = add_stc(pm, "stc-buffer-deallocation", NULL, NULL, err);
  if (s == STC_OK)
    s = add_upstream(pm, "convert-bufferization-to-memref,cse,canonicalize", err);
  /* 1c. The scheduled ops' foralls become gpu.launch ops. */
  if (s == STC_OK && (options->gpu_schedule || sites)) {
    MlirPass pass = stc_gpu_map_forall_pass_create();
    if (!pass.ptr) {
      stc_error_set(err, NULL, 0, 0, "out of memory");
      return STC_ERR_NOMEM;
    }
    mlirOpPassManagerAddOwnedPass(pm, pass);
    s = add_upstream(pm, "canonicalize,cse,canonicalize", err);
  }
  /* 2. The default GPU lowering of every linalg op: its parallel loops
   *    tiled to blocks of `tile` threads (fixed bounds with an in-bounds
   *    check, so that any shape maps), blocks and threads mapped with the
   *    contiguous dimension on x (coalesced; stc-gpu-map-loops), kernels
   *    formed (reductions stay sequential inside each thread). */
  if (s == STC_OK) {
    snprintf(text, sizeof text,
             "func.func(convert-linalg-to-parallel-loops),"
             "func.func(scf-parallel-loop-tiling{parallel-loop-tile-sizes=%s "
             "no-min-max-bounds=true})",
             tile);
    s = add_upstream(pm, text, err);
  }
  if (s == STC_OK) {
    MlirPass pass = stc_gpu_map_loops_pass_create(strcmp(mapping, "inner-x") == 0);
    if (!pass.ptr) {
      stc_error_set(err, NULL, 0, 0, "out of memory");
      return STC_ERR_NOMEM;
    }
    mlirOpPassManagerAddOwnedPass(pm, pass);
    s = add_upstream(pm, "convert-parallel-loops-to-gpu,canonicalize,gpu-kernel-outlining",
                     err);
  }
  /* 3. Device memory: allocations on the device, explicit host mirrors
   *    where host code touches a buffer (no managed memory); every gpu op
   *    of a function on one stream, with waits where the host needs them. */
  if (s == STC_OK) {
    MlirPass pass = stc_gpu_host_memory_pass_create();
    if (!pass.ptr) {
      stc_error_set(err, NULL, 0, 0, "internal error: no stc-gpu-host-memory pass");
      return STC_ERR_INVALID;
    }
    mlirOpPassManagerAddOwnedPass(pm, pass);
    s = add_upstream(pm, "func.func(gpu-async-region)", err);
  }
  /* 4. Kernels to NVVM and a binary for `chip`; the host to LLVM. */
  if (s == STC_OK) {
    snprintf(text, sizeof text,
             "gpu.module(convert-vector-to-scf{full-unroll=true},"
             "expand-strided-metadata,lower-affine),"
             "func.func(convert-vector-to-scf{full-unroll=true}),"
             "lower-affine,convert-scf-to-cf,"
             "nvvm-attach-target{chip=%s O=3},"
             "gpu.module(convert-gpu-to-nvvm,convert-vector-to-llvm,convert-ub-to-llvm),"
             "convert-nvvm-to-llvm,"
             "reconcile-unrealized-casts,"
             "gpu-module-to-binary{format=%s%s},"
             "expand-strided-metadata,lower-affine,gpu-to-llvm,"
             "finalize-memref-to-llvm,convert-to-llvm,"
             "reconcile-unrealized-casts",
             chip, format, toolkit_option);
    s = add_upstream(pm, text, err);
  }
  /* 5. The sites' runtime dispatch (include/stc/rt_dispatch.h; arguments
   *    marked device memory). */
  if (s == STC_OK && sites)
    s = add_stc(pm, "stc-lower-dispatch", NULL, NULL, err);
  if (s == STC_OK && sites)
    s = add_upstream(pm, "reconcile-unrealized-casts", err);
  return s;
}
