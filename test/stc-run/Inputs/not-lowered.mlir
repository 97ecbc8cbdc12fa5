// Still in the func dialect: stc-run refuses it with its location.
func.func @main() {
  return
}
