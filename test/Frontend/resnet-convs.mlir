// Convolutions as frontends write them: torch's conv2d (NCHW/FCHW, the
// input padded by tensor.pad, the output initialised with the broadcast
// bias, relu and a residual add after; and a ResNet basic block's tail,
// the residual added before relu), StableHLO's NHWC/HWCF convolution
// with a zero fill and stride 2, TOSA's NHWC/FHWC convolution with
// dilation 2 and a bias init. Bufferized, run with and without
// --qimeng-tensorop in four placements and compared exactly.
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

// The filters arrive with dynamic strides: checked at run time. An input
// that arrives so too (StableHLO, TOSA: a function argument; torch's is
// the fresh padded buffer) is read through its strides at run time, "_isrt"
// (the kernel reads them from its header). The outputs' initialisers fold
// into the kernels: the bias broadcasts (torch, TOSA) as overwrite plus a
// bias per channel ("_b0_bias"), the zero fill (StableHLO) as overwrite;
// the op and its initialiser stay for the other case.
// GUARDED-LABEL: func.func @torch_block(
// GUARDED:         scf.if
// GUARDED:           llvm.call @qm_sconv2d_nchw_fchw_1x10x10x8_f8_k3x3_s1x1_d1x1_b0_bias_
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.generic
// GUARDED:           linalg.conv_2d_nchw_fchw
// The basic block's tail, relu(conv + bias + x), is the kernel's epilogue
// after bufferization: x copied into the output, the kernel accumulating
// onto it with the bias and relu ("_bias_relu", no "_b0"), at the
// tensor-level placement too.
// GUARDED-LABEL: func.func @torch_basic_block(
// GUARDED:         scf.if
// GUARDED:           linalg.copy
// GUARDED:           llvm.call @qm_sconv2d_nchw_fchw_1x10x10x8_f8_k3x3_s1x1_d1x1_bias_relu_
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.generic
// GUARDED:           linalg.conv_2d_nchw_fchw
// GUARDED:           linalg.generic
// GUARDED-LABEL: func.func @stablehlo_conv(
// GUARDED:           llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s2x2_d1x1_isrt_b0_
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.fill
// GUARDED-NEXT:      linalg.conv_2d_nhwc_hwcf
// GUARDED-LABEL: func.func @tosa_conv(
// GUARDED:           llvm.call @qm_sconv2d_nhwc_fhwc_1x9x9x4_f8_k3x3_s1x1_d2x2_isrt_b0_bias_
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.generic
// GUARDED:           linalg.conv_2d_nhwc_fhwc
// GUARDED-LABEL: func.func @main(

// STATIC-LABEL: func.func @torch_block(
// STATIC-NOT:      linalg.conv_2d
// STATIC:          llvm.call @qm_sconv2d_nchw_fchw_1x10x10x8_f8_k3x3_s1x1_d1x1_b0_bias_
// STATIC-LABEL: func.func @torch_basic_block(
// STATIC-NOT:      linalg.conv_2d
// STATIC:          linalg.copy
// STATIC:          llvm.call @qm_sconv2d_nchw_fchw_1x10x10x8_f8_k3x3_s1x1_d1x1_bias_relu_
// STATIC-NOT:      linalg.generic
// STATIC-LABEL: func.func @stablehlo_conv(
// STATIC-NOT:      linalg.conv_2d
// STATIC:          llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s2x2_d1x1_b0_
// STATIC-LABEL: func.func @tosa_conv(
// STATIC-NOT:      linalg.conv_2d
// STATIC:          llvm.call @qm_sconv2d_nhwc_fhwc_1x9x9x4_f8_k3x3_s1x1_d2x2_b0_bias_
// STATIC-LABEL: func.func @main(

