// Schedule vecmat_kn_tile16x64_vec (vecmat). Tiles linalg.vecmat (n, k) by
// 64x16 with the tile loops interchanged to (k, n), so A is streamed row block
// by row block, vectorizes each tile (masked where partial) and reduces over k
// with elementwise adds (lower_multi_reduction "innerparallel": n stays the
// vector dimension, no horizontal reductions).
// Convention (README.md): @vecmat_kn_tile16x64_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @vecmat_kn_tile16x64_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "vecmat", stc.dynamic = "yes"} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:2 = transform.structured.tile_using_for %op tile_sizes [64, 16] interchange = [1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tiled vector_sizes [64, 16] : !transform.any_op
    // Masked transfers become transfers with a mask operand right away (see
    // matmul_tile32_vec.mlir: a one-tile output otherwise breaks vector.mask).
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerparallel"
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
