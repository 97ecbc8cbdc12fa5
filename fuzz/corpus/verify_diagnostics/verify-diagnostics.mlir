// Every expectation met: exit 0 and nothing on stderr.
// RUN: stc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(stc-test-fail{message="failed here"}))' 2> %t.err > /dev/null
// RUN: FileCheck %s --allow-empty --check-prefix=QUIET < %t.err
// QUIET-NOT: {{.}}

func.func @same_line() { return } // expected-error {{failed here}}

// -----

// expected-error@+1 {{failed here}}
func.func @plus_one() {
  return
}

// -----

// expected-error@+3 {{failed here}}
// A designator may point further down.

func.func @plus_three() {
  return
}

// -----

func.func @minus_one() {
// expected-error@-1 {{failed here}}
  return
}

// -----

func.func @above() {
  // expected-error@above {{failed here}}
  return
}

// -----

// expected-error@below {{failed}}
func.func @below() {
  return
}

// -----

// Regular expressions between {{ }} with -re.
// expected-error-re@+1 {{{{f[a-z]+}} here}}
func.func @regex() {
  return
}

// -----

// Parser errors are matched too.
func.func @parse_error() {
  // expected-error@+1 {{custom op 'not_an_op' is unknown}}
  not_an_op
}

// -----

// Notes come with their error. @below and @above skip lines that hold only
// designators.
func.func @dup() { return }
// expected-error@below {{redefinition of symbol named 'dup'}}
// expected-note@above {{see existing symbol definition here}}
func.func @dup() { return }

// -----

// Diagnostics without a file location match @unknown.
// expected-error@unknown {{failed here}}
func.func @unknown_location() {
  return
} loc(unknown)
