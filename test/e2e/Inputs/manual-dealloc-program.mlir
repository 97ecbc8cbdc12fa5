// A program that frees memory itself, like upstream's Linalg CPU integration
// tests (test-conv-1d-nwc-wcf-call, matmul-vs-matvec): memrefs allocated in
// one function and freed in another, linalg ops on memrefs, and a tensor
// function whose result buffer bufferization makes (not freed: a program
// that frees memory itself manages all of it, as upstream's pipelines
// assume). test/e2e/manual-dealloc.test compares it with upstream.
func.func private @printMemrefF32(memref<*xf32>)

func.func @alloc_filled(%rows: index, %cols: index, %v: f32) -> memref<?x?xf32> {
  %m = memref.alloc(%rows, %cols) : memref<?x?xf32>
  linalg.fill ins(%v : f32) outs(%m : memref<?x?xf32>)
  return %m : memref<?x?xf32>
}

func.func @conv1d(%in: memref<1x12x3xf32>, %f: memref<3x3x4xf32>, %out: memref<1x10x4xf32>) {
  linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
    ins(%in, %f : memref<1x12x3xf32>, memref<3x3x4xf32>) outs(%out : memref<1x10x4xf32>)
  return
}

func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// A tensor function: its result buffer comes from bufferization.
func.func @scaled(%t: tensor<8x5xf32>) -> tensor<8x5xf32> {
  %e = tensor.empty() : tensor<8x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x5xf32>) outs(%e : tensor<8x5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %y = arith.mulf %x, %h : f32
    linalg.yield %y : f32
  } -> tensor<8x5xf32>
  return %r : tensor<8x5xf32>
}

func.func @release(%m: memref<?x?xf32>) {
  memref.dealloc %m : memref<?x?xf32>
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.5 : f32
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.25 : f32
  %a = call @alloc_filled(%c8, %c6, %one) : (index, index, f32) -> memref<?x?xf32>
  %b = call @alloc_filled(%c6, %c5, %two) : (index, index, f32) -> memref<?x?xf32>
  %c = call @alloc_filled(%c8, %c5, %zero) : (index, index, f32) -> memref<?x?xf32>
  call @matmul(%a, %b, %c) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  %cu = memref.cast %c : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%cu) : (memref<*xf32>) -> ()
  %cs = memref.cast %c : memref<?x?xf32> to memref<8x5xf32>
  %t = bufferization.to_tensor %cs restrict : memref<8x5xf32> to tensor<8x5xf32>
  %s = call @scaled(%t) : (tensor<8x5xf32>) -> tensor<8x5xf32>
  %sm = bufferization.to_buffer %s : tensor<8x5xf32> to memref<8x5xf32>
  %su = memref.cast %sm : memref<8x5xf32> to memref<*xf32>
  call @printMemrefF32(%su) : (memref<*xf32>) -> ()
  call @release(%a) : (memref<?x?xf32>) -> ()
  call @release(%b) : (memref<?x?xf32>) -> ()
  call @release(%c) : (memref<?x?xf32>) -> ()

  %in = memref.alloc() : memref<1x12x3xf32>
  %f = memref.alloc() : memref<3x3x4xf32>
  %out = memref.alloc() : memref<1x10x4xf32>
  linalg.fill ins(%one : f32) outs(%in : memref<1x12x3xf32>)
  linalg.fill ins(%two : f32) outs(%f : memref<3x3x4xf32>)
  linalg.fill ins(%zero : f32) outs(%out : memref<1x10x4xf32>)
  call @conv1d(%in, %f, %out) : (memref<1x12x3xf32>, memref<3x3x4xf32>, memref<1x10x4xf32>) -> ()
  %ou = memref.cast %out : memref<1x10x4xf32> to memref<*xf32>
  call @printMemrefF32(%ou) : (memref<*xf32>) -> ()
  memref.dealloc %in : memref<1x12x3xf32>
  memref.dealloc %f : memref<3x3x4xf32>
  memref.dealloc %out : memref<1x10x4xf32>
  return
}
