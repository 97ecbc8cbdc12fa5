// RUN: stc-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUGINFO
// RUN: stc-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: stc-opt %s | FileCheck %s --check-prefix=PLAIN

// Locations name the input file, at the input's lines and columns; the
// implicit module sits at 0:0 as in mlir-opt.
// DEBUGINFO: return loc(#[[RET:loc[0-9]*]])
// DEBUGINFO-DAG: #[[RET]] = loc("{{.*}}print-flags.mlir":[[# @LINE + 12]]:3)
// DEBUGINFO-DAG: loc("{{.*}}print-flags.mlir":0:0)

// GENERIC: "builtin.module"() ({
// GENERIC: "func.func"() <{function_type = () -> (), sym_name = "f"}> ({
// GENERIC: "func.return"() : () -> ()

// PLAIN-NOT: loc(
// PLAIN: func.func @f() {
// PLAIN-NOT: loc(

func.func @f() {
  return
}

func.func @g() {
  return
}
