// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(canonicalize),stc-test-annotate)' --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s

// One dump per pass and per op it ran on, in pipeline order.
// CHECK: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHECK-NEXT: func.func @fold(%[[X:.*]]: i32) -> i32 {
// CHECK-NEXT:   return %[[X]] : i32
// CHECK: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHECK-NEXT: func.func @other()
// CHECK: // -----// IR Dump After StcTestAnnotate (stc-test-annotate) //----- //
// CHECK-NEXT: module attributes {stc.test = "annotated"} {
// CHECK-NOT: IR Dump

// The dumps honour the printing flags.
// RUN: stc-opt %s --canonicalize --mlir-print-ir-after-all --mlir-print-op-generic -o /dev/null 2>&1 | FileCheck %s --check-prefix=GENERIC
// GENERIC: IR Dump After Canonicalizer (canonicalize)
// GENERIC-NEXT: "builtin.module"() ({

func.func @fold(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %y = arith.addi %x, %c0 : i32
  return %y : i32
}

func.func @other() {
  return
}
