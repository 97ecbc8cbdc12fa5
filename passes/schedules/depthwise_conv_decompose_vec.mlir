// Schedule depthwise_conv_decompose_vec (depthwise_conv_2d_nhwc_hwc). Tiles the
// convolution (n, oh, ow, c, kh, kw) by [1, 1, 8, 16, 1, 1], pads each tile to
// that static size with zeros (partial tiles), decomposes the 1-row tile into
// linalg.depthwise_conv_1d_nwc_wc and vectorizes it (elementwise FMAs along
// the channels).
// Convention (README.md): @depthwise_conv_decompose_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @depthwise_conv_decompose_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "depthwise_conv_2d_nhwc_hwc", stc.dynamic = "yes"} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:6 = transform.structured.tile_using_for %op tile_sizes [1, 1, 8, 16, 1, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // The conv vectorizer rejects dynamic (masked) tiles: pad to static instead.
    %padded, %pad, %copy = transform.structured.pad %tiled
        {padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], padding_dimensions = [0, 1, 2, 3, 4, 5]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %conv1d = transform.structured.decompose %padded : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %conv1d : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
