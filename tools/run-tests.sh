#!/usr/bin/env bash
# Builds stc and runs every test: the C unit tests (ctest), the lit +
# FileCheck suites, then the unit tests again under ASan+UBSan, the
# threaded unit tests under TSan, and a short run of each libFuzzer target
# (fuzz/run.sh). This is the command .ci/run calls.
#   tools/run-tests.sh            # everything
#   STC_TEST_QUICK=1 tools/run-tests.sh   # plain build only, no sanitizers
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

tools/install-deps.sh

jobs=$(nproc 2>/dev/null || echo 2)
configure() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -G Ninja -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
}
mkdir -p build

echo "== build (plain)"
configure build/plain
ninja -C build/plain -j"$jobs"

echo "== unit tests (plain)"
(cd build/plain && ctest --output-on-failure -j"$jobs")

echo "== lit tests"
/usr/lib/llvm-22/bin/lit -sv build/plain/test

echo "== benchmarks (quick)"
# Smoke runs of bench/regret.sh, defaults.sh, e2e.sh and startup.sh on small shapes (about
# 1.5 min): they fail on build errors, failed runs and wrong results only,
# never on a timing or a ratio. CSVs go to build/plain/bench-quick/.
mkdir -p build/plain/bench-quick
for bench in regret defaults e2e startup; do
  STC_BIN="$root/build/plain/bin" "bench/$bench.sh" --quick \
    --csv "build/plain/bench-quick/$bench.csv" > "build/plain/bench-quick/$bench.log" 2>&1 ||
    { cat "build/plain/bench-quick/$bench.log"; echo "bench/$bench.sh --quick failed"; exit 1; }
  grep '^RESULT ' "build/plain/bench-quick/$bench.log"
done

if [ -z "${STC_TEST_QUICK:-}" ]; then
  echo "== unit tests (ASan+UBSan)"
  configure build/asan -DSTC_BUILD_COMPILER=OFF '-DSTC_SANITIZE=address;undefined'
  ninja -C build/asan -j"$jobs"
  (cd build/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$jobs" -L unit)

  echo "== threaded unit tests (TSan)"
  configure build/tsan -DSTC_BUILD_COMPILER=OFF -DSTC_SANITIZE=thread
  ninja -C build/tsan -j"$jobs"
  (cd build/tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j"$jobs" -L threaded)

  echo "== fuzz targets (15 s each, ASan+UBSan)"
  # The profile reader, the cache-record reader, the warm-start index, the
  # --verify-diagnostics expectation parser and the --pass-pipeline parser
  # on their seed corpora (fuzz/corpus/); fuzz/run.sh without --seconds is
  # the longer run.
  fuzz/run.sh --seconds=15
fi
echo "== all tests passed"
