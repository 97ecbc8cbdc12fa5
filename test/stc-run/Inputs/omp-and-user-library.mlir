// A parallel region, then a function of a --shared-libs library
// (Inputs/user-library.c): prints 42.
module {
  llvm.func @stc_test_user_value() -> i64
  llvm.func @printI64(i64)
  llvm.func @printNewline()
  llvm.func @main() {
    omp.parallel {
      omp.terminator
    }
    %v = llvm.call @stc_test_user_value() : () -> i64
    llvm.call @printI64(%v) : (i64) -> ()
    llvm.call @printNewline() : () -> ()
    llvm.return
  }
}
