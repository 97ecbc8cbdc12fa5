// Schedule matmul_tile64x64x128_reg8x32_vec (matmul). Two-level tiling: 64x64x128 cache blocks, each
// tiled 8x32x8 with scf.for; the 8x32x8 register tiles are vectorized (masked
// where partial) and lowered to FMAs (an 8x32 accumulator fits the vector
// registers, unlike a 32x32 one).
// Convention (README.md): @matmul_tile64x64x128_reg8x32_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matmul_tile64x64x128_reg8x32_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "matmul", stc.dynamic = "yes", stc.tier = 2} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:3 = transform.structured.tile_using_for %op tile_sizes [64, 64, 128]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %inner, %iloops:3 = transform.structured.tile_using_for %tiled tile_sizes [8, 32, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %inner vector_sizes [8, 32, 8] {create_named_contraction}
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
