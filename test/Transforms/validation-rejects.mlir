// A deliberately broken kernel (test-inject-fault) is caught by validation in
// the qimeng-runner process; the op stays unchanged with the reason.
// REQUIRES: host-avx2, host-fma
// RUN: %qimeng-opt %s -split-input-file -verify-diagnostics \
// RUN:   '--qimeng-tensorop=test-inject-fault=drop-k' | FileCheck %s
// RUN: %qimeng-opt %s -split-input-file -verify-diagnostics \
// RUN:   '--qimeng-tensorop=test-inject-fault=write-past-edge' | FileCheck %s

// CHECK-LABEL: func.func @matmul_7x5x3(
// CHECK:         linalg.matmul
// CHECK-NOT:   llvm.inline_asm
func.func @matmul_7x5x3(%a: memref<7x3xf32>, %b: memref<3x5xf32>, %c: memref<7x5xf32>) {
  // expected-remark-re @below {{not accelerated: generated kernel qm_sgemm_7x5x3_{{.*}}_fault_{{drop_k|write_past_edge}}_x86_64_{{avx2|avx512}} failed validation: small-integers: {{.*}}}}
  linalg.matmul ins(%a, %b : memref<7x3xf32>, memref<3x5xf32>)
                outs(%c : memref<7x5xf32>)
  return
}
