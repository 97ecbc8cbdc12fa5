// Schedule matvec_blas (matvec). The vendor-BLAS variant: marks the op with
// stc.blas and leaves it whole; after bufferization stc-lower-blas
// (passes/lower_blas.c) replaces the marked op by a call of the runtime's
// stc_rt_blas_matvec_<f32|f64> (include/stc/rt_blas.h), which runs the CBLAS
// library libstc_rt loads with dlopen. stc.requires = "blas" makes the
// variant eligible only where that library loads, and lets stc-multi-variant
// offer it only for ops BLAS computes: f32 or f64 throughout, default maps
// (for matmul / batch_matmul also A and/or B read transposed).
// Any other lowering of the marked op (e.g. check-all.sh's upstream
// pipeline) is the default lowering: still correct, just not BLAS.
// Convention (README.md): @matvec_blas receives the one target op.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @matvec_blas(%op: !transform.any_op {transform.readonly})
      attributes {stc.kind = "matvec", stc.dynamic = "yes", stc.requires = "blas", stc.tier = 0} {
    transform.annotate %op "stc.blas" : !transform.any_op
    transform.yield
  }
}
