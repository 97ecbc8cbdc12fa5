#!/bin/sh
# Stands in for stc-run's linker (STC_RUN_LINKER; object-merge.test):
# called as "<linker> -r -o OUT IN...", it writes a program of the system
# (an ELF file, but not a relocatable object) where the merged object goes.
cp /bin/sh "$3"
