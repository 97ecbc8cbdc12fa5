// Transform library for the upstream side (mode ref) of pack-dynamic-inner-
// tile.mlir: lower_pack cannot lower a linalg.pack whose inner tile size is
// dynamic, so (as upstream's test does) each pack is tiled to one outer
// element per iteration, and the tiled pack and its padding are decomposed
// into tensor.pad / linalg.fill / tensor.insert_slice, which bufferize.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %packs = transform.structured.match ops{["linalg.pack"]} in %root
      : (!transform.any_op) -> !transform.any_op
    %tiled, %outer, %inner = transform.structured.tile_using_for %packs tile_sizes [1, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %f = transform.get_parent_op %tiled {isolated_from_above} : (!transform.any_op) -> !transform.op<"func.func">
    transform.apply_patterns to %f {
      transform.apply_patterns.linalg.decompose_pack_unpack
      transform.apply_patterns.linalg.decompose_pad
    } : !transform.op<"func.func">
    transform.yield
  }
}
