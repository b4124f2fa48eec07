// torch-mlir style: a 2-layer MLP as aten.linear lowers it (the weight
// through linalg.transpose, a zero-filled matmul, a broadcast bias add and
// relu as maximumf) with a residual connection around it (x + mlp(x), the
// residual add elementwise-fused with the second bias add), bufferized with one-shot-bufferize's function
// boundaries, run with and without --qimeng-tensorop in four placements
// and compared exactly (small-integer inputs: every sum is exact).
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
//
// Default layout (dynamic strides), the pass before deallocation:
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s --check-prefix=GUARDED < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// On tensors, before bufferization (the ops move onto buffers in place:
// to_buffer, a fresh allocation, to_tensor restrict writable):
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.tensor.mlir
// RUN: FileCheck %s --check-prefix=TENSOR < %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Identity layout, the pass before deallocation:
// RUN: %qimeng-opt %t.identity.mlir --qimeng-tensorop -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=STATIC < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// Both layouts, the pass after deallocation:
// RUN: %mlir-opt %t.default.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v4
// RUN: diff %t.reference %t.v4
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// The guarded kernels are what ran: with a fault injected into them the
// output differs.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// The weights' transposes fold into the kernels (B read transposed, "nt"),
// and so do the zero fills (the kernels overwrite C, "b0") and the bias
// adds and relu that follow (the kernels' epilogues, "bias", "relu": they
// write the generics' outputs).
// The arguments arrive with dynamic strides: the kernels read the leading
// dimensions at run time ("ldrt"), the unit inner strides are checked at
// run time; the transpose and the matmul stay for the other case.
// GUARDED-LABEL: func.func @linear_relu(
// GUARDED-NOT:     linalg.transpose
// GUARDED-NOT:     linalg.fill
// GUARDED:         scf.if
// GUARDED:           llvm.call @qm_sgemm_4x32x16_nt_b0_bias_relu_ldrt_
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.transpose
// GUARDED-NEXT:      linalg.fill
// GUARDED-NEXT:      linalg.matmul
// GUARDED-NEXT:      linalg.generic
// GUARDED:         }
// GUARDED-NOT:     linalg.generic
// GUARDED:         return
// The second layer's consumer adds the bias and the residual x: x is
// copied into the output and the kernel accumulates onto it (no "b0").
// GUARDED-LABEL: func.func @mlp(
// GUARDED-NOT:     linalg.transpose
// GUARDED-NOT:     linalg.fill
// GUARDED:         scf.if
// GUARDED:           linalg.copy ins(%arg0
// GUARDED:           llvm.call @qm_sgemm_4x16x32_nt_bias_ldrt_
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.transpose
// GUARDED-NEXT:      linalg.fill
// GUARDED-NEXT:      linalg.matmul
// GUARDED-NEXT:      linalg.generic
// GUARDED:         }
// GUARDED-NOT:     linalg.generic
// GUARDED:         return
// GUARDED-LABEL: func.func @main(

// STATIC-LABEL: func.func @linear_relu(
// STATIC-NOT:      linalg.transpose
// STATIC-NOT:      linalg.fill
// STATIC-NOT:      linalg.matmul
// STATIC-NOT:      scf.if
// STATIC:          llvm.call @qm_sgemm_4x32x16_nt_b0_bias_relu_lda16_ldb16_ldc32_
// STATIC-NOT:      linalg.generic
// STATIC:          return
// STATIC-LABEL: func.func @mlp(
// STATIC-NOT:      linalg.transpose
// STATIC-NOT:      linalg.fill
// STATIC-NOT:      linalg.matmul
// STATIC:          linalg.copy ins(%arg0
// STATIC:          llvm.call @qm_sgemm_4x16x32_nt_bias_lda32_ldb32_ldc16_
// STATIC-NOT:      linalg.generic
// STATIC:          return
// STATIC-LABEL: func.func @main(

// OUT: rank = 2 offset = 0 sizes = [4, 16]
// OUT-COUNT-4: [

// On tensors the transposes, zero fills, bias adds, residual and relu fold
// as well (the consumers move onto buffers with the product).
// TENSOR: llvm.call @qm_sgemm_4x32x16_nt_b0_bias_relu_ldrt_
// TENSOR: linalg.copy
// TENSOR: llvm.call @qm_sgemm_4x16x32_nt_bias_ldrt_
// TENSOR: bufferization.to_tensor {{.*}} restrict writable
// TENSOR: llvm.func internal @qm_s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @linear_relu(%x: tensor<4x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%wt0 : tensor<16x32xf32>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<4x16xf32>, tensor<16x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %out0 = tensor.empty() : tensor<4x32xf32>
  %biased = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x32xf32>, tensor<32xf32>) outs(%out0 : tensor<4x32xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x32xf32>
  return %biased : tensor<4x32xf32>
}

func.func @mlp(%x: tensor<4x16xf32>, %w1: tensor<32x16xf32>, %b1: tensor<32xf32>, %w2: tensor<16x32xf32>, %b2: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %h = call @linear_relu(%x, %w1, %b1) : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  // The second layer as torch-mlir's aten.mm with the weight already [in, out].
  %w2t0 = tensor.empty() : tensor<32x16xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<16x32xf32>) outs(%w2t0 : tensor<32x16xf32>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%h, %w2t : tensor<4x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  %out0 = tensor.empty() : tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b2, %x : tensor<4x16xf32>, tensor<16xf32>, tensor<4x16xf32>) outs(%out0 : tensor<4x16xf32>) {
  ^bb0(%v: f32, %bias: f32, %res: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %t = arith.addf %res, %s : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
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

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %ex = tensor.empty(%c4, %c16) : tensor<?x?xf32>
  %xd = call @pattern2(%ex, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x = tensor.cast %xd : tensor<?x?xf32> to tensor<4x16xf32>
  %ew1 = tensor.empty(%c32, %c16) : tensor<?x?xf32>
  %w1d = call @pattern2(%ew1, %c2, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w1 = tensor.cast %w1d : tensor<?x?xf32> to tensor<32x16xf32>
  %ew2 = tensor.empty(%c16, %c32) : tensor<?x?xf32>
  %w2d = call @pattern2(%ew2, %c5, %c1) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w2 = tensor.cast %w2d : tensor<?x?xf32> to tensor<16x32xf32>
  %eb1 = tensor.empty(%c1, %c32) : tensor<?x?xf32>
  %b1d = call @pattern2(%eb1, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %b1s = tensor.cast %b1d : tensor<?x?xf32> to tensor<1x32xf32>
  %b1 = tensor.collapse_shape %b1s [[0, 1]] : tensor<1x32xf32> into tensor<32xf32>
  %eb2 = tensor.empty(%c1, %c16) : tensor<?x?xf32>
  %b2d = call @pattern2(%eb2, %c1, %c4) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %b2s = tensor.cast %b2d : tensor<?x?xf32> to tensor<1x16xf32>
  %b2 = tensor.collapse_shape %b2s [[0, 1]] : tensor<1x16xf32> into tensor<16xf32>
  %y = call @mlp(%x, %w1, %b1, %w2, %b2) : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %ym = bufferization.to_buffer %y : tensor<4x16xf32> to memref<4x16xf32>
  %yu = memref.cast %ym : memref<4x16xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  return
}
