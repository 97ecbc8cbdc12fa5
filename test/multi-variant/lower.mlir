// Soundness of the output: with every built-in schedule on every kind
// (all=true), the module still lowers to the LLVM dialect with the schedules'
// lowering pipeline (passes/schedules/lowering-pipeline.txt). Only llvm.* ops
// are left, plus omp.* from the parallel schedules (the OpenMP dialect, which
// LLVM IR translation handles directly).

// RUN: stc-opt --stc-multi-variant='all=true' %S/Inputs/all-kinds.mlir -o %t.mv.mlir 2> %t.err
// RUN: not grep remark %t.err
// RUN: mlir-opt %t.mv.mlir --pass-pipeline="$(cat %stc_src_root/passes/schedules/lowering-pipeline.txt)" -o %t.ll.mlir
// RUN: FileCheck %s < %t.ll.mlir
// RUN: FileCheck %s --check-prefix=ONLY-LLVM < %t.ll.mlir

// CHECK-DAG: llvm.func @mm(
// CHECK-DAG: llvm.func @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__ref(
// CHECK-DAG: llvm.func @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__matmul_tile32_vec(
// CHECK-DAG: llvm.func @__stc_site_mm_dyn_linalg_matmul_{{[0-9a-f]+}}__matmul_tile32_vec(
// CHECK-DAG: llvm.func @__stc_site_bmm_linalg_batch_matmul_{{[0-9a-f]+}}__batch_matmul_tile32_vec(
// CHECK-DAG: llvm.func @__stc_site_conv_linalg_conv_2d_nhwc_hwcf_{{[0-9a-f]+}}__conv_im2col_vec(
// CHECK-DAG: llvm.func @__stc_site_red_linalg_generic_{{[0-9a-f]+}}__reduction_tile8x64_vec(
// CHECK-DAG: llvm.func @_mlir_ciface___stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__matmul_tile32_vec(

// ONLY-LLVM-NOT: {{^ *(%[^ ]+ = )?"?(linalg|tensor|memref|vector|scf|arith|func|affine|bufferization|cf|math|ub|index|transform)\.}}
