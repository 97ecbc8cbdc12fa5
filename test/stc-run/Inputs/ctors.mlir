// Global constructors (out of array order: priority 0 runs first) and a
// destructor, which stc-run must run as MLIR's ExecutionEngine does:
// main returns 71 and "dtor ran" follows, from a compile and from a hit.
module {
  llvm.mlir.global internal @value(0 : i32) {addr_space = 0 : i32} : i32
  llvm.mlir.global_ctors ctors = [@times_ten_plus_one, @set_seven], priorities = [1 : i32, 0 : i32], data = [#llvm.zero, #llvm.zero]
  llvm.mlir.global_dtors dtors = [@goodbye], priorities = [0 : i32], data = [#llvm.zero]
  llvm.mlir.global internal constant @message("dtor ran\00") {addr_space = 0 : i32}
  llvm.func @puts(!llvm.ptr) -> i32
  llvm.func @set_seven() {
    %p = llvm.mlir.addressof @value : !llvm.ptr
    %c = llvm.mlir.constant(7 : i32) : i32
    llvm.store %c, %p : i32, !llvm.ptr
    llvm.return
  }
  llvm.func @times_ten_plus_one() {
    %p = llvm.mlir.addressof @value : !llvm.ptr
    %v = llvm.load %p : !llvm.ptr -> i32
    %ten = llvm.mlir.constant(10 : i32) : i32
    %one = llvm.mlir.constant(1 : i32) : i32
    %m = llvm.mul %v, %ten : i32
    %r = llvm.add %m, %one : i32
    llvm.store %r, %p : i32, !llvm.ptr
    llvm.return
  }
  llvm.func @goodbye() {
    %m = llvm.mlir.addressof @message : !llvm.ptr
    %r = llvm.call @puts(%m) : (!llvm.ptr) -> i32
    llvm.return
  }
  llvm.func @main() -> i32 {
    %p = llvm.mlir.addressof @value : !llvm.ptr
    %v = llvm.load %p : !llvm.ptr -> i32
    llvm.return %v : i32
  }
}
