// Quantized matmuls with zero points, as TOSA's and torch-mlir's int8
// models reach linalg: linalg.quantized_matmul (an activation zero point of
// -7 and a weight zero point of 3, a zero-filled i32 accumulator), a
// quantized_batch_matmul whose zero points are function arguments (run
// with zero points 0 and 0, 5 and 0, -128 and 127), and one whose zero
// points are constant zero (the plain product). Each becomes the plain
// contraction on an 8-bit kernel (its zero fill folded) and the zero
// points' sums and correction as stock linalg (ZeroPoints.h). Bufferized,
// run with and without the pass in four placements and compared exactly
// over i8's whole range.
// REQUIRES: host-avx512f, host-avx512bw, host-avx512vnni
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// Default layout, the pass before deallocation:
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.tensor.mlir
// RUN: FileCheck %s --check-prefix=TENSOR < %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Identity layout, the pass before deallocation (the dot kernels):
// RUN: %qimeng-opt %t.identity.mlir --qimeng-tensorop=amx=false \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// Both layouts, the pass after deallocation:
// RUN: %mlir-opt %t.default.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop=threads=2 | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop=threads=1 | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v4
// RUN: diff %t.reference %t.v4
//
// The kernels are what ran: broken ones (validation off) change the output.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// The quantized ops are gone: the product is a kernel call, its zero fill
// folded (b0), the sums (on the stack) and the correction stock linalg.
// CHECK-LABEL: func.func @linear_zero_points(
// CHECK-NOT:     linalg.quantized_matmul
// CHECK-NOT:     linalg.fill ins(%c0_i32 : i32) outs(%alloc
// CHECK:         llvm.call @qm_s8s8gemm_29x70x131_nn_{{(adirect_)?}}b0_
// CHECK:         memref.alloca() : memref<29xi32>
// CHECK:         linalg.generic
// CHECK:         memref.alloca() : memref<70xi32>
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @bmm_zero_points(
// CHECK-NOT:     linalg.quantized_batch_matmul
// CHECK:         llvm.call @qm_s8s8gemm_5x6x40_nn_b0_
// CHECK:         memref.alloca() : memref<3x5xi32>
// CHECK-LABEL: func.func @bmm_zero_zero_points(
// CHECK-NOT:     linalg.quantized_batch_matmul
// CHECK-NOT:     memref.alloca()
// CHECK:         llvm.call @qm_s8s8gemm_5x6x40_nn_
// CHECK-NOT:     memref.alloca()
// CHECK-LABEL: func.func @main(

// TENSOR-LABEL: func.func @linear_zero_points(
// TENSOR-NOT:     linalg.quantized_matmul
// TENSOR:         llvm.call @qm_s8s8gemm_29x70x131_nn_{{(adirect_)?}}b0_
// TENSOR:         linalg.generic
// TENSOR-LABEL: func.func @bmm_zero_points(

// OUT-COUNT-5: rank =

#id2 = affine_map<(d0, d1) -> (d0, d1)>

func.func @linear_zero_points(%x: tensor<29x131xi8>, %w: tensor<131x70xi8>) -> tensor<29x70xi32> {
  %zero = arith.constant 0 : i32
  %xzp = arith.constant -7 : i32
  %wzp = arith.constant 3 : i32
  %e = tensor.empty() : tensor<29x70xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<29x70xi32>) -> tensor<29x70xi32>
  %r = linalg.quantized_matmul ins(%x, %w, %xzp, %wzp : tensor<29x131xi8>, tensor<131x70xi8>, i32, i32) outs(%acc : tensor<29x70xi32>) -> tensor<29x70xi32>
  return %r : tensor<29x70xi32>
}

func.func @bmm_zero_points(%a: tensor<3x5x40xi8>, %b: tensor<3x40x6xi8>, %azp: i32, %bzp: i32) -> tensor<3x5x6xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<3x5x6xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<3x5x6xi32>) -> tensor<3x5x6xi32>
  %r = linalg.quantized_batch_matmul ins(%a, %b, %azp, %bzp : tensor<3x5x40xi8>, tensor<3x40x6xi8>, i32, i32) outs(%acc : tensor<3x5x6xi32>) -> tensor<3x5x6xi32>
  return %r : tensor<3x5x6xi32>
}

func.func @bmm_zero_zero_points(%a: tensor<3x5x40xi8>, %b: tensor<3x40x6xi8>) -> tensor<3x5x6xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<3x5x6xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<3x5x6xi32>) -> tensor<3x5x6xi32>
  %r = linalg.quantized_batch_matmul ins(%a, %b, %zero, %zero : tensor<3x5x40xi8>, tensor<3x40x6xi8>, i32, i32) outs(%acc : tensor<3x5x6xi32>) -> tensor<3x5x6xi32>
  return %r : tensor<3x5x6xi32>
}

