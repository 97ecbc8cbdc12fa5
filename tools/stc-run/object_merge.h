/* object_merge.h - a compile's partitions as one relocatable object, and
 * that as a shared library, for the object cache: each object a hit links
 * with ORC costs it ~0.1 ms (graph, allocation, protection), creating the
 * JIT ~0.5 ms more, and dlopen of the library ~0.05 ms. An external ELF
 * linker does both (`ld.lld -r`, then `ld.lld -shared`); with it, a compile
 * may also split the module into more partitions than there are CPUs,
 * which the scheduler balances where instruction counts misjudge what each
 * costs to optimize.
 *
 * The linker: STC_RUN_LINKER (a path; "none" or empty: no merging), else
 * the ld.lld stc was built with (STC_RUN_DEFAULT_LINKER) when it is there,
 * else ld.lld on PATH. It runs without a shell on files of a private
 * temporary folder (TMPDIR, else /tmp), removed afterwards. No LLVM. */
#ifndef STC_RUN_OBJECT_MERGE_H
#define STC_RUN_OBJECT_MERGE_H

#include "stc/status.h"

#include <stdbool.h>

#include <stddef.h>

/* Writes all of data to fd (retrying short writes and EINTR); false with
 * errno set otherwise. */
bool stc_run_write_all(int fd, const char *data, size_t size);

/* The linker's path (static storage), or NULL when there is none or
 * STC_RUN_LINKER turns merging off. */
const char *stc_run_object_linker(void);

/* Links count >= 2 objects into one (*out malloc'd, NUL-appended, 16-byte
 * aligned as malloc aligns). STC_OK, or an error saying what failed (the
 * linker's first lines of output included); nothing is left behind. */
stc_status stc_run_merge_objects(const char *linker, const char *const *data,
                                 const size_t *size, size_t count, char **out,
                                 size_t *out_size, stc_error *err);

/* Links one relocatable object and what it needs of archives[0..
 * num_archives) (static libraries' paths, in order: stc's runner
 * utilities, which then belong to the library, and libgcc's builtins, which
 * a process without libLLVM has not loaded) into a shared library
 * (-shared, -Bsymbolic; each of
 * wrapped[0..num_wrapped) as `--wrap=<name>`, so that the library calls
 * __wrap_<name> instead: stc-run's lazy libomp entry points), which a later
 * start dlopens instead of linking the object with ORC. Same contract as
 * stc_run_merge_objects. */
stc_status stc_run_link_library(const char *linker, const char *object,
                                size_t size, const char *const *archives,
                                size_t num_archives,
                                const char *const *wrapped, size_t num_wrapped,
                                char **out, size_t *out_size, stc_error *err);

#endif /* STC_RUN_OBJECT_MERGE_H */
