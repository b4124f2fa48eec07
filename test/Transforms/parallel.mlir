// threads=N > 1: the parallel form of the kernel runs once per part of C
// inside omp.parallel / omp.wsloop, each part on its own workspace slice
// holding its range; the parts come from a constant table.
// RUN: %qimeng-opt %s -split-input-file \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:cores=8 threads=2 validate=false' \
// RUN: | FileCheck %s

// N has 32 register blocks of 16: two parts of 256 columns each.
// CHECK-LABEL: func.func @matmul_split_n(
// CHECK:         %[[WS:.+]] = llvm.call @aligned_alloc(
// CHECK:         %[[TABLE:.+]] = memref.get_global @[[PARTS:qm_sgemm_384x512x64_.*_par_x86_64_avx2_parts2]] : memref<2x4xi64>
// CHECK:         omp.parallel {
// CHECK-NEXT:      omp.wsloop {
// CHECK-NEXT:        omp.loop_nest (%[[I:.+]]) : index = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK:               %[[SLICE:.+]] = llvm.getelementptr %[[WS]]
// CHECK:               %[[V:.+]] = memref.load %[[TABLE]][%[[I]], %{{.+}}] : memref<2x4xi64>
// CHECK:               %[[AT:.+]] = llvm.getelementptr %[[SLICE]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:               llvm.store %[[V]], %[[AT]] : i64, !llvm.ptr
// CHECK:               llvm.call @qm_sgemm_384x512x64_{{.*}}_par_x86_64_avx2(%{{.+}}, %{{.+}}, %{{.+}}, %[[SLICE]])
// CHECK:               omp.yield
// CHECK:           omp.terminator
// CHECK:         llvm.call @free(%[[WS]])
// CHECK:       llvm.func internal @qm_sgemm_384x512x64_{{.*}}_par_x86_64_avx2(
// CHECK:         llvm.inline_asm
// CHECK-SAME:      movq 40(%rbx), %r8
// CHECK:       memref.global "private" constant @[[PARTS]] : memref<2x4xi64> = dense<{{\[}}[0, 384, 0, 256], [0, 384, 256, 512]]>
func.func @matmul_split_n(%a: memref<384x64xf32>, %b: memref<64x512xf32>, %c: memref<384x512xf32>) {
  linalg.matmul ins(%a, %b : memref<384x64xf32>, memref<64x512xf32>)
                outs(%c : memref<384x512xf32>)
  return
}

// -----

// N fits one register block, M has many: the parts split M at multiples
// of mr = 6.
// CHECK-LABEL: func.func @matmul_split_m(
// CHECK:       memref.global "private" constant @qm_sgemm_6000x16x64_{{.*}}_parts2 : memref<2x4xi64> = dense<{{\[}}[0, 3000, 0, 16], [3000, 6000, 0, 16]]>
func.func @matmul_split_m(%a: memref<6000x64xf32>, %b: memref<64x16xf32>, %c: memref<6000x16xf32>) {
  linalg.matmul ins(%a, %b : memref<6000x64xf32>, memref<64x16xf32>)
                outs(%c : memref<6000x16xf32>)
  return
}

// -----

// Too little work to split (under 4 MFLOP a part): one part, the
// single-core kernel, no OpenMP.
// CHECK-LABEL: func.func @matmul_too_small(
// CHECK-NOT:     omp.parallel
// CHECK:         llvm.call @qm_sgemm_4x8x4_{{.*}}_x86_64_avx2(
func.func @matmul_too_small(%a: memref<4x4xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x8xf32>)
                outs(%c : memref<4x8xf32>)
  return
}
