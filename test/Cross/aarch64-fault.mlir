// REQUIRES: cross-aarch64
// A kernel that fails validation under qemu is not used: a deliberately
// broken NEON kernel (the last k step dropped) is caught by the cross
// runner and the matmul stays, with the runner's reason.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon test-inject-fault=drop-k" -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @gemm
// CHECK: linalg.matmul
// CHECK-NOT: llvm.inline_asm
func.func @gemm(%a: memref<19x13xf32>, %b: memref<13x23xf32>, %c: memref<19x23xf32>) {
  // expected-remark @below {{not accelerated: generated kernel qm_sgemm_19x23x13_nn_ldrt_7x12_ku4_fault_drop_k_aarch64_neon failed validation under emulation: small-integers: C(0,0)}}
  linalg.matmul ins(%a, %b : memref<19x13xf32>, memref<13x23xf32>) outs(%c : memref<19x23xf32>)
  return
}
