// A module whose functions reference each other's local symbols, for the
// compile partitions of stc-run (test/stc-run/partitions.test): a private
// counter written by a constructor and several functions, a private string
// used by two functions, a private helper called from several functions, a
// private helper called from one, a private function table (its initializer
// names functions) called through, a linkonce_odr function, an unnamed-addr
// constant array loaded from two functions, and a destructor.
// main returns 599 (counter 100, then 114, 118, 122, 135: 2*113 + 117 + 121 +
// 135) and prints the lines checked in partitions.test.
module {
  llvm.mlir.global private @counter(0 : i32) {addr_space = 0 : i32} : i32
  llvm.mlir.global private constant @hello("shared string\00") {addr_space = 0 : i32}
  llvm.mlir.global private constant @bye("dtor ran\00") {addr_space = 0 : i32}
  llvm.mlir.global private unnamed_addr constant @weights(dense<[3, 5, 7, 11]> : tensor<4xi32>) {addr_space = 0 : i32} : !llvm.array<4 x i32>
  llvm.mlir.global private constant @table() {addr_space = 0 : i32} : !llvm.array<2 x ptr> {
    %0 = llvm.mlir.undef : !llvm.array<2 x ptr>
    %1 = llvm.mlir.addressof @twice : !llvm.ptr
    %2 = llvm.insertvalue %1, %0[0] : !llvm.array<2 x ptr>
    %3 = llvm.mlir.addressof @square : !llvm.ptr
    %4 = llvm.insertvalue %3, %2[1] : !llvm.array<2 x ptr>
    llvm.return %4 : !llvm.array<2 x ptr>
  }
  llvm.mlir.global_ctors ctors = [@init], priorities = [0 : i32], data = [#llvm.zero]
  llvm.mlir.global_dtors dtors = [@fini], priorities = [0 : i32], data = [#llvm.zero]
  llvm.func @puts(!llvm.ptr) -> i32

  llvm.func @init() {
    %p = llvm.mlir.addressof @counter : !llvm.ptr
    %c = llvm.mlir.constant(100 : i32) : i32
    llvm.store %c, %p : i32, !llvm.ptr
    llvm.return
  }
  llvm.func @fini() {
    %m = llvm.mlir.addressof @bye : !llvm.ptr
    %r = llvm.call @puts(%m) : (!llvm.ptr) -> i32
    llvm.return
  }
  // Called from several functions: must stay callable across partitions.
  llvm.func private @bump(%x: i32) -> i32 attributes {no_inline} {
    %p = llvm.mlir.addressof @counter : !llvm.ptr
    %v = llvm.load %p : !llvm.ptr -> i32
    %s = llvm.add %v, %x : i32
    llvm.store %s, %p : i32, !llvm.ptr
    llvm.return %s : i32
  }
  llvm.func private @twice(%x: i32) -> i32 {
    %r = llvm.add %x, %x : i32
    llvm.return %r : i32
  }
  llvm.func private @square(%x: i32) -> i32 {
    %r = llvm.mul %x, %x : i32
    llvm.return %r : i32
  }
  // Called from one function only.
  llvm.func internal @only_from_a(%x: i32) -> i32 {
    %w = llvm.mlir.addressof @weights : !llvm.ptr
    %e = llvm.getelementptr %w[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x i32>
    %v = llvm.load %e : !llvm.ptr -> i32
    %r = llvm.mul %x, %v : i32
    llvm.return %r : i32
  }
  llvm.func linkonce_odr @odr(%x: i32) -> i32 attributes {no_inline} {
    %c = llvm.mlir.constant(1 : i32) : i32
    %r = llvm.sub %x, %c : i32
    llvm.return %r : i32
  }
  llvm.func @a(%x: i32) -> i32 {
    %m = llvm.mlir.addressof @hello : !llvm.ptr
    %0 = llvm.call @puts(%m) : (!llvm.ptr) -> i32
    %1 = llvm.call @only_from_a(%x) : (i32) -> i32
    %2 = llvm.call @bump(%1) : (i32) -> i32
    %3 = llvm.call @odr(%2) : (i32) -> i32
    llvm.return %3 : i32
  }
  llvm.func @b(%x: i32, %i: i32) -> i32 {
    %m = llvm.mlir.addressof @hello : !llvm.ptr
    %0 = llvm.call @puts(%m) : (!llvm.ptr) -> i32
    %t = llvm.mlir.addressof @table : !llvm.ptr
    %e = llvm.getelementptr %t[0, %i] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.array<2 x ptr>
    %f = llvm.load %e : !llvm.ptr -> !llvm.ptr
    %1 = llvm.call %f(%x) : !llvm.ptr, (i32) -> i32
    %2 = llvm.call @bump(%1) : (i32) -> i32
    %3 = llvm.call @odr(%2) : (i32) -> i32
    llvm.return %3 : i32
  }
  llvm.func @c(%x: i32) -> i32 {
    %w = llvm.mlir.addressof @weights : !llvm.ptr
    %e = llvm.getelementptr %w[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x i32>
    %v = llvm.load %e : !llvm.ptr -> i32
    %s = llvm.add %x, %v : i32
    %r = llvm.call @bump(%s) : (i32) -> i32
    llvm.return %r : i32
  }
  llvm.func @main() -> i32 {
    %c2 = llvm.mlir.constant(2 : i32) : i32
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %0 = llvm.call @a(%c2) : (i32) -> i32
    %1 = llvm.call @b(%c2, %c0) : (i32, i32) -> i32
    %2 = llvm.call @b(%c2, %c1) : (i32, i32) -> i32
    %3 = llvm.call @c(%c2) : (i32) -> i32
    %4 = llvm.mul %0, %c2 : i32
    %5 = llvm.add %4, %1 : i32
    %6 = llvm.add %5, %2 : i32
    %7 = llvm.add %6, %3 : i32
    llvm.return %7 : i32
  }
}
