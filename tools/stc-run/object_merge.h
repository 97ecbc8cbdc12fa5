/* object_merge.h - one relocatable object out of a compile's partitions,
 * for the object cache: each object a hit links costs it ~0.1 ms (ORC's
 * graph, allocation and protection per object), and a compile makes up to
 * STC_EMIT_MAX_PARTITIONS of them. An ELF linker merges them (`ld.lld -r`,
 * a relocatable link: nothing is resolved or laid out that the JIT would
 * not); with it, a compile may also split the module into more partitions
 * than there are CPUs, which the scheduler balances where instruction
 * counts misjudge what each costs to optimize.
 *
 * The linker: STC_RUN_LINKER (a path; "none" or empty: no merging), else
 * the ld.lld stc was built with (STC_RUN_DEFAULT_LINKER) when it is there,
 * else ld.lld on PATH. It runs without a shell on files of a private
 * temporary folder (TMPDIR, else /tmp), removed afterwards. No LLVM. */
#ifndef STC_RUN_OBJECT_MERGE_H
#define STC_RUN_OBJECT_MERGE_H

#include "stc/status.h"

#include <stddef.h>

/* The linker's path (static storage), or NULL when there is none or
 * STC_RUN_LINKER turns merging off. */
const char *stc_run_object_linker(void);

/* Links count >= 2 objects into one (*out malloc'd, NUL-appended, 16-byte
 * aligned as malloc aligns). STC_OK, or an error saying what failed (the
 * linker's first lines of output included); nothing is left behind. */
stc_status stc_run_merge_objects(const char *linker, const char *const *data,
                                 const size_t *size, size_t count, char **out,
                                 size_t *out_size, stc_error *err);

#endif /* STC_RUN_OBJECT_MERGE_H */
