#!/usr/bin/env bash
# The main job: install what stc needs, build it, and run the whole
# profile-guided loop on the transformer example (DESIGN.md section 1):
#   instrument -> run -> profile.yaml -> stc-prof show
#   -> stc-opt --tune-hot-paths with the profile -> run (tunes on first
#   execution, report shown) -> run again (decisions come from the cache)
#   -> compare both runs with plain mlir-opt + mlir-runner.
# Everything it writes goes to out/demo/ (and the tuning cache to
# out/demo/cache, so your own ~/.cache/stc is left alone).
#   tools/demo.sh [examples/<model>.mlir]
# Environment: STC_BUILD_DIR (default build/plain), STC_JOBS (ninja -j,
# default: all cores), STC_SKIP_DEPS=1 (do not run tools/install-deps.sh),
# STC_TUNE_* (tuning policy, docs/runtime.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
model=${1:-examples/transformer.mlir}
build=${STC_BUILD_DIR:-build/plain}
[[ -r $model ]] || { echo "demo: cannot read $model" >&2; exit 2; }

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f s", b - a }'; }

step "0. dependencies and build ($build)"
t=$(now)
[[ ${STC_SKIP_DEPS:-0} == 1 ]] || tools/install-deps.sh
cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" -j"${STC_JOBS:-$(nproc)}" stc-opt stc-run stc-prof stc-cache stc_rt >/dev/null
echo "built stc-opt, stc-run, stc-prof, stc-cache, libstc_rt in $(since "$t")"
bin=$build/bin
out=out/demo
rm -rf "$out" && mkdir -p "$out"
export STC_CACHE_DIR=$out/cache
reference_pipeline=$(cat test/e2e/reference-pipeline.txt)

step "1. instrument $model, lower it with the default pipeline, run it: writes $out/profile.yaml"
t=$(now)
$bin/stc-opt --stc-instrument "$model" --pass-pipeline="$reference_pipeline" -o "$out/instrumented.mlir"
STC_PROFILE_OUT=$out/profile.yaml $bin/stc-run "$out/instrumented.mlir" -e main > "$out/instrumented.out"
echo "profiled run: $(grep -Ec '^ *- id:' "$out/profile.yaml") regions recorded in $(since "$t")"

step "2. the profile: where the time goes"
$bin/stc-prof show "$out/profile.yaml"

step "3. compile with the profile: variants for the hot sites only"
t=$(now)
$bin/stc-opt --tune-hot-paths --hot-path-profile="$out/profile.yaml" "$model" \
  -o "$out/tuned.mlir" 2> "$out/tuned.remarks"
echo "stc-opt --tune-hot-paths: $(since "$t") (remarks in $out/tuned.remarks)"
grep -o 'remark: stc-hot-path-schedule: profile .*' "$out/tuned.remarks" | sed 's/^remark: /  /' || true
# A site is one stc_rt_site descriptor (@<site>__rt_site) with its variant
# table (@<site>__rt_variants, reference included); docs/dispatch-abi.md.
sites=$(grep -o '@__stc_site_[A-Za-z0-9_]*__rt_variants() {[^}]*} : !llvm.array<[0-9]* x' "$out/tuned.mlir" |
        sed 's/^@\(.*\)__rt_variants.*array<\([0-9]*\) x$/\1 \2/' || true)
echo "dispatch sites: $(grep -c . <<< "$sites")"
while read -r name n; do
  [[ -n $name ]] && echo "  $name: $((n - 1)) variant(s) + reference"
done <<< "$sites"

step "4. first run: each site tunes on its first execution (STC_TUNE_REPORT=1)"
t=$(now)
STC_TUNE_REPORT=1 $bin/stc-run "$out/tuned.mlir" -e main > "$out/tuned.out" 2> "$out/tune-report.txt"
echo "first run (tuning included): $(since "$t"); full reports in $out/tune-report.txt"
awk '/^  site:/ { site = $2 } /^  winner:/ { print "  " site " -> " $2 } /^  elapsed:/ { print "      tuned in " $2 " " $3 }' \
  "$out/tune-report.txt"

step "5. second run: decisions come from the disk cache, no exploration"
t=$(now)
STC_TUNE_REPORT=1 $bin/stc-run "$out/tuned.mlir" -e main > "$out/cached.out" 2> "$out/cached-report.txt"
echo "second run: $(since "$t"); $(grep -c 'disk-cache' "$out/cached-report.txt" || true) decision(s) from the disk cache, $(grep -c 'tuning report' "$out/cached-report.txt" || true) new tune(s)"
grep '^stc: site' "$out/cached-report.txt" | sed 's/^stc: site /  /' || true
$bin/stc-cache list

step "6. the results agree with plain mlir-opt + mlir-runner"
test/e2e/run-reference.sh "$model" > "$out/reference.out"
python3 test/e2e/compare-outputs.py "$out/reference.out" "$out/instrumented.out"
python3 test/e2e/compare-outputs.py "$out/reference.out" "$out/tuned.out"
python3 test/e2e/compare-outputs.py "$out/reference.out" "$out/cached.out"
echo "instrumented, tuned and cached runs match the reference (test/e2e/compare-outputs.py)"
echo "demo finished: outputs in $out/"
