#!/usr/bin/env bash
# Tuned model vs reference lowering (DESIGN.md section 8), per example, side
# by side in one run. For each model, two deployed executables built the
# same way (test/e2e/aot-build.sh: stc-opt --tune-hot-paths --emit=obj,
# linked with libstc_rt):
#   reference  --hot-path-profile=<empty profile>: no region has time, so
#              no site gets variants - every op takes the pipeline's
#              default lowering (same passes, same LLVM codegen)
#   tuned      --hot-path-profile=<profile of an instrumented run>
# The tuned executable runs once to tune (its time is the "tune run"
# column) into a private STC_CACHE_DIR; then both run RUNS times (default 5)
# alternately and the medians of whole-process wall time are compared
# (ratio = reference / tuned; > 1 means the tuned one is faster). Whole
# process: input generation and printing are included in both, so the ratio
# understates the kernels' speedup; and each process validates every disk
# decision once (reference + winner run on scratch state, DESIGN.md section
# 6 step 5), so a model that calls each site once pays more than it saves.
# STC_TUNE_REPORT=1 on the tune run shows the per-kernel ratios. Every run's output is checked against
# test/e2e/run-reference.sh (a mismatch prints WRONG).
# usage: bench/model_speed.sh [--runs N] [--csv FILE] [model.mlir ...]
# Tools: stc-opt/stc-run in STC_BIN (default build/plain/bin); the tuning
# policy from STC_TUNE_* (docs/runtime.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=5 csv='' models=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift ;;
    --csv) csv=$2; shift ;;
    -*) echo "usage: $0 [--runs N] [--csv FILE] [model.mlir ...]" >&2; exit 2 ;;
    *) models+=("$1") ;;
  esac
  shift
done
[[ ${#models[@]} -gt 0 ]] || models=("$root"/examples/{mlp,transformer,convnet,hot_cold}.mlir)
bin=${STC_BIN:-$root/build/plain/bin}
export PATH=$bin:${STC_LLVM_BIN:-/usr/lib/llvm-22/bin}:$PATH
work=$(mktemp -d "${TMPDIR:-/tmp}/stc-model-speed.XXXXXX")
trap 'rm -rf "$work"' EXIT
compare=$root/test/e2e/compare-outputs.py
reference_pipeline=$(cat "$root/test/e2e/reference-pipeline.txt")
printf 'stc-profile: 1\nproducer: "model_speed.sh"\nenvironment: "cpu:bench"\ncreated: "2026-01-01T00:00:00Z"\nregions: []\n' > "$work/empty.yaml"

now() { date +%s.%N; }
timed() { # out-file exe -> seconds on stdout
  local t0; t0=$(now)
  "$2" > "$1" 2>> "$work/stderr.log"
  awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.4f", b - a }'
}
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { printf "%.4f", v[int((NR + 1) / 2)] }'; }
check() { # expected actual -> "" or " WRONG"
  python3 "$compare" "$1" "$2" > /dev/null || printf ' WRONG'
}

printf '%-12s %5s %10s %10s %10s %8s  %s\n' model sites tune_run_s ref_s tuned_s ratio notes
[[ -z $csv ]] || echo "model,sites,tune_run_s,reference_s,tuned_s,ratio" > "$csv"
for model in "${models[@]}"; do
  base=$(basename "$model" .mlir)
  d=$work/$base && mkdir -p "$d"
  "$root/test/e2e/run-reference.sh" "$model" > "$d/expected"
  stc-opt --stc-instrument "$model" --pass-pipeline="$reference_pipeline" -o "$d/instrumented.mlir"
  STC_PROFILE_OUT=$d/profile.yaml stc-run "$d/instrumented.mlir" -e main > /dev/null
  "$root/test/e2e/aot-build.sh" --profile="$work/empty.yaml" "$model" "$d/ref" 2> /dev/null
  "$root/test/e2e/aot-build.sh" --profile="$d/profile.yaml" "$model" "$d/tuned" 2> /dev/null
  sites=$(nm "$d/tuned.o" | grep -c '__rt_site$' || true)
  export STC_CACHE_DIR=$d/cache
  notes=''
  tune_s=$(timed "$d/tuned.first" "$d/tuned")
  notes+=$(check "$d/expected" "$d/tuned.first")
  ref_times='' tuned_times=''
  for ((i = 0; i < runs; i++)); do
    ref_times+=" $(timed "$d/ref.out" "$d/ref")"
    tuned_times+=" $(timed "$d/tuned.out" "$d/tuned")"
  done
  notes+=$(check "$d/expected" "$d/ref.out")$(check "$d/expected" "$d/tuned.out")
  ref_s=$(median <<< "${ref_times# }")
  tuned_s=$(median <<< "${tuned_times# }")
  ratio=$(awk -v a="$ref_s" -v b="$tuned_s" 'BEGIN { printf "%.2f", a / b }')
  printf '%-12s %5s %10s %10s %10s %8s  %s\n' "$base" "$sites" "$tune_s" "$ref_s" "$tuned_s" "${ratio}x" "${notes:-ok}"
  [[ -z $csv ]] || echo "$base,$sites,$tune_s,$ref_s,$tuned_s,$ratio" >> "$csv"
done
echo "(median of $runs whole-process runs each; tuned runs use decisions from the disk cache)"
echo "(a disk decision is used only after its winner validates once in the process - DESIGN.md"
echo " section 6 step 5 - which runs the reference once: a model that calls each site once"
echo " cannot beat the reference in one process; repeated calls, as in hot_cold, can)"
