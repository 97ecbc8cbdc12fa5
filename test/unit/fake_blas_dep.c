/* fake_blas_dep.c - the dependency of fake_blas.c: removing a copy of it
 * from beside a copy of libstc_fake_blas.so leaves a library that is found
 * (an intact ELF file of unchanged identity) but does not load. */
int stc_fake_blas_dep_calls;

void stc_fake_blas_dep_count(void) { stc_fake_blas_dep_calls++; }
