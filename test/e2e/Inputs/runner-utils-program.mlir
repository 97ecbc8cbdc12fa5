// test/e2e/runner-utils.test: prints memrefs of every element type that
// libstc_runner_utils (runtime/runner_utils.c) supports - ranks 0 to 3,
// strided, offset and transposed views, nan, inf, -0, extremes - through
// each kind of entry point (plain, _mlir_ciface_ unranked, ranked, shape),
// and scalars, vectors, strings and punctuation through vector.print.
memref.global "private" constant @f32_3d : memref<2x2x3xf32> = dense<[[[0.0, -0.0, 1.0], [0x7FC00000, 0xFFC00000, 0x7F800000]], [[0xFF800000, 3.14159274, 1.0e-7], [123456789.0, 0.1, -2.5e+20]]]>
memref.global "private" constant @f64_2d : memref<2x3xf64> = dense<[[0.3333333333333333, -1.0e-300, 0x7FF0000000000000], [0x7FF8000000000000, -0.0, 1.0e+100]]>
memref.global "private" constant @grid : memref<4x5xf32> = dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0], [10.0, 11.0, 12.0, 13.0, 14.0], [15.0, 16.0, 17.0, 18.0, 19.0]]>
memref.global "private" constant @i8_1d : memref<4xi8> = dense<[72, 105, 33, -5]>
memref.global "private" constant @i16_1d : memref<3xi16> = dense<[-32768, 0, 32767]>
memref.global "private" constant @i32_2d : memref<2x2xi32> = dense<[[-2147483648, 7], [0, 2147483647]]>
memref.global "private" constant @i64_1d : memref<3xi64> = dense<[-9223372036854775808, 42, 9223372036854775807]>
memref.global "private" constant @ind_1d : memref<2xindex> = dense<[0, -1]>
memref.global "private" constant @f16_1d : memref<4xf16> = dense<[1.5, -0.0, 6.0e-8, 65504.0]>
memref.global "private" constant @bf16_1d : memref<3xbf16> = dense<[1.5, -3.0e+38, 0x7F80]>
memref.global "private" constant @c32_1d : memref<2xcomplex<f32>> = dense<[(1.5, -2.0), (0x7FC00000, 1.0e-7)]>
memref.global "private" constant @c64_2d : memref<1x2xcomplex<f64>> = dense<[[(0.1, -0.0), (3.0, 4.0)]]>
memref.global "private" constant @scalar : memref<f32> = dense<2.5>
memref.global "private" constant @one : memref<1x1xf32> = dense<[[7.0]]>
memref.global "private" constant @tall : memref<3x1xf32> = dense<[[1.0], [2.0], [3.0]]>

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefF64(memref<*xf64>)
func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefI64(memref<*xi64>)
func.func private @printMemrefInd(memref<*xindex>)
func.func private @printMemrefI8(memref<*xi8>) attributes {llvm.emit_c_interface}
func.func private @printMemrefI16(memref<*xi16>) attributes {llvm.emit_c_interface}
func.func private @printMemrefF16(memref<*xf16>) attributes {llvm.emit_c_interface}
func.func private @printMemrefBF16(memref<*xbf16>) attributes {llvm.emit_c_interface}
func.func private @printMemrefC32(memref<*xcomplex<f32>>)
func.func private @printMemrefC64(memref<*xcomplex<f64>>) attributes {llvm.emit_c_interface}
func.func private @printMemrefShapeF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @printMemref1dF32(memref<?xf32, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}
func.func private @printMemref2dF32(memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
func.func private @printMemref1dI64(memref<?xi64, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}
func.func private @rtclock() -> f64

func.func @main() {
  %f32 = memref.get_global @f32_3d : memref<2x2x3xf32>
  %u3 = memref.cast %f32 : memref<2x2x3xf32> to memref<*xf32>
  call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
  %s = memref.get_global @scalar : memref<f32>
  %u0 = memref.cast %s : memref<f32> to memref<*xf32>
  call @printMemrefF32(%u0) : (memref<*xf32>) -> ()
  %one = memref.get_global @one : memref<1x1xf32>
  %u11 = memref.cast %one : memref<1x1xf32> to memref<*xf32>
  call @printMemrefF32(%u11) : (memref<*xf32>) -> ()
  %tall = memref.get_global @tall : memref<3x1xf32>
  %u31 = memref.cast %tall : memref<3x1xf32> to memref<*xf32>
  call @printMemrefF32(%u31) : (memref<*xf32>) -> ()
  // A strided view with an offset, and a transposed one.
  %grid = memref.get_global @grid : memref<4x5xf32>
  %sub = memref.subview %grid[1, 1] [3, 2] [1, 2] : memref<4x5xf32> to memref<3x2xf32, strided<[5, 2], offset: 6>>
  %us = memref.cast %sub : memref<3x2xf32, strided<[5, 2], offset: 6>> to memref<*xf32>
  call @printMemrefF32(%us) : (memref<*xf32>) -> ()
  %t = memref.transpose %grid (i, j) -> (j, i) : memref<4x5xf32> to memref<5x4xf32, strided<[1, 5]>>
  %ut = memref.cast %t : memref<5x4xf32, strided<[1, 5]>> to memref<*xf32>
  call @printMemrefF32(%ut) : (memref<*xf32>) -> ()
  call @printMemrefShapeF32(%us) : (memref<*xf32>) -> ()
  vector.print punctuation <newline>
  %col = memref.subview %grid[0, 3] [4, 1] [1, 1] : memref<4x5xf32> to memref<4xf32, strided<[5], offset: 3>>
  %cold = memref.cast %col : memref<4xf32, strided<[5], offset: 3>> to memref<?xf32, strided<[?], offset: ?>>
  call @printMemref1dF32(%cold) : (memref<?xf32, strided<[?], offset: ?>>) -> ()
  %subd = memref.cast %sub : memref<3x2xf32, strided<[5, 2], offset: 6>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  call @printMemref2dF32(%subd) : (memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()

  %f64 = memref.get_global @f64_2d : memref<2x3xf64>
  %u64 = memref.cast %f64 : memref<2x3xf64> to memref<*xf64>
  call @printMemrefF64(%u64) : (memref<*xf64>) -> ()
  %i8 = memref.get_global @i8_1d : memref<4xi8>
  %ui8 = memref.cast %i8 : memref<4xi8> to memref<*xi8>
  call @printMemrefI8(%ui8) : (memref<*xi8>) -> ()
  %i16 = memref.get_global @i16_1d : memref<3xi16>
  %ui16 = memref.cast %i16 : memref<3xi16> to memref<*xi16>
  call @printMemrefI16(%ui16) : (memref<*xi16>) -> ()
  %i32 = memref.get_global @i32_2d : memref<2x2xi32>
  %ui32 = memref.cast %i32 : memref<2x2xi32> to memref<*xi32>
  call @printMemrefI32(%ui32) : (memref<*xi32>) -> ()
  %i64 = memref.get_global @i64_1d : memref<3xi64>
  %ui64 = memref.cast %i64 : memref<3xi64> to memref<*xi64>
  call @printMemrefI64(%ui64) : (memref<*xi64>) -> ()
  %i64d = memref.cast %i64 : memref<3xi64> to memref<?xi64, strided<[?], offset: ?>>
  call @printMemref1dI64(%i64d) : (memref<?xi64, strided<[?], offset: ?>>) -> ()
  %ind = memref.get_global @ind_1d : memref<2xindex>
  %uind = memref.cast %ind : memref<2xindex> to memref<*xindex>
  call @printMemrefInd(%uind) : (memref<*xindex>) -> ()
  %f16 = memref.get_global @f16_1d : memref<4xf16>
  %uf16 = memref.cast %f16 : memref<4xf16> to memref<*xf16>
  call @printMemrefF16(%uf16) : (memref<*xf16>) -> ()
  %bf16 = memref.get_global @bf16_1d : memref<3xbf16>
  %ubf16 = memref.cast %bf16 : memref<3xbf16> to memref<*xbf16>
  call @printMemrefBF16(%ubf16) : (memref<*xbf16>) -> ()
  %c32 = memref.get_global @c32_1d : memref<2xcomplex<f32>>
  %uc32 = memref.cast %c32 : memref<2xcomplex<f32>> to memref<*xcomplex<f32>>
  call @printMemrefC32(%uc32) : (memref<*xcomplex<f32>>) -> ()
  %c64 = memref.get_global @c64_2d : memref<1x2xcomplex<f64>>
  %uc64 = memref.cast %c64 : memref<1x2xcomplex<f64>> to memref<*xcomplex<f64>>
  call @printMemrefC64(%uc64) : (memref<*xcomplex<f64>>) -> ()

  // vector.print: scalars, vectors, punctuation, strings.
  %c0 = arith.constant 0 : index
  %i = arith.constant -42 : i32
  vector.print %i : i32
  %b = arith.constant true
  vector.print %b : i1
  %byte = arith.constant -128 : i8
  vector.print %byte : i8
  %big = arith.constant -9223372036854775808 : i64
  vector.print %big : i64
  %idx = arith.constant 123 : index
  vector.print %idx : index
  %x = arith.constant -0.0 : f32
  vector.print %x : f32
  %nan = arith.constant 0x7FC00000 : f32
  vector.print %nan : f32
  %nnan = arith.constant 0xFFC00000 : f32
  vector.print %nnan : f32
  %inf = arith.constant 0xFFF0000000000000 : f64
  vector.print %inf : f64
  %d = arith.constant 2.718281828459045 : f64
  vector.print %d : f64
  %v = vector.load %f32[%c0, %c0, %c0] : memref<2x2x3xf32>, vector<3xf32>
  vector.print %v : vector<3xf32>
  %m = arith.constant dense<[[1, -2, 3], [4, 5, -6]]> : vector<2x3xi32>
  vector.print %m : vector<2x3xi32>
  %h = arith.constant dense<[0.5, -1.25]> : vector<2xf16>
  vector.print %h : vector<2xf16>
  vector.print str "a string\n"
  vector.print %i : i32 punctuation <comma>
  vector.print %i : i32 punctuation <no_punctuation>
  vector.print punctuation <open>
  vector.print punctuation <close>
  vector.print punctuation <newline>

  %t0 = call @rtclock() : () -> f64
  %t1 = call @rtclock() : () -> f64
  %later = arith.cmpf oge, %t1, %t0 : f64
  %positive = arith.cmpf ogt, %t0, %d : f64
  %ok = arith.andi %later, %positive : i1
  vector.print str "rtclock ok: "
  vector.print %ok : i1
  return
}
