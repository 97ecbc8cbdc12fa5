// Schedule conv_parallel_decompose_vec (conv_2d_nhwc_hwcf). conv_decompose_vec (the default
// lowering of this kind) on every core: tile_using_forall over blocks of 4
// output rows (OpenMP), then inside each block the same tiles [1,1,8,16,1,1,8]
// padded to static size, decomposed to conv_1d_nwc_wcf and vectorized.
// Convention (README.md): @conv_parallel_decompose_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @conv_parallel_decompose_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "conv_2d_nhwc_hwcf", stc.dynamic = "yes", stc.tier = 1} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %block, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tiled, %loops:7 = transform.structured.tile_using_for %block tile_sizes [1, 1, 8, 16, 1, 1, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // Pad each tile to its static size with zeros: the convolution vectorizer
    // rejects dynamic (partial) tiles.
    %padded, %pad, %copy = transform.structured.pad %tiled
        {padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], padding_dimensions = [0, 1, 2, 3, 4, 5, 6]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %conv1d = transform.structured.decompose %padded : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %conv1d : !transform.any_op
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
