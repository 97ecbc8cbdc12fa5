// Input that does not parse: file:line:col, the line, a caret; exit 3.
// RUN: stc-opt %s 2> %t.err; test $? = 3
// RUN: FileCheck %s --strict-whitespace < %t.err

// CHECK: parse-error.mlir:[[# @LINE + 5]]:10: error: use of undeclared SSA value name
// CHECK-NEXT: {{^}}  return %missing : i32{{$}}
// CHECK-NEXT: {{^}}         ^{{$}}

func.func @f() -> i32 {
  return %missing : i32
}

// Verifier errors after parsing, and their notes, are bad input too.
// RUN: printf 'func.func @dup() { return }\nfunc.func @dup() { return }\n' > %t.dup.mlir
// RUN: stc-opt %t.dup.mlir 2> %t.err; test $? = 3
// RUN: FileCheck %s --check-prefix=DUP < %t.err
// DUP: dup.mlir:2:1: error: redefinition of symbol named 'dup'
// DUP: dup.mlir:1:1: note: see existing symbol definition here
