# Shared helpers for check-all.sh and bench/schedules.sh (sourced, not run).
# In: a schedule file (passes/schedules/<name>.mlir), a payload template from
# tests/, a size set. Out: instantiated payloads, transformed and lowered IR,
# and program output, all under the caller's work directory.

stc_sched_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stc_llvm_bin=${STC_LLVM_BIN:-/usr/lib/llvm-22/bin}
stc_llvm_lib=${STC_LLVM_LIB:-/usr/lib/llvm-22/lib}
stc_ref_pipeline=$(<"$stc_sched_dir/../../test/e2e/reference-pipeline.txt")
stc_lower_pipeline=$(<"$stc_sched_dir/lowering-pipeline.txt")
# libomp is needed only by the parallel schedules (OpenMP runtime calls).
stc_omp_lib=${STC_OMP_LIB:-}
if [[ -z $stc_omp_lib ]]; then
  for candidate in "$stc_llvm_lib/libomp.so" /usr/lib/x86_64-linux-gnu/libomp.so.5 \
                   /usr/lib/x86_64-linux-gnu/libomp.so; do
    if [[ -e $candidate ]]; then stc_omp_lib=$candidate; break; fi
  done
fi

# stc_sched_field FILE KEY: the string value of attribute `stc.KEY = "..."` in FILE.
stc_sched_field() {
  sed -n "s/.*stc\.$2 = \"\([^\"]*\)\".*/\1/p" "$1" | head -n 1
}

# stc_sched_sizes KIND SIZES: the size set as "NAME=VALUE ..." (template
# placeholders without the @), derived sizes included.
#   KIND  matmul | batch_matmul | conv_2d_nhwc_hwcf | reduction | matvec | vecmat
#         | conv_2d_nchw_fchw | depthwise_conv_2d_nhwc_hwc | pooling_nhwc_max
#         | pooling_nhwc_sum
#   SIZES div (tile sizes divide the shape) | nondiv (they do not) | small
#         (every output dimension smaller than any tile, so the output tile
#         loops run once: the case that broke masked vectorization) | bench
stc_sched_sizes() {
  local subst kv
  case $1/$2 in
    matmul/div|matmul/bench) subst="M=256 N=256 K=256" ;;
    matmul/nondiv)           subst="M=100 N=70 K=50" ;;
    matmul/small)            subst="M=6 N=5 K=20" ;;
    batch_matmul/div|batch_matmul/bench) subst="B=2 M=128 N=128 K=64" ;;
    batch_matmul/nondiv)     subst="B=3 M=100 N=70 K=50" ;;
    batch_matmul/small)      subst="B=2 M=6 N=5 K=20" ;;
    conv_2d_nhwc_hwcf/div|conv_2d_nhwc_hwcf/bench|conv_2d_nchw_fchw/div|conv_2d_nchw_fchw/bench)
                             subst="H=34 W=34 C=16 KH=3 KW=3 F=32" ;;
    conv_2d_nhwc_hwcf/nondiv|conv_2d_nchw_fchw/nondiv) subst="H=25 W=27 C=10 KH=3 KW=3 F=14" ;;
    conv_2d_nhwc_hwcf/small|conv_2d_nchw_fchw/small)   subst="H=4 W=6 C=3 KH=3 KW=3 F=5" ;;
    depthwise_conv_2d_nhwc_hwc/div|depthwise_conv_2d_nhwc_hwc/bench) subst="H=66 W=66 C=64 KH=3 KW=3" ;;
    depthwise_conv_2d_nhwc_hwc/nondiv) subst="H=25 W=27 C=10 KH=3 KW=3" ;;
    depthwise_conv_2d_nhwc_hwc/small)  subst="H=4 W=6 C=3 KH=3 KW=3" ;;
    pooling_nhwc_max/div|pooling_nhwc_max/bench|pooling_nhwc_sum/div|pooling_nhwc_sum/bench)
                             subst="H=64 W=64 C=64 KH=2 KW=2" ;;
    pooling_nhwc_max/nondiv|pooling_nhwc_sum/nondiv) subst="H=25 W=27 C=10 KH=3 KW=3" ;;
    pooling_nhwc_max/small|pooling_nhwc_sum/small)   subst="H=4 W=6 C=3 KH=2 KW=2" ;;
    reduction/div|reduction/bench) subst="M=256 N=512" ;;
    reduction/nondiv)        subst="M=100 N=70" ;;
    reduction/small)         subst="M=5 N=7" ;;
    matvec/div|matvec/bench|vecmat/div|vecmat/bench) subst="M=512 N=512" ;;
    matvec/nondiv|vecmat/nondiv) subst="M=100 N=70" ;;
    matvec/small|vecmat/small)   subst="M=5 N=7" ;;
    *) echo "stc_sched_sizes: unknown kind/sizes $1/$2" >&2; return 2 ;;
  esac
  local -A v=()
  for kv in $subst; do v[${kv%%=*}]=${kv#*=}; done
  case $1 in
    batch_matmul)
      v[BM]=$((v[B] * v[M])); v[BK]=$((v[B] * v[K])) ;;
    conv_2d_nhwc_hwcf)
      v[OH]=$((v[H] - v[KH] + 1)); v[OW]=$((v[W] - v[KW] + 1))
      v[HW]=$((v[H] * v[W])); v[KHKWC]=$((v[KH] * v[KW] * v[C])); v[OHOW]=$((v[OH] * v[OW])) ;;
    conv_2d_nchw_fchw)
      v[OH]=$((v[H] - v[KH] + 1)); v[OW]=$((v[W] - v[KW] + 1))
      v[CH]=$((v[C] * v[H])); v[FCKH]=$((v[F] * v[C] * v[KH])); v[FOH]=$((v[F] * v[OH])) ;;
    depthwise_conv_2d_nhwc_hwc)
      v[OH]=$((v[H] - v[KH] + 1)); v[OW]=$((v[W] - v[KW] + 1))
      v[HW]=$((v[H] * v[W])); v[KHKW]=$((v[KH] * v[KW])); v[OHOW]=$((v[OH] * v[OW])) ;;
    pooling_nhwc_max|pooling_nhwc_sum) # stride 2
      v[OH]=$(((v[H] - v[KH]) / 2 + 1)); v[OW]=$(((v[W] - v[KW]) / 2 + 1))
      v[HW]=$((v[H] * v[W])); v[OHOW]=$((v[OH] * v[OW])) ;;
  esac
  for kv in "${!v[@]}"; do printf '%s=%s ' "$kv" "${v[$kv]}"; done
}

