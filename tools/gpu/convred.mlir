// convred.mlir - the convolution and row-reduction bench of the CUDA target
// (tools/gpu/device-run.sh): each conv and reduction below is a GPU
// dispatch site whose variants (conv:PxF, red:warp, red:warp/v4, red:block;
// tools/common/gpu_conv_schedule.c) the runtime times against the site's
// reference, the default one-thread-per-element kernel, on its first call
// (the tuning reports, STC_TUNE_REPORT=1, give each variant's paired median
// ratio to the reference); the printed slices are compared with the CPU
// build's. Shapes: a ResNet 3x3 conv (56x56x64), a batched one
// (8x14x14x128), a strided 3-channel stem (stride 2, C = 3: scalar input
// loads); softmax's row max and sum of exp(x - max) over 4096x1024, a
// layer-norm row sum over 8192x768 and 64 long rows of 32768.
func.func private @printMemrefF32(tensor<*xf32>)

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// t[i][j] = scale * sin((131 i + 71 j + 7 i j + seed) mod 1009).
func.func private @input2d(%rows: index, %cols: index, %seed: index, %scale: f32) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c131 = arith.constant 131 : index
    %c71 = arith.constant 71 : index
    %c7 = arith.constant 7 : index
    %c1009 = arith.constant 1009 : index
    %a = arith.muli %i, %c131 : index
    %b = arith.muli %j, %c71 : index
    %ij = arith.muli %i, %j : index
    %c = arith.muli %ij, %c7 : index
    %s1 = arith.addi %a, %b : index
    %s2 = arith.addi %s1, %c : index
    %s3 = arith.addi %s2, %seed : index
    %m = arith.remui %s3, %c1009 : index
    %mi = arith.index_cast %m : index to i64
    %f = arith.uitofp %mi : i64 to f32
    %sn = math.sin %f : f32
    %v = arith.mulf %sn, %scale : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @conv_resnet(%i: tensor<1x58x58x64xf32>, %k: tensor<3x3x64x64xf32>) -> tensor<1x56x56x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%i, %k : tensor<1x58x58x64xf32>, tensor<3x3x64x64xf32>)
      outs(%z : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %r : tensor<1x56x56x64xf32>
}

func.func @conv_batch(%i: tensor<8x16x16x128xf32>, %k: tensor<3x3x128x128xf32>) -> tensor<8x14x14x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x14x14x128xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x14x14x128xf32>) -> tensor<8x14x14x128xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%i, %k : tensor<8x16x16x128xf32>, tensor<3x3x128x128xf32>)
      outs(%z : tensor<8x14x14x128xf32>) -> tensor<8x14x14x128xf32>
  return %r : tensor<8x14x14x128xf32>
}

func.func @conv_stem(%i: tensor<1x113x113x3xf32>, %k: tensor<3x3x3x32xf32>) -> tensor<1x56x56x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%i, %k : tensor<1x113x113x3xf32>, tensor<3x3x3x32xf32>)
      outs(%z : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  return %r : tensor<1x56x56x32xf32>
}

