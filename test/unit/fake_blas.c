/* fake_blas.c - a CBLAS stand-in for the library-lookup tests (test_blas.c,
 * test_dispatch.c): it has the four routines runtime/blas.c resolves, each
 * only counting its calls (the tests' BLAS variants are their own C
 * functions; nothing computes through these), and it needs
 * libstc_fake_blas_dep.so, found beside it ($ORIGIN). */
void stc_fake_blas_dep_count(void);

void cblas_sgemm(void) { stc_fake_blas_dep_count(); }
void cblas_dgemm(void) { stc_fake_blas_dep_count(); }
void cblas_sgemv(void) { stc_fake_blas_dep_count(); }
void cblas_dgemv(void) { stc_fake_blas_dep_count(); }
