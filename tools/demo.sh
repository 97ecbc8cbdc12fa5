#!/usr/bin/env bash
# The main job: install what stc needs, build it, and run the whole
# profile-guided loop on the transformer example (DESIGN.md section 1):
#   instrument -> run -> profile.yaml -> stc-prof show
#   -> stc-opt --tune-hot-paths with the profile -> run (tunes on first
#   execution, report shown) -> run again (decisions come from the cache).
# Everything it writes goes to out/demo/ (and the tuning cache to
# out/demo/cache, so your own ~/.cache/stc is left alone).
#   tools/demo.sh [examples/<model>.mlir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
model=${1:-examples/transformer.mlir}

tools/install-deps.sh
cmake -G Ninja -S . -B build/plain -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build/plain
bin=build/plain/bin
out=out/demo
rm -rf "$out" && mkdir -p "$out"
export STC_CACHE_DIR=$out/cache
reference_pipeline=$(cat test/e2e/reference-pipeline.txt)
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. instrument $model and run it with the default lowering: writes $out/profile.yaml"
$bin/stc-opt --stc-instrument "$model" --pass-pipeline="$reference_pipeline" -o "$out/instrumented.mlir"
STC_PROFILE_OUT=$out/profile.yaml $bin/stc-run "$out/instrumented.mlir" -e main > "$out/instrumented.out"

step "2. the profile: where the time goes"
$bin/stc-prof show "$out/profile.yaml"

step "3. compile with the profile: variants for the hot sites only"
time $bin/stc-opt --tune-hot-paths --hot-path-profile="$out/profile.yaml" "$model" -o "$out/tuned.mlir"
grep -c 'stc_rt_site_enter' "$out/tuned.mlir" >/dev/null && echo "dispatch sites: $(grep -o '@__stc_site_[A-Za-z0-9_]*__site\b' "$out/tuned.mlir" | sort -u | wc -l)"

step "4. first run: each site tunes on its first execution (STC_TUNE_REPORT=1)"
time STC_TUNE_REPORT=1 $bin/stc-run "$out/tuned.mlir" -e main > "$out/tuned.out"

step "5. second run: decisions come from the disk cache, no exploration"
time STC_TUNE_REPORT=1 $bin/stc-run "$out/tuned.mlir" -e main > "$out/cached.out"
$bin/stc-cache list

step "6. the results agree with plain mlir-opt + mlir-runner"
test/e2e/run-reference.sh "$model" > "$out/reference.out"
python3 test/e2e/compare-outputs.py "$out/reference.out" "$out/tuned.out"
python3 test/e2e/compare-outputs.py "$out/reference.out" "$out/cached.out"
echo "demo finished: outputs in $out/"
