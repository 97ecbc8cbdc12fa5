// Schedule matvec_tile_reduction_vec (matvec). Tiles the rows (m) of
// linalg.matvec by 8, then tile_reduction_using_for splits n by 64: each step
// accumulates an 8x64 block of partial products elementwise (no horizontal
// add inside the loop), and one final op reduces the 64 partial sums into y.
// All three ops are vectorized (masked where partial).
// Convention (README.md): @matvec_tile_reduction_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matvec_tile_reduction_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "matvec", stc.dynamic = "yes"} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:1 = transform.structured.tile_using_for %op tile_sizes [8, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %tiled
        by tile_sizes = [0, 64]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill vector_sizes [8, 64] : !transform.any_op
    transform.structured.vectorize %partial vector_sizes [8, 64] : !transform.any_op
    transform.structured.vectorize %combine vector_sizes [8, 64] : !transform.any_op
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
