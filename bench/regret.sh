#!/usr/bin/env bash
# Regret of first-execution tuning: every variant timed (the oracle) against
# the tuner's cold-cache pick, per workload from real models. See
# bench/regret.py for what it measures; --help for options, --quick for CI.
exec python3 "$(dirname "${BASH_SOURCE[0]}")/regret.py" "$@"
