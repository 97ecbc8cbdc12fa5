#!/usr/bin/env bash
# Verifies every schedule in this folder: for each <name>.mlir, and for each
# case its attributes promise (stc.kind picks the payload template in tests/,
# stc.dynamic says which shapes it must handle), it instantiates the payload,
# applies @<name> to the op tagged "stc_target", lowers the result to pure LLVM
# with lowering-pipeline.txt, runs it with mlir-runner, and compares the
# output with the untransformed payload run through the reference pipeline
# (test/e2e/compare-outputs.py). Prints one line per case and a summary; exit
# status 1 if any case failed, 2 on bad usage.
#
# usage: check-all.sh [--probe] [--keep DIR] [schedule.mlir ...]
#   --probe      also try the cases a schedule does not promise (reported,
#                never counted as failures): how the stc.dynamic values were found
#   --keep DIR   keep the intermediate files in DIR (default: a temp dir, removed)
#
# stc.dynamic values: "yes" = static divisible, static non-divisible and
# dynamic shapes; "static" = static shapes, divisible or not; "divisible" =
# only static shapes the tile sizes divide. "yes" and "static" schedules also
# get the "small" static sizes (every output dimension smaller than a tile:
# the tile loops fold away, which once broke masked vectorization).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
compare="$here/../../test/e2e/compare-outputs.py"

probe=0
keep=""
files=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --probe) probe=1 ;;
    --keep) keep=${2:?--keep needs a directory}; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "check-all.sh: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1") ;;
  esac
  shift
