// Schedule conv_nchw_im2col_vec (conv_2d_nchw_fchw). Rewrites the convolution as
// im2col (a gather linalg.generic building the 1 x (C*KH*KW) x (OH*OW) patch
// matrix) plus a matmul-like linalg.generic (n, f, oh*ow, c*kh*kw), tiles that
// [1, 32, 32, 16], pads partial tiles to that size with zeros, vectorizes them
// and lowers the contractions to FMAs. The gather itself stays scalar. Static
// shapes only: convert_conv2d_to_img2col rejects dynamic ones.
// Convention (README.md): @conv_nchw_im2col_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @conv_nchw_im2col_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "conv_2d_nchw_fchw", stc.dynamic = "static"} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %img2col, %result = transform.structured.convert_conv2d_to_img2col %op
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // %result is the expand_shape that replaces the convolution; the
    // matmul-like generic produces its operand.
    %matmul = transform.get_producer_of_operand %result[0]
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:4 = transform.structured.tile_using_for %matmul tile_sizes [1, 32, 32, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // Pad partial tiles instead of masking: the leading unit dimension must be
    // cast away before the contraction lowers to FMAs, and that pattern cannot
    // rewrite inside vector.mask.
    %padded, %pad, %copy = transform.structured.pad %tiled
        {padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], padding_dimensions = [0, 1, 2, 3]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %padded : !transform.any_op
    // Vector lowering the LLVM conversion cannot do on its own: fold the
    // vectorizer's multi_reduction into vector.contract, then unroll that into
    // outer products (FMAs); otherwise multi_reduction survives to LLVM.
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
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
