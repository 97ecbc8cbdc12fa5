// Schedule conv_im2col (conv_2d_nhwc_hwcf). im2col only: the gather plus a matmul-like
// linalg.generic tiled [1, 32, 32, 16] with scf.for, no vectorization.
// Static shapes only: convert_conv2d_to_img2col rejects dynamic ones.
// Convention (README.md): @conv_im2col receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @conv_im2col(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "conv_2d_nhwc_hwcf", stc.dynamic = "static", stc.tier = 3} {
    %img2col, %result = transform.structured.convert_conv2d_to_img2col %op
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // %result is the expand_shape that replaces the convolution; the
    // matmul-like generic produces its operand.
    %matmul = transform.get_producer_of_operand %result[0]
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:4 = transform.structured.tile_using_for %matmul tile_sizes [1, 32, 32, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
