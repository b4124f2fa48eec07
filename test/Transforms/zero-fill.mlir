// A +0.0 linalg.fill of a fresh C just for the contraction becomes the
// kernel's overwrite mode ("b0": C = A * B, never read) and goes. It stays
// when the value is not +0.0, when something else uses C in between, or
// when C is not a fresh allocation or a slice of one (whose elements the op
// does not read and no other view touches in between: other slices of the
// buffer may be used anywhere); users nested in later ops count as those
// ops.
// RUN: %qimeng-opt %s -split-input-file \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:l1d=32K,l2=512K,l3=32M,cores=8 threads=1 validate=false' \
// RUN: | FileCheck %s

// CHECK-LABEL: func.func @zero_fill(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_b0_lda16_ldb32_ldc32_
// CHECK:         memref.copy
func.func @zero_fill(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %out: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  memref.copy %c, %out : memref<8x32xf32> to memref<8x32xf32>
  memref.dealloc %c : memref<8x32xf32>
  return
}

// -----

// CHECK-LABEL: func.func @one_fill(
// CHECK:         linalg.fill
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_lda16_ldb32_ldc32_
func.func @one_fill(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %out: memref<8x32xf32>) {
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%one : f32) outs(%c : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  memref.copy %c, %out : memref<8x32xf32> to memref<8x32xf32>
  return
}

// -----

// -0.0 is not the kernel's +0 start: a sum of -0 products would stay -0.
// CHECK-LABEL: func.func @negative_zero_fill(
// CHECK:         linalg.fill
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_lda16_ldb32_ldc32_
func.func @negative_zero_fill(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %out: memref<8x32xf32>) {
  %nz = arith.constant -0.0 : f32
  %c = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%nz : f32) outs(%c : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  memref.copy %c, %out : memref<8x32xf32> to memref<8x32xf32>
  return
}

// -----

// C is written through a view between the fill and the matmul.
// CHECK-LABEL: func.func @written_between(
// CHECK:         linalg.fill
// CHECK:         memref.store
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_lda16_ldb32_ldc32_
func.func @written_between(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %out: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %i = arith.constant 3 : index
  %c = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  memref.store %two, %c[%i, %i] : memref<8x32xf32>
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  memref.copy %c, %out : memref<8x32xf32> to memref<8x32xf32>
  return
}

// -----

// C is the caller's buffer: the fill is the caller's to see.
// CHECK-LABEL: func.func @argument(
// CHECK:         linalg.fill
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_lda16_ldb32_ldc32_
func.func @argument(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// C's other users nested in ops of the block count as those ops: a
// consumer in an scf.if after the matmul leaves the fill foldable.
// CHECK-LABEL: func.func @nested_consumer_after(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_b0_lda16_ldb32_ldc32_
// CHECK:         scf.if
// CHECK:           memref.copy
func.func @nested_consumer_after(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %out: memref<8x32xf32>, %p: i1) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  scf.if %p {
    memref.copy %c, %out : memref<8x32xf32> to memref<8x32xf32>
  }
  return
}

// -----

// ... and a write in an scf.if between the fill and the matmul keeps it.
// CHECK-LABEL: func.func @nested_write_between(
// CHECK:         linalg.fill
// CHECK:         scf.if
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_lda16_ldb32_ldc32_
func.func @nested_write_between(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %out: memref<8x32xf32>, %p: i1) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %i = arith.constant 3 : index
  %c = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  scf.if %p {
    memref.store %two, %c[%i, %i] : memref<8x32xf32>
  }
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  memref.copy %c, %out : memref<8x32xf32> to memref<8x32xf32>
  return
}

// -----

