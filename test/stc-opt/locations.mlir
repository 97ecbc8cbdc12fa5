// Diagnostics show the innermost file location of fused, name and call-site
// locations, like mlir-opt.
// RUN: stc-opt %s --stc-test-fail 2> %t.err; test $? = 1
// RUN: FileCheck %s < %t.err

// CHECK-DAG: {{^}}fused.mlir:11:22: error: stc-test-fail: failure requested
// CHECK-DAG: {{^}}named.mlir:12:5: error: stc-test-fail: failure requested
// CHECK-DAG: {{^}}callee.mlir:13:7: error: stc-test-fail: failure requested
// CHECK-DAG: {{^}}<unknown>:0: error: stc-test-fail: failure requested
// CHECK-DAG: {{^}}caller.mlir:14:1: error: stc-test-fail: failure requested

func.func @fused() {
  return
} loc(fused<"metadata">["fused.mlir":11:22, "other.mlir":1:1])

func.func @named() {
  return
} loc("a name"("named.mlir":12:5))

func.func @callsite() {
  return
} loc(callsite("callee.mlir":13:7 at "caller.mlir":14:1))

func.func @unknown() {
  return
} loc(unknown)

func.func @callsite_unknown_callee() {
  return
} loc(callsite(unknown at "caller.mlir":14:1))
