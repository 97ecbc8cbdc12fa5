/* A compiler module of another build (test/stc-run/start-without-mlir.test):
 * the table's interface and version are not this stc-run's. */
#include "compiler.h"

const stc_run_compiler *stc_run_compiler_table(void);
const stc_run_compiler *stc_run_compiler_table(void) {
  static const stc_run_compiler table = {
      .header = {.abi = STC_RUN_COMPILER_ABI + 1, .version = "0.0.0-other"}};
  return &table;
}
