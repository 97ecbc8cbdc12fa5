// An OpenMP entry point the lazy ones (runtime/openmp_jit.h) do not cover:
// omp_get_max_threads, called after a parallel region; prints 1.
module {
  llvm.func @omp_get_max_threads() -> i32
  llvm.func @printI64(i64)
  llvm.func @printNewline()
  llvm.func @main() {
    omp.parallel {
      omp.terminator
    }
    %n = llvm.call @omp_get_max_threads() : () -> i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %ok = llvm.icmp "sge" %n, %c1 : i32
    %z = llvm.zext %ok : i1 to i64
    llvm.call @printI64(%z) : (i64) -> ()
    llvm.call @printNewline() : () -> ()
    llvm.return
  }
}
