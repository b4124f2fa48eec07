// Matmuls that frontends reach through reshapes: torch-mlir's aten.matmul
// of a 3-D and a 4-D activation with a 2-D weight (collapse_shape to a 2-D
// matmul, expand_shape back) and TOSA's rank-3 matmul with batch 1
// (linalg.batch_matmul). Bufferized, run with and without --qimeng-tensorop
// in four placements and compared exactly (small-integer inputs).
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
//
// Default layout (dynamic strides), the pass before deallocation:
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
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
// RUN: FileCheck %s < %t.v2.mlir
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
// The kernels are what ran: with a fault injected into them the output
// differs.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// Every matmul is rewritten (the collapsed activations are 6x8 and 12x8;
// the batch of one is a single GEMM), its zero fill folded (with the
// default layout the op stays for strides the check rejects).
// CHECK-LABEL: func.func @matmul3d(
// CHECK:         llvm.call @qm_sgemm_6x5x8_nn_b0_
// CHECK-LABEL: func.func @matmul4d(
// CHECK:         llvm.call @qm_sgemm_12x5x8_nn_b0_
// CHECK-LABEL: func.func @tosa_matmul(
// CHECK:         llvm.call @qm_sgemm_4x6x8_nn_b0_
// CHECK-LABEL: func.func @main(

// OUT: rank = 3 offset = 0 sizes = [2, 3, 5]
// OUT: rank = 4 offset = 0 sizes = [2, 2, 3, 5]
// OUT: rank = 3 offset = 0 sizes = [1, 4, 6]

// TENSOR: bufferization.to_tensor {{.*}} restrict writable
// TENSOR: llvm.func internal @qm_s

func.func @matmul3d(%x: tensor<2x3x8xf32>, %w: tensor<8x5xf32>) -> tensor<2x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  %e = tensor.empty() : tensor<6x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %r = linalg.matmul ins(%x2, %w : tensor<6x8xf32>, tensor<8x5xf32>) outs(%z : tensor<6x5xf32>) -> tensor<6x5xf32>
  %y = tensor.expand_shape %r [[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

func.func @matmul4d(%x: tensor<2x2x3x8xf32>, %w: tensor<8x5xf32>) -> tensor<2x2x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1, 2], [3]] : tensor<2x2x3x8xf32> into tensor<12x8xf32>
  %e = tensor.empty() : tensor<12x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x5xf32>) -> tensor<12x5xf32>
  %r = linalg.matmul ins(%x2, %w : tensor<12x8xf32>, tensor<8x5xf32>) outs(%z : tensor<12x5xf32>) -> tensor<12x5xf32>
  %y = tensor.expand_shape %r [[0, 1, 2], [3]] output_shape [2, 2, 3, 5] : tensor<12x5xf32> into tensor<2x2x3x5xf32>
  return %y : tensor<2x2x3x5xf32>
}

func.func @tosa_matmul(%a: tensor<1x4x8xf32>, %b: tensor<1x8x6xf32>) -> tensor<1x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<1x4x8xf32>, tensor<1x8x6xf32>) outs(%z : tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  return %r : tensor<1x4x6xf32>
}

// Element i of a buffer: (i * 5) mod 7 - 3 as f32.
func.func private @pattern(%t: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%t : tensor<?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %s = arith.muli %i, %c5 : index
    %m = arith.remui %s, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %c3 = arith.constant 3 : i64
    %v = arith.subi %mi, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %c40 = arith.constant 40 : index
  %c48 = arith.constant 48 : index
  %c96 = arith.constant 96 : index
  %c32 = arith.constant 32 : index
  %e1 = tensor.empty(%c48) : tensor<?xf32>
  %f1 = call @pattern(%e1) : (tensor<?xf32>) -> tensor<?xf32>
  %x3 = tensor.cast %f1 : tensor<?xf32> to tensor<48xf32>
  %x3s = tensor.expand_shape %x3 [[0, 1, 2]] output_shape [2, 3, 8] : tensor<48xf32> into tensor<2x3x8xf32>
  %e2 = tensor.empty(%c96) : tensor<?xf32>
  %f2 = call @pattern(%e2) : (tensor<?xf32>) -> tensor<?xf32>
  %x4 = tensor.cast %f2 : tensor<?xf32> to tensor<96xf32>
  %x4s = tensor.expand_shape %x4 [[0, 1, 2, 3]] output_shape [2, 2, 3, 8] : tensor<96xf32> into tensor<2x2x3x8xf32>
  %e3 = tensor.empty(%c40) : tensor<?xf32>
  %f3 = call @pattern(%e3) : (tensor<?xf32>) -> tensor<?xf32>
  %w = tensor.cast %f3 : tensor<?xf32> to tensor<40xf32>
  %ws = tensor.expand_shape %w [[0, 1]] output_shape [8, 5] : tensor<40xf32> into tensor<8x5xf32>
  %e4 = tensor.empty(%c32) : tensor<?xf32>
  %f4 = call @pattern(%e4) : (tensor<?xf32>) -> tensor<?xf32>
  %a = tensor.cast %f4 : tensor<?xf32> to tensor<32xf32>
  %as = tensor.expand_shape %a [[0, 1, 2]] output_shape [1, 4, 8] : tensor<32xf32> into tensor<1x4x8xf32>
  %e5 = tensor.empty(%c48) : tensor<?xf32>
  %f5 = call @pattern(%e5) : (tensor<?xf32>) -> tensor<?xf32>
  %b = tensor.cast %f5 : tensor<?xf32> to tensor<48xf32>
  %bs = tensor.expand_shape %b [[0, 1, 2]] output_shape [1, 8, 6] : tensor<48xf32> into tensor<1x8x6xf32>
  %y3 = call @matmul3d(%x3s, %ws) : (tensor<2x3x8xf32>, tensor<8x5xf32>) -> tensor<2x3x5xf32>
  %m3 = bufferization.to_buffer %y3 : tensor<2x3x5xf32> to memref<2x3x5xf32>
  %u3 = memref.cast %m3 : memref<2x3x5xf32> to memref<*xf32>
  call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
  %y4 = call @matmul4d(%x4s, %ws) : (tensor<2x2x3x8xf32>, tensor<8x5xf32>) -> tensor<2x2x3x5xf32>
  %m4 = bufferization.to_buffer %y4 : tensor<2x2x3x5xf32> to memref<2x2x3x5xf32>
  %u4 = memref.cast %m4 : memref<2x2x3x5xf32> to memref<*xf32>
  call @printMemrefF32(%u4) : (memref<*xf32>) -> ()
  %yt = call @tosa_matmul(%as, %bs) : (tensor<1x4x8xf32>, tensor<1x8x6xf32>) -> tensor<1x4x6xf32>
  %mt = bufferization.to_buffer %yt : tensor<1x4x6xf32> to memref<1x4x6xf32>
  %ut = memref.cast %mt : memref<1x4x6xf32> to memref<*xf32>
  call @printMemrefF32(%ut) : (memref<*xf32>) -> ()
  return
}
