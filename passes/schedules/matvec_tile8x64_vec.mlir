// Schedule matvec_tile8x64_vec (matvec). Tiles linalg.matvec (m, n) by 8x64
// with scf.for, vectorizes each tile with vector_sizes [8, 64] (masked where
// partial): an 8x64 block of A times the broadcast 64-slice of x, reduced
// along n into 8 outputs (lower_multi_reduction "innerreduction").
// Convention (README.md): @matvec_tile8x64_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matvec_tile8x64_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "matvec", stc.dynamic = "yes"} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:2 = transform.structured.tile_using_for %op tile_sizes [8, 64]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tiled vector_sizes [8, 64] : !transform.any_op
    // Masked transfers become transfers with a mask operand right away (see
    // matmul_tile32_vec.mlir: a one-tile output otherwise breaks vector.mask).
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    // multi_reduction has no direct LLVM lowering: turn it into vector.reduction
    // / elementwise adds along the innermost dimension.
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
