// An alias: stc-run compiles such a module whole, one object, whatever
// STC_RUN_COMPILE_THREADS says (test/stc-run/partitions.test). main returns 5.
module {
  llvm.func @target() -> i32 {
    %c = llvm.mlir.constant(5 : i32) : i32
    llvm.return %c : i32
  }
  llvm.mlir.alias external @other : !llvm.ptr {
    %0 = llvm.mlir.addressof @target : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
  llvm.func @main() -> i32 {
    %f = llvm.mlir.addressof @other : !llvm.ptr
    %r = llvm.call %f() : !llvm.ptr, () -> i32
    llvm.return %r : i32
  }
}
