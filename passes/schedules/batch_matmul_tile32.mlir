// Schedule batch_matmul_tile32 (batch_matmul). Tiles 1x32x32x32 with scf.for; the tile stays a linalg op
// (scalar loops after lowering).
// Convention (README.md): @batch_matmul_tile32 receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @batch_matmul_tile32(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "batch_matmul", stc.dynamic = "yes", stc.tier = 3} {
    %tiled, %loops:4 = transform.structured.tile_using_for %op tile_sizes [1, 32, 32, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
