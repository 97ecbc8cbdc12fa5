// Errors a user can cause with stc-instrument: a symbol that already uses a
// region timer name with another type, and bad or unknown options.

// RUN: stc-opt --verify-diagnostics --split-input-file --stc-instrument %s
// RUN: not stc-opt --stc-instrument='ops=matmul' %s 2>&1 | FileCheck %s --check-prefix=OPNAME
// OPNAME: stc-instrument: option 'ops': 'matmul' is not an op name (expected <dialect>.<op>, e.g. linalg.matmul)
// RUN: not stc-opt --pass-pipeline='builtin.module(stc-instrument{ops=linalg.matmul,,linalg.add})' %s 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: stc-instrument: option 'ops': '' is not an op name
// RUN: not stc-opt --stc-instrument='functions=sometimes' %s 2>&1 | FileCheck %s --check-prefix=BOOL
// BOOL: stc-instrument: option 'functions': expected true or false, got 'sometimes'
// RUN: not stc-opt --stc-instrument='bogus=1' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown option 'bogus'

module {
  // expected-error@+1 {{symbol @stc_rt_region_begin already exists but is not the region timer's func.func (!llvm.ptr) -> i64}}
  func.func private @stc_rt_region_begin(i64) -> i64
  func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

module {
  // expected-error@+1 {{symbol @stc_rt_region_end already exists but is not the region timer's func.func (!llvm.ptr, i64, i64) -> ()}}
  llvm.mlir.global internal constant @stc_rt_region_end(0 : i32) : i32
  func.func @g() {
    return
  }
}
