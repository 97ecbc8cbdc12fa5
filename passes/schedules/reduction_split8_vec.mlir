// Schedule reduction_split8_vec (reduction). For a linalg.generic with iterators
// [parallel, reduction]: split_reduction by 8 (inner parallel): the reduction
// runs as N/8 steps over 8 independent lanes, then the 8 lanes are combined;
// tiles the parallel dimension by 1 and vectorizes. Only when 8 divides the
// static reduction size: split_reduction rejects other shapes.
// Convention (README.md): @reduction_split8_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @reduction_split8_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "reduction", stc.dynamic = "divisible"} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    // Precondition: exactly 2 loops, [parallel, reduction]; any other
    // reduction fails here with a clear message instead of half-applying.
    %checked = transform.match.structured failures(propagate) %op
        : (!transform.any_op) -> !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %rank = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %two : !transform.param<i64>
      transform.match.structured.dim %s[0] {parallel} : !transform.any_op
      transform.match.structured.dim %s[1] {reduction} : !transform.any_op
      transform.match.structured.yield %s : !transform.any_op
    }
    %init, %fill, %split, %combine = transform.structured.split_reduction %op
        {split_factor = 8, insert_split_dimension = 1, inner_parallel}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %tiled, %loops:1 = transform.structured.tile_using_for %split tile_sizes [1, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %tiled : !transform.any_op
    %ctiled, %cloops:1 = transform.structured.tile_using_for %combine tile_sizes [1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %ctiled : !transform.any_op
    // multi_reduction has no direct LLVM lowering: turn it into vector.reduction
    // / elementwise adds along the innermost dimension.
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
