// Upstream and stc passes mixed at every nesting level, with options: runs
// of upstream passes go to MLIR as text, stc passes are spliced in between.

// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(canonicalize,stc-test-annotate{key=stc.fn value="in func"}),cse,stc-test-annotate)' | FileCheck %s --check-prefix=MIXED

// MIXED: module attributes {stc.test = "annotated"}
// MIXED-LABEL: func.func @fold
// MIXED-SAME: attributes {stc.fn = "in func"}
// MIXED-NEXT: return %{{.*}} : i32
// MIXED-LABEL: func.func @dup
// MIXED-SAME: attributes {stc.fn = "in func"}
// MIXED-NEXT: %[[SUM:.*]] = arith.addi
// MIXED-NEXT: return %[[SUM]], %[[SUM]]

// An stc pass first and last, stc and upstream passes alternating inside a
// nested group, whitespace between elements, a quoted option value.
// RUN: stc-opt %s --pass-pipeline='builtin.module( stc-test-annotate{key=stc.first} , func.func( cse , stc-test-annotate{key=fn value=x} ) , canonicalize , stc-test-annotate{key=stc.last value='"'"'quoted value'"'"'} )' | FileCheck %s --check-prefix=ORDER

// ORDER: module attributes {stc.first = "annotated", stc.last = "quoted value"}
// ORDER-LABEL: func.func @fold
// ORDER-SAME: attributes {fn = "x"}
// ORDER-LABEL: func.func @dup
// ORDER-SAME: attributes {fn = "x"}

// A nested group of upstream passes only goes to MLIR unchanged, nested
// braces in upstream options included.
// RUN: stc-opt %s --pass-pipeline='builtin.module(inline{default-pipeline="canonicalize{max-iterations=2}" op-pipelines=func.func(cse)},func.func(canonicalize),stc-test-annotate{key=stc.k})' | FileCheck %s --check-prefix=UPSTREAM

// UPSTREAM: module attributes {stc.k = "annotated"}
// UPSTREAM-LABEL: func.func @fold
// UPSTREAM-NEXT: return %{{.*}} : i32

// An empty pipeline only parses, verifies and prints.
// RUN: stc-opt %s --pass-pipeline='builtin.module()' | FileCheck %s --check-prefix=EMPTY
// RUN: stc-opt %s --pass-pipeline='' | FileCheck %s --check-prefix=EMPTY
// EMPTY-LABEL: func.func @fold
// EMPTY-NEXT: arith.constant 0 : i32
// EMPTY-NEXT: arith.addi

// Several --pass-pipeline options and pass flags append in order.
// RUN: stc-opt %s --pass-pipeline='builtin.module(stc-test-annotate{key=stc.a})' --stc-test-annotate='key=stc.b' --pass-pipeline='builtin.module(func.func(stc-test-annotate{key=c}))' | FileCheck %s --check-prefix=APPEND
// APPEND: module attributes {stc.a = "annotated", stc.b = "annotated"}
// APPEND-LABEL: func.func @fold
// APPEND-SAME: attributes {c = "annotated"}

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
