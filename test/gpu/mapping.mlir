// stc-gpu-map-loops: the last (contiguous) loop dimension goes to x, so a
// warp's threads touch one row (coalesced); --gpu-mapping=outer-x keeps
// upstream gpu-map-parallel-loops' order (first dimension on x). Tiles are
// blocks, a tile's elements threads, a 3-D loop's first dimension z.
// RUN: stc-opt --tune-hot-paths --target=cuda --mlir-print-ir-after-all %s -o /dev/null 2>&1 | FileCheck %s
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-mapping=outer-x --mlir-print-ir-after-all %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTER
// RUN: not stc-opt --tune-hot-paths --target=cuda --gpu-mapping=diagonal %s 2>&1 | FileCheck %s --check-prefix=BAD

func.func @mm(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %c: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>)
                     outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

func.func @bmm(%a: tensor<4x64x32xf32>, %b: tensor<4x32x48xf32>, %c: tensor<4x64x48xf32>) -> tensor<4x64x48xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xf32>, tensor<4x32x48xf32>)
                           outs(%c : tensor<4x64x48xf32>) -> tensor<4x64x48xf32>
  return %r : tensor<4x64x48xf32>
}

// CHECK-LABEL: IR Dump After StcGpuMapLoops
// CHECK: func.func @mm
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_y, {{.*}}processor = thread_x,
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_y, {{.*}}processor = block_x,
// CHECK: func.func @bmm
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_z, {{.*}}processor = thread_y, {{.*}}processor = thread_x,
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_z, {{.*}}processor = block_y, {{.*}}processor = block_x,

// OUTER-LABEL: IR Dump After StcGpuMapLoops
// OUTER: func.func @mm
// OUTER: mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}processor = thread_y,
// OUTER: mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}processor = block_y,

// BAD: stc-opt: error: --tune-hot-paths: invalid --gpu-mapping 'diagonal' (expected inner-x
