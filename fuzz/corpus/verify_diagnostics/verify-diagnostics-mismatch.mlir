// Unmatched expectations and unexpected diagnostics both fail (exit 1) with
// a message at their location.
// RUN: stc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(stc-test-fail{message=boom}))' 2> %t.err > /dev/null; test $? = 1
// RUN: FileCheck %s < %t.err

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 7]]:1: error: unexpected error: boom
// CHECK-NEXT: func.func @wrong_text()
// CHECK-NEXT: {{^}}^
// CHECK-NEXT: verify-diagnostics-mismatch.mlir:[[# @LINE + 3]]:4: error: expected error "something else" was not produced
// CHECK-NEXT: // expected{{-}}error@+1 {{[{][{]}}something else{{[}][}]}}
// CHECK-NEXT: {{^}}   ^
// expected-error@+1 {{something else}}
func.func @wrong_text() {
  return
}

// -----

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:1: error: unexpected error: boom
func.func @not_expected() {
  return
}

// -----

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:4: error: 'error' diagnostic emitted when expecting a 'warning'
// expected-warning@+1 {{boom}}
func.func @wrong_kind() {
  return
}

// -----

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 3]]:1: error: unexpected error: boom
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:4: error: expected error "boom" was not produced
// expected-error@+2 {{boom}}
func.func @wrong_line() {
  return
}

// -----

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:1: error: unexpected error: boom
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:4: error: expected remark "never emitted" was not produced
func.func @unknown_location() {
// expected-remark@unknown {{never emitted}}
  return
}

// -----

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 3]]:1: error: unexpected error: boom
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:4: error: expected error "b{{.*}}m" was not produced
// expected-error-re@below {{b{{[0-9]+}}m}}
func.func @regex_mismatch() {
  return
}

// -----

// A large repetition is fine; one that glibc's regcomp would expand into
// 10^6 copies (and allocate until the process dies) is refused, at its place.
// CHECK-NOT: 1,300
// expected-error-re@below {{b{{(o{1,2}){1,300}o*}}m}}
func.func @large_regex() {
  return
}

// -----

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 3]]:1: error: unexpected error: boom
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:4: error: expected error "b{{.*}}m" has a regular expression whose repetitions expand past 1000 elements
// expected-error-re@below {{b{{((o{100}){100}){100}x*}}m}}
func.func @exploding_regex() {
  return
}

// -----

// Back-references are refused (glibc's backtrack without bound on a long
// message), at their place: b(o)\1m would match "boom".
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 3]]:1: error: unexpected error: boom
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:4: error: expected error "b{{.*}}m" has a back-reference (\1 .. \9), which --verify-diagnostics does not support
// expected-error-re@below {{b{{(o)\1}}m}}
func.func @back_reference() {
  return
}

// -----

// An unexpected parser error is reported at its place.
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:3: error: unexpected error: custom op 'not_an_op' is unknown
func.func @parse_error() {
  not_an_op
}

// -----

// Designators that can never match say why.
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:4: error: expected error "nowhere" has no line to refer to
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:4: error: expected error "a{{.*}}b" has an invalid regular expression
// expected-error@-999 {{nowhere}}
// expected-error-re {{a{{[}}b}}
