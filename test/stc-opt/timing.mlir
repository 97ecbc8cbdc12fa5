// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(cse),stc-test-annotate)' --mlir-timing -o /dev/null 2>&1 | FileCheck %s

// CHECK: Execution time report
// CHECK: Total Execution Time: {{[0-9.]+}} seconds
// CHECK: ----Wall Time----  ----Name----
// CHECK: 'func.func' Pipeline
// CHECK: CSE
// CHECK: StcTestAnnotate
// CHECK: Total

// Without the flag, no report.
// RUN: stc-opt %s --cse -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=NONE
// NONE-NOT: Execution time report

func.func @f() {
  return
}
