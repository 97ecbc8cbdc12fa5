# common.sh - shell functions shared by device-run.sh and tf32-bench.sh
# (sourced; both copy it into their bundle, since they run from there on
# the GPU machine). Expects $here (the directory of matmul.mlir.in).

# matmul_object BUNDLE OPT CHIP FN M K N LABEL FLAG...: compile
# matmul.mlir.in for M x K x N as function FN with the stc-opt flags, into
# BUNDLE/obj/FN.o, and declare it in BUNDLE/obj/matmul_variants.h for
# matmul_bench.c. Prints the object's path.
matmul_object() {
  local bundle=$1 opt=$2 chip=$3 fn=$4 m=$5 k=$6 n=$7 label=$8
  shift 8
  sed "s/NAME/$fn/g; s/MxK/${m}x${k}/g; s/KxN/${k}x${n}/g; s/MxN/${m}x${n}/g" \
    "$here/matmul.mlir.in" > "$bundle/obj/$fn.mlir"
  "$opt" --tune-hot-paths --target=cuda --gpu-chip="$chip" "$@" \
    --emit=obj "$bundle/obj/$fn.mlir" -o "$bundle/obj/$fn.o" || return
  echo "STC_VARIANT($fn, $m, $k, $n, \"$label\")" >> "$bundle/obj/matmul_variants.h"
  echo "$bundle/obj/$fn.o"
}

# find_cublas: unless STC_CUBLAS_LIBRARY is set or the loader finds
# libcublas, export the toolkit's or PyTorch's wheel's copy.
find_cublas() {
  if [[ -z ${STC_CUBLAS_LIBRARY:-} ]] && ! ldconfig -p 2>/dev/null | grep 'libcublas\.so\.1[23] ' > /dev/null; then
    local found
    found=$(ls /usr/local/cuda*/lib64/libcublas.so.1[23] 2>/dev/null | head -1)
    [[ -n $found ]] || found=$(python3 -c "import nvidia.cublas, os, glob; d = os.path.dirname(nvidia.cublas.__file__ or nvidia.cublas.__path__[0]); print((glob.glob(d + '/lib/libcublas.so.1*') or [''])[0])" 2>/dev/null)
    [[ -n $found ]] && export STC_CUBLAS_LIBRARY=$found
  fi
  return 0
}
