/* stc-opt: mlir-opt's conventions over the MLIR C API, plus stc's passes.
 * argv -> options -> (context, pass manager) -> per input chunk: parse, run,
 * verify or print diagnostics, print IR -> exit code (see --help). */
#include "stc_opt.h"

int main(int argc, char **argv) {
  stc_opt_options options;
  int exit_code = stc_opt_options_parse(argc, argv, &options);
  if (exit_code == STC_OPT_CONTINUE) {
    stc_opt_driver driver;
    exit_code = stc_opt_driver_create(&driver, &options);
    if (exit_code == STC_OPT_EXIT_OK)
      exit_code = stc_opt_driver_run(&driver, &options);
    stc_opt_driver_destroy(&driver);
  }
  stc_opt_options_free(&options);
  return exit_code;
}
