#!/usr/bin/env bash
# Start-up of a deployed stc-run process: compile time on the first and the
# second start (object cache), and whole-process time with the default
# lowering and tuned (cold, warm, trust-verified tuning cache). See
# bench/startup.py; --help for options, --quick for CI.
exec python3 "$(dirname "${BASH_SOURCE[0]}")/startup.py" "$@"
