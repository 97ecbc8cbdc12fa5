/* kernel_text.c - see kernel_text.h. */
#include "kernel_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int stc_kt_def(stc_kernel_text *g, const char *format, ...) {
  char small[512], *line = small;
  va_list args;
  va_start(args, format);
  int length = vsnprintf(small, sizeof small, format, args);
  va_end(args);
  if (length < 0) {
    g->t->out_of_memory = true;
    length = 0;
    small[0] = '\0';
  } else if ((size_t)length >= sizeof small) {
    line = malloc((size_t)length + 1);
    if (!line) {
      g->t->out_of_memory = true;
      return g->next++;
    }
    va_start(args, format);
    vsnprintf(line, (size_t)length + 1, format, args);
    va_end(args);
  }
  int n = g->next++;
  stc_text_appendf(g->t, "      %%v%d = %s\n", n, line);
  if (line != small)
    free(line);
  return n;
}

int stc_kt_index(stc_kernel_text *g, long long value) {
  return stc_kt_def(g, "arith.constant %lld : index", value);
}

int stc_kt_bin(stc_kernel_text *g, const char *op, int a, int b) {
  return stc_kt_def(g, "arith.%s %%v%d, %%v%d : index", op, a, b);
}

int stc_kt_bin_const(stc_kernel_text *g, const char *op, int a, long long b) {
  return stc_kt_bin(g, op, a, stc_kt_index(g, b));
}

void stc_kt_inline_before(MlirModule kernel, MlirOperation op, intptr_t num_args) {
  MlirOperation callee = mlirBlockGetFirstOperation(mlirModuleGetBody(kernel));
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(callee, 0));
  for (intptr_t a = 0; a < num_args; a++)
    mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(entry, a),
                                  mlirOperationGetOperand(op, a));
  for (MlirOperation o = mlirBlockGetFirstOperation(entry), next; !mlirOperationIsNull(o);
       o = next) {
    next = mlirOperationGetNextInBlock(o);
    if (mlirOperationIsNull(next))
      break; /* func.return */
    mlirOperationMoveBefore(o, op);
  }
  mlirModuleDestroy(kernel);
}
