#!/usr/bin/env bash
# GFLOP/s per op kind: the default lowering, the scalar-loop oracle, every
# variant, the tuner's pick and OpenBLAS side by side. See bench/defaults.py
# for what it measures; --help for options, --quick for CI.
exec python3 "$(dirname "${BASH_SOURCE[0]}")/defaults.py" "$@"
