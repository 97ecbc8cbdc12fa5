module {
  llvm.func @main( {
}
