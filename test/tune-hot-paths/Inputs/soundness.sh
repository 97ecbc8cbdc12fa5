#!/usr/bin/env bash
# Differential soundness of --tune-hot-paths on one model, under six
# profiles: none, realistic (the static ranking skewed as a run would be),
# empty (regions: []), all-hot, all-cold (no dispatches), all-stale (ids
# that match nothing). Each must lower to pure LLVM; with RUN=1 each must
# also run with stc-run and the real runtime (libstc_rt, exploring, one
# fresh cache per profile in work-dir/cache.MODEL.PROFILE) and print what
# test/e2e/run-reference.sh prints; with AOT=1 each must also build as a
# deployed executable (test/e2e/aot-build.sh) that prints the same. The
# none and all-hot runs have STC_TUNE_CHECK_ALL=1 (every variant of every
# site validated against its reference; the two plan different sites when
# the variant budget runs out); each run's stderr is kept in
# work-dir/MODEL.PROFILE.run.err (.aot.err) for the caller to check.
# With AOT_REUSE=1, a profile whose lowered module equals an earlier
# profile's reuses that profile's AOT executable (the pipeline is
# deterministic: equal lowered modules give byte-equal objects); it still
# runs under its own settings.
# The caller sets the tuning budget (STC_TUNE_SAMPLES, ...).
# In: model.mlir work-dir src-root. Out: exit 0, or the first failure.
set -euo pipefail
model=$1 work=$2 src=$3
mkdir -p "$work"
base=$(basename "$model" .mlir)

# The region ids, in the schedule's static order (hottest first).
ids=$(stc-opt --stc-hot-path-schedule "$model" -o /dev/null 2>&1 |
      sed -n "s/.*remark: stc-hot-path-schedule: region '\([^']*\)'.*/\1/p")
[[ -n $ids ]] || { echo "no region ids in $model" >&2; exit 1; }

header='stc-profile: 1
producer: "stc-test"
environment: "cpu:test"
created: "2026-12-02T00:00:00Z"'
profile() { # kind -> file
  local kind=$1 f=$work/$base.$1.yaml i=0
  { echo "$header"
    if [[ $kind == empty ]]; then echo "regions: []"; else echo "regions:"; fi
    [[ $kind == empty ]] || for id in $ids; do
      i=$((i + 1))
      case $kind in
        realistic) n=$((64 * (i < 4 ? 4 - i : 1))); ns=$((n * 100000 / i)) ;;
        all-hot) n=100; ns=100000000 ;;
        all-cold) n=0; ns=0 ;;
        all-stale) n=100; ns=100000000; id="stale/linalg.matmul#0000000$i" ;;
      esac
      printf '  - id: "%s"\n    count: %d\n    total-ns: %d\n    max-ns: %d\n    bytes: 0\n' \
        "$id" "$n" "$ns" "$((n ? ns / n : 0))"
    done; } > "$f"
  echo "$f"
}

if [[ ${RUN:-0} == 1 || ${AOT:-0} == 1 ]]; then
  "$src/test/e2e/run-reference.sh" "$model" > "$work/$base.ref"
fi
declare -A aot_of=()
for kind in none realistic empty all-hot all-cold all-stale; do
  opt=()
  [[ $kind == none ]] || opt=(--hot-path-profile="$(profile $kind)")
  out=$work/$base.$kind.ll.mlir
  stc-opt --tune-hot-paths "${opt[@]}" "$model" -o "$out" 2> "$work/$base.$kind.err" ||
    { echo "$base/$kind: stc-opt failed" >&2; cat "$work/$base.$kind.err" >&2; exit 1; }
  if grep -Eq '^ *(%[^ ]+ = )?"?(linalg|tensor|memref|vector|scf|arith|func|affine|bufferization|cf|math|ub|index|transform|builtin\.unrealized)' "$out"; then
    echo "$base/$kind: not pure LLVM" >&2; exit 1
  fi
  check_all=0
  [[ $kind != none && $kind != all-hot ]] || check_all=1
  if [[ ${RUN:-0} == 1 ]]; then
    rm -rf "$work/cache.$base.$kind"
    STC_CACHE_DIR=$work/cache.$base.$kind STC_TUNE_CHECK_ALL=$check_all \
      stc-run "$out" -e main > "$work/$base.$kind.out" 2> "$work/$base.$kind.run.err" ||
      { echo "$base/$kind: stc-run failed" >&2; cat "$work/$base.$kind.run.err" >&2; exit 1; }
    python3 "$src/test/e2e/compare-outputs.py" "$work/$base.ref" "$work/$base.$kind.out" ||
      { echo "$base/$kind: output differs from the reference" >&2; exit 1; }
  fi
  if [[ ${AOT:-0} == 1 ]]; then
    aot_opt=()
    [[ $kind == none ]] || aot_opt=(--profile="$work/$base.$kind.yaml")
    sum=$(md5sum < "$out") sum=${sum%% *}
    if [[ ${AOT_REUSE:-0} == 1 && -n ${aot_of[$sum]:-} ]]; then
      cp "${aot_of[$sum]}" "$work/$base.$kind.aot"
    else
      "$src/test/e2e/aot-build.sh" "${aot_opt[@]}" "$model" "$work/$base.$kind.aot" \
        2> "$work/$base.$kind.aot-build.err" ||
        { echo "$base/$kind: AOT build failed" >&2; tail -5 "$work/$base.$kind.aot-build.err" >&2; exit 1; }
      aot_of[$sum]=$work/$base.$kind.aot
    fi
    rm -rf "$work/cache.$base.$kind.aot"
    STC_CACHE_DIR=$work/cache.$base.$kind.aot STC_TUNE_CHECK_ALL=$check_all \
      "$work/$base.$kind.aot" > "$work/$base.$kind.aot.out" 2> "$work/$base.$kind.aot.err" ||
      { echo "$base/$kind: the AOT executable failed" >&2; cat "$work/$base.$kind.aot.err" >&2; exit 1; }
    python3 "$src/test/e2e/compare-outputs.py" "$work/$base.ref" "$work/$base.$kind.aot.out" ||
      { echo "$base/$kind: AOT output differs from the reference" >&2; exit 1; }
  fi
  echo "$base/$kind: ok"
done
