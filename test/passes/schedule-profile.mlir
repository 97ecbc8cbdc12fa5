// stc-hot-path-schedule with a profile (Inputs/schedule-profile.yaml, ids
// taken from stc-instrument's output for this file): the matmul that holds
// 91% of the time is hot and gets variants-per-hot variants; the second
// matmul is warm and gets variants-per-warm; the elementwise generic is warm
// but not tunable; the reduction ran once for 0.05% and is cold; @main keeps
// only its self time. Two stale entries are counted and ignored.

// RUN: stc-opt --verify-diagnostics --stc-hot-path-schedule='profile=%S/Inputs/schedule-profile.yaml' %s
// RUN: stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-profile.yaml' %s 2>/dev/null | FileCheck %s

// The same profile applies to the instrumented program: the ids that
// stc-instrument wrote are the ones the pass computes on the original.
// RUN: stc-opt --stc-instrument %s | stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-profile.yaml' 2>/dev/null | FileCheck %s --check-prefix=INST

// RUN: stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-profile.yaml min-samples=11' %s 2>/dev/null | FileCheck %s --check-prefix=SAMPLES

// CHECK-LABEL: func.func @main(
// CHECK-SAME: stc.hotness = "warm", stc.plan = "default", stc.rank = 4 : i64, stc.share = 1.050000e-02 : f64
// CHECK: linalg.matmul {stc.hotness = "hot", stc.plan = "variants:4", stc.rank = 1 : i64, stc.share = 9.100000e-01 : f64}
// CHECK: linalg.matmul {stc.hotness = "warm", stc.plan = "variants:2", stc.rank = 2 : i64, stc.share = 4.000000e-02 : f64}
// CHECK: linalg.generic
// CHECK-SAME: {stc.hotness = "warm", stc.plan = "default", stc.rank = 3 : i64, stc.share = 3.900000e-02 : f64}
// CHECK: linalg.generic
// CHECK-SAME: {stc.hotness = "cold", stc.plan = "default", stc.rank = 5 : i64, stc.share = 5.000000e-04 : f64}

// INST-LABEL: func.func @main(
// INST-SAME: stc.hotness = "warm", stc.plan = "default", stc.rank = 4 : i64
// INST-SAME: stc.region = "main/func.func#783619a2"
// INST: linalg.matmul {stc.hotness = "hot", stc.plan = "variants:4", stc.rank = 1 : i64, stc.region = "main/linalg.matmul#f2380f69"
// INST: linalg.matmul {stc.hotness = "warm", stc.plan = "variants:2", stc.rank = 2 : i64, stc.region = "main/linalg.matmul#f2380f69.1"
// INST: = linalg.generic
// INST-SAME: {stc.hotness = "warm", stc.plan = "default", stc.rank = 3 : i64, stc.region = "main/linalg.generic#d05b3648"
// INST: = linalg.generic
// INST-SAME: {stc.hotness = "cold", stc.plan = "default", stc.rank = 5 : i64, stc.region = "main/linalg.generic#24f2409b"

// With min-samples above every count, no region has enough evidence.
// SAMPLES: linalg.matmul {stc.hotness = "cold", stc.plan = "default", stc.rank = 1 : i64
// SAMPLES: linalg.matmul {stc.hotness = "cold", stc.plan = "default", stc.rank = 2 : i64

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// The summary names the counts: 7 entries, 5 matched, 2 stale.
// expected-remark@+1 {{schedule-profile.yaml': 7 entries, 5 matched, 2 stale; 5 regions: 1 hot, 3 warm, 1 cold; 6 of 16 variants planned}}
module {
  // expected-remark@+1 {{region 'main/func.func#783619a2': rank 4 of 5, warm, 1.1% of profiled time (10 calls, 10500 ns self), plan default (function body)}}
  func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>,
                  %v: tensor<64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
    // expected-remark@+1 {{region 'main/linalg.matmul#f2380f69': rank 1 of 5, hot, 91.0% of profiled time (10 calls, 910000 ns), plan variants:4}}
    %0 = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>)
                       outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
    // expected-remark@+1 {{region 'main/linalg.matmul#f2380f69.1': rank 2 of 5, warm, 4.0% of profiled time (10 calls, 40000 ns), plan variants:2}}
    %1 = linalg.matmul ins(%0, %b : tensor<64x64xf32>, tensor<64x64xf32>)
                       outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
    // expected-remark@+1 {{region 'main/linalg.generic#d05b3648': rank 3 of 5, warm, 3.9% of profiled time (10 calls, 39000 ns), plan default (not a tunable op)}}
    %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%1 : tensor<64x64xf32>) outs(%0 : tensor<64x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    // expected-remark@+1 {{region 'main/linalg.generic#24f2409b': rank 5 of 5, cold, 0.1% of profiled time (1 call, 500 ns), plan default}}
    %3 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%2 : tensor<64x64xf32>) outs(%v : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    return %2, %3 : tensor<64x64xf32>, tensor<64xf32>
  }
}
