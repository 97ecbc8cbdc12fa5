// Profiles hold inclusive times (rt_region.h); the scheduling pass ranks a
// function body by its self time: minus its op regions (in place or in
// their outlined functions) and minus the functions it calls. The same
// shares come out for the original and for the instrumented program.

// RUN: stc-opt --verify-diagnostics --stc-hot-path-schedule='profile=%S/Inputs/schedule-self-time.yaml' %s
// RUN: stc-opt --stc-instrument %s | stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-self-time.yaml' 2>&1 >/dev/null | FileCheck %s

// CHECK-DAG: region 'helper/linalg.matmul#ee8e17c5': rank 1 of 3, hot, 80.0% of profiled time (2 calls, 800 ns)
// CHECK-DAG: region 'helper/func.func#8a6b8bba': rank 2 of 3, hot, 10.0% of profiled time (2 calls, 100 ns self)
// CHECK-DAG: region 'main/func.func#4dfc1637': rank 3 of 3, warm, 10.0% of profiled time (1 call, 100 ns self)

// expected-remark@+1 {{3 entries, 3 matched, 0 stale; 3 regions: 2 hot, 1 warm, 0 cold; 4 of 16 variants planned}}
module {
  // expected-remark@+1 {{region 'helper/func.func#8a6b8bba': rank 2 of 3, hot, 10.0% of profiled time (2 calls, 100 ns self)}}
  func.func @helper(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-remark@+1 {{region 'helper/linalg.matmul#ee8e17c5': rank 1 of 3, hot, 80.0% of profiled time (2 calls, 800 ns), plan variants:4}}
    %0 = linalg.matmul ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>)
                       outs(%a : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
  // expected-remark@+1 {{region 'main/func.func#4dfc1637': rank 3 of 3, warm, 10.0% of profiled time (1 call, 100 ns self)}}
  func.func @main(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = func.call @helper(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = func.call @helper(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}
