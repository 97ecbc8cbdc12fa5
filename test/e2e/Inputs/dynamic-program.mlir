// A program whose tunable ops have dynamic shapes: one matmul kernel on
// tensor<?x?xf32> called with two workloads (40x36x52, then 17x9x23, then
// 40x36x52 again), and a row-sum reduction on tensor<?x?xf32>. Each result
// is printed with printMemrefF32. The sites are planned for variants.
func.func private @printMemrefF32(tensor<*xf32>)

func.func @kernel(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul {stc.plan = "variants:8"} ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @rowsum(%x: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) attrs = {stc.plan = "variants:8"} {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
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

func.func @run(%m: index, %k: index, %n: index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %a = call @fill2d(%m, %k, %c1) : (index, index, index) -> tensor<?x?xf32>
  %b = call @fill2d(%k, %n, %c2) : (index, index, index) -> tensor<?x?xf32>
  %d = call @fill2d(%m, %n, %c3) : (index, index, index) -> tensor<?x?xf32>
  %r = call @kernel(%a, %b, %d) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %s = call @rowsum(%r, %z) : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?xf32>
  // Printed after its last use: an unranked cast handed to an external
  // function must not be followed by other reads of %r.
  %u = tensor.cast %r : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %su = tensor.cast %s : tensor<?xf32> to tensor<*xf32>
  call @printMemrefF32(%su) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  %c40 = arith.constant 40 : index
  %c36 = arith.constant 36 : index
  %c52 = arith.constant 52 : index
  %c17 = arith.constant 17 : index
  %c9 = arith.constant 9 : index
  %c23 = arith.constant 23 : index
  call @run(%c40, %c36, %c52) : (index, index, index) -> ()
  call @run(%c17, %c9, %c23) : (index, index, index) -> ()
  call @run(%c40, %c36, %c52) : (index, index, index) -> ()
  return
}
