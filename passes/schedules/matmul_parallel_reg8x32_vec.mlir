// Schedule matmul_parallel_reg8x32_vec (matmul). The default lowering's register blocking
// on every core: tile_using_forall over 64x256 output blocks (OpenMP), each
// block tiled 64x256x128 (k blocks) and then 8x32x8 register tiles,
// vectorized (masked where partial) and lowered to FMAs.
// Convention (README.md): @matmul_parallel_reg8x32_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matmul_parallel_reg8x32_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "matmul", stc.dynamic = "yes", stc.tier = 1} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %block, %forall = transform.structured.tile_using_forall %op tile_sizes [64, 256]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %kblock, %kloops:3 = transform.structured.tile_using_for %block tile_sizes [64, 256, 128]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %tiled, %loops:3 = transform.structured.tile_using_for %kblock tile_sizes [8, 32, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tiled vector_sizes [8, 32, 8] : !transform.any_op
    // Masked transfers become transfers with a mask operand right away
    // (README.md, "What does not work").
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
