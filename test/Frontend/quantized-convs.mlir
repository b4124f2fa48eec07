// Quantized convolutions with zero points, as TOSA's and torch-mlir's int8
// CNNs reach linalg: TOSA's conv_2d_nhwc_fhwc_q (an input zero point of
// -5, the filter's 0: symmetric weights; stride 2), a conv_2d_nhwc_hwcf_q
// with both zero points (7 and -3, dilation 2), and torch's
// conv_2d_nchw_fchw_q with zero points from its arguments (run with 0 and
// 0, and with -128 and 127). Each becomes the plain convolution on an
// 8-bit kernel (its zero fill folded) plus the zero points' sums (each
// output pixel's window of the input, each filter) and correction as stock
// linalg (ZeroPoints.h). Bufferized, run with and without the pass in four
// placements and compared exactly over i8's whole range.
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
// RUN: %qimeng-opt %s --qimeng-tensorop | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
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

// The input's zero point alone needs each filter's sum; both need each
// output pixel's window sum too: each input pixel's sum over its
// channels, then each window's of those (a [KH, KW] operand gives the
// window's loops their ranges, as a pooling op's does).
// CHECK-LABEL: func.func @tosa_conv(
// CHECK-NOT:     linalg.conv_2d_nhwc_fhwc_q
// CHECK:         llvm.call @qm_s8s8conv2d_nhwc_fhwc_1x17x17x8_f12_k3x3_s2x2_d1x1_{{.*}}b0_
// CHECK:         memref.alloca() : memref<12xi32>
// CHECK-NOT:     memref.alloca()
// CHECK-LABEL: func.func @both_zero_points(
// CHECK-NOT:     linalg.conv_2d_nhwc_hwcf_q
// CHECK:         llvm.call @qm_s8s8conv2d_nhwc_hwcf_1x13x13x4_f6_k3x3_s1x1_d2x2_{{.*}}b0_
// CHECK:         memref.alloca() : memref<1x13x13xi32>
// CHECK:         memref.alloca() : memref<3x3xi8>
// CHECK:         memref.alloca() : memref<1x9x9xi32>
// CHECK:         memref.alloca() : memref<6xi32>
// CHECK-LABEL: func.func @torch_conv(
// CHECK-NOT:     linalg.conv_2d_nchw_fchw_q
// CHECK:         llvm.call @qm_s8s8conv2d_nchw_fchw_1x10x10x4_f8_k3x3_s1x1_d1x1_{{.*}}b0_
// CHECK-LABEL: func.func @main(

// OUT-COUNT-4: rank = 4

#id2 = affine_map<(d0, d1) -> (d0, d1)>

func.func @tosa_conv(%x: tensor<1x17x17x8xi8>, %w: tensor<12x3x3x8xi8>) -> tensor<1x8x8x12xi32> {
  %zero = arith.constant 0 : i32
  %xzp = arith.constant -5 : i32
  %e = tensor.empty() : tensor<1x8x8x12xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<1x8x8x12xi32>) -> tensor<1x8x8x12xi32>
  %r = linalg.conv_2d_nhwc_fhwc_q {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w, %xzp, %zero : tensor<1x17x17x8xi8>, tensor<12x3x3x8xi8>, i32, i32) outs(%acc : tensor<1x8x8x12xi32>) -> tensor<1x8x8x12xi32>
  return %r : tensor<1x8x8x12xi32>
}

func.func @both_zero_points(%x: tensor<1x13x13x4xi8>, %w: tensor<3x3x4x6xi8>) -> tensor<1x9x9x6xi32> {
  %zero = arith.constant 0 : i32
  %xzp = arith.constant 7 : i32
  %wzp = arith.constant -3 : i32
  %e = tensor.empty() : tensor<1x9x9x6xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<1x9x9x6xi32>) -> tensor<1x9x9x6xi32>
  %r = linalg.conv_2d_nhwc_hwcf_q {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w, %xzp, %wzp : tensor<1x13x13x4xi8>, tensor<3x3x4x6xi8>, i32, i32) outs(%acc : tensor<1x9x9x6xi32>) -> tensor<1x9x9x6xi32>
  return %r : tensor<1x9x9x6xi32>
}

func.func @torch_conv(%x: tensor<1x4x10x10xi8>, %w: tensor<8x4x3x3xi8>, %zx: i32, %zw: i32) -> tensor<1x8x8x8xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x8x8x8xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<1x8x8x8xi32>) -> tensor<1x8x8x8xi32>
  %r = linalg.conv_2d_nchw_fchw_q {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w, %zx, %zw : tensor<1x4x10x10xi8>, tensor<8x4x3x3xi8>, i32, i32) outs(%acc : tensor<1x8x8x8xi32>) -> tensor<1x8x8x8xi32>
  return %r : tensor<1x8x8x8xi32>
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

