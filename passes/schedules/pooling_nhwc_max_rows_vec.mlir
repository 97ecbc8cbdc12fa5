// Schedule pooling_nhwc_max_rows_vec (pooling_nhwc_max). Tiles the pooling (n, oh, ow, c,
// kh, kw) by [1, 1, 0, 0, 1, 0] - one output row and one window row at a time,
// whole rows of (ow, c) - decomposes each tile into linalg.pooling_nwc_max and
// vectorizes it (any stride). Static shapes only: the pooling vectorizer needs
// static tiles, and padding partial tiles instead (tile ow/c, pad, decompose,
// vectorize) ran 6x slower than the scalar reference on 25x27x10 (padding
// copies per tile), so no dynamic-shape pooling schedule is offered.
// Convention (README.md): @pooling_nhwc_max_rows_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @pooling_nhwc_max_rows_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "pooling_nhwc_max", stc.dynamic = "static"} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:3 = transform.structured.tile_using_for %op tile_sizes [1, 1, 0, 0, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %pool1d = transform.structured.decompose %tiled : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %pool1d : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
