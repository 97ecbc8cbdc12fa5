// Host code of a --target=cuda program may print n-D vectors: the host part
// of the pipeline (tools/common/tune_pipeline_cuda.c) unrolls vector
// transfers and prints to scalar ones before lowering to LLVM, as the CPU
// pipeline does. Before, `vector.print` of a vector<2x3xi32> stopped the
// compile at an unrealized_conversion_cast ("is not lowered to the LLVM
// dialect"); test/e2e/Inputs/runner-utils-program.mlir hit it.
// RUN: stc-opt --tune-hot-paths --target=cuda --emit=llvm %s -o %t.ll
// RUN: FileCheck %s < %t.ll
// The rows printed one element at a time: printI64 for each of the six.
// CHECK: define void @main()
// CHECK-COUNT-6: call void @printI64(
// CHECK-NOT: call void @printI64(
// CHECK: ret void

func.func @main() {
  %m = arith.constant dense<[[1, -2, 3], [4, 5, -6]]> : vector<2x3xi32>
  vector.print %m : vector<2x3xi32>
  return
}
