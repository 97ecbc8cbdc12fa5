// Deliberately invalid schedule for check-all.sh's self-test: the tiling op
// declares 2 loop results for 3 tiled loops, which the transform dialect
// verifier rejects. check-all.sh must report apply-failed for it.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matmul_bad_script(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "matmul", stc.dynamic = "yes"} {
    %tiled, %loops:2 = transform.structured.tile_using_for %op tile_sizes [32, 32, 32]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