// OUT: rank = 4 offset = 0 sizes = [1, 8, 8, 8]
// OUT: rank = 4 offset = 0 sizes = [1, 8, 8, 8]
// OUT: rank = 4 offset = 0 sizes = [1, 4, 4, 8]
// OUT: rank = 4 offset = 0 sizes = [1, 5, 5, 8]

// TENSOR-LABEL: func.func @torch_basic_block(
// TENSOR:         linalg.copy
// TENSOR:         llvm.call @qm_sconv2d_nchw_fchw_1x10x10x8_f8_k3x3_s1x1_d1x1_isrt_bias_relu_
// TENSOR:         bufferization.to_tensor {{.*}} restrict writable
// TENSOR-LABEL: func.func @stablehlo_conv(
// TENSOR: llvm.func internal @qm_s

#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
#last = affine_map<(n, h, w, c) -> (c)>

func.func @torch_block(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %bias: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x8xf32> to tensor<1x8x10x10xf32>
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %init = linalg.generic {indexing_maps = [#chan, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x8x8x8xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%init : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %e2 = tensor.empty() : tensor<1x8x8x8xf32>
  %out = linalg.generic {indexing_maps = [#nchw, #nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %x : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) outs(%e2 : tensor<1x8x8x8xf32>) {
  ^bb0(%v: f32, %res: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    %s = arith.addf %r, %res : f32
    linalg.yield %s : f32
  } -> tensor<1x8x8x8xf32>
  return %out : tensor<1x8x8x8xf32>
}

func.func @torch_basic_block(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %bias: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x8xf32> to tensor<1x8x10x10xf32>
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %init = linalg.generic {indexing_maps = [#chan, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x8x8x8xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%init : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %e2 = tensor.empty() : tensor<1x8x8x8xf32>
  %out = linalg.generic {indexing_maps = [#nchw, #nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %x : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) outs(%e2 : tensor<1x8x8x8xf32>) {
  ^bb0(%v: f32, %res: f32, %o: f32):
    %s = arith.addf %v, %res : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  return %out : tensor<1x8x8x8xf32>
}

func.func @stablehlo_conv(%x: tensor<1x9x9x4xf32>, %w: tensor<3x3x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>) outs(%z : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %r : tensor<1x4x4x8xf32>
}

func.func @tosa_conv(%x: tensor<1x9x9x4xf32>, %w: tensor<8x3x3x4xf32>, %bias: tensor<8xf32>) -> tensor<1x5x5x8xf32> {
  %e = tensor.empty() : tensor<1x5x5x8xf32>
  %init = linalg.generic {indexing_maps = [#last, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<8xf32>) outs(%e : tensor<1x5x5x8xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x5x5x8xf32>
  %r = linalg.conv_2d_nhwc_fhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x4xf32>, tensor<8x3x3x4xf32>) outs(%init : tensor<1x5x5x8xf32>) -> tensor<1x5x5x8xf32>
  return %r : tensor<1x5x5x8xf32>
}

// (i * x + j * y) mod 7 - 3 as f32: small integers.
func.func private @pattern2(%t: tensor<?x?xf32>, %x: index, %y: index) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xf32>) {
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

// (b * z + i * x + j * y) mod 7 - 3 as f32.
func.func private @pattern3(%t: tensor<?x?x?xf32>, %z: index, %x: index, %y: index) -> tensor<?x?x?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?xf32>) {
  ^bb0(%o: f32):
    %b = linalg.index 0 : index
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %bz = arith.muli %b, %z : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %s0 = arith.addi %ix, %jy : index
    %s = arith.addi %s0, %bz : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %s, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %c3 = arith.constant 3 : i64
    %v = arith.subi %mi, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// (a * p + b * q + c * r + d * s) mod 7 - 3 as f32.
func.func private @pattern4(%t: tensor<?x?x?x?xf32>, %p: index, %q: index, %r: index, %s: index) -> tensor<?x?x?x?xf32> {
  %out = linalg.generic {indexing_maps = [#nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?x?xf32>) {
  ^bb0(%o: f32):
    %a = linalg.index 0 : index
    %b = linalg.index 1 : index
    %c = linalg.index 2 : index
    %d = linalg.index 3 : index
    %ap = arith.muli %a, %p : index
    %bq = arith.muli %b, %q : index
    %cr = arith.muli %c, %r : index
    %ds = arith.muli %d, %s : index
    %s0 = arith.addi %ap, %bq : index
    %s1 = arith.addi %s0, %cr : index
    %s2 = arith.addi %s1, %ds : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %s2, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %c3 = arith.constant 3 : i64
    %v = arith.subi %mi, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?x?x?xf32>
  return %out : tensor<?x?x?x?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @print4(%t: tensor<?x?x?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32>
  %u = memref.cast %m : memref<?x?x?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %ex = tensor.empty(%c1, %c8, %c8, %c8) : tensor<?x?x?x?xf32>
  %xd = call @pattern4(%ex, %c1, %c3, %c5, %c2) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %x = tensor.cast %xd : tensor<?x?x?x?xf32> to tensor<1x8x8x8xf32>
  %ew = tensor.empty(%c8, %c8, %c3, %c3) : tensor<?x?x?x?xf32>
  %wd = call @pattern4(%ew, %c2, %c5, %c1, %c3) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %w = tensor.cast %wd : tensor<?x?x?x?xf32> to tensor<8x8x3x3xf32>
  %eb = tensor.empty(%c1, %c8) : tensor<?x?xf32>
  %bd = call @pattern2(%eb, %c1, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %bs = tensor.cast %bd : tensor<?x?xf32> to tensor<1x8xf32>
  %bias = tensor.collapse_shape %bs [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
  %r1 = call @torch_block(%x, %w, %bias) : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %r1d = tensor.cast %r1 : tensor<1x8x8x8xf32> to tensor<?x?x?x?xf32>
  call @print4(%r1d) : (tensor<?x?x?x?xf32>) -> ()
  %r4 = call @torch_basic_block(%x, %w, %bias) : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %r4d = tensor.cast %r4 : tensor<1x8x8x8xf32> to tensor<?x?x?x?xf32>
  call @print4(%r4d) : (tensor<?x?x?x?xf32>) -> ()
  %ey = tensor.empty(%c1, %c9, %c9, %c4) : tensor<?x?x?x?xf32>
  %yd = call @pattern4(%ey, %c1, %c2, %c3, %c5) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %y = tensor.cast %yd : tensor<?x?x?x?xf32> to tensor<1x9x9x4xf32>
  %eh = tensor.empty(%c3, %c3, %c4, %c8) : tensor<?x?x?x?xf32>
  %hd = call @pattern4(%eh, %c3, %c1, %c2, %c5) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %h = tensor.cast %hd : tensor<?x?x?x?xf32> to tensor<3x3x4x8xf32>
  %r2 = call @stablehlo_conv(%y, %h) : (tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x4x4x8xf32>
  %r2d = tensor.cast %r2 : tensor<1x4x4x8xf32> to tensor<?x?x?x?xf32>
  call @print4(%r2d) : (tensor<?x?x?x?xf32>) -> ()
  %ef = tensor.empty(%c8, %c3, %c3, %c4) : tensor<?x?x?x?xf32>
  %fd = call @pattern4(%ef, %c5, %c2, %c1, %c3) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %f = tensor.cast %fd : tensor<?x?x?x?xf32> to tensor<8x3x3x4xf32>
  %r3 = call @tosa_conv(%y, %f, %bias) : (tensor<1x9x9x4xf32>, tensor<8x3x3x4xf32>, tensor<8xf32>) -> tensor<1x5x5x8xf32>
  %r3d = tensor.cast %r3 : tensor<1x5x5x8xf32> to tensor<?x?x?x?xf32>
  call @print4(%r3d) : (tensor<?x?x?x?xf32>) -> ()
  return
}
