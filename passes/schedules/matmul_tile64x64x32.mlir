// Schedule matmul_tile64x64x32 (matmul). Tiles 64x64x32 with scf.for; the tile stays a linalg op
// (scalar loops after lowering).
// Convention (README.md): @matmul_tile64x64x32 receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matmul_tile64x64x32(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "matmul", stc.dynamic = "yes", stc.tier = 3} {
    %tiled, %loops:3 = transform.structured.tile_using_for %op tile_sizes [64, 64, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
