/* kernel_text.h - emission of generated kernels as MLIR text.
 *
 * The GPU kernels stc writes by hand (gpu_schedule.c's /shared kernel,
 * gpu_mma_kernel.c's TF32 kernel, gpu_conv_schedule.c's convolution and
 * reduction kernels) are MLIR text that is parsed afterwards. Their SSA
 * values are named %v<N>, numbered in order of definition; these helpers
 * append one definition per line and return N. */
#ifndef STC_TOOLS_KERNEL_TEXT_H
#define STC_TOOLS_KERNEL_TEXT_H

#include "region_id.h" /* stc_text */

#include <mlir-c/IR.h>

typedef struct stc_kernel_text {
  stc_text *t; /* appended to */
  int next;    /* number of the next value */
} stc_kernel_text;

/* "      %vN = <format>\n"; returns N. */
int stc_kt_def(stc_kernel_text *g, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* arith.constant <value> : index. */
int stc_kt_index(stc_kernel_text *g, long long value);
/* arith.<op> %v<a>, %v<b> : index. */
int stc_kt_bin(stc_kernel_text *g, const char *op, int a, int b);
/* arith.<op> %v<a>, <constant b> : index. */
int stc_kt_bin_const(stc_kernel_text *g, const char *op, int a, long long b);

/* Moves the body of the first function of `kernel` (parsed kernel text:
 * func.func @f(args) { ...; func.return }) before `op`, its arguments
 * replaced by op's first num_args operands, and destroys `kernel`. */
void stc_kt_inline_before(MlirModule kernel, MlirOperation op, intptr_t num_args);

#endif
