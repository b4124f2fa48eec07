// A linalg.transpose that only feeds a contraction folds into it: the
// kernel reads the transpose's source with B (or A) transposed, and the
// transpose goes. It stays when its result has another reader, when
// something between the two may write the source, or when the transposed
// buffer is not a fresh allocation.
// RUN: %qimeng-opt %s -split-input-file \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:l1d=32K,l2=512K,l3=32M,cores=8 threads=1 validate=false' \
// RUN: | FileCheck %s

// Their buffers go with them (allocation and deallocation): only C's
// allocation is left.
// CHECK-LABEL: func.func @folds(
// CHECK-NOT:     linalg.transpose
// CHECK:         memref.alloc() : memref<8x32xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         llvm.call @qm_sgemm_8x32x16_tt_lda8_ldb16_ldc32_
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @folds(%x: memref<16x8xf32>, %w: memref<32x16xf32>) -> memref<8x32xf32> {
  %xt = memref.alloc() : memref<8x16xf32>
  linalg.transpose ins(%x : memref<16x8xf32>) outs(%xt : memref<8x16xf32>) permutation = [1, 0]
  %wt = memref.alloc() : memref<16x32xf32>
  linalg.transpose ins(%w : memref<32x16xf32>) outs(%wt : memref<16x32xf32>) permutation = [1, 0]
  %c = memref.alloc() : memref<8x32xf32>
  linalg.matmul ins(%xt, %wt : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  memref.dealloc %wt : memref<16x32xf32>
  memref.dealloc %xt : memref<8x16xf32>
  return %c : memref<8x32xf32>
}

// -----

// C is an argument, which may alias the arguments the transposes read: the
// copies keep them apart, so they stay.
// CHECK-LABEL: func.func @output_may_alias_source(
// CHECK:         linalg.transpose
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_
func.func @output_may_alias_source(%x: memref<8x16xf32>, %w: memref<32x16xf32>, %c: memref<8x32xf32>) {
  %wt = memref.alloc() : memref<16x32xf32>
  linalg.transpose ins(%w : memref<32x16xf32>) outs(%wt : memref<16x32xf32>) permutation = [1, 0]
  linalg.matmul ins(%x, %wt : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// The source is written in between: the kernel must read the transposed
// copy.
// CHECK-LABEL: func.func @source_written_between(
// CHECK:         linalg.transpose
// CHECK:         linalg.fill
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_lda16_ldb32_ldc32_
func.func @source_written_between(%x: memref<8x16xf32>, %w: memref<32x16xf32>) -> memref<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x32xf32>
  %wt = memref.alloc() : memref<16x32xf32>
  linalg.transpose ins(%w : memref<32x16xf32>) outs(%wt : memref<16x32xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%w : memref<32x16xf32>)
  linalg.matmul ins(%x, %wt : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  return %c : memref<8x32xf32>
}

// -----

// A write to another argument may alias the source: no fold.
// CHECK-LABEL: func.func @may_alias_between(
// CHECK:         linalg.transpose
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_
func.func @may_alias_between(%x: memref<8x16xf32>, %w: memref<32x16xf32>, %other: memref<32x16xf32>) -> memref<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x32xf32>
  %wt = memref.alloc() : memref<16x32xf32>
  linalg.transpose ins(%w : memref<32x16xf32>) outs(%wt : memref<16x32xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%other : memref<32x16xf32>)
  linalg.matmul ins(%x, %wt : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  return %c : memref<8x32xf32>
}

// -----

// The transposed weight is read again later: it stays.
// CHECK-LABEL: func.func @transposed_copy_reused(
// CHECK:         linalg.transpose
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_
// CHECK:         memref.copy
func.func @transposed_copy_reused(%x: memref<8x16xf32>, %w: memref<32x16xf32>, %keep: memref<16x32xf32>) -> memref<8x32xf32> {
  %c = memref.alloc() : memref<8x32xf32>
  %wt = memref.alloc() : memref<16x32xf32>
  linalg.transpose ins(%w : memref<32x16xf32>) outs(%wt : memref<16x32xf32>) permutation = [1, 0]
  linalg.matmul ins(%x, %wt : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  memref.copy %wt, %keep : memref<16x32xf32> to memref<16x32xf32>
  return %c : memref<8x32xf32>
}

// -----

// The source is the contraction's output: reading it in place while the
// kernel writes it would change the result.
// CHECK-LABEL: func.func @source_is_output(
// CHECK:         linalg.transpose
// CHECK:         llvm.call @qm_sgemm_16x16x16_nn_
func.func @source_is_output(%x: memref<16x16xf32>, %c: memref<16x16xf32>) {
  %ct = memref.alloc() : memref<16x16xf32>
  linalg.transpose ins(%c : memref<16x16xf32>) outs(%ct : memref<16x16xf32>) permutation = [1, 0]
  linalg.matmul ins(%x, %ct : memref<16x16xf32>, memref<16x16xf32>) outs(%c : memref<16x16xf32>)
  return
}
