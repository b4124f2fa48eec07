// kernel-config pins the configuration key by key; the rest comes from the
// analytical model. The configuration is visible in the kernel's name.
// RUN: %qimeng-opt %s \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma kernel-config=mr=4,nr=24,ku=2,kc=16,mc=8 validate=false' \
// RUN: | FileCheck %s

// CHECK-LABEL: func.func @matmul_pinned_config(
// CHECK:         llvm.call @qm_sgemm_32x48x64_nn_lda64_ldb48_ldc48_4x24_ku2_kc16_mc8_nc48_pfa0_pfb0_nopackb_adirect_x86_64_avx2
// CHECK:       llvm.func internal @qm_sgemm_32x48x64_
// The 4x24 block: 12 accumulators, three B vectors in ymm12-14, A in ymm15.
// CHECK:         vfmadd231ps %ymm14, %ymm15, %ymm11
func.func @matmul_pinned_config(%a: memref<32x64xf32>, %b: memref<64x48xf32>, %c: memref<32x48xf32>) {
  linalg.matmul ins(%a, %b : memref<32x64xf32>, memref<64x48xf32>)
                outs(%c : memref<32x48xf32>)
  return
}
