// test/e2e/Inputs/matmul-thrice-program.mlir at 128x32x64, a size whose
// parallel schedules keep their OpenMP region (their forall takes 64-row
// blocks: at 40 rows it has one iteration and folds away), for the
// rent-or-buy rule of test/e2e/disk-check.test.
func.func private @printMemrefF32(tensor<*xf32>)

func.func @kernel(%a: tensor<128x32xf32>, %b: tensor<32x64xf32>, %c: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %r = linalg.matmul {stc.plan = "variants:8"} ins(%a, %b : tensor<128x32xf32>, tensor<32x64xf32>) outs(%c : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}

func.func @fill2d(%rows: index, %cols: index, %seed: index) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %c13 = arith.constant 13 : index
    %c17 = arith.constant 17 : index
    %t0 = arith.muli %i, %c7 : index
    %t1 = arith.muli %j, %c13 : index
    %t2 = arith.addi %t0, %t1 : index
    %t3 = arith.addi %t2, %seed : index
    %t4 = arith.remui %t3, %c17 : index
    %t5 = arith.index_cast %t4 : index to i64
    %f = arith.sitofp %t5 : i64 to f32
    %s = arith.constant 0.125 : f32
    %v = arith.mulf %f, %s : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @main() {
  %m = arith.constant 128 : index
  %k = arith.constant 32 : index
  %n = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %a0 = call @fill2d(%m, %k, %c1) : (index, index, index) -> tensor<?x?xf32>
  %b0 = call @fill2d(%k, %n, %c2) : (index, index, index) -> tensor<?x?xf32>
  %d0 = call @fill2d(%m, %n, %c3) : (index, index, index) -> tensor<?x?xf32>
  %a = tensor.cast %a0 : tensor<?x?xf32> to tensor<128x32xf32>
  %b = tensor.cast %b0 : tensor<?x?xf32> to tensor<32x64xf32>
  %d = tensor.cast %d0 : tensor<?x?xf32> to tensor<128x64xf32>
  %r1 = call @kernel(%a, %b, %d) : (tensor<128x32xf32>, tensor<32x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  %u1 = tensor.cast %r1 : tensor<128x64xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  %e0 = call @fill2d(%m, %n, %c1) : (index, index, index) -> tensor<?x?xf32>
  %e = tensor.cast %e0 : tensor<?x?xf32> to tensor<128x64xf32>
  %r2 = call @kernel(%a, %b, %e) : (tensor<128x32xf32>, tensor<32x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  %u2 = tensor.cast %r2 : tensor<128x64xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  %f0 = call @fill2d(%m, %n, %c2) : (index, index, index) -> tensor<?x?xf32>
  %f = tensor.cast %f0 : tensor<?x?xf32> to tensor<128x64xf32>
  %r3 = call @kernel(%a, %b, %f) : (tensor<128x32xf32>, tensor<32x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  %u3 = tensor.cast %r3 : tensor<128x64xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  return
}
