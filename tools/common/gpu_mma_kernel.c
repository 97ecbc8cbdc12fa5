/* gpu_mma_kernel.c - the TF32 tensor-core matmul kernel of
 * --gpu-schedule / --gpu-sites `BMxBN/WMxWN/kBK/tf32` (docs/gpu.md,
 * "TF32 tensor-core variants"), written as MLIR text and parsed by
 * stc-gpu-map-forall (gpu_schedule.c) in place of a linalg.matmul on plain
 * static f32 buffers, like the /shared kernel.
 *
 * C(MxN) += A(MxK) B(KxN), f32 in memory, products on the tensor cores in
 * TF32 (10-bit mantissa), sums in f32:
 *   - one gpu.launch of (N/BN, ceil(M/BM)) blocks of 32 (BM/WM)(BN/WN)
 *     threads: one warp per WM x WN warp tile of the BM x BN block tile,
 *     (WM/16)(WN/8) m16n8k8 tiles per warp, their accumulators loop-carried
 *     f32 values in the PTX ISA's C fragment layout;
 *   - the A (BM x BK, row-major, rows padded by 4 floats) and B (BK x BN,
 *     rows padded by 8) k-tiles double-buffered in dynamic shared memory
 *     (at most 96 KiB: over 48 KiB the runtime's launch opts in),
 *     copied with 128-bit global loads one k step ahead and rounded to TF32
 *     (to nearest, ties away from zero, like cvt.rna.tf32.f32; Inf and NaN
 *     kept) once, when stored to shared memory; the paddings make the
 *     fragment loads bank-conflict free (A: 4 groups of 8 rows at strides
 *     of BK+4 words, B: 4 rows at BN+8 words);
 *   - per k step of 8: each lane loads its A fragments (a0..a3 at rows
 *     g, g+8 and columns t, t+4 of each 16x8 A tile; g = lane/4, t = lane%4)
 *     and B fragments (b0, b1 at rows t, t+4, column g of each 8x8 B tile)
 *     from shared memory and issues nvvm.mma.sync m16n8k8 row.col
 *     f32.tf32.tf32.f32 per tile pair (mma.sync.aligned in the PTX); one
 *     barrier per k step of BK;
 *   - after the k loop C += the accumulators (c0, c1 at row g, columns
 *     2t, 2t+1; c2, c3 at row g+8), 64-bit accesses; rows past M (a partial
 *     last block row) read A's row M-1 and neither read nor write C.
 *
 * The upstream nvgpu.mma.sync would lower to the same nvvm.mma.sync; the
 * kernel uses the NVVM op directly so that its fragments stay scalar (no
 * vector<4x1xf32> / vector<2x2xf32> values through the loop). */
#include "tune_pipeline_cuda.h"

#include "region_id.h"
#include "stc_passes.h"
#include "kernel_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MMA_MAX_COPIES 32
#define MMA_MAX_ACC 128

typedef struct mma_geometry {
  int wx, wy, threads; /* warps along N and M; threads per block */
  int mi, ni;          /* m16 and n8 tiles per warp */
  int sa, sb;          /* padded rows of the A and B tiles, in floats */
  int pa, pb;          /* 4-float copies per thread and k step */
  long b_offset, bytes;
} mma_geometry;

static bool mma_geometry_of(const stc_gpu_schedule *s, mma_geometry *g, char *why,
                            size_t why_size) {
  memset(g, 0, sizeof *g);
  if (s->tm % 16 || s->tn % 8 || s->bk % 8 || s->bm % s->tm || s->bn % s->tn ||
      s->bn % 4) {
    snprintf(why, why_size,
             "/tf32: the warp tile %dx%d must be a multiple of 16x8 dividing the block "
             "tile %dx%d, and k a multiple of 8",
             s->tm, s->tn, s->bm, s->bn);
    return false;
  }
  g->wy = s->bm / s->tm, g->wx = s->bn / s->tn;
  g->threads = 32 * g->wx * g->wy;
  g->mi = s->tm / 16, g->ni = s->tn / 8;
  g->sa = s->bk + 4, g->sb = s->bn + 8;
  if (g->threads > 1024) {
    snprintf(why, why_size, "/tf32: %d threads per block (at most 1024)", g->threads);
    return false;
  }
  if (g->mi * g->ni * 4 > MMA_MAX_ACC) {
    snprintf(why, why_size,
             "/tf32: a %dx%d warp tile needs %d accumulator registers per thread (at "
             "most %d)", s->tm, s->tn, g->mi * g->ni * 4, MMA_MAX_ACC);
    return false;
  }
  int a_pieces = s->bm * s->bk / 4, b_pieces = s->bk * s->bn / 4;
  if (a_pieces % g->threads || b_pieces % g->threads ||
      a_pieces / g->threads > MMA_MAX_COPIES || b_pieces / g->threads > MMA_MAX_COPIES) {
    snprintf(why, why_size,
             "/tf32: the %d threads must share the %dx%d A tile and the %dx%d B tile "
             "evenly in 4-float pieces", g->threads, s->bm, s->bk, s->bk, s->bn);
    return false;
  }
  g->pa = a_pieces / g->threads, g->pb = b_pieces / g->threads;
  g->b_offset = 2L * s->bm * g->sa * 4;
  g->bytes = g->b_offset + 2L * s->bk * g->sb * 4;
  /* Over 48 KiB the launch opts in (mgpuLaunchKernel sets the function's
   * dynamic shared memory limit); every chip with TF32 mma.sync (sm_80 and
   * later) allows at least 99 KB per block. */
  if (g->bytes > 96 * 1024) {
    snprintf(why, why_size, "/tf32: %ld bytes of shared memory (at most 96 KiB)",
             g->bytes);
    return false;
  }
  return true;
}