// A slice of a fresh buffer (a concatenation written in place) is fresh
// too: its fill folds; the buffer's other slices may be written before and
// after.
// CHECK-LABEL: func.func @slice_of_fresh(
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[OTHER:.*]] : memref<8x32xf32, strided<[64, 1], offset: 32>>)
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_b0_lda16_ldb32_ldc64_
func.func @slice_of_fresh(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %out: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %wide = memref.alloc() : memref<8x64xf32>
  %right = memref.subview %wide[0, 32] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1], offset: 32>>
  linalg.fill ins(%one : f32) outs(%right : memref<8x32xf32, strided<[64, 1], offset: 32>>)
  %left = memref.subview %wide[0, 0] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1]>>
  linalg.fill ins(%zero : f32) outs(%left : memref<8x32xf32, strided<[64, 1]>>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%left : memref<8x32xf32, strided<[64, 1]>>)
  memref.copy %wide, %out : memref<8x64xf32> to memref<8x64xf32>
  return
}

// -----

// A reads other columns of the same buffer, and another slice is written
// between the fill and the contraction: the fill folds. A reads some of
// C's columns, or the buffer is read whole between the fill and the
// contraction: the fill stays.
// CHECK-LABEL: func.func @slice_beside_the_op_input(
// CHECK-NOT:     linalg.fill ins(%{{.*}} : f32) outs(%{{.*}}offset: 32>>)
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_b0_lda64_ldb32_ldc64_
// CHECK-LABEL: func.func @slice_read_by_the_op(
// CHECK:         linalg.fill
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_lda64_ldb32_ldc64_
// CHECK-LABEL: func.func @slice_read_between(
// CHECK:         linalg.fill
// CHECK:         memref.copy
// CHECK:         llvm.call @qm_sgemm_8x32x16_nn_lda16_ldb32_ldc64_
func.func @slice_beside_the_op_input(%b: memref<16x32xf32>, %out: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %wide = memref.alloc() : memref<8x64xf32>
  %right = memref.subview %wide[0, 32] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1], offset: 32>>
  %a = memref.subview %wide[0, 0] [8, 16] [1, 1] : memref<8x64xf32> to memref<8x16xf32, strided<[64, 1]>>
  linalg.fill ins(%zero : f32) outs(%right : memref<8x32xf32, strided<[64, 1], offset: 32>>)
  %mid = memref.subview %wide[0, 16] [8, 16] [1, 1] : memref<8x64xf32> to memref<8x16xf32, strided<[64, 1], offset: 16>>
  linalg.fill ins(%one : f32) outs(%mid : memref<8x16xf32, strided<[64, 1], offset: 16>>)
  linalg.matmul ins(%a, %b : memref<8x16xf32, strided<[64, 1]>>, memref<16x32xf32>) outs(%right : memref<8x32xf32, strided<[64, 1], offset: 32>>)
  memref.copy %wide, %out : memref<8x64xf32> to memref<8x64xf32>
  return
}
func.func @slice_read_by_the_op(%b: memref<16x32xf32>, %out: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %wide = memref.alloc() : memref<8x64xf32>
  %right = memref.subview %wide[0, 32] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1], offset: 32>>
  %a = memref.subview %wide[0, 24] [8, 16] [1, 1] : memref<8x64xf32> to memref<8x16xf32, strided<[64, 1], offset: 24>>
  linalg.fill ins(%zero : f32) outs(%right : memref<8x32xf32, strided<[64, 1], offset: 32>>)
  linalg.matmul ins(%a, %b : memref<8x16xf32, strided<[64, 1], offset: 24>>, memref<16x32xf32>) outs(%right : memref<8x32xf32, strided<[64, 1], offset: 32>>)
  memref.copy %wide, %out : memref<8x64xf32> to memref<8x64xf32>
  return
}
func.func @slice_read_between(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %out: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %wide = memref.alloc() : memref<8x64xf32>
  %left = memref.subview %wide[0, 0] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1]>>
  linalg.fill ins(%zero : f32) outs(%left : memref<8x32xf32, strided<[64, 1]>>)
  memref.copy %wide, %out : memref<8x64xf32> to memref<8x64xf32>
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%left : memref<8x32xf32, strided<[64, 1]>>)
  return
}
