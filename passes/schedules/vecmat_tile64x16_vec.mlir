// Schedule vecmat_tile64x16_vec (vecmat). Tiles linalg.vecmat (n, k) by
// 64x16 with scf.for, vectorizes each tile (masked where partial) into a
// vector.contract and lowers that to outer products: per k, y[0:64] +=
// x[k] * A[k, 0:64] (broadcast FMAs along the contiguous n).
// Convention (README.md): @vecmat_tile64x16_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @vecmat_tile64x16_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "vecmat", stc.dynamic = "yes"} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:2 = transform.structured.tile_using_for %op tile_sizes [64, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tiled vector_sizes [64, 16] {create_named_contraction}
        : !transform.any_op
    // Masked transfers become transfers with a mask operand right away (see
    // matmul_tile32_vec.mlir: a one-tile output otherwise breaks vector.mask).
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
