#!/bin/sh
# Stands in for stc-run's linker (STC_RUN_LINKER; object-merge.test): it
# merges partitions (-r) with the real one ($LD_FOR_TEST) and refuses to
# link a shared library.
case "$1" in -r) exec "$LD_FOR_TEST" "$@" ;; esac
echo "merge-only-linker: refusing $1" >&2
exit 3