// (i * x + j * y) mod 256 as i8: every bit pattern, both extremes.
func.func private @bytes(%rows: index, %cols: index, %x: index, %y: index) -> tensor<?x?xi8> {
  %t = tensor.empty(%rows, %cols) : tensor<?x?xi8>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xi8>) {
  ^bb0(%o: i8):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %s = arith.addi %ix, %jy : index
    %c256 = arith.constant 256 : index
    %m = arith.remui %s, %c256 : index
    %mi = arith.index_cast %m : index to i64
    %v = arith.trunci %mi : i64 to i8
    linalg.yield %v : i8
  } -> tensor<?x?xi8>
  return %r : tensor<?x?xi8>
}

func.func private @printMemrefI32(memref<*xi32>)

func.func private @print3(%t: tensor<3x5x6xi32>) {
  %m = bufferization.to_buffer %t : tensor<3x5x6xi32> to memref<3x5x6xi32>
  %u = memref.cast %m : memref<3x5x6xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %c15 = arith.constant 15 : index
  %c18 = arith.constant 18 : index
  %c29 = arith.constant 29 : index
  %c40 = arith.constant 40 : index
  %c70 = arith.constant 70 : index
  %c120 = arith.constant 120 : index
  %c131 = arith.constant 131 : index

  %xd = call @bytes(%c29, %c131, %c7, %c13) : (index, index, index, index) -> tensor<?x?xi8>
  %wd = call @bytes(%c131, %c70, %c11, %c5) : (index, index, index, index) -> tensor<?x?xi8>
  %x = tensor.cast %xd : tensor<?x?xi8> to tensor<29x131xi8>
  %w = tensor.cast %wd : tensor<?x?xi8> to tensor<131x70xi8>
  %y = call @linear_zero_points(%x, %w) : (tensor<29x131xi8>, tensor<131x70xi8>) -> tensor<29x70xi32>
  %ym = bufferization.to_buffer %y : tensor<29x70xi32> to memref<29x70xi32>
  %yu = memref.cast %ym : memref<29x70xi32> to memref<*xi32>
  call @printMemrefI32(%yu) : (memref<*xi32>) -> ()

  // Three batches of 5 x 40 and 40 x 6 as 15 x 40 and 120 x 6 reshaped.
  %ad = call @bytes(%c15, %c40, %c13, %c7) : (index, index, index, index) -> tensor<?x?xi8>
  %bd = call @bytes(%c120, %c6, %c5, %c11) : (index, index, index, index) -> tensor<?x?xi8>
  %a2 = tensor.cast %ad : tensor<?x?xi8> to tensor<15x40xi8>
  %b2 = tensor.cast %bd : tensor<?x?xi8> to tensor<120x6xi8>
  %a = tensor.expand_shape %a2 [[0, 1], [2]] output_shape [3, 5, 40] : tensor<15x40xi8> into tensor<3x5x40xi8>
  %b = tensor.expand_shape %b2 [[0, 1], [2]] output_shape [3, 40, 6] : tensor<120x6xi8> into tensor<3x40x6xi8>
  %z0 = arith.constant 0 : i32
  %z5 = arith.constant 5 : i32
  %zlo = arith.constant -128 : i32
  %zhi = arith.constant 127 : i32
  %q0 = call @bmm_zero_points(%a, %b, %z0, %z0) : (tensor<3x5x40xi8>, tensor<3x40x6xi8>, i32, i32) -> tensor<3x5x6xi32>
  call @print3(%q0) : (tensor<3x5x6xi32>) -> ()
  %q1 = call @bmm_zero_points(%a, %b, %z5, %z0) : (tensor<3x5x40xi8>, tensor<3x40x6xi8>, i32, i32) -> tensor<3x5x6xi32>
  call @print3(%q1) : (tensor<3x5x6xi32>) -> ()
  %q2 = call @bmm_zero_points(%a, %b, %zlo, %zhi) : (tensor<3x5x40xi8>, tensor<3x40x6xi8>, i32, i32) -> tensor<3x5x6xi32>
  call @print3(%q2) : (tensor<3x5x6xi32>) -> ()
  %q3 = call @bmm_zero_zero_points(%a, %b) : (tensor<3x5x40xi8>, tensor<3x40x6xi8>) -> tensor<3x5x6xi32>
  call @print3(%q3) : (tensor<3x5x6xi32>) -> ()
  return
}
