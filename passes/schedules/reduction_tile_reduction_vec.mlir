// Schedule reduction_tile_reduction_vec (reduction). For a linalg.generic with iterators
// [parallel, reduction]: tiles the parallel dimension by 8, then
// tile_reduction_using_for by 64: each step accumulates an 8x64 block of
// partial sums elementwise (no horizontal add in the loop), and one final op
// reduces the 64 partial sums into the output. All three ops are vectorized
// (masked where partial).
// Convention (README.md): @reduction_tile_reduction_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @reduction_tile_reduction_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "reduction", stc.dynamic = "yes", stc.tier = 1} {
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
    %tiled, %loops:1 = transform.structured.tile_using_for %op tile_sizes [8, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %tiled
        by tile_sizes = [0, 64]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill vector_sizes [8, 64] : !transform.any_op
    transform.structured.vectorize %partial vector_sizes [8, 64] : !transform.any_op
    transform.structured.vectorize %combine vector_sizes [8, 64] : !transform.any_op
    // Masked transfers become transfers with a mask operand right away: when
    // the output fits in one tile the tile loops fold away, and canonicalization
    // would then fold a tensor.cast into a vector.mask body ("'vector.mask' op
    // expects only one operation to mask").
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    // multi_reduction has no direct LLVM lowering: turn it into vector.reduction
    // / elementwise adds along the innermost dimension.
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
