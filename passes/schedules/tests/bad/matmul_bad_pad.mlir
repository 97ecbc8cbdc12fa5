// Deliberately broken schedule for check-all.sh's self-test: it pads partial
// tiles with 1.0 instead of the additive identity, so every matmul whose sizes
// 32 does not divide gets a wrong result. check-all.sh must report
// WRONG-RESULT for it (on the non-divisible case); never use it.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matmul_bad_pad(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "matmul", stc.dynamic = "yes"} {
    %tiled, %loops:3 = transform.structured.tile_using_for %op tile_sizes [32, 32, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %padded, %pad, %copy = transform.structured.pad %tiled
        {padding_values = [1.0 : f32, 1.0 : f32, 0.0 : f32], padding_dimensions = [0, 1, 2]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
