// --stc-<pass>[=opts] and upstream --<pass>[=opts] flags append to the
// pipeline in command-line order; a flag for a pass anchored on another op
// nests implicitly, as mlir-opt's pass flags do.

// RUN: stc-opt %s --canonicalize --stc-test-annotate='key=stc.flag value="a b"' --cse | FileCheck %s
// CHECK: module attributes {stc.flag = "a b"}
// CHECK-LABEL: func.func @fold
// CHECK-NEXT: return %{{.*}} : i32
// CHECK-LABEL: func.func @dup
// CHECK-NEXT: %[[SUM:.*]] = arith.addi
// CHECK-NEXT: return %[[SUM]], %[[SUM]]

// Single dashes work too; upstream flags may carry options.
// RUN: stc-opt %s -canonicalize=max-iterations=2 -stc-test-annotate | FileCheck %s --check-prefix=SINGLE
// SINGLE: module attributes {stc.test = "annotated"}

// The order is the command line's (see the IR dumps).
// RUN: stc-opt %s --cse --stc-test-annotate --canonicalize --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: IR Dump After CSE (cse)
// ORDER: IR Dump After StcTestAnnotate (stc-test-annotate)
// ORDER: IR Dump After Canonicalizer (canonicalize)

// stc-test-fail runs on func.func: as a flag it nests under the module.
// RUN: stc-opt %s --stc-test-fail='message="flag failure"' 2> %t.err; test $? = 1
// RUN: FileCheck %s --check-prefix=NESTED < %t.err
// NESTED: shortcut-flags.mlir:[[# @LINE + 7]]:1: error: flag failure
// NESTED: shortcut-flags.mlir:[[# @LINE + 12]]:1: error: flag failure

// Upstream pass flags known to mlir-opt work the same way.
// RUN: stc-opt %s --convert-linalg-to-loops --cse | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @fold

func.func @fold(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %y = arith.addi %x, %c0 : i32
  return %y : i32
}

func.func @dup(%x: i32) -> (i32, i32) {
  %a = arith.addi %x, %x : i32
  %b = arith.addi %x, %x : i32
  return %a, %b : i32, i32
}
