// Convolutions on a dynamic batch, as torch-mlir emits them for a model
// exported with a dynamic batch dimension (conv2d NCHW: the input padded by
// tensor.pad, the output initialised with the broadcast bias, relu after)
// and StableHLO with a dynamic batch (NHWC/HWCF, zero fill, stride 2),
// called with batches of 0, 1 and 3 images. The call runs the one-image
// kernel ("_1x...") once per image in an scf.for over the batch, the input
// and output stepped by their batch strides read at run time. Bufferized
// with one-shot-bufferize's function boundaries, run with and without
// --qimeng-tensorop in four placements and compared exactly (small-integer
// inputs).
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
//
// Default layout (dynamic strides), the pass before deallocation:
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.v1.mlir
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
// Identity layout, the pass before deallocation:
// RUN: %qimeng-opt %t.identity.mlir --qimeng-tensorop -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=IDENTITY < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// Both layouts, the pass after deallocation, the first on one thread (the
// images one after the other in an scf.for; on more threads, the default,
// a batch launcher runs them concurrently, each call with its workspace):
// RUN: %mlir-opt %t.default.mlir %dealloc \
// RUN:   | %qimeng-opt '--qimeng-tensorop=threads=1' -o %t.v3.mlir
// RUN: FileCheck %s --check-prefix=THREADS < %t.v3.mlir
// RUN: %mlir-opt %t.v3.mlir %lower-to-llvm \
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

// The one-image kernels, the fill and the bias broadcast folded (_b0,
// _bias), relu fused; the filter and bias arrive with dynamic strides
// (checked), the StableHLO input too (read at run time, _isrt); torch's
// input is the padded buffer, dense per image.
// DEFAULT-LABEL: func.func @torch_conv_relu(
// DEFAULT:         scf.if
// DEFAULT:           llvm.call @qm_sconv2d_nchw_fchw_1x10x10x3_f4_k3x3_s1x1_d1x1_b0_bias_relu_
// DEFAULT:         } else {
// DEFAULT-NEXT:      linalg.generic
// DEFAULT:           linalg.conv_2d_nchw_fchw
// DEFAULT-LABEL: func.func @stablehlo_conv(
// DEFAULT:         scf.if
// DEFAULT:           llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s2x2_d1x1_isrt_b0_
// DEFAULT:         } else {
// DEFAULT-NEXT:      linalg.fill
// DEFAULT-NEXT:      linalg.conv_2d_nhwc_hwcf

// With the identity layout every stride is static: nothing is checked.
// IDENTITY-LABEL: func.func @torch_conv_relu(
// IDENTITY-NOT:     scf.if
// IDENTITY-NOT:     linalg.conv_2d
// IDENTITY:         llvm.call @qm_sconv2d_nchw_fchw_1x10x10x3_f4_k3x3_s1x1_d1x1_b0_bias_relu_
// IDENTITY-LABEL: func.func @stablehlo_conv(
// IDENTITY-NOT:     scf.if
// IDENTITY-NOT:     linalg.conv_2d
// IDENTITY:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s2x2_d1x1_b0_

// One thread: the images in an scf.for up to the output's dimension 0.
// THREADS-LABEL: func.func @torch_conv_relu(
// THREADS:         %[[N:.*]] = memref.dim %{{.*}}, %c0
// THREADS:         scf.for %{{.*}} = %{{.*}} to %[[N]]
// THREADS:           llvm.call @qm_sconv2d_nchw_fchw_1x10x10x3_f4_k3x3_s1x1_d1x1_b0_bias_relu_

// TENSOR-LABEL: func.func @torch_conv_relu(
// TENSOR:         llvm.call @qm_sconv2d_nchw_fchw_1x10x10x3_
// TENSOR:         bufferization.to_tensor {{.*}} restrict writable
// TENSOR-LABEL: func.func @stablehlo_conv(
// TENSOR:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_
// TENSOR:         bufferization.to_tensor {{.*}} restrict writable

// OUT: rank = 4 offset = 0 sizes = [1, 4, 8, 8]
// OUT: rank = 4 offset = 0 sizes = [1, 4, 4, 8]
// OUT: rank = 4 offset = 0 sizes = [3, 4, 8, 8]
// OUT: rank = 4 offset = 0 sizes = [3, 4, 4, 8]

#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>

