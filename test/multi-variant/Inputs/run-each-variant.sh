#!/usr/bin/env bash
# usage: run-each-variant.sh MODULE.mlir EXPECTED.out WORKDIR SRC_ROOT
# For each variant function of MODULE (stc.schedule = "<name>"), makes a copy
# whose dispatch calls @<site>__<name> instead of @<site>__ref, lowers it with
# passes/schedules/lowering-pipeline.txt, runs it with mlir-runner and
# compares the output with EXPECTED. Prints one line per variant; exits 1 on
# the first mismatch or failure.
set -euo pipefail
module=$1 expected=$2 work=$3 src=$4
bin=$(dirname "$(command -v mlir-runner)")
libs="$bin/../lib/libmlir_runner_utils.so,$bin/../lib/libmlir_c_runner_utils.so"
pipeline=$(<"$src/passes/schedules/lowering-pipeline.txt")
mkdir -p "$work"
names=$(grep -o 'stc.schedule = "[a-z0-9_]*"' "$module" | sed 's/.*"\(.*\)"/\1/')
[[ -n $names ]] || { echo "no variants in $module" >&2; exit 1; }
for name in $names; do
  sed -E "s/call @(__stc_site_[A-Za-z0-9_]*)__ref\(/call @\1__$name(/" "$module" > "$work/$name.mlir"
  grep -q "call @__stc_site_[A-Za-z0-9_]*__$name(" "$work/$name.mlir" ||
    { echo "$name: dispatch not redirected" >&2; exit 1; }
  mlir-opt "$work/$name.mlir" --pass-pipeline="$pipeline" -o "$work/$name.ll.mlir"
  mlir-runner "$work/$name.ll.mlir" -e main -entry-point-result=void -shared-libs="$libs" > "$work/$name.out"
  python3 "$src/test/e2e/compare-outputs.py" "$expected" "$work/$name.out" > "$work/$name.cmp" ||
    { echo "$name: WRONG RESULT" >&2; cat "$work/$name.cmp" >&2; exit 1; }
  echo "$name: ok"
done
