#!/usr/bin/env bash
# Each example end to end: whole-process and steady-state time with the
# default lowering, tuned (cold and warm cache) and vendor-only. See
# bench/e2e.py for what it measures; --help for options, --quick for CI.
exec python3 "$(dirname "${BASH_SOURCE[0]}")/e2e.py" "$@"
