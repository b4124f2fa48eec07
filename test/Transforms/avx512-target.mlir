// A pinned AVX-512 target gets the 6x64 zmm microkernel (four B vectors a k step) and zmm clobbers.
// RUN: %qimeng-opt %s \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:sapphirerapids:+avx,+avx2,+fma,+avx512f:l1d=48K,l2=2M,l3=105M,cores=56 validate=false' \
// RUN: | FileCheck %s

// CHECK-LABEL: func.func @matmul_avx512(
// CHECK:         llvm.call @qm_sgemm_96x128x64_nn_lda64_ldb128_ldc128_6x64_ku4_{{.*}}_x86_64_avx512(
// CHECK:       llvm.inline_asm
// CHECK-SAME:    vfmadd231ps %zmm24, %zmm28, %zmm0
// CHECK-SAME:    ~{zmm31},~{k1},~{k2},~{k3},~{k4},~{memory}
func.func @matmul_avx512(%a: memref<96x64xf32>, %b: memref<64x128xf32>, %c: memref<96x128xf32>) {
  linalg.matmul ins(%a, %b : memref<96x64xf32>, memref<64x128xf32>)
                outs(%c : memref<96x128xf32>)
  return
}