func.func @torch_conv_relu(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<?x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<?x3x8x8xf32> to tensor<?x3x10x10xf32>
  %e = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %init = linalg.generic {indexing_maps = [#chan, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<?x4x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x4x8x8xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<?x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %out = linalg.generic {indexing_maps = [#nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<?x4x8x8xf32>) outs(%e2 : tensor<?x4x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x4x8x8xf32>
  return %out : tensor<?x4x8x8xf32>
}

func.func @stablehlo_conv(%x: tensor<?x9x9x4xf32>, %w: tensor<3x3x4x8xf32>) -> tensor<?x4x4x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x9x9x4xf32>
  %e = tensor.empty(%n) : tensor<?x4x4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x4x8xf32>) -> tensor<?x4x4x8xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : tensor<?x9x9x4xf32>, tensor<3x3x4x8xf32>) outs(%init : tensor<?x4x4x8xf32>) -> tensor<?x4x4x8xf32>
  return %conv : tensor<?x4x4x8xf32>
}

// (i * 3 + j * 5 + k * 2 + l * 7 + seed) mod 7 - 3 as f32: small integers.
func.func private @pattern4(%t: tensor<?x?x?x?xf32>, %seed: index) -> tensor<?x?x?x?xf32> {
  %r = linalg.generic {indexing_maps = [#nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %l = linalg.index 3 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %a = arith.muli %i, %c3 : index
    %bb = arith.muli %j, %c5 : index
    %cc = arith.muli %k, %c2 : index
    %d = arith.muli %l, %c7 : index
    %s0 = arith.addi %a, %bb : index
    %s1 = arith.addi %s0, %cc : index
    %s2 = arith.addi %s1, %d : index
    %s3 = arith.addi %s2, %seed : index
    %m = arith.remui %s3, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %three = arith.constant 3 : i64
    %v = arith.subi %mi, %three : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @run(%n: index, %wt: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %ws: tensor<3x3x4x8xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %ex = tensor.empty(%n, %c3, %c8, %c8) : tensor<?x?x?x?xf32>
  %xd = call @pattern4(%ex, %c1) : (tensor<?x?x?x?xf32>, index) -> tensor<?x?x?x?xf32>
  %x = tensor.cast %xd : tensor<?x?x?x?xf32> to tensor<?x3x8x8xf32>
  %y = call @torch_conv_relu(%x, %wt, %b) : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x8x8xf32>
  %ym = bufferization.to_buffer %y : tensor<?x4x8x8xf32> to memref<?x4x8x8xf32>
  %yu = memref.cast %ym : memref<?x4x8x8xf32> to memref<*xf32>
  %ez = tensor.empty(%n, %c9, %c9, %c4) : tensor<?x?x?x?xf32>
  %zd = call @pattern4(%ez, %c2) : (tensor<?x?x?x?xf32>, index) -> tensor<?x?x?x?xf32>
  %z = tensor.cast %zd : tensor<?x?x?x?xf32> to tensor<?x9x9x4xf32>
  %o = call @stablehlo_conv(%z, %ws) : (tensor<?x9x9x4xf32>, tensor<3x3x4x8xf32>) -> tensor<?x4x4x8xf32>
  %om = bufferization.to_buffer %o : tensor<?x4x4x8xf32> to memref<?x4x4x8xf32>
  %ou = memref.cast %om : memref<?x4x4x8xf32> to memref<*xf32>
  // (printMemrefF32 reads one image of an empty batch: print none.)
  %c0 = arith.constant 0 : index
  %any = arith.cmpi ne, %n, %c0 : index
  scf.if %any {
    func.call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
    func.call @printMemrefF32(%ou) : (memref<*xf32>) -> ()
  }
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %ew = tensor.empty(%c4, %c3, %c3, %c3) : tensor<?x?x?x?xf32>
  %wd = call @pattern4(%ew, %c3) : (tensor<?x?x?x?xf32>, index) -> tensor<?x?x?x?xf32>
  %wt = tensor.cast %wd : tensor<?x?x?x?xf32> to tensor<4x3x3x3xf32>
  %eb = tensor.empty(%c1, %c1, %c1, %c4) : tensor<?x?x?x?xf32>
  %bd = call @pattern4(%eb, %c5) : (tensor<?x?x?x?xf32>, index) -> tensor<?x?x?x?xf32>
  %bs = tensor.cast %bd : tensor<?x?x?x?xf32> to tensor<1x1x1x4xf32>
  %b = tensor.collapse_shape %bs [[0, 1, 2, 3]] : tensor<1x1x1x4xf32> into tensor<4xf32>
  %es = tensor.empty(%c3, %c3, %c4, %c8) : tensor<?x?x?x?xf32>
  %sd = call @pattern4(%es, %c6) : (tensor<?x?x?x?xf32>, index) -> tensor<?x?x?x?xf32>
  %ws = tensor.cast %sd : tensor<?x?x?x?xf32> to tensor<3x3x4x8xf32>
  call @run(%c0, %wt, %b, %ws) : (index, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<3x3x4x8xf32>) -> ()
  call @run(%c1, %wt, %b, %ws) : (index, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<3x3x4x8xf32>) -> ()
  call @run(%c3, %wt, %b, %ws) : (index, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<3x3x4x8xf32>) -> ()
  return
}
