// Schedule matmul_pack_vec (matmul). Packs the operands into 8x32x16 (m, n, k) tiles
// (linalg.pack, mmt4d-style blocked layout), tiles the packed op to one
// block per iteration, vectorizes it, and lowers pack/unpack to transposes.
// pack_greedily pads partial blocks with zeros, so any shape works (the
// padding costs copies when 8, 32 or 16 do not divide the shape).
// Convention (README.md): @matmul_pack_vec receives the one target op; it may rewrite
// only that op and its enclosing isolated-from-above op (the function).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matmul_pack_vec(%op: !transform.any_op {transform.consumed})
      attributes {stc.kind = "matmul", stc.dynamic = "yes", stc.tier = 2} {
    // The function around the op: where apply_patterns may act.
    %func = transform.get_parent_op %op {isolated_from_above}
        : (!transform.any_op) -> !transform.any_op
    %packed = transform.structured.pack_greedily %op
        matmul_packed_sizes = [8, 32, 16] matmul_inner_dims_order = [0, 2, 1]
        : (!transform.any_op) -> !transform.op<"linalg.generic">
    %tiled, %loops:3 = transform.structured.tile_using_for %packed tile_sizes [1, 1, 1]
        : (!transform.op<"linalg.generic">) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tiled : !transform.any_op
    %packs = transform.structured.match ops{["linalg.pack"]} in %func
        : (!transform.any_op) -> !transform.op<"linalg.pack">
    transform.structured.lower_pack %packs : (!transform.op<"linalg.pack">)
        -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    %unpacks = transform.structured.match ops{["linalg.unpack"]} in %func
        : (!transform.any_op) -> !transform.op<"linalg.unpack">
    transform.structured.lower_unpack %unpacks : (!transform.op<"linalg.unpack">)
        -> (!transform.op<"tensor.empty">, !transform.op<"linalg.transpose">,
            !transform.op<"tensor.collapse_shape">, !transform.op<"tensor.extract_slice">)
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
