// Calls a function that no library defines.
module {
  llvm.func @stc_test_no_such_function()
  llvm.func @main() {
    llvm.call @stc_test_no_such_function() : () -> ()
    llvm.return
  }
}
