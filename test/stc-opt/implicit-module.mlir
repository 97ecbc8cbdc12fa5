// Several top-level ops and aliases go into an implicit module, as in
// mlir-opt, keeping every line and column of the input.
// RUN: stc-opt %s | FileCheck %s
// RUN: stc-opt %s --stc-test-fail 2> %t.err; test $? = 1
// RUN: FileCheck %s --check-prefix=ERR < %t.err

// CHECK: #[[MAP:.*]] = affine_map<(d0) -> (d0 + 1)>
// CHECK: module {
// CHECK-LABEL: func.func @first
// CHECK-SAME: attributes {m = #[[MAP]]}
// CHECK-LABEL: func.func @second
// CHECK-SAME: attributes {t = i32}

// ERR: implicit-module.mlir:[[# @LINE + 4]]:3: error: stc-test-fail
// ERR: implicit-module.mlir:[[# @LINE + 8]]:1: error: stc-test-fail

#map = affine_map<(d0) -> (d0 + 1)>
  func.func @first() attributes {m = #map} {
    return
  }
!int = i32
// An alias between ops is fine too.
func.func @second() attributes {t = !int} {
  return
}

// A single op that is not a module is wrapped too.
// RUN: echo 'func.func @single() { return }' | stc-opt | FileCheck %s --check-prefix=SINGLE
// SINGLE: module {
// SINGLE-NEXT: func.func @single()

// An input with no op at all is an empty module.
// RUN: stc-opt < /dev/null | FileCheck %s --check-prefix=NOTHING
// NOTHING: module {
// NOTHING-NEXT: }
