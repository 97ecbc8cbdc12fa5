// Schedule conv_nchw_decompose_vec (conv_2d_nchw_fchw). Tiles the convolution
// (n, f, oh, ow, c, kh, kw) by [1, 16, 1, 8, 8, 1, 1], pads each tile to that
// static size with zeros (partial tiles), decomposes the 1-row tile into
// linalg.conv_1d_ncw_fcw, vectorizes it and lowers the contractions to FMAs.
// Convention (README.md): @conv_nchw_decompose_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @conv_nchw_decompose_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "conv_2d_nchw_fchw", stc.dynamic = "yes"} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:7 = transform.structured.tile_using_for %op tile_sizes [1, 16, 1, 8, 8, 1, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // The conv vectorizer rejects dynamic (masked) tiles: pad to static instead.
    %padded, %pad, %copy = transform.structured.pad %tiled
        {padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], padding_dimensions = [0, 1, 2, 3, 4, 5, 6]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %conv1d = transform.structured.decompose %padded : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %conv1d : !transform.any_op
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