done
# The one-op convention check runs with the whole library (not when files
# are named).
one_op_check=0
if [[ ${#files[@]} -eq 0 ]]; then
  files=("$here"/*.mlir)
  one_op_check=1
fi

if [[ -n $keep ]]; then
  mkdir -p "$keep"; work=$keep
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/stc-sched.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi

# Expected output of the untransformed payload, once per kind and size set.
reference_for() {
  local kind=$1 sizes=$2 ref="$work/ref.$1.$2.out"
  if [[ ! -s $ref ]]; then
    stc_sched_payload "$kind" "$sizes" static 0 "$work/ref.$kind.$sizes.mlir" &&
      stc_sched_lower "$work/ref.$kind.$sizes.mlir" "$work/ref.$kind.$sizes.ll" "$stc_ref_pipeline" &&
      stc_sched_run "$work/ref.$kind.$sizes.ll" "$ref" || return 1
  fi
  echo "$ref"
}

# check_case FILE KIND SIZES MODE: prints the verdict word, returns 0 on pass.
check_case() {
  local file=$1 kind=$2 sizes=$3 mode=$4 name ref stem
  name=$(basename "$file" .mlir)
  stem="$work/$name.$sizes.$mode"
  ref=$(reference_for "$kind" "$sizes") || { echo "reference-failed"; return 1; }
  stc_sched_payload "$kind" "$sizes" "$mode" 0 "$stem.payload.mlir" || { echo "payload-failed"; return 1; }
  stc_sched_apply "$file" "$stem.payload.mlir" "$stem.applied.mlir" 2> "$stem.apply.err" ||
    { echo "apply-failed: $(head -c 300 "$stem.apply.err" | tr '\n' ' ')"; return 1; }
  stc_sched_lower "$stem.applied.mlir" "$stem.ll" 2> "$stem.lower.err" ||
    { echo "lower-failed: $(head -c 300 "$stem.lower.err" | tr '\n' ' ')"; return 1; }
  stc_sched_run "$stem.ll" "$stem.out" 2> "$stem.run.err" ||
    { echo "run-failed: $(head -c 300 "$stem.run.err" | tr '\n' ' ')"; return 1; }
  python3 "$compare" "$ref" "$stem.out" > "$stem.cmp" 2>&1 ||
    { echo "WRONG-RESULT: $(head -c 300 "$stem.cmp" | tr '\n' ' ')"; return 1; }
  echo "ok"
}

failures=0
passes=0
for file in "${files[@]}"; do
  name=$(basename "$file" .mlir)
  kind=$(stc_sched_field "$file" kind)
  dynamic=$(stc_sched_field "$file" dynamic)
  if [[ -z $kind || -z $dynamic ]]; then
    printf '%-34s %-16s FAIL: no stc.kind / stc.dynamic attribute\n' "$name" "-"
    failures=$((failures + 1)); continue
  fi
  for c in div/static nondiv/static nondiv/dynamic small/static; do
    sizes=${c%/*}; mode=${c#*/}
    promised=1
    case $dynamic/$c in
      yes/*) ;;
      static/nondiv/dynamic) promised=0 ;;
      divisible/nondiv/*|divisible/small/*) promised=0 ;;
      static/*|divisible/*) ;;
      *) printf '%-34s %-16s FAIL: unknown stc.dynamic "%s"\n' "$name" "$c" "$dynamic"
         failures=$((failures + 1)); continue ;;
    esac
    if [[ $promised -eq 0 && $probe -eq 0 ]]; then continue; fi
    set +e
    verdict=$(check_case "$file" "$kind" "$sizes" "$mode")
    status=$?
    set -e
    if [[ $promised -eq 0 ]]; then
      printf '%-34s %-16s (not promised) %s\n' "$name" "$c" "$verdict"
    elif [[ $status -eq 0 ]]; then
      printf '%-34s %-16s ok\n' "$name" "$c"; passes=$((passes + 1))
    else
      printf '%-34s %-16s FAIL %s\n' "$name" "$c" "$verdict"; failures=$((failures + 1))
    fi
  done
done
# The convention itself: a schedule touches only the op it is given, even when
# another op of the same kind shares the function.
one_op() {
  local stem="$work/one_op" left
  stc_sched_lower "$here/tests/one_op.mlir" "$stem.ref.ll" "$stc_ref_pipeline" &&
    stc_sched_run "$stem.ref.ll" "$stem.ref.out" || { echo "reference-failed"; return 1; }
  stc_sched_apply "$here/matmul_tile32_vec.mlir" "$here/tests/one_op.mlir" "$stem.applied.mlir" \
    2> "$stem.err" || { echo "apply-failed"; return 1; }
  left=$(grep -c 'linalg.matmul' "$stem.applied.mlir" || true)
  [[ $left -eq 1 ]] || { echo "expected 1 untouched linalg.matmul, found $left"; return 1; }
  stc_sched_lower "$stem.applied.mlir" "$stem.ll" 2>> "$stem.err" &&
    stc_sched_run "$stem.ll" "$stem.out" 2>> "$stem.err" || { echo "lower/run-failed"; return 1; }
  python3 "$compare" "$stem.ref.out" "$stem.out" > "$stem.cmp" 2>&1 ||
    { echo "WRONG-RESULT: $(head -c 300 "$stem.cmp" | tr '\n' ' ')"; return 1; }
  echo "ok"
}
if [[ $one_op_check -eq 1 ]]; then
  set +e
  verdict=$(one_op)
  status=$?
  set -e
  if [[ $status -eq 0 ]]; then
    printf '%-34s %-16s ok\n' "one-op convention" "tests/one_op"; passes=$((passes + 1))
  else
    printf '%-34s %-16s FAIL %s\n' "one-op convention" "tests/one_op" "$verdict"; failures=$((failures + 1))
  fi
fi

# Self-test: each deliberately broken schedule in tests/bad/ must fail at
# least one of its cases, or this checker cannot tell good from bad.
if [[ $one_op_check -eq 1 ]]; then
  for file in "$here"/tests/bad/*.mlir; do
    name=$(basename "$file" .mlir)
    caught=""
    for c in div/static nondiv/static; do
      verdict=$(check_case "$file" "$(stc_sched_field "$file" kind)" "${c%/*}" "${c#*/}") || {
        caught="$c: ${verdict%%:*}"; break; }
    done
    if [[ -n $caught ]]; then
      printf '%-34s %-16s ok (rejected as expected: %s)\n' "self-test $name" "tests/bad" "$caught"
      passes=$((passes + 1))
    else
      printf '%-34s %-16s FAIL: a broken schedule passed every case\n' "self-test $name" "tests/bad"
      failures=$((failures + 1))
    fi
  done
fi

echo "check-all: $passes passed, $failures failed"
[[ $failures -eq 0 ]]
