// torch-mlir style, dynamic batch: aten.linear on a `?x16` input (the
// weight through linalg.transpose, a zero-filled matmul into a dynamically
// sized C, a broadcast bias add and relu), called with batches of 1, 5 and
// 21 rows. Bufferized with one-shot-bufferize's function boundaries, run
// with and without --qimeng-tensorop in four placements and compared
// exactly (small-integer inputs). The kernel reads M at run time (`_mrt`):
// it is blocked for `representative-m` rows, here 8, so the batches are
// fewer, as many as and more rows than that (several mc blocks).
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
//
// Default layout (dynamic strides), the pass before deallocation, one
// kernel for every M (m-buckets=none; the buckets' dispatch is below):
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=representative-m=8 m-buckets=none' -o %t.v1.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// On tensors, before bufferization (the ops move onto buffers in place:
// to_buffer, a fresh allocation, to_tensor restrict writable):
// RUN: %qimeng-opt %s --qimeng-tensorop=representative-m=8 -o %t.tensor.mlir
// RUN: FileCheck %s --check-prefix=TENSOR < %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Identity layout, the pass before deallocation, one kernel for every M:
// RUN: %qimeng-opt %t.identity.mlir '--qimeng-tensorop=representative-m=8 m-buckets=none' -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=IDENTITY < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// Both layouts, the pass after deallocation; the first on two threads, the
// kernel split along N (an AVX2 6x16 block, two column slivers; blocked
// for 4096 rows, enough work for two parts), every part on all the call's
// rows:
// RUN: %mlir-opt %t.default.mlir %dealloc \
// RUN:   | %qimeng-opt '--qimeng-tensorop=representative-m=4096 threads=2 kernel-config=isa=avx2,mr=6,nr=16' -o %t.v3.mlir
// RUN: FileCheck %s --check-prefix=PARTS < %t.v3.mlir
// RUN: %mlir-opt %t.v3.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt '--qimeng-tensorop=representative-m=8' | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v4
// RUN: diff %t.reference %t.v4
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// Two kernels for M (m-buckets): one blocked for at most 4 rows runs the
// batch of 1, the one blocked for 64 the batches of 5 and 21, chosen at run
// time; a fault in both changes every batch's output (the first printed
// block is the one-row batch: the small kernel ran it).
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=representative-m=64 m-buckets=4' -o %t.v5.mlir
// RUN: FileCheck %s --check-prefix=BUCKETS < %t.v5.mlir
// RUN: %mlir-opt %t.v5.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v5
// RUN: diff %t.reference %t.v5
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=representative-m=64 m-buckets=4 validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v5.fault
// RUN: head -2 %t.reference > %t.reference.one-row
// RUN: head -2 %t.v5.fault > %t.v5.fault.one-row
// RUN: not diff %t.reference.one-row %t.v5.fault.one-row > /dev/null
//
// The kernel is what ran: with a fault injected into it the output differs.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=representative-m=8 validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// M is C's dimension 0 at run time, written as the rows [0, M) into the
// kernel's workspace header (offsets 24 and 32, the columns at 40 and 48).
// DEFAULT-LABEL: func.func @linear_relu(
// DEFAULT-NOT:     linalg.transpose
// DEFAULT-NOT:     linalg.fill
// DEFAULT:         scf.if
// DEFAULT:           %[[M:.*]] = memref.dim %{{.*}}, %c0
// DEFAULT:           %[[M64:.*]] = arith.index_cast %[[M]] : index to i64
// DEFAULT:           %[[AT:.*]] = llvm.getelementptr %{{.*}}[32]
// DEFAULT:           llvm.store %[[M64]], %[[AT]] : i64, !llvm.ptr
// DEFAULT:           llvm.call @qm_sgemm_8x32x16_nt_mrt_b0_bias_relu_ldrt_
// DEFAULT:         } else {
// DEFAULT-NEXT:      linalg.transpose
// DEFAULT-NEXT:      linalg.fill
// DEFAULT-NEXT:      linalg.matmul
// DEFAULT-NEXT:      linalg.generic

