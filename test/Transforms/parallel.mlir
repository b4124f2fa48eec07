// threads=N > 1: the parallel form of the kernel runs once per part of C
// inside omp.parallel / omp.wsloop, each part on its own workspace slice
// holding its range; the parts come from a constant table. The launcher is
// an llvm.func of LLVM and OpenMP ops only, which memref passes (the
// deallocation pipeline) leave alone.
// RUN: %qimeng-opt %s -split-input-file \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:cores=8 threads=2 validate=false' \
// RUN: | FileCheck %s
// RUN: %qimeng-opt %s -split-input-file \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:cores=8 threads=2 validate=false' \
// RUN: | %mlir-opt -split-input-file %dealloc | FileCheck %s --check-prefix=DEALLOC

// N has 32 register blocks of 16: two parts of 256 columns each.
// CHECK-LABEL: func.func @matmul_split_n(
// CHECK:         %[[WS:.+]] = llvm.call @qm_workspace_acquire(
// CHECK:         llvm.call @[[LAUNCHER:qm_sgemm_384x512x64_.*_par_x86_64_avx2_parts2]](%{{.+}}, %{{.+}}, %{{.+}}, %[[WS]])
// CHECK:         llvm.call @qm_workspace_release(%[[WS]])
// CHECK:       llvm.func internal @[[KERNEL:qm_sgemm_384x512x64_.*_par_x86_64_avx2]](
// CHECK:         llvm.inline_asm
// CHECK-SAME:      movq 40(%rbx), %r8
// CHECK:       llvm.mlir.global internal constant @[[LAUNCHER]]_table(dense<[0, 384, 0, 256, 0, 384, 256, 512]> : tensor<8xi64>)
// CHECK:       llvm.func internal @[[LAUNCHER]](%[[A:.+]]: !llvm.ptr, %[[B:.+]]: !llvm.ptr, %[[C:.+]]: !llvm.ptr, %[[W:.+]]: !llvm.ptr)
// CHECK:         omp.parallel {
// CHECK-NEXT:      omp.wsloop {
// CHECK-NEXT:        omp.loop_nest (%[[I:.+]]) : i64 = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK:               %[[TABLE:.+]] = llvm.mlir.addressof @[[LAUNCHER]]_table
// CHECK:               %[[SLICE:.+]] = llvm.getelementptr %[[W]][%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:               %[[FROM:.+]] = llvm.getelementptr %[[TABLE]][%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK:               %[[V:.+]] = llvm.load %[[FROM]] : !llvm.ptr -> i64
// CHECK:               %[[AT:.+]] = llvm.getelementptr %[[SLICE]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:               llvm.store %[[V]], %[[AT]] : i64, !llvm.ptr
// CHECK:               llvm.call @[[KERNEL]](%[[A]], %[[B]], %[[C]], %[[SLICE]])
// CHECK:               omp.yield
// CHECK:           omp.terminator
// CHECK:         llvm.return
// DEALLOC-LABEL: func.func @matmul_split_n(
// DEALLOC:         llvm.call @qm_sgemm_384x512x64_{{.*}}_parts2(
// DEALLOC:       llvm.func internal @qm_sgemm_384x512x64_{{.*}}_parts2(
// DEALLOC:         omp.wsloop {
// DEALLOC-NEXT:      omp.loop_nest
func.func @matmul_split_n(%a: memref<384x64xf32>, %b: memref<64x512xf32>, %c: memref<384x512xf32>) {
  linalg.matmul ins(%a, %b : memref<384x64xf32>, memref<64x512xf32>)
                outs(%c : memref<384x512xf32>)
  return
}

// -----

// N fits one register block, M has many: the parts split M at multiples
// of mr = 6.
// CHECK-LABEL: func.func @matmul_split_m(
// CHECK:       llvm.mlir.global internal constant @qm_sgemm_6000x16x64_{{.*}}_parts2_table(dense<[0, 3000, 0, 16, 3000, 6000, 0, 16]> : tensor<8xi64>)
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
