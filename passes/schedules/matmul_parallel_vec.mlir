// Schedule matmul_parallel_vec (matmul). Distributes 64x64 output blocks over threads with
// scf.forall (lowered to OpenMP: needs libomp at run time), then tiles each
// block 32x32x32 and vectorizes it like matmul_tile32_vec.
// Convention (README.md): @matmul_parallel_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matmul_parallel_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "matmul", stc.dynamic = "yes", stc.tier = 2} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %block, %forall = transform.structured.tile_using_forall %op tile_sizes [64, 64]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tiled, %loops:3 = transform.structured.tile_using_for %block tile_sizes [32, 32, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tiled vector_sizes [32, 32, 32] {create_named_contraction}
        : !transform.any_op
    // Masked transfers become transfers with a mask operand right away: when
    // the output fits in one tile the tile loops fold away, and canonicalization
    // would then fold a tensor.cast into a vector.mask body ("'vector.mask' op
    // expects only one operation to mask").
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    // Vector lowering the LLVM conversion cannot do on its own: fold the
    // vectorizer's multi_reduction into vector.contract, then unroll that into
    // outer products (FMAs); otherwise multi_reduction survives to LLVM.
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
