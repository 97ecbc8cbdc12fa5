// Hand-written LLVM-dialect module: one entry point per result kind, one
// with an argument and one that is only declared (for the error tests).
module {
  llvm.func @answer() -> i32 {
    %0 = llvm.mlir.constant(42 : i32) : i32
    llvm.return %0 : i32
  }
  llvm.func @big() -> i64 {
    %0 = llvm.mlir.constant(-5000000000 : i64) : i64
    llvm.return %0 : i64
  }
  llvm.func @half() -> f32 {
    %0 = llvm.mlir.constant(3.5 : f32) : f32
    llvm.return %0 : f32
  }
  llvm.func @main() {
    llvm.return
  }
  llvm.func @takes_arg(%arg0: i32) -> i32 {
    llvm.return %arg0 : i32
  }
  llvm.func @declared() -> i32
}
