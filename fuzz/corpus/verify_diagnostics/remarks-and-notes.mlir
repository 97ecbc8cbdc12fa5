// Remarks print with their severity. MLIR attaches a "see current
// operation: <the whole op>" note to every diagnostic emitted during a pass;
// for remarks (stc's passes emit one per region) it is dropped, as it would
// print each function again.
// RUN: stc-opt %s --transform-interpreter -o /dev/null 2>&1 | FileCheck %s
// CHECK: remarks-and-notes.mlir:[[# @LINE + 13]]:3: remark: found a return
// CHECK-NEXT: {{^}}  return
// CHECK-NEXT: {{^}}  ^
// CHECK-NOT: see current operation

// With --verify-diagnostics they are matched; MLIR's "see current
// operation" notes are not expected, as in mlir-opt.
// RUN: stc-opt %s --transform-interpreter --verify-diagnostics -o /dev/null 2> %t.err
// RUN: FileCheck %s --allow-empty --check-prefix=QUIET < %t.err
// QUIET-NOT: {{.}}

func.func @f() {
  // expected-remark@below {{found a return}}
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %r = transform.structured.match ops{["func.return"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %r, "found a return" : !transform.any_op
    transform.yield
  }
}
