/* --shared-libs libraries for test/stc-run/lazy-openmp.test and
 * start-without-mlir.test. With -DUSES_UPSTREAM_RUNNER_UTILS it calls a
 * function of upstream's runner utilities without naming their library
 * (no DT_NEEDED), as a library built against them may. */
#ifdef USES_UPSTREAM_RUNNER_UTILS
void *rtsrand(unsigned long long seed);
long long stc_test_user_value(void) { return rtsrand(1) ? 42 : 0; }
#else
long long stc_test_user_value(void) { return 42; }
#endif
