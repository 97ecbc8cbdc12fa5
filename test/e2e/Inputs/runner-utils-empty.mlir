// test/e2e/runner-utils.test: memrefs with a dimension of size 0. Upstream's
// printMemref reads and prints the element at the offset of an empty
// dimension (outside the memref); libstc_runner_utils prints "[]" there.
memref.global "private" constant @grid : memref<2x3xi32> = dense<[[1, 2, 3], [4, 5, 6]]>
func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI32(memref<*xi32>)
func.func @main() {
  %a = memref.alloc() : memref<0xf32>
  %ua = memref.cast %a : memref<0xf32> to memref<*xf32>
  call @printMemrefF32(%ua) : (memref<*xf32>) -> ()
  %b = memref.alloc() : memref<2x0xf32>
  %ub = memref.cast %b : memref<2x0xf32> to memref<*xf32>
  call @printMemrefF32(%ub) : (memref<*xf32>) -> ()
  %grid = memref.get_global @grid : memref<2x3xi32>
  %s = memref.subview %grid[1, 1] [0, 2] [1, 1] : memref<2x3xi32> to memref<0x2xi32, strided<[3, 1], offset: 4>>
  %us = memref.cast %s : memref<0x2xi32, strided<[3, 1], offset: 4>> to memref<*xi32>
  call @printMemrefI32(%us) : (memref<*xi32>) -> ()
  memref.dealloc %a : memref<0xf32>
  memref.dealloc %b : memref<2x0xf32>
  return
}
