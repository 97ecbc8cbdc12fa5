// A call of one of libgcc's builtins, which LLVM's code calls by name
// (test/stc-run/start-without-mlir.test): __popcountdi2(255) = 8.
module {
  llvm.func @__popcountdi2(i64) -> i32
  llvm.func @printI64(i64)
  llvm.func @printNewline()
  llvm.func @main() {
    %c = llvm.mlir.constant(255 : i64) : i64
    %n = llvm.call @__popcountdi2(%c) : (i64) -> i32
    %w = llvm.sext %n : i32 to i64
    llvm.call @printI64(%w) : (i64) -> ()
    llvm.call @printNewline() : () -> ()
    llvm.return
  }
}
