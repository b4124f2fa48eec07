// The pass loads into stock mlir-opt-22 as a plugin. mlir-opt-22 registers
// a plugin's passes while it parses its command line, too late for them to
// become flags of their own, so stock mlir-opt takes the pass through
// --pass-pipeline (qimeng-opt also accepts --qimeng-tensorop).
// RUN: %mlir-opt %s --load-pass-plugin=%plugin \
// RUN:   '--pass-pipeline=builtin.module(qimeng-tensorop{target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma validate=false})' \
// RUN: | FileCheck %s
// RUN: %mlir-opt --load-pass-plugin=%plugin --help | FileCheck %s --check-prefix=HELP

// CHECK-LABEL: func.func @matmul_plugin(
// CHECK-NOT:     linalg.matmul
// CHECK:         llvm.call @qm_sgemm_7x5x3_
// CHECK:       llvm.func internal @qm_sgemm_7x5x3_
// HELP: --qimeng-tensorop
// HELP: Replace linalg contractions (matmul, batch_matmul, generic contractions) and 2-D convolutions with generated, validated kernels
// HELP: --kernel-config=<string>
// HELP: --target=<string>
func.func @matmul_plugin(%a: memref<7x3xf32>, %b: memref<3x5xf32>, %c: memref<7x5xf32>) {
  linalg.matmul ins(%a, %b : memref<7x3xf32>, memref<3x5xf32>)
                outs(%c : memref<7x5xf32>)
  return
}
