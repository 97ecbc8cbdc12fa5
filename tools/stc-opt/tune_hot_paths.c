/* tune_hot_paths.c - HOOK for the profile-guided pipeline (a later issue).
 * In:  --tune-hot-paths, --hot-path-profile=, --target=, --emit= (already
 *      validated by options.c).
 * Out: today, a "not implemented yet" error that stc-opt turns into exit 2.
 *      The later issue appends schedule -> multi-variant -> bufferize ->
 *      lower -> LLVM to pm here (DESIGN.md section 4), in one visible
 *      function, and produces --emit=llvm|obj. */
#include "stc_opt.h"

#include <string.h>

stc_status stc_opt_tune_hot_paths(MlirOpPassManager pm,
                                  const stc_opt_tune_options *tune,
                                  stc_error *err) {
  (void)pm;
  (void)tune;
  stc_error_set(err, NULL, 0, 0,
                "not implemented yet (the profile-guided pipeline is a later "
                "issue)");
  return STC_ERR_UNAVAILABLE;
}

bool stc_opt_emit_available(const char *kind, stc_error *err) {
  if (strcmp(kind, "mlir") == 0)
    return true;
  stc_error_set(err, NULL, 0, 0, "--emit=%s is not implemented yet", kind);
  return false;
}
