#!/usr/bin/env bash
# Compile time and code size of profile-guided tuning vs tuning everything
# (DESIGN.md section 8), on one model (default examples/transformer.mlir).
# Rows, all lowered to the LLVM dialect by stc-opt and then compiled the
# same way (mlir-translate, opt -O2, llc -O2 -relocation-model=pic for the
# host CPU) into an object file:
#   default       the tune pipeline without stc-hot-path-schedule /
#                 stc-multi-variant: no sites, no variants (the floor)
#   profile       --tune-hot-paths --hot-path-profile=P, P written by an
#                 instrumented run of the model (stc-instrument -> stc-run)
#   static        --tune-hot-paths without a profile (static cost ranking)
#   all           stc-multi-variant{all=true}: every tunable op a site with
#                 every schedule that applies
# Columns: sites, variants (dispatchable: table entries beyond the
# references), generated (variant functions compiled into the object; more
# than "variants" when stc-lower-dispatch leaves some out of the table:
# a variant whose lowered signature differs from its reference's), seconds
# in stc-opt, seconds in LLVM (translate + opt + llc), total, object .text
# bytes and file bytes, and total time / text relative to "profile".
# The pipeline text below mirrors tools/common/tune_pipeline.c; the script
# checks that it reproduces --tune-hot-paths byte for byte before timing.
# usage: bench/compile_size.sh [model.mlir] [--csv FILE]
# Tools: stc-opt/stc-run on PATH or in STC_BIN (default build/plain/bin),
# LLVM tools in STC_LLVM_BIN (default /usr/lib/llvm-22/bin).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=$root/examples/transformer.mlir csv=''
while [[ $# -gt 0 ]]; do
  case $1 in
    --csv) csv=$2; shift ;;
    -*) echo "usage: $0 [model.mlir] [--csv FILE]" >&2; exit 2 ;;
    *) model=$1 ;;
  esac
  shift
done
bin=${STC_BIN:-$root/build/plain/bin}
llvm=${STC_LLVM_BIN:-/usr/lib/llvm-22/bin}
export PATH=$bin:$llvm:$PATH
work=$(mktemp -d "${TMPDIR:-/tmp}/stc-compile-size.XXXXXX")
trap 'rm -rf "$work"' EXIT

rest='func.func(lower-vector-mask),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,stc-site-results-in-place,drop-equivalent-buffer-results,drop-equivalent-buffer-results,stc-out-params-scope,buffer-results-to-out-params,stc-out-params-scope{restore=true},stc-lower-blas,ownership-based-buffer-deallocation,canonicalize,buffer-deallocation-simplification,bufferization-lower-deallocations,convert-bufferization-to-memref,cse,canonicalize,convert-vector-to-scf{full-unroll=true},convert-linalg-to-loops,scf-forall-to-parallel,convert-scf-to-openmp,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-scf-to-cf,convert-vector-to-llvm,convert-to-llvm,stc-lower-dispatch,reconcile-unrealized-casts'

stc-opt --pass-pipeline="builtin.module(stc-hot-path-schedule,stc-multi-variant,$rest)" "$model" -o "$work/check.a" 2>/dev/null
stc-opt --tune-hot-paths "$model" -o "$work/check.b" 2>/dev/null
cmp -s "$work/check.a" "$work/check.b" ||
  { echo "$0: the pipeline text no longer matches --tune-hot-paths (tools/common/tune_pipeline.c)" >&2; exit 1; }

# The realistic profile: an instrumented run with the default lowering.
stc-opt --stc-instrument "$model" --pass-pipeline="$(cat "$root/test/e2e/reference-pipeline.txt")" -o "$work/instrumented.mlir"
STC_PROFILE_OUT=$work/profile.yaml stc-run "$work/instrumented.mlir" -e main > /dev/null

now() { date +%s.%N; }
declare -A sites variants generated t_opt t_llvm text bytes
row() { # name stc-opt-args...
  local name=$1; shift
  local t0 t1 t2
  t0=$(now)
  stc-opt "$@" "$model" -o "$work/$name.mlir" 2>/dev/null
  t1=$(now)
  mlir-translate --mlir-to-llvmir "$work/$name.mlir" | opt -O2 |
    llc -O2 -relocation-model=pic -mcpu=native -filetype=obj -o "$work/$name.o"
  t2=$(now)
  sites[$name]=$(grep -c '__rt_site() {' "$work/$name.mlir" || true)
  variants[$name]=$({ grep -o '__rt_variants() {[^}]*} : !llvm.array<[0-9]*' "$work/$name.mlir" || true; } |
                    awk -F'<' '{ n += $NF - 1 } END { print n + 0 }')
  generated[$name]=$({ grep -o 'llvm.func @__stc_site_[a-z0-9_]*(' "$work/$name.mlir" || true; } |
                     grep -v '__ref($' | grep -c '[0-9a-f]__[a-z]' || true)
  t_opt[$name]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  t_llvm[$name]=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }')
  text[$name]=$(size -A "$work/$name.o" | awk '$1 ~ /^\.text/ { n += $2 } END { print n + 0 }')
  bytes[$name]=$(stat -c %s "$work/$name.o")
}
row default --pass-pipeline="builtin.module($rest)"
row profile --tune-hot-paths --hot-path-profile="$work/profile.yaml"
row static --tune-hot-paths
row all --pass-pipeline="builtin.module(stc-multi-variant{all=true},$rest)"

echo "model: $model"
echo "profile: instrumented run, $(grep -Ec '^ *- id:' "$work/profile.yaml") regions"
printf '%-8s %5s %8s %9s %9s %9s %8s %10s %10s %8s %8s\n' config sites variants generated stc-opt_s llvm_s total_s text_B file_B time_x text_x
[[ -z $csv ]] || echo "config,sites,variants,generated,stc_opt_s,llvm_s,total_s,text_bytes,file_bytes" > "$csv"
base_t=$(awk -v a="${t_opt[profile]}" -v b="${t_llvm[profile]}" 'BEGIN { print a + b }')
for name in default profile static all; do
  total=$(awk -v a="${t_opt[$name]}" -v b="${t_llvm[$name]}" 'BEGIN { printf "%.2f", a + b }')
  printf '%-8s %5s %8s %9s %9s %9s %8s %10s %10s %8s %8s\n' "$name" "${sites[$name]}" "${variants[$name]}" "${generated[$name]}" \
    "${t_opt[$name]}" "${t_llvm[$name]}" "$total" "${text[$name]}" "${bytes[$name]}" \
    "$(awk -v a="$total" -v b="$base_t" 'BEGIN { printf "%.2f", a / b }')" \
    "$(awk -v a="${text[$name]}" -v b="${text[profile]}" 'BEGIN { printf "%.2f", a / b }')"
  [[ -z $csv ]] || echo "$name,${sites[$name]},${variants[$name]},${generated[$name]},${t_opt[$name]},${t_llvm[$name]},$total,${text[$name]},${bytes[$name]}" >> "$csv"
done
