// A chunk that does not parse fails alone (exit 3), at its line in the
// whole file; the other chunks are still processed and printed.
// RUN: stc-opt %s --split-input-file > %t.out 2> %t.err; test $? = 3
// RUN: FileCheck %s --check-prefix=ERR < %t.err
// RUN: FileCheck %s --check-prefix=OUT < %t.out

// ERR: split-input-file-errors.mlir:26:3: error: custom op 'not_an_op' is unknown
// ERR-NEXT: {{^}}  not_an_op
// ERR-NEXT: {{^}}  ^
// ERR: split-input-file-errors.mlir:33:10: error: use of undeclared SSA value name
// ERR-NOT: error

// OUT: func.func @good
// OUT: // -----
// OUT-NEXT: // -----
// OUT-NEXT: // -----
// OUT-NEXT: module {
// OUT-NEXT: func.func @also_good

func.func @good() {
  return
}

// -----
func.func @bad_op() {
  not_an_op
}

// -----


func.func @bad_value() {
  return %undefined : i32
}

// -----
func.func @also_good() {
  return
}
