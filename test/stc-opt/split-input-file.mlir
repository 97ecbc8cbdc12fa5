// RUN: stc-opt %s --split-input-file --stc-test-annotate | FileCheck %s

// Each chunk is its own module; outputs are separated by '// -----'.
// CHECK-LABEL: module attributes {stc.test = "annotated"}
// CHECK-NEXT: func.func @first
// CHECK: // -----
// CHECK-LABEL: module attributes {stc.test = "annotated"}
// CHECK-NEXT: func.func @second
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @third
// CHECK: // -----
// CHECK-LABEL: module attributes {stc.test = "annotated"}
// CHECK-NEXT: func.func @last

// Diagnostics keep the line numbers of the whole file.
// RUN: stc-opt %s --split-input-file --stc-test-fail 2> %t.err; test $? = 1
// RUN: FileCheck %s --check-prefix=FAIL < %t.err
// FAIL: split-input-file.mlir:30:1: error: stc-test-fail: failure requested
// FAIL-NEXT: func.func @first() {
// FAIL: split-input-file.mlir:36:1: error: stc-test-fail: failure requested
// FAIL: split-input-file.mlir:39:1: error: stc-test-fail: failure requested
// FAIL: split-input-file.mlir:45:3: error: stc-test-fail: failure requested
// FAIL-NEXT: {{^}}  func.func @last() {

// Without --split-input-file, the markers are plain comments.
// RUN: stc-opt %s | FileCheck %s --check-prefix=WHOLE
// WHOLE-COUNT-4: func.func

func.func @first() {
  return
}

// -----

func.func @second() {
  return
}
func.func @third() {
  return
}

// -----
module {
  func.func @last() {
    return
  }
}
