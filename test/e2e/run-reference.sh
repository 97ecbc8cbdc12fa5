#!/usr/bin/env bash
# Runs an MLIR model (linalg on tensors with a `func.func @main()` returning
# nothing) through the upstream route, mlir-opt with the pipeline in
# reference-pipeline.txt and then mlir-runner, and prints the program's output
# on stdout. In: model.mlir. Out: what the program prints (printMemrefF32
# tables). This is the "expected" side of the end-to-end comparisons.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 model.mlir" >&2
  exit 2
fi
model=$1
if [[ ! -r $model ]]; then
  echo "$0: cannot read $model" >&2
  exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
llvm_bin=${STC_LLVM_BIN:-/usr/lib/llvm-22/bin}
llvm_lib=${STC_LLVM_LIB:-/usr/lib/llvm-22/lib}
pipeline=$(<"$here/reference-pipeline.txt")

lowered=$(mktemp "${TMPDIR:-/tmp}/stc-ref.XXXXXX")
trap 'rm -f "$lowered"' EXIT

"$llvm_bin/mlir-opt" "$model" --pass-pipeline="$pipeline" -o "$lowered"
"$llvm_bin/mlir-runner" "$lowered" -e main -entry-point-result=void \
  -shared-libs="$llvm_lib/libmlir_runner_utils.so,$llvm_lib/libmlir_c_runner_utils.so"
