// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-one-shot-bufferize.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// A dot product over 2-element slices gathered (with tensor.pad) into
// bufferization.alloc_tensor buffers inside scf.for loops.
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(%t: tensor<*xf32>)

func.func @gather_and_dot(%x: tensor<64xf32>, %y: tensor<64xf32>, %acc: tensor<f32>) -> tensor<f32> {
  %i0 = arith.constant 0 : index
  %i2 = arith.constant 2 : index
  %i32 = arith.constant 32 : index
  %i64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %by = bufferization.alloc_tensor(%i32) : tensor<?x2xf32>
  %yp = scf.for %i = %i0 to %i64 step %i2 iter_args(%t = %by) -> (tensor<?x2xf32>) {
    %row = arith.divui %i, %i2 : index
    %s = tensor.extract_slice %y[%i] [2] [1] : tensor<64xf32> to tensor<2xf32>
    %d = tensor.cast %s : tensor<2xf32> to tensor<?xf32>
    %p = tensor.pad %d low[%i0] high[%i0] {
    ^bb0(%k: index):
      tensor.yield %zero : f32
    } : tensor<?xf32> to tensor<2xf32>
    %n = tensor.insert_slice %p into %t[%row, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<?x2xf32>
    scf.yield %n : tensor<?x2xf32>
  }
  %bx = bufferization.alloc_tensor(%i32) : tensor<?x2xf32>
  %xp = scf.for %i = %i0 to %i64 step %i2 iter_args(%t = %bx) -> (tensor<?x2xf32>) {
    %row = arith.divui %i, %i2 : index
    %s = tensor.extract_slice %x[%i] [2] [1] : tensor<64xf32> to tensor<2xf32>
    %d = tensor.cast %s : tensor<2xf32> to tensor<?xf32>
    %p = tensor.pad %d low[%i0] high[%i0] {
    ^bb0(%k: index):
      tensor.yield %zero : f32
    } : tensor<?xf32> to tensor<2xf32>
    %n = tensor.insert_slice %p into %t[%row, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<?x2xf32>
    scf.yield %n : tensor<?x2xf32>
  }
  %r = scf.for %i = %i0 to %i64 step %i2 iter_args(%a = %init) -> (tensor<f32>) {
    %row = arith.divui %i, %i2 : index
    %u = tensor.extract_slice %xp[%row, 0] [1, 2] [1, 1] : tensor<?x2xf32> to tensor<2xf32>
    %v = tensor.extract_slice %yp[%row, 0] [1, 2] [1, 1] : tensor<?x2xf32> to tensor<2xf32>
    %d = linalg.dot ins(%u, %v : tensor<2xf32>, tensor<2xf32>) outs(%a : tensor<f32>) -> tensor<f32>
    scf.yield %d : tensor<f32>
  }
  return %r : tensor<f32>
}

func.func @main() {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %ex = bufferization.alloc_tensor() : tensor<64xf32>
  %ey = bufferization.alloc_tensor() : tensor<64xf32>
  %ea = bufferization.alloc_tensor() : tensor<f32>
  %x = linalg.fill ins(%one : f32) outs(%ex : tensor<64xf32>) -> tensor<64xf32>
  %y = linalg.fill ins(%two : f32) outs(%ey : tensor<64xf32>) -> tensor<64xf32>
  %a = linalg.fill ins(%zero : f32) outs(%ea : tensor<f32>) -> tensor<f32>
  %r = call @gather_and_dot(%x, %y, %a) : (tensor<64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<f32>
  %u = tensor.cast %r : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

//      CHECK: Unranked Memref base@ = {{.*}} rank = 0 offset = 0 sizes = [] strides = [] data =
// CHECK-NEXT: [128]