bool stc_gpu_mma_check(const stc_gpu_schedule *s, char *why, size_t why_size) {
  mma_geometry g;
  return mma_geometry_of(s, &g, why, why_size);
}

/* ---- text emission: values are %v<N>, numbered in order of definition -- */

typedef struct copy_indices {
  int a_row[MMA_MAX_COPIES], a_col[MMA_MAX_COPIES], a_grow[MMA_MAX_COPIES];
  int b_row[MMA_MAX_COPIES], b_col[MMA_MAX_COPIES], b_gcol[MMA_MAX_COPIES];
} copy_indices;

/* Global -> registers: the pieces of the k step starting at %v<k0>. */
static void tile_loads(stc_kernel_text *e, const mma_geometry *g, const copy_indices *x,
                       int64_t m, int64_t n, int64_t k, int k0, int *va, int *vb) {
  for (int p = 0; p < g->pa; p++) {
    int col = stc_kt_bin(e, "addi", k0, x->a_col[p]);
    va[p] = stc_kt_def(e, "vector.load %%A[%%v%d, %%v%d] {alignment = 16} : memref<%lldx%lldxf32>, vector<4xf32>",
                x->a_grow[p], col, (long long)m, (long long)k);
  }
  for (int p = 0; p < g->pb; p++) {
    int row = stc_kt_bin(e, "addi", k0, x->b_row[p]);
    vb[p] = stc_kt_def(e, "vector.load %%B[%%v%d, %%v%d] {alignment = 16} : memref<%lldx%lldxf32>, vector<4xf32>",
                row, x->b_gcol[p], (long long)k, (long long)n);
  }
}

/* %v<v> (vector<4xf32>) rounded to TF32: to nearest, ties away from zero
 * (add half an ulp of the 10-bit mantissa, clear the 13 low bits); Inf and
 * NaN unchanged. */
static int round_tf32(stc_kernel_text *e, int v, const int *c) {
  int bits = stc_kt_def(e, "arith.bitcast %%v%d : vector<4xf32> to vector<4xi32>", v);
  int exponent = stc_kt_def(e, "arith.andi %%v%d, %%v%d : vector<4xi32>", bits, c[0]);
  int special = stc_kt_def(e, "arith.cmpi eq, %%v%d, %%v%d : vector<4xi32>", exponent, c[0]);
  int up = stc_kt_def(e, "arith.addi %%v%d, %%v%d : vector<4xi32>", bits, c[1]);
  int cut = stc_kt_def(e, "arith.andi %%v%d, %%v%d : vector<4xi32>", up, c[2]);
  int kept = stc_kt_def(e, "arith.select %%v%d, %%v%d, %%v%d : vector<4xi1>, vector<4xi32>", special,
                 bits, cut);
  return stc_kt_def(e, "arith.bitcast %%v%d : vector<4xi32> to vector<4xf32>", kept);
}