# stc_sched_flops KIND SIZES: floating-point operations of one kernel call
# (a multiply-add counts 2).
stc_sched_flops() {
  local -A v=()
  local kv
  for kv in $(stc_sched_sizes "$1" "$2"); do v[${kv%%=*}]=${kv#*=}; done
  case $1 in
    matmul) echo $((2 * v[M] * v[N] * v[K])) ;;
    batch_matmul) echo $((2 * v[B] * v[M] * v[N] * v[K])) ;;
    conv_2d_nhwc_hwcf|conv_2d_nchw_fchw) echo $((2 * v[OH] * v[OW] * v[F] * v[KH] * v[KW] * v[C])) ;;
    depthwise_conv_2d_nhwc_hwc) echo $((2 * v[OH] * v[OW] * v[C] * v[KH] * v[KW])) ;;
    reduction|matvec|vecmat) echo $((2 * v[M] * v[N])) ;;
    pooling_nhwc_max|pooling_nhwc_sum) echo $((v[OH] * v[OW] * v[C] * v[KH] * v[KW])) ;;
  esac
}

# stc_sched_payload KIND SIZES MODE MINTIME OUT: instantiate KIND's template
# from tests/ into OUT.
#   MODE     static | dynamic (kernel arguments typed with ? dimensions)
#   MINTIME  seconds of timed kernel calls after the checked one (a decimal
#            like 0.3); 0 drops the timing lines
stc_sched_payload() {
  local kind=$1 sizes=$2 mode=$3 mintime=$4 out=$5 tmpl ka kb kc kv subst
  subst=$(stc_sched_sizes "$kind" "$sizes") || return 2
  case $kind in
    matmul) tmpl=matmul; ka="?x?"; kb="?x?"; kc="?x?" ;;
    batch_matmul) tmpl=batch_matmul; ka="?x?x?"; kb="?x?x?"; kc="?x?x?" ;;
    conv_2d_nhwc_hwcf) tmpl=conv; ka="?x?x?x?"; kb="?x?x?x?"; kc="?x?x?x?" ;;
    reduction) tmpl=reduction; ka="?x?"; kb="?"; kc="?" ;;
    matvec) tmpl=matvec; ka="?x?"; kb="?"; kc="?" ;;
    vecmat) tmpl=vecmat; ka="?"; kb="?x?"; kc="?" ;;
    conv_2d_nchw_fchw) tmpl=conv_nchw; ka="?x?x?x?"; kb="?x?x?x?"; kc="?x?x?x?" ;;
    depthwise_conv_2d_nhwc_hwc) tmpl=depthwise_conv; ka="?x?x?x?"; kb="?x?x?"; kc="?x?x?x?" ;;
    pooling_nhwc_max|pooling_nhwc_sum) tmpl=pooling; ka="?x?x?x?"; kb="?x?"; kc="?x?x?x?" ;;
    *) echo "stc_sched_payload: unknown kind $kind" >&2; return 2 ;;
  esac
  local script=(-e "s/@POOL@/$kind/g")
  for kv in $subst; do script+=(-e "s/@${kv%%=*}@/${kv#*=}/g"); done
  if [[ $mode == dynamic ]]; then
    script+=(-e "s/@KA@/tensor<${ka}xf32>/" -e "s/@KB@/tensor<${kb}xf32>/" -e "s/@KC@/tensor<${kc}xf32>/")
  else
    script+=(-e "s/@KA@/!sa/" -e "s/@KB@/!sb/" -e "s/@KC@/!sc/")
  fi
  if [[ $mintime == 0 ]]; then
    script+=(-e '/\/\/ bench$/d')
  else
    # MLIR wants a float literal with a dot.
    [[ $mintime == *.* ]] || mintime="$mintime.0"
    script+=(-e "s/@MINTIME@/$mintime/")
  fi
  sed "${script[@]}" "$stc_sched_dir/tests/$tmpl.mlir.tmpl" > "$out"
}

