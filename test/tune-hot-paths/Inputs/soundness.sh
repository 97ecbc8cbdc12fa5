#!/usr/bin/env bash
# Differential soundness of --tune-hot-paths on one model, under six
# profiles: none, realistic (the static ranking skewed as a run would be),
# empty (regions: []), all-hot, all-cold (no dispatches), all-stale (ids
# that match nothing). Each must lower to pure LLVM; with RUN=1 each must
# also run with stc-run and print what test/e2e/run-reference.sh prints.
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

if [[ ${RUN:-0} == 1 ]]; then
  "$src/test/e2e/run-reference.sh" "$model" > "$work/$base.ref"
fi
for kind in none realistic empty all-hot all-cold all-stale; do
  opt=()
  [[ $kind == none ]] || opt=(--hot-path-profile="$(profile $kind)")
  out=$work/$base.$kind.ll.mlir
  stc-opt --tune-hot-paths "${opt[@]}" "$model" -o "$out" 2> "$work/$base.$kind.err" ||
    { echo "$base/$kind: stc-opt failed" >&2; cat "$work/$base.$kind.err" >&2; exit 1; }
  if grep -Eq '^ *(%[^ ]+ = )?"?(linalg|tensor|memref|vector|scf|arith|func|affine|bufferization|cf|math|ub|index|transform|builtin\.unrealized)' "$out"; then
    echo "$base/$kind: not pure LLVM" >&2; exit 1
  fi
  # STUB=lib.so: run with the test stand-in of stc_rt_site_enter, once on
  # the reference and once on the last variant of every site (published into
  # the slot, so later calls take the fast path).
  if [[ ${RUN:-0} == 1 ]]; then
    picks=(runtime) extra=()
    if [[ -n ${STUB:-} ]]; then picks=(0 -1) extra=(--shared-libs="$STUB"); fi
    for pick in "${picks[@]}"; do
      STC_STUB_VARIANT=$pick STC_STUB_PUBLISH=1 \
        stc-run --tune-hot-paths "${opt[@]}" "${extra[@]}" "$model" > "$work/$base.$kind.out" ||
        { echo "$base/$kind/$pick: stc-run failed" >&2; exit 1; }
      python3 "$src/test/e2e/compare-outputs.py" "$work/$base.ref" "$work/$base.$kind.out" ||
        { echo "$base/$kind/$pick: output differs from the reference" >&2; exit 1; }
    done
  fi
done
