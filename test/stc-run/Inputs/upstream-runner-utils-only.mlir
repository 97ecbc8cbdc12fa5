// Functions only upstream's runner utilities define (rtsrand, rtrand and
// rtdrand of libmlir_c_runner_utils), besides one stc's own define
// (printI64): prints 1 when the random number is below its bound.
module {
  llvm.func @rtsrand(i64) -> !llvm.ptr
  llvm.func @rtrand(!llvm.ptr, i64) -> i64
  llvm.func @rtdrand(!llvm.ptr)
  llvm.func @printI64(i64)
  llvm.func @printNewline()
  llvm.func @main() {
    %seed = llvm.mlir.constant(7 : i64) : i64
    %bound = llvm.mlir.constant(100 : i64) : i64
    %g = llvm.call @rtsrand(%seed) : (i64) -> !llvm.ptr
    %r = llvm.call @rtrand(%g, %bound) : (!llvm.ptr, i64) -> i64
    llvm.call @rtdrand(%g) : (!llvm.ptr) -> ()
    %ok = llvm.icmp "ule" %r, %bound : i64
    %z = llvm.zext %ok : i1 to i64
    llvm.call @printI64(%z) : (i64) -> ()
    llvm.call @printNewline() : () -> ()
    llvm.return
  }
}
