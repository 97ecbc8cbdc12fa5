// Every error a user can cause with stc-hot-path-schedule: a missing or
// malformed profile (reported on the module, with the profile's own
// file:line:col), and bad or unknown options (reported by stc-opt before
// anything runs).

// RUN: not stc-opt --stc-hot-path-schedule='profile=%t.missing.yaml' %s 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: stc-opt --verify-diagnostics --stc-hot-path-schedule='profile=%t.missing.yaml' %s
// MISSING: error: stc-hot-path-schedule: cannot load profile '{{.*}}missing.yaml': {{.*}}missing.yaml: cannot open profile

// RUN: not stc-opt --stc-hot-path-schedule='profile=%S/Inputs/profile-malformed.yaml' %s 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: stc-opt --verify-diagnostics --stc-hot-path-schedule='profile=%S/Inputs/profile-malformed.yaml' %s
// MALFORMED: error: stc-hot-path-schedule: cannot load profile '{{.*}}profile-malformed.yaml': {{.*}}profile-malformed.yaml:9:12: negative value for 'count'
// A failed load plans nothing: no attribute is written.
// RUN: not stc-opt --stc-hot-path-schedule='profile=%S/Inputs/profile-malformed.yaml' %s 2>/dev/null | FileCheck %s --check-prefix=NOTHING --allow-empty
// NOTHING-NOT: stc.

// RUN: not stc-opt --stc-hot-path-schedule='hot-share=2' %s 2>&1 | FileCheck %s --check-prefix=SHARE
// SHARE: stc-hot-path-schedule: hot share 2 is not in (0, 1]
// RUN: not stc-opt --pass-pipeline='builtin.module(stc-hot-path-schedule{hot-share=0})' %s 2>&1 | FileCheck %s --check-prefix=SHARE0
// SHARE0: stc-hot-path-schedule: hot share 0 is not in (0, 1]
// RUN: not stc-opt --stc-hot-path-schedule='hot-share=0.95 cold-share=0.5' %s 2>&1 | FileCheck %s --check-prefix=COLD
// COLD: stc-hot-path-schedule: cold share 0.5 is not in [hot share 0.95, 1]
// RUN: not stc-opt --stc-hot-path-schedule='hot-share=lots' %s 2>&1 | FileCheck %s --check-prefix=NUMBER
// NUMBER: stc-hot-path-schedule: option 'hot-share': expected a number, got 'lots'
// RUN: not stc-opt --stc-hot-path-schedule='budget=-1' %s 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: stc-hot-path-schedule: option 'budget': expected a non-negative integer, got '-1'
// RUN: not stc-opt --stc-hot-path-schedule='min-samples=99999999999999999999999' %s 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: stc-hot-path-schedule: option 'min-samples': expected a non-negative integer
// RUN: not stc-opt --stc-hot-path-schedule='strict=maybe' %s 2>&1 | FileCheck %s --check-prefix=BOOL
// BOOL: stc-hot-path-schedule: option 'strict': expected true or false, got 'maybe'
// RUN: not stc-opt --stc-hot-path-schedule='bogus=1' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown option 'bogus'

// expected-error@+1 {{cannot load profile}}
module {
  func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}