# stc_sched_apply SCHEDULE_FILE PAYLOAD OUT: apply the schedule's named
# sequence (named like the file) to the op tagged "stc_target", the way the
# compiler does: the tagged op is the payload root bound to the sequence's
# argument.
stc_sched_apply() {
  local name
  name=$(basename "$1" .mlir)
  "$stc_llvm_bin/mlir-opt" "$2" \
    --transform-preload-library="transform-library-paths=$1" \
    --transform-interpreter="entry-point=$name debug-payload-root-tag=stc_target" \
    -o "$3"
}

# stc_sched_only_llvm FILE: fails (listing them) when ops other than llvm.*
# remain. omp.* ops are allowed: they are the OpenMP dialect that LLVM IR
# translation handles directly (the parallel schedules produce them).
stc_sched_only_llvm() {
  local left
  left=$(grep -oE '(^[[:space:]]*|= )"?[a-z_][a-z_0-9]*\.[a-z_0-9.]+' "$1" |
         sed 's/^[[:space:]]*//; s/^= //; s/"//' |
         grep -vE '^(llvm|omp)\.' | sort | uniq -c || true)
  if [[ -n $left ]]; then
    echo "non-LLVM ops left after lowering:" >&2
    echo "$left" >&2
    return 1
  fi
}

# stc_sched_lower IN OUT [PIPELINE]: lower to the LLVM dialect (default: the
# schedule lowering pipeline) and check that nothing else is left.
stc_sched_lower() {
  "$stc_llvm_bin/mlir-opt" "$1" --pass-pipeline="${3:-$stc_lower_pipeline}" -o "$2" &&
    stc_sched_only_llvm "$2"
}

# stc_sched_run LOWERED OUT: run @main with mlir-runner, stdout to OUT.
stc_sched_run() {
  local libs="$stc_llvm_lib/libmlir_runner_utils.so,$stc_llvm_lib/libmlir_c_runner_utils.so"
  if [[ -n $stc_omp_lib ]]; then libs="$libs,$stc_omp_lib"; fi
  "$stc_llvm_bin/mlir-runner" "$1" -e main -entry-point-result=void -shared-libs="$libs" > "$2"
}
