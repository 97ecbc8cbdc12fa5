// A registered op that no conversion of the pipeline lowers.
module {
  func.func @f() -> !shape.size {
    %0 = shape.const_size 3
    return %0 : !shape.size
  }
}