func.func private @print4(%t: tensor<?x?x?x?xi32>) {
  %m = bufferization.to_buffer %t : tensor<?x?x?x?xi32> to memref<?x?x?x?xi32>
  %u = memref.cast %m : memref<?x?x?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %c11 = arith.constant 11 : index
  %c12 = arith.constant 12 : index
  %c13 = arith.constant 13 : index
  %c17 = arith.constant 17 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %c52 = arith.constant 52 : index
  %c72 = arith.constant 72 : index
  %c100 = arith.constant 100 : index
  %c136 = arith.constant 136 : index

  // TOSA's: 1x17x17x8 as 17 x 136, 12x3x3x8 as 12 x 72.
  %x1d = call @bytes(%c17, %c136, %c7, %c13) : (index, index, index, index) -> tensor<?x?xi8>
  %w1d = call @bytes(%c12, %c72, %c11, %c5) : (index, index, index, index) -> tensor<?x?xi8>
  %x1s = tensor.cast %x1d : tensor<?x?xi8> to tensor<17x136xi8>
  %w1s = tensor.cast %w1d : tensor<?x?xi8> to tensor<12x72xi8>
  %x1 = tensor.expand_shape %x1s [[0, 1], [2, 3]] output_shape [1, 17, 17, 8] : tensor<17x136xi8> into tensor<1x17x17x8xi8>
  %w1 = tensor.expand_shape %w1s [[0], [1, 2, 3]] output_shape [12, 3, 3, 8] : tensor<12x72xi8> into tensor<12x3x3x8xi8>
  %o1 = call @tosa_conv(%x1, %w1) : (tensor<1x17x17x8xi8>, tensor<12x3x3x8xi8>) -> tensor<1x8x8x12xi32>
  %o1d = tensor.cast %o1 : tensor<1x8x8x12xi32> to tensor<?x?x?x?xi32>
  call @print4(%o1d) : (tensor<?x?x?x?xi32>) -> ()

  // 1x13x13x4 as 13 x 52, 3x3x4x6 as 9 x 24.
  %x2d = call @bytes(%c13, %c52, %c13, %c7) : (index, index, index, index) -> tensor<?x?xi8>
  %w2d = call @bytes(%c9, %c24, %c5, %c11) : (index, index, index, index) -> tensor<?x?xi8>
  %x2s = tensor.cast %x2d : tensor<?x?xi8> to tensor<13x52xi8>
  %w2s = tensor.cast %w2d : tensor<?x?xi8> to tensor<9x24xi8>
  %x2 = tensor.expand_shape %x2s [[0, 1], [2, 3]] output_shape [1, 13, 13, 4] : tensor<13x52xi8> into tensor<1x13x13x4xi8>
  %w2 = tensor.expand_shape %w2s [[0, 1], [2, 3]] output_shape [3, 3, 4, 6] : tensor<9x24xi8> into tensor<3x3x4x6xi8>
  %o2 = call @both_zero_points(%x2, %w2) : (tensor<1x13x13x4xi8>, tensor<3x3x4x6xi8>) -> tensor<1x9x9x6xi32>
  %o2d = tensor.cast %o2 : tensor<1x9x9x6xi32> to tensor<?x?x?x?xi32>
  call @print4(%o2d) : (tensor<?x?x?x?xi32>) -> ()

  // torch's: 1x4x10x10 as 4 x 100, 8x4x3x3 as 32 x 9.
  %x3d = call @bytes(%c4, %c100, %c11, %c7) : (index, index, index, index) -> tensor<?x?xi8>
  %w3d = call @bytes(%c32, %c9, %c7, %c13) : (index, index, index, index) -> tensor<?x?xi8>
  %x3s = tensor.cast %x3d : tensor<?x?xi8> to tensor<4x100xi8>
  %w3s = tensor.cast %w3d : tensor<?x?xi8> to tensor<32x9xi8>
  %x3 = tensor.expand_shape %x3s [[0, 1], [2, 3]] output_shape [1, 4, 10, 10] : tensor<4x100xi8> into tensor<1x4x10x10xi8>
  %w3 = tensor.expand_shape %w3s [[0, 1], [2, 3]] output_shape [8, 4, 3, 3] : tensor<32x9xi8> into tensor<8x4x3x3xi8>
  %z0 = arith.constant 0 : i32
  %zlo = arith.constant -128 : i32
  %zhi = arith.constant 127 : i32
  %o3 = call @torch_conv(%x3, %w3, %z0, %z0) : (tensor<1x4x10x10xi8>, tensor<8x4x3x3xi8>, i32, i32) -> tensor<1x8x8x8xi32>
  %o3d = tensor.cast %o3 : tensor<1x8x8x8xi32> to tensor<?x?x?x?xi32>
  call @print4(%o3d) : (tensor<?x?x?x?xi32>) -> ()
  %o4 = call @torch_conv(%x3, %w3, %zlo, %zhi) : (tensor<1x4x10x10xi8>, tensor<8x4x3x3xi8>, i32, i32) -> tensor<1x8x8x8xi32>
  %o4d = tensor.cast %o4 : tensor<1x8x8x8xi32> to tensor<?x?x?x?xi32>
  call @print4(%o4d) : (tensor<?x?x?x?xi32>) -> ()
  return
}
