// A failing pass: its diagnostics at their locations, no output, exit 1.
// RUN: stc-opt %s --pass-pipeline='builtin.module(func.func(stc-test-fail{message="this function failed"}))' > %t.out 2> %t.err; test $? = 1
// RUN: FileCheck %s < %t.err
// RUN: FileCheck %s --allow-empty --check-prefix=NO-OUTPUT < %t.out
// CHECK: pass-failure.mlir:[[# @LINE + 10]]:1: error: this function failed
// CHECK-NEXT: {{^}}func.func @f() {
// CHECK-NEXT: {{^}}^
// NO-OUTPUT-NOT: {{.}}

// A pass that fails without saying why still gets a message.
// RUN: stc-opt %s --stc-test-fail=silent 2> %t.err; test $? = 1
// RUN: FileCheck %s --check-prefix=SILENT < %t.err
// SILENT: stc-opt: error: the pass pipeline failed on '{{.*}}pass-failure.mlir' without a diagnostic

func.func @f() {
  return
}

// A bad option value is caught before anything runs (exit 2).
// RUN: stc-opt %s --stc-test-fail='silent=maybe' 2> %t.err; test $? = 2
// RUN: FileCheck %s --check-prefix=BAD-VALUE < %t.err
// BAD-VALUE: stc-opt: error: in option '--stc-test-fail=silent=maybe': cannot create pass 'stc-test-fail': bad value 'maybe' for option 'silent' of 'stc-test-fail': expected true or false
