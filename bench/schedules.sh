#!/usr/bin/env bash
# Benchmarks the transform-dialect schedules of passes/schedules/ side by side
# in one run. In: the schedule files (default: every schedule of the chosen
# kinds). Out: a table on stdout, one row per schedule plus the untransformed
# op lowered with the reference pipeline ("reference"): compile seconds
# (apply + lower), kernel calls timed, ms per call, GFLOP/s, and speedup over
# the reference; optionally the same rows as CSV. Each timed run first checks
# its result against the reference output and marks a mismatch "WRONG".
#
# usage: bench/schedules.sh [--kind KIND]... [--all] [--min-time S] [--csv FILE] [schedule.mlir ...]
#   --kind KIND   matmul (default), batch_matmul, conv_2d_nhwc_hwcf, reduction, matvec,
#                 vecmat, conv_2d_nchw_fchw, depthwise_conv_2d_nhwc_hwc,
#                 pooling_nhwc_max, pooling_nhwc_sum
#   --all         every kind
#   --min-time S  seconds of kernel calls per schedule (default 0.3)
# Sizes: matmul 256x256x256 f32; the other kinds use the "bench" size set of
# passes/schedules/lib.sh. Timing is one JIT run per schedule (mlir-runner,
# host CPU); on a shared machine repeat it before trusting small differences.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sched_dir="$here/../passes/schedules"
# shellcheck source=../passes/schedules/lib.sh
source "$sched_dir/lib.sh"
compare="$here/../test/e2e/compare-outputs.py"

kinds=()
min_time=0.3
csv=""
files=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --kind) kinds+=("${2:?--kind needs a value}"); shift ;;
    --all) kinds=(matmul batch_matmul conv_2d_nhwc_hwcf reduction matvec vecmat conv_2d_nchw_fchw
                  depthwise_conv_2d_nhwc_hwc pooling_nhwc_max pooling_nhwc_sum) ;;
    --min-time) min_time=${2:?--min-time needs a value}; shift ;;
    --csv) csv=${2:?--csv needs a file}; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "schedules.sh: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1") ;;
  esac
  shift
done
if [[ ! $min_time =~ ^[0-9]+(\.[0-9]+)?$ ]] || [[ $min_time == 0 || $min_time =~ ^0\.0*$ ]]; then
  echo "schedules.sh: --min-time wants a positive number of seconds" >&2; exit 2
fi
if [[ ${#kinds[@]} -eq 0 && ${#files[@]} -eq 0 ]]; then kinds=(matmul); fi
if [[ ${#files[@]} -eq 0 ]]; then
  for f in "$sched_dir"/*.mlir; do
    k=$(stc_sched_field "$f" kind)
    for want in "${kinds[@]}"; do [[ $k == "$want" ]] && files+=("$f"); done
  done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/stc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
[[ -n $csv ]] && echo "kind,schedule,compile_s,calls,ms_per_call,gflops,speedup,check" > "$csv"

now() { date +%s.%N; }

# bench_one KIND NAME SCHEDULE|"" -> sets row_* globals; returns 1 on failure.
bench_one() {
  local kind=$1 name=$2 file=$3 stem="$work/$2" t0 t1
  stc_sched_payload "$kind" bench static "$min_time" "$stem.payload.mlir" || return 1
  t0=$(now)
  if [[ -n $file ]]; then
    stc_sched_apply "$file" "$stem.payload.mlir" "$stem.applied.mlir" 2> "$stem.err" || return 1
    stc_sched_lower "$stem.applied.mlir" "$stem.ll" 2>> "$stem.err" || return 1
  else
    stc_sched_lower "$stem.payload.mlir" "$stem.ll" "$stc_ref_pipeline" 2> "$stem.err" || return 1
  fi
  t1=$(now)
  stc_sched_run "$stem.ll" "$stem.out" 2>> "$stem.err" || return 1
  row_compile=$(echo "$t1 - $t0" | bc -l)
  # The last two lines are the call count and the elapsed seconds; the rest
  # is the checked result.
  row_calls=$(tail -n 2 "$stem.out" | head -n 1)
  row_secs=$(tail -n 1 "$stem.out")
  head -n -2 "$stem.out" > "$stem.result"
  return 0
}

status=0
printf '%-34s %9s %7s %10s %9s %8s  %s\n' schedule compile_s calls ms/call GFLOP/s speedup check
for kind in $(for f in "${files[@]}"; do stc_sched_field "$f" kind; done | sort -u); do
  flops=$(stc_sched_flops "$kind" bench)
  echo "== $kind ($(stc_sched_sizes "$kind" bench | tr ' ' '\n' | sort | tr '\n' ' '))"
  ref_ms=""
  for entry in "reference:" $(for f in "${files[@]}"; do
                                 [[ $(stc_sched_field "$f" kind) == "$kind" ]] && echo "$(basename "$f" .mlir):$f"
                               done); do
    name=${entry%%:*}; file=${entry#*:}
    if ! bench_one "$kind" "$name" "$file"; then
      printf '%-34s FAILED: %s\n' "$name" "$(head -c 200 "$work/$name.err" | tr '\n' ' ')"
      status=1; continue
    fi
    ms=$(echo "1000 * $row_secs / $row_calls" | bc -l)
    gflops=$(echo "$flops * $row_calls / $row_secs / 1000000000" | bc -l)
    if [[ -z $file ]]; then
      ref_ms=$ms; check="-"; cp "$work/$name.result" "$work/ref.$kind.result"
    elif python3 "$compare" "$work/ref.$kind.result" "$work/$name.result" > /dev/null 2>&1; then
      check="same"
    else
      check="WRONG"; status=1
    fi
    speedup=$( [[ -n $ref_ms ]] && echo "$ref_ms / $ms" | bc -l || echo 0)
    printf '%-34s %9.2f %7d %10.3f %9.2f %7.1fx  %s\n' "$name" "$row_compile" "$row_calls" "$ms" "$gflops" "$speedup" "$check"
    [[ -n $csv ]] && printf '%s,%s,%.3f,%d,%.4f,%.3f,%.3f,%s\n' "$kind" "$name" "$row_compile" "$row_calls" "$ms" "$gflops" "$speedup" "$check" >> "$csv"
  done
done
exit $status
