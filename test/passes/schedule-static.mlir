// Without a profile, stc-hot-path-schedule ranks regions by a static cost
// estimate: FLOPs (2 x the iteration domain of a contraction) plus the bytes
// of its operands and results. The bigger matmul ranks first although it
// comes second; a dynamic dimension counts as 1 and the remark says so.

// RUN: stc-opt --verify-diagnostics --stc-hot-path-schedule %s
// RUN: stc-opt --stc-hot-path-schedule %s 2>/dev/null | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: stc.hotness = "cold", stc.plan = "default", stc.rank = 4 : i64
// CHECK: linalg.matmul {stc.hotness = "cold", stc.plan = "default", stc.rank = 2 : i64
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK: linalg.matmul {stc.hotness = "hot", stc.plan = "variants:4", stc.rank = 1 : i64
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<128x128xf32>, tensor<128x128xf32>)
// CHECK: linalg.matmul {stc.hotness = "cold", stc.plan = "default", stc.rank = 3 : i64
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<16x16xf32>)

// expected-remark@+1 {{no profile: ranked by static cost estimate (FLOPs + bytes); 4 regions: 1 hot, 0 warm, 3 cold; 4 of 16 variants planned}}
module {
  // expected-remark@+1 {{rank 4 of 4, cold, 0.0% of estimated cost (0 FLOPs + 0 bytes), plan default (function body)}}
  func.func @main(%small: tensor<8x8xf32>, %big: tensor<128x128xf32>,
                  %dyn: tensor<?x16xf32>, %w: tensor<16x16xf32>)
      -> (tensor<8x8xf32>, tensor<128x128xf32>, tensor<?x16xf32>) {
    // 2*8*8*8 = 1024 FLOPs; 4 x 256 bytes.
    // expected-remark@+1 {{rank 2 of 4, cold, 0.0% of estimated cost (1024 FLOPs + 1024 bytes), plan default}}
    %0 = linalg.matmul ins(%small, %small : tensor<8x8xf32>, tensor<8x8xf32>)
                       outs(%small : tensor<8x8xf32>) -> tensor<8x8xf32>
    // 2*128^3 = 4194304 FLOPs; 4 x 65536 bytes.
    // expected-remark@+1 {{rank 1 of 4, hot, 99.9% of estimated cost (4194304 FLOPs + 262144 bytes), plan variants:4}}
    %1 = linalg.matmul ins(%big, %big : tensor<128x128xf32>, tensor<128x128xf32>)
                       outs(%big : tensor<128x128xf32>) -> tensor<128x128xf32>
    // 2*1*16*16 = 512 FLOPs; 64 + 1024 + 64 + 64 bytes.
    // expected-remark@+1 {{rank 3 of 4, cold, 0.0% of estimated cost (512 FLOPs + 1216 bytes, dynamic dims counted as 1), plan default}}
    %2 = linalg.matmul ins(%dyn, %w : tensor<?x16xf32>, tensor<16x16xf32>)
                       outs(%dyn : tensor<?x16xf32>) -> tensor<?x16xf32>
    return %0, %1, %2 : tensor<8x8xf32>, tensor<128x128xf32>, tensor<?x16xf32>
  }
}
