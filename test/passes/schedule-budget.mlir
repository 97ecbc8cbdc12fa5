// The variant budget is spent hottest first. With every matmul hot
// (hot-share=1) and 4 variants per hot op: budget=6 gives the biggest matmul
// 4 and the next 2 (capped); the two smallest keep the default plan and a
// remark says the budget ran out. budget-ms=100 at 20 ms per variant allows 5.

// RUN: stc-opt --verify-diagnostics --stc-hot-path-schedule='hot-share=1.0 budget=6' %s
// RUN: stc-opt --stc-hot-path-schedule='hot-share=1.0 budget=6' %s 2>/dev/null | FileCheck %s
// RUN: stc-opt --stc-hot-path-schedule='hot-share=1.0 budget-ms=100' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=MS
// A budget of 0 plans no variants at all.
// RUN: stc-opt --stc-hot-path-schedule='budget=0' %s 2>/dev/null | FileCheck %s --check-prefix=ZERO

// CHECK: linalg.matmul {stc.hotness = "hot", stc.plan = "default", stc.rank = 4 : i64
// CHECK: linalg.matmul {stc.hotness = "hot", stc.plan = "default", stc.rank = 3 : i64
// CHECK: linalg.matmul {stc.hotness = "hot", stc.plan = "variants:2", stc.rank = 2 : i64
// CHECK: linalg.matmul {stc.hotness = "hot", stc.plan = "variants:4", stc.rank = 1 : i64

// MS-DAG: region 'main/linalg.matmul#{{.*}}': rank 1 of 5, hot, {{.*}}, plan variants:4
// MS-DAG: region 'main/linalg.matmul#{{.*}}': rank 2 of 5, hot, {{.*}}, plan variants:1
// MS-DAG: region 'main/linalg.matmul#{{.*}}': rank 3 of 5, hot, {{.*}}, plan default (variant budget exhausted)
// MS-DAG: variant budget exhausted after 5 variants; 2 later tunable regions keep the default plan (budget-ms=100 at ~20 ms per variant)
// MS-DAG: 5 of 5 variants planned

// ZERO-NOT: variants:
// ZERO: stc.plan = "default"

// expected-remark@+2 {{variant budget exhausted after 6 variants; 2 later tunable regions keep the default plan}}
// expected-remark@+1 {{5 regions: 4 hot, 0 warm, 1 cold; 6 of 6 variants planned}}
module {
  // expected-remark@+1 {{rank 5 of 5, cold, 0.0% of estimated cost (0 FLOPs + 0 bytes), plan default (function body)}}
  func.func @main(%a32: tensor<32x32xf32>, %a64: tensor<64x64xf32>,
                  %a96: tensor<96x96xf32>, %a128: tensor<128x128xf32>)
      -> (tensor<32x32xf32>, tensor<64x64xf32>, tensor<96x96xf32>, tensor<128x128xf32>) {
    // expected-remark@+1 {{rank 4 of 5, hot, 1.2% of estimated cost (65536 FLOPs + 16384 bytes), plan default (variant budget exhausted)}}
    %0 = linalg.matmul ins(%a32, %a32 : tensor<32x32xf32>, tensor<32x32xf32>)
                       outs(%a32 : tensor<32x32xf32>) -> tensor<32x32xf32>
    // expected-remark@+1 {{rank 3 of 5, hot, 8.4% of estimated cost (524288 FLOPs + 65536 bytes), plan default (variant budget exhausted)}}
    %1 = linalg.matmul ins(%a64, %a64 : tensor<64x64xf32>, tensor<64x64xf32>)
                       outs(%a64 : tensor<64x64xf32>) -> tensor<64x64xf32>
    // expected-remark@+1 {{rank 2 of 5, hot, 27.2% of estimated cost (1769472 FLOPs + 147456 bytes), plan variants:2}}
    %2 = linalg.matmul ins(%a96, %a96 : tensor<96x96xf32>, tensor<96x96xf32>)
                       outs(%a96 : tensor<96x96xf32>) -> tensor<96x96xf32>
    // expected-remark@+1 {{rank 1 of 5, hot, 63.3% of estimated cost (4194304 FLOPs + 262144 bytes), plan variants:4}}
    %3 = linalg.matmul ins(%a128, %a128 : tensor<128x128xf32>, tensor<128x128xf32>)
                       outs(%a128 : tensor<128x128xf32>) -> tensor<128x128xf32>
    return %0, %1, %2, %3 : tensor<32x32xf32>, tensor<64x64xf32>, tensor<96x96xf32>, tensor<128x128xf32>
  }
}