/* Registers -> shared buffer %v<buf>, rounded to TF32. */
static void tile_stores(stc_kernel_text *e, const stc_gpu_schedule *s, const mma_geometry *g,
                        const copy_indices *x, int buf, const int *va, const int *vb,
                        const int *c) {
  for (int p = 0; p < g->pa; p++) {
    int r = round_tf32(e, va[p], c);
    stc_text_appendf(e->t,
                     "      vector.store %%v%d, %%As[%%v%d, %%v%d, %%v%d] {alignment = 16} : "
                     "memref<2x%dx%dxf32, #gpu.address_space<workgroup>>, vector<4xf32>\n",
                     r, buf, x->a_row[p], x->a_col[p], s->bm, g->sa);
  }
  for (int p = 0; p < g->pb; p++) {
    int r = round_tf32(e, vb[p], c);
    stc_text_appendf(e->t,
                     "      vector.store %%v%d, %%Bs[%%v%d, %%v%d, %%v%d] {alignment = 16} : "
                     "memref<2x%dx%dxf32, #gpu.address_space<workgroup>>, vector<4xf32>\n",
                     r, buf, x->b_row[p], x->b_col[p], s->bk, g->sb);
  }
}

bool stc_gpu_mma_kernel_text(const stc_gpu_schedule *s, int64_t m, int64_t n, int64_t k,
                             stc_text *t) {
  mma_geometry geo, *g = &geo;
  char why[256];
  if (!mma_geometry_of(s, g, why, sizeof why) || n % s->bn || k % s->bk || k < s->bk)
    return false;
  int nacc = g->mi * g->ni * 4;
  bool partial = m % s->bm != 0;
  copy_indices *x = calloc(1, sizeof *x);
  int *acc = malloc(sizeof(int) * (size_t)nacc);
  if (!x || !acc) {
    free(x), free(acc);
    return false;
  }
  stc_kernel_text gen = {t, 0}, *e = &gen;
  char wa[96], wb[96];
  snprintf(wa, sizeof wa, "memref<2x%dx%dxf32, #gpu.address_space<workgroup>>", s->bm, g->sa);
  snprintf(wb, sizeof wb, "memref<2x%dx%dxf32, #gpu.address_space<workgroup>>", s->bk, g->sb);
  stc_text_appendf(
      t,
      "module {\n"
      "  func.func private @stc_gpu_mma_kernel(%%A: memref<%lldx%lldxf32>, "
      "%%B: memref<%lldx%lldxf32>, %%C: memref<%lldx%lldxf32>) {\n"
      "    %%gx = arith.constant %lld : index\n"
      "    %%gy = arith.constant %lld : index\n"
      "    %%one = arith.constant 1 : index\n"
      "    %%nt = arith.constant %d : index\n"
      "    %%smem = arith.constant %ld : i32\n"
      "    gpu.launch blocks(%%bx, %%by, %%bz) in (%%gsx = %%gx, %%gsy = %%gy, %%gsz = %%one) "
      "threads(%%tid, %%tidy, %%tidz) in (%%bsx = %%nt, %%bsy = %%one, %%bsz = %%one) "
      "dynamic_shared_memory_size %%smem {\n",
      (long long)m, (long long)k, (long long)k, (long long)n, (long long)m, (long long)n,
      (long long)(n / s->bn), (long long)((m + s->bm - 1) / s->bm), g->threads, g->bytes);
  int c0 = stc_kt_index(e, 0), c1 = stc_kt_index(e, 1);
  stc_text_appendf(t,
                   "      %%dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>\n"
                   "      %%As = memref.view %%dyn[%%v%d][] : memref<?xi8, #gpu.address_space<workgroup>> to %s\n",
                   c0, wa);
  int boff = stc_kt_index(e, g->b_offset);
  stc_text_appendf(t,
                   "      %%Bs = memref.view %%dyn[%%v%d][] : memref<?xi8, #gpu.address_space<workgroup>> to %s\n",
                   boff, wb);
  /* TF32 rounding constants: exponent mask, half ulp, mantissa cut. */
  int rc[3] = {stc_kt_def(e, "arith.constant dense<2139095040> : vector<4xi32>"),
               stc_kt_def(e, "arith.constant dense<4096> : vector<4xi32>"),
               stc_kt_def(e, "arith.constant dense<-8192> : vector<4xi32>")};
  int tid = stc_kt_def(e, "arith.addi %%tid, %%v%d : index", c0);
  int lane = stc_kt_bin_const(e, "remui", tid, 32), warp = stc_kt_bin_const(e, "divui", tid, 32);
  int grp = stc_kt_bin_const(e, "divui", lane, 4), tig = stc_kt_bin_const(e, "remui", lane, 4);
  int wyi = stc_kt_bin_const(e, "divui", warp, g->wx), wxi = stc_kt_bin_const(e, "remui", warp, g->wx);
  int row0 = stc_kt_def(e, "arith.muli %%by, %%v%d : index", stc_kt_index(e, s->bm));
  int col0 = stc_kt_def(e, "arith.muli %%bx, %%v%d : index", stc_kt_index(e, s->bn));
  int mlast = stc_kt_index(e, (long)(m - 1));
  /* Fragment rows of A (block-local) and columns of B. */
  int arow = stc_kt_bin(e, "addi", stc_kt_bin_const(e, "muli", wyi, s->tm), grp);
  int bcol = stc_kt_bin(e, "addi", stc_kt_bin_const(e, "muli", wxi, s->tn), grp);
  int a_rows[64][2], b_cols[64], k_cols[2];
  for (int i = 0; i < g->mi; i++)
    for (int h = 0; h < 2; h++)
      a_rows[i][h] = stc_kt_bin_const(e, "addi", arow, 16L * i + 8L * h);
  for (int j = 0; j < g->ni; j++)
    b_cols[j] = stc_kt_bin_const(e, "addi", bcol, 8L * j);
  k_cols[0] = tig;
  k_cols[1] = stc_kt_bin_const(e, "addi", tig, 4);
  /* Copy indices. */
  for (int p = 0; p < g->pa; p++) {
    int q = stc_kt_bin_const(e, "addi", tid, (long)p * g->threads);
    x->a_row[p] = stc_kt_bin_const(e, "divui", q, s->bk / 4);
    x->a_col[p] = stc_kt_bin_const(e, "muli", stc_kt_bin_const(e, "remui", q, s->bk / 4), 4);
    int grow = stc_kt_bin(e, "addi", row0, x->a_row[p]);
    x->a_grow[p] = partial ? stc_kt_bin(e, "minui", grow, mlast) : grow;
  }
  for (int p = 0; p < g->pb; p++) {
    int q = stc_kt_bin_const(e, "addi", tid, (long)p * g->threads);
    x->b_row[p] = stc_kt_bin_const(e, "divui", q, s->bn / 4);
    x->b_col[p] = stc_kt_bin_const(e, "muli", stc_kt_bin_const(e, "remui", q, s->bn / 4), 4);
    x->b_gcol[p] = stc_kt_bin(e, "addi", col0, x->b_col[p]);
  }
  int zero = stc_kt_def(e, "arith.constant 0.0 : f32");
  for (int a = 0; a < nacc; a++)
    acc[a] = zero;
  int va[MMA_MAX_COPIES], vb[MMA_MAX_COPIES];
  tile_loads(e, g, x, m, n, k, c0, va, vb);
  tile_stores(e, s, g, x, c0, va, vb, rc);
  stc_text_appendf(t, "      gpu.barrier\n");
  int steps = stc_kt_index(e, (long)(k / s->bk)), last = stc_kt_index(e, (long)(k / s->bk - 1));
  int c2 = stc_kt_index(e, 2), cbk = stc_kt_index(e, s->bk);
  int kc[64];
  for (int kk = 0; kk < s->bk / 8 && kk < 64; kk++)
    kc[kk] = stc_kt_index(e, 8L * kk);
  int result = e->next++, kidx = e->next++;
  stc_text_appendf(t, "      %%v%d:%d = scf.for %%v%d = %%v%d to %%v%d step %%v%d iter_args(",
                   result, nacc, kidx, c0, steps, c1);
  for (int a = 0; a < nacc; a++) {
    int arg = e->next++;
    stc_text_appendf(t, "%s%%v%d = %%v%d", a ? ", " : "", arg, acc[a]);
    acc[a] = arg;
  }
  stc_text_appendf(t, ") -> (");
  for (int a = 0; a < nacc; a++)
    stc_text_appendf(t, "%sf32", a ? ", " : "");
  stc_text_appendf(t, ") {\n");
  int cur = stc_kt_bin(e, "remui", kidx, c2);
  int other = stc_kt_bin(e, "subi", c1, cur);
  /* The next step's pieces (the last step reloads itself into the buffer
   * nobody reads any more: branch-free). */
  int following = stc_kt_bin(e, "minui", stc_kt_bin(e, "addi", kidx, c1), last);
  tile_loads(e, g, x, m, n, k, stc_kt_bin(e, "muli", following, cbk), va, vb);
  for (int kk = 0; kk < s->bk / 8; kk++) {
    int ka[2], a_frag[64][4], b_frag[64][2];
    for (int h = 0; h < 2; h++)
      ka[h] = stc_kt_bin(e, "addi", kc[kk], k_cols[h]);
    for (int i = 0; i < g->mi; i++)
      for (int r = 0; r < 4; r++) {
        /* a0: (g, t), a1: (g+8, t), a2: (g, t+4), a3: (g+8, t+4) */
        int f = stc_kt_def(e, "memref.load %%As[%%v%d, %%v%d, %%v%d] : %s", cur, a_rows[i][r & 1],
                    ka[r >> 1], wa);
        a_frag[i][r] = stc_kt_def(e, "arith.bitcast %%v%d : f32 to i32", f);
      }
    for (int j = 0; j < g->ni; j++)
      for (int r = 0; r < 2; r++) {
        /* b0: (t, g), b1: (t+4, g) */
        int f = stc_kt_def(e, "memref.load %%Bs[%%v%d, %%v%d, %%v%d] : %s", cur, ka[r], b_cols[j], wb);
        b_frag[j][r] = stc_kt_def(e, "arith.bitcast %%v%d : f32 to i32", f);
      }
    for (int i = 0; i < g->mi; i++)
      for (int j = 0; j < g->ni; j++) {
        int *c = &acc[(i * g->ni + j) * 4];
        int d = stc_kt_def(e,
                    "nvvm.mma.sync A[%%v%d, %%v%d, %%v%d, %%v%d] B[%%v%d, %%v%d] "
                    "C[%%v%d, %%v%d, %%v%d, %%v%d] {layoutA = #nvvm.mma_layout<row>, "
                    "layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = "
                    "#nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, "
                    "shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> "
                    "!llvm.struct<(f32, f32, f32, f32)>",
                    a_frag[i][0], a_frag[i][1], a_frag[i][2], a_frag[i][3], b_frag[j][0],
                    b_frag[j][1], c[0], c[1], c[2], c[3]);
        for (int r = 0; r < 4; r++)
          c[r] = stc_kt_def(e, "llvm.extractvalue %%v%d[%d] : !llvm.struct<(f32, f32, f32, f32)>", d, r);
      }
  }
  tile_stores(e, s, g, x, other, va, vb, rc);
  stc_text_appendf(t, "      gpu.barrier\n      scf.yield ");
  for (int a = 0; a < nacc; a++)
    stc_text_appendf(t, "%s%%v%d", a ? ", " : "", acc[a]);
  stc_text_appendf(t, " : ");
  for (int a = 0; a < nacc; a++)
    stc_text_appendf(t, "%sf32", a ? ", " : "");
  stc_text_appendf(t, "\n      }\n");
  /* C += the accumulators: c0, c1 at (g, 2t), (g, 2t+1); c2, c3 at row g+8. */
  int cm = partial ? stc_kt_index(e, (long)m) : -1;
  int wcol = stc_kt_bin(e, "addi", stc_kt_bin(e, "addi", col0, stc_kt_bin_const(e, "muli", wxi, s->tn)),
                 stc_kt_bin_const(e, "muli", tig, 2));
  int ccol[64];
  for (int j = 0; j < g->ni; j++)
    ccol[j] = stc_kt_bin_const(e, "addi", wcol, 8L * j);
  for (int i = 0; i < g->mi; i++)
    for (int h = 0; h < 2; h++) {
      int row = stc_kt_bin(e, "addi", row0, a_rows[i][h]);
      if (partial) {
        int inside = stc_kt_def(e, "arith.cmpi ult, %%v%d, %%v%d : index", row, cm);
        stc_text_appendf(t, "      scf.if %%v%d {\n", inside);
      }
      for (int j = 0; j < g->ni; j++) {
        int a = (i * g->ni + j) * 4 + 2 * h;
        int pair = stc_kt_def(e, "vector.from_elements %%v%d#%d, %%v%d#%d : vector<2xf32>", result, a,
                       result, a + 1);
        int old_c = stc_kt_def(e, "vector.load %%C[%%v%d, %%v%d] {alignment = 8} : memref<%lldx%lldxf32>, vector<2xf32>",
                        row, ccol[j], (long long)m, (long long)n);
        int sum = stc_kt_def(e, "arith.addf %%v%d, %%v%d : vector<2xf32>", old_c, pair);
        stc_text_appendf(t,
                         "      vector.store %%v%d, %%C[%%v%d, %%v%d] {alignment = 8} : "
                         "memref<%lldx%lldxf32>, vector<2xf32>\n",
                         sum, row, ccol[j], (long long)m, (long long)n);
      }
      if (partial)
        stc_text_appendf(t, "      }\n");
    }
  stc_text_appendf(t, "      gpu.terminator\n    }\n    return\n  }\n}\n");
  free(x), free(acc);
  return !t->out_of_memory;
}
