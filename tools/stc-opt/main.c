/* stc-opt: mlir-opt's conventions over the MLIR C API, plus stc's passes.
 * argv -> options -> (context, pass manager) -> per input chunk: parse, run,
 * verify or print diagnostics, print IR -> exit code (see --help). */
#include "stc/input_bounds.h"
#include "stc_opt.h"

static int run(void *data) {
  const stc_opt_options *options = data;
  stc_opt_driver driver;
  int exit_code = stc_opt_driver_create(&driver, options);
  if (exit_code == STC_OPT_EXIT_OK)
    exit_code = stc_opt_driver_run(&driver, options);
  stc_opt_driver_destroy(&driver);
  return exit_code;
}

int main(int argc, char **argv) {
  stc_opt_options options;
  int exit_code = stc_opt_options_parse(argc, argv, &options);
  /* MLIR's parser, verifier and printer recurse per nesting level; the
   * driver caps nesting (STC_MAX_NESTING) and runs where that cap fits. */
  if (exit_code == STC_OPT_CONTINUE)
    exit_code = stc_run_on_big_stack(STC_BIG_STACK_BYTES, run, &options);
  stc_opt_options_free(&options);
  return exit_code;
}
