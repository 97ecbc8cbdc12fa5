// Schedule batch_matmul_mkn (batch_matmul). No tiling: generalizes the op and interchanges its
// loops to (b, m, k, n), so the innermost loop walks rows of B and C
// contiguously (scalar code, left to LLVM).
// Convention (README.md): @batch_matmul_mkn receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @batch_matmul_mkn(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "batch_matmul", stc.dynamic = "yes", stc.tier = 3} {
    %generic = transform.structured.generalize %op : (!transform.any_op) -> !transform.any_op
    %swapped = transform.structured.interchange %generic iterator_interchange = [0, 1, 3, 2]
        : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