func.func @row_max(%x: tensor<4096x1024xf32>) -> tensor<4096xf32> {
  %init = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %z = linalg.fill ins(%init : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4096x1024xf32>) outs(%z : tensor<4096xf32>) {
  ^bb0(%v: f32, %a: f32):
    %s = arith.maximumf %v, %a : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

// softmax's denominator: sum_j exp(x_ij - max_i).
func.func @row_sum_exp(%x: tensor<4096x1024xf32>, %m: tensor<4096xf32>) -> tensor<4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<4096x1024xf32>, tensor<4096xf32>) outs(%z : tensor<4096xf32>) {
  ^bb0(%v: f32, %mx: f32, %a: f32):
    %d = arith.subf %v, %mx : f32
    %x2 = math.exp %d : f32
    %s = arith.addf %x2, %a : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

func.func @row_sum(%x: tensor<8192x768xf32>) -> tensor<8192xf32> {
  %init = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8192xf32>
  %z = linalg.fill ins(%init : f32) outs(%e : tensor<8192xf32>) -> tensor<8192xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8192x768xf32>) outs(%z : tensor<8192xf32>) {
  ^bb0(%v: f32, %a: f32):
    %s = arith.addf %v, %a : f32
    linalg.yield %s : f32
  } -> tensor<8192xf32>
  return %r : tensor<8192xf32>
}

func.func @long_row_sum(%x: tensor<64x32768xf32>) -> tensor<64xf32> {
  %init = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %z = linalg.fill ins(%init : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x32768xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%v: f32, %a: f32):
    %s = arith.addf %v, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

func.func @main() {
  %c3 = arith.constant 3 : index
  %c27 = arith.constant 27 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c576 = arith.constant 576 : index
  %c768 = arith.constant 768 : index
  %c1024 = arith.constant 1024 : index
  %c1152 = arith.constant 1152 : index
  %c2048 = arith.constant 2048 : index
  %c3364 = arith.constant 3364 : index
  %c4096 = arith.constant 4096 : index
  %c8192 = arith.constant 8192 : index
  %c12769 = arith.constant 12769 : index
  %c32768 = arith.constant 32768 : index
  %s1 = arith.constant 97 : index
  %s2 = arith.constant 194 : index
  %s3 = arith.constant 291 : index
  %s4 = arith.constant 388 : index
  %s5 = arith.constant 485 : index
  %s6 = arith.constant 582 : index
  %s7 = arith.constant 679 : index
  %s8 = arith.constant 776 : index
  %s9 = arith.constant 873 : index
  %k1 = arith.constant 1.0 : f32
  %wa = arith.constant 0.083 : f32
  %wb = arith.constant 0.059 : f32
  %wc = arith.constant 0.38 : f32
  %kx = arith.constant 4.0 : f32
  %iad = call @input2d(%c3364, %c64, %s1, %k1) : (index, index, index, f32) -> tensor<?x?xf32>
  %ias = tensor.cast %iad : tensor<?x?xf32> to tensor<3364x64xf32>
  %ia = tensor.expand_shape %ias [[0, 1, 2], [3]] output_shape [1, 58, 58, 64]
      : tensor<3364x64xf32> into tensor<1x58x58x64xf32>
  %kad = call @input2d(%c576, %c64, %s2, %wa) : (index, index, index, f32) -> tensor<?x?xf32>
  %kas = tensor.cast %kad : tensor<?x?xf32> to tensor<576x64xf32>
  %ka = tensor.expand_shape %kas [[0, 1, 2], [3]] output_shape [3, 3, 64, 64]
      : tensor<576x64xf32> into tensor<3x3x64x64xf32>
  %ibd = call @input2d(%c2048, %c128, %s3, %k1) : (index, index, index, f32) -> tensor<?x?xf32>
  %ibs = tensor.cast %ibd : tensor<?x?xf32> to tensor<2048x128xf32>
  %ib = tensor.expand_shape %ibs [[0, 1, 2], [3]] output_shape [8, 16, 16, 128]
      : tensor<2048x128xf32> into tensor<8x16x16x128xf32>
  %kbd = call @input2d(%c1152, %c128, %s4, %wb) : (index, index, index, f32) -> tensor<?x?xf32>
  %kbs = tensor.cast %kbd : tensor<?x?xf32> to tensor<1152x128xf32>
  %kb = tensor.expand_shape %kbs [[0, 1, 2], [3]] output_shape [3, 3, 128, 128]
      : tensor<1152x128xf32> into tensor<3x3x128x128xf32>
  %icd = call @input2d(%c12769, %c3, %s5, %k1) : (index, index, index, f32) -> tensor<?x?xf32>
  %ics = tensor.cast %icd : tensor<?x?xf32> to tensor<12769x3xf32>
  %ic = tensor.expand_shape %ics [[0, 1, 2], [3]] output_shape [1, 113, 113, 3]
      : tensor<12769x3xf32> into tensor<1x113x113x3xf32>
  %kcd = call @input2d(%c27, %c32, %s6, %wc) : (index, index, index, f32) -> tensor<?x?xf32>
  %kcs = tensor.cast %kcd : tensor<?x?xf32> to tensor<27x32xf32>
  %kc = tensor.expand_shape %kcs [[0, 1, 2], [3]] output_shape [3, 3, 3, 32]
      : tensor<27x32xf32> into tensor<3x3x3x32xf32>
  %xad = call @input2d(%c4096, %c1024, %s7, %kx) : (index, index, index, f32) -> tensor<?x?xf32>
  %xas = tensor.cast %xad : tensor<?x?xf32> to tensor<4096x1024xf32>
  %xbd = call @input2d(%c8192, %c768, %s8, %k1) : (index, index, index, f32) -> tensor<?x?xf32>
  %xbs = tensor.cast %xbd : tensor<?x?xf32> to tensor<8192x768xf32>
  %xcd = call @input2d(%c64, %c32768, %s9, %k1) : (index, index, index, f32) -> tensor<?x?xf32>
  %xcs = tensor.cast %xcd : tensor<?x?xf32> to tensor<64x32768xf32>
  %ya = call @conv_resnet(%ia, %ka) : (tensor<1x58x58x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x56x56x64xf32>
  %yb = call @conv_batch(%ib, %kb) : (tensor<8x16x16x128xf32>, tensor<3x3x128x128xf32>) -> tensor<8x14x14x128xf32>
  %yc = call @conv_stem(%ic, %kc) : (tensor<1x113x113x3xf32>, tensor<3x3x3x32xf32>) -> tensor<1x56x56x32xf32>
  %ma = call @row_max(%xas) : (tensor<4096x1024xf32>) -> tensor<4096xf32>
  %sa = call @row_sum_exp(%xas, %ma) : (tensor<4096x1024xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  %sb = call @row_sum(%xbs) : (tensor<8192x768xf32>) -> tensor<8192xf32>
  %sc = call @long_row_sum(%xcs) : (tensor<64x32768xf32>) -> tensor<64xf32>
  %pa = tensor.extract_slice %ya[0, 27, 0, 0] [1, 1, 56, 64] [1, 1, 1, 1] : tensor<1x56x56x64xf32> to tensor<56x64xf32>
  %pb = tensor.extract_slice %yb[7, 13, 0, 0] [1, 1, 14, 128] [1, 1, 1, 1] : tensor<8x14x14x128xf32> to tensor<14x128xf32>
  %pc = tensor.extract_slice %yc[0, 55, 0, 0] [1, 1, 56, 32] [1, 1, 1, 1] : tensor<1x56x56x32xf32> to tensor<56x32xf32>
  %upa = tensor.cast %pa : tensor<56x64xf32> to tensor<*xf32>
  call @printMemrefF32(%upa) : (tensor<*xf32>) -> ()
  %upb = tensor.cast %pb : tensor<14x128xf32> to tensor<*xf32>
  call @printMemrefF32(%upb) : (tensor<*xf32>) -> ()
  %upc = tensor.cast %pc : tensor<56x32xf32> to tensor<*xf32>
  call @printMemrefF32(%upc) : (tensor<*xf32>) -> ()
  %uma = tensor.cast %ma : tensor<4096xf32> to tensor<*xf32>
  call @printMemrefF32(%uma) : (tensor<*xf32>) -> ()
  %usa = tensor.cast %sa : tensor<4096xf32> to tensor<*xf32>
  call @printMemrefF32(%usa) : (tensor<*xf32>) -> ()
  %usb = tensor.cast %sb : tensor<8192xf32> to tensor<*xf32>
  call @printMemrefF32(%usb) : (tensor<*xf32>) -> ()
  %usc = tensor.cast %sc : tensor<64xf32> to tensor<*xf32>
  call @printMemrefF32(%usc) : (tensor<*xf32>) -> ()
  return
}