// With the identity layout every stride is static: the leading dimensions
// are immediates, only M is read at run time, and nothing is checked.
// IDENTITY-LABEL: func.func @linear_relu(
// IDENTITY-NOT:     scf.if
// IDENTITY-NOT:     linalg.matmul
// IDENTITY:         llvm.call @qm_sgemm_8x32x16_nt_mrt_b0_bias_relu_lda16_ldb16_ldc32_

// BUCKETS-LABEL: func.func @linear_relu(
// BUCKETS:         scf.if
// BUCKETS:           %[[M:.*]] = memref.dim %{{.*}}, %c0
// BUCKETS:           %[[FEW:.*]] = arith.cmpi ule, %[[M]], %c4
// BUCKETS:           scf.if %[[FEW]] {
// BUCKETS:             llvm.call @qm_sgemm_4x32x16_nt_mrt_b0_bias_relu_ldrt_
// BUCKETS:           } else {
// BUCKETS:             llvm.call @qm_sgemm_64x32x16_nt_mrt_b0_bias_relu_ldrt_

// The parts launcher writes only the columns of each part.
// PARTS: llvm.call @qm_sgemm_4096x32x16_nt_mrt_b0_bias_relu_ldrt_{{.*}}_parts2_cols(

// OUT: rank = 2 offset = 0 sizes = [1, 32]
// OUT: rank = 2 offset = 0 sizes = [5, 32]
// OUT: rank = 2 offset = 0 sizes = [21, 32]

// TENSOR: llvm.call @qm_sgemm_8x32x16_nt_mrt_b0_bias_relu_ldrt_
// TENSOR: bufferization.to_tensor {{.*}} restrict writable
// TENSOR: llvm.func internal @qm_s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @linear_relu(%x: tensor<?x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %batch = tensor.dim %x, %c0 : tensor<?x16xf32>
  %wt0 = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%wt0 : tensor<16x32xf32>) permutation = [1, 0]
  %acc0 = tensor.empty(%batch) : tensor<?x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x32xf32>) -> tensor<?x32xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<?x16xf32>, tensor<16x32xf32>) outs(%acc : tensor<?x32xf32>) -> tensor<?x32xf32>
  %out0 = tensor.empty(%batch) : tensor<?x32xf32>
  %biased = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<?x32xf32>, tensor<32xf32>) outs(%out0 : tensor<?x32xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x32xf32>
  return %biased : tensor<?x32xf32>
}

// (i * x + j * y) mod 7 - 3 as f32: small integers.
func.func private @pattern2(%t: tensor<?x?xf32>, %x: index, %y: index) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %s = arith.addi %ix, %jy : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %s, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %c3 = arith.constant 3 : i64
    %v = arith.subi %mi, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @run(%rows: index, %w: tensor<32x16xf32>, %b: tensor<32xf32>) {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c16 = arith.constant 16 : index
  %ex = tensor.empty(%rows, %c16) : tensor<?x?xf32>
  %xd = call @pattern2(%ex, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x = tensor.cast %xd : tensor<?x?xf32> to tensor<?x16xf32>
  %y = call @linear_relu(%x, %w, %b) : (tensor<?x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %ym = bufferization.to_buffer %y : tensor<?x32xf32> to memref<?x32xf32>
  %yu = memref.cast %ym : memref<?x32xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c16 = arith.constant 16 : index
  %c21 = arith.constant 21 : index
  %c32 = arith.constant 32 : index
  %ew = tensor.empty(%c32, %c16) : tensor<?x?xf32>
  %wd = call @pattern2(%ew, %c2, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w = tensor.cast %wd : tensor<?x?xf32> to tensor<32x16xf32>
  %eb = tensor.empty(%c1, %c32) : tensor<?x?xf32>
  %bd = call @pattern2(%eb, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %bs = tensor.cast %bd : tensor<?x?xf32> to tensor<1x32xf32>
  %b = tensor.collapse_shape %bs [[0, 1]] : tensor<1x32xf32> into tensor<32xf32>
  call @run(%c1, %w, %b) : (index, tensor<32x16xf32>, tensor<32xf32>) -> ()
  call @run(%c5, %w, %b) : (index, tensor<32x16xf32>, tensor<32xf32>) -> ()
  call @run(%c21, %w, %b) : (index, tensor<32x16xf32>, tensor<32xf32>) -> ()
  return
}
