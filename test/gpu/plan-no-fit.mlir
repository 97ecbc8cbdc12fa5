// A matmul the plan gives variants but no GPU variant fits (f16: no cuBLAS
// entry point, no /shared kernel; 37 x 48 x 96: no register tile divides
// M) is no site, and a remark says why; it keeps the default kernel.
// RUN: stc-opt --tune-hot-paths --target=cuda %s -o %t.mlir 2> %t.err
// RUN: FileCheck %s < %t.err
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// Forced (an explicit --gpu-sites list alone): no site, no remark.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-sites=cublas,32x32/2x2/k8 %s -o /dev/null 2> %t.forced.err
// RUN: FileCheck %s --allow-empty --check-prefix=FORCED < %t.forced.err

func.func @half(%a: tensor<37x48xf16>, %b: tensor<48x96xf16>, %c: tensor<37x96xf16>) -> tensor<37x96xf16> {
  %r = linalg.matmul ins(%a, %b : tensor<37x48xf16>, tensor<48x96xf16>)
                     outs(%c : tensor<37x96xf16>) -> tensor<37x96xf16>
  return %r : tensor<37x96xf16>
}

// CHECK: remark: stc-hot-path-schedule: region 'half/linalg.matmul#{{[0-9a-f]+}}': rank 1 of 2, hot, {{.*}}, plan variants:8
// CHECK: remark: stc-multi-variant: 'half/linalg.matmul#{{[0-9a-f]+}}', hot is planned for variants:8 but is not a cuda site: no cuda variant fits it ({{.*}}); it keeps the default kernel
// IR-NOT: __stc_site
// IR: gpu.binary @half_kernel
// FORCED-NOT: remark
