// A small TOSA model, written in the TOSA dialect and lowered by MLIR's
// own TOSA-to-linalg passes, as a TOSA frontend's pipeline does: a 3x3
// convolution (NHWC input, FHWC filter, tosa.conv2d's padding as a
// tensor.pad, its bias as a broadcast init) with relu6 (tosa.clamp [0, 6]:
// arith.minimumf then arith.maximumf); one with stride 2 and dilation 2
// and relu (clamp [0, the largest float]); a rank-3 tosa.matmul (batch 1,
// zero fill) with hardtanh's clamp [-2, 3]; a linear layer (tosa.transpose of the weight,
// tosa.matmul, tosa.add of a 1x1xN bias: a broadcast map (d0, 0, d2), and
// relu). With linalg's elementwise fusion first (as IREE-style pipelines
// run it) each bias add and clamp are one generic, which the pass fuses
// whole; without it they are two, the clamp reading the add's output, and
// the pass fuses the chain. Run with and without --qimeng-tensorop in four
// placements (and the chain on tensors) and compared exactly (small
// integers: every sum exact).
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --pass-pipeline="builtin.module(func.func(tosa-optional-decompositions,tosa-make-broadcastable,tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" -o %t.linalg.mlir
// RUN: %mlir-opt %t.linalg.mlir --linalg-fuse-elementwise-ops -o %t.fused.mlir
// RUN: %mlir-opt %t.linalg.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// On tensors, before bufferization (fused):
// RUN: %qimeng-opt %t.fused.mlir --qimeng-tensorop -o %t.tensor.mlir
// RUN: FileCheck %s --check-prefix=FUSED < %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Default layout (dynamic strides), the pass before deallocation (fused):
// RUN: %mlir-opt %t.fused.mlir --one-shot-bufferize="bufferize-function-boundaries" | %qimeng-opt --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s --check-prefix=FUSED < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// Identity layout, not fused elementwise, the pass before deallocation:
// RUN: %mlir-opt %t.linalg.mlir --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | %qimeng-opt --qimeng-tensorop -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=UNFUSED < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// On tensors, not fused elementwise: the chain moves onto buffers whole.
// RUN: %qimeng-opt %t.linalg.mlir --qimeng-tensorop -o %t.tensor-chain.mlir
// RUN: FileCheck %s --check-prefix=CHAIN < %t.tensor-chain.mlir
// RUN: %mlir-opt %t.tensor-chain.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor-chain
// RUN: diff %t.reference %t.tensor-chain
//
// Default layout, the pass after deallocation:
// RUN: %mlir-opt %t.fused.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
//
// The kernels are what ran: with a fault injected into them the output
// differs.
// RUN: %qimeng-opt %t.fused.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// The bias inits and clamps fold into the convolution kernels (relu6's
// bound 6.0 = 0x40c00000; TOSA's relu bounds by the largest float,
// 0x7f7fffff, which is what clamp computes), the fills into overwrite
// ("b0"), the weight's transpose into "nt", the 1x1xN bias into "bias",
// the clamp [-2, 3] into relu with its floor and bound (-2.0 =
// 0xc0000000, 3.0 = 0x40400000).
// FUSED-LABEL: func.func @conv_relu6(
// FUSED-NOT:     linalg.conv_2d
// FUSED:         llvm.call @qm_sconv2d_nhwc_fhwc_1x12x12x8_f16_k3x3_s1x1_d1x1_{{(isrt_)?}}b0_bias_relu_max40c00000_
// FUSED-LABEL: func.func @conv_stride2_dilated(
// FUSED:         llvm.call @qm_sconv2d_nhwc_fhwc_1x11x11x8_f16_k3x3_s2x2_d2x2_{{(isrt_)?}}b0_bias_relu_max7f7fffff_
// FUSED-LABEL: func.func @matmul_hardtanh(
// FUSED:         llvm.call @qm_sgemm_12x24x20_nn_b0_relu_minc0000000_max40400000_
// FUSED-LABEL: func.func @linear(
// FUSED:         llvm.call @qm_sgemm_12x24x20_nt_b0_bias_relu_max7f7fffff_

// Without elementwise fusion the bias add is the product's one consumer
// and the clamp the add's: both fuse, and the buffers of the product and
// of the add go with them.
// UNFUSED-LABEL: func.func @linear(
// UNFUSED:         memref.alloc()
// UNFUSED-NOT:     memref.alloc()
// UNFUSED-NOT:     linalg.
// UNFUSED:         llvm.call @qm_sgemm_12x24x20_nt_b0_bias_relu_max7f7fffff_lda20_ldb20_ldc24_
// UNFUSED-NOT:     linalg.
// UNFUSED:         return
// On tensors the buffers' strides are checked at run time, and the ops
// stay where they do not hold.
// CHAIN-LABEL: func.func @linear(
// CHAIN:         llvm.call @qm_sgemm_12x24x20_nt_b0_bias_relu_max7f7fffff_ldrt_
// CHAIN:       } else {
// CHAIN:         linalg.batch_matmul
// CHAIN:         linalg.generic
// CHAIN:         arith.addf
// CHAIN:         linalg.generic
// CHAIN:         arith.minimumf
// CHAIN:         return

// OUT: rank = 4 offset = 0 sizes = [1, 10, 10, 16]
// OUT: rank = 4 offset = 0 sizes = [1, 4, 4, 16]
// OUT: rank = 4 offset = 0 sizes = [1, 1, 12, 24]
// OUT: rank = 4 offset = 0 sizes = [1, 1, 12, 24]

// A 3x3 convolution (NHWC input, FHWC filter, padding 1) with its bias,
// then relu6 as TOSA writes it: clamp [0, 6].
func.func @conv_relu6(%x: tensor<1x10x10x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x10x10x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x10x10x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x10x16xf32>
  %r = tosa.clamp %c {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<1x10x10x16xf32>) -> tensor<1x10x10x16xf32>
  return %r : tensor<1x10x10x16xf32>
}

// Stride 2 and dilation 2, padded below and right by one, then relu as TOSA writes it: clamp
// [0, the largest float].
func.func @conv_stride2_dilated(%x: tensor<1x10x10x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x4x4x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 2, 2>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>} : (tensor<1x10x10x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x16xf32>
  %r = tosa.clamp %c {max_val = 3.40282347E+38 : f32, min_val = 0.0 : f32} : (tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %r : tensor<1x4x4x16xf32>
}

// TOSA's matmul is rank 3 (here a batch of 1), then a clamp to [-2, 3].
func.func @matmul_hardtanh(%a: tensor<1x12x20xf32>, %b: tensor<1x20x24xf32>) -> tensor<1x12x24xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %m = tosa.matmul %a, %b, %zp, %zp : (tensor<1x12x20xf32>, tensor<1x20x24xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x12x24xf32>
  %r = tosa.clamp %m {max_val = 3.0 : f32, min_val = -2.0 : f32} : (tensor<1x12x24xf32>) -> tensor<1x12x24xf32>
  return %r : tensor<1x12x24xf32>
}

// A linear layer: the weight (out x in) transposed, the matmul, the bias
// added with a broadcast, relu.
func.func @linear(%x: tensor<1x12x20xf32>, %w: tensor<1x24x20xf32>, %bias: tensor<1x1x24xf32>) -> tensor<1x12x24xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %wt = tosa.transpose %w {perms = array<i32: 0, 2, 1>} : (tensor<1x24x20xf32>) -> tensor<1x20x24xf32>
  %m = tosa.matmul %x, %wt, %zp, %zp : (tensor<1x12x20xf32>, tensor<1x20x24xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x12x24xf32>
  %s = tosa.add %m, %bias : (tensor<1x12x24xf32>, tensor<1x1x24xf32>) -> tensor<1x12x24xf32>
  %r = tosa.clamp %s {max_val = 3.40282347E+38 : f32, min_val = 0.0 : f32} : (tensor<1x12x24xf32>) -> tensor<1x12x24xf32>
  return %r : tensor<1x12x24xf32>
}

// (a * p + b * q + c * r + d * s) mod 7 - 3 as f32: small integers, every
// sum exact.
#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func private @pattern4(%t: tensor<?x?x?x?xf32>, %p: index, %q: index, %r: index, %s: index) -> tensor<?x?x?x?xf32> {
  %out = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?x?xf32>) {
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

func.func @print(%t: tensor<?x?x?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32>
  %u = memref.cast %m : memref<?x?x?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// A tensor of the given sizes filled by @pattern4.
func.func @make(%a: index, %b: index, %c: index, %d: index, %p: index, %q: index, %r: index, %s: index) -> tensor<?x?x?x?xf32> {
  %e = tensor.empty(%a, %b, %c, %d) : tensor<?x?x?x?xf32>
  %t = call @pattern4(%e, %p, %q, %r, %s) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  return %t : tensor<?x?x?x?xf32>
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c20 = arith.constant 20 : index
  %c24 = arith.constant 24 : index
  %xd = call @make(%c1, %c10, %c10, %c8, %c1, %c3, %c5, %c2) : (index, index, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %x = tensor.cast %xd : tensor<?x?x?x?xf32> to tensor<1x10x10x8xf32>
  %wd = call @make(%c16, %c3, %c3, %c8, %c2, %c5, %c1, %c3) : (index, index, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %w = tensor.cast %wd : tensor<?x?x?x?xf32> to tensor<16x3x3x8xf32>
  %bd = call @make(%c1, %c1, %c1, %c16, %c1, %c1, %c1, %c3) : (index, index, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %b4 = tensor.cast %bd : tensor<?x?x?x?xf32> to tensor<1x1x1x16xf32>
  %b = tensor.collapse_shape %b4 [[0, 1, 2, 3]] : tensor<1x1x1x16xf32> into tensor<16xf32>
  %r1 = call @conv_relu6(%x, %w, %b) : (tensor<1x10x10x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>) -> tensor<1x10x10x16xf32>
  %r1d = tensor.cast %r1 : tensor<1x10x10x16xf32> to tensor<?x?x?x?xf32>
  call @print(%r1d) : (tensor<?x?x?x?xf32>) -> ()
  %r2 = call @conv_stride2_dilated(%x, %w, %b) : (tensor<1x10x10x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %r2d = tensor.cast %r2 : tensor<1x4x4x16xf32> to tensor<?x?x?x?xf32>
  call @print(%r2d) : (tensor<?x?x?x?xf32>) -> ()
  %ad = call @make(%c1, %c1, %c12, %c20, %c1, %c1, %c3, %c1) : (index, index, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %a4 = tensor.cast %ad : tensor<?x?x?x?xf32> to tensor<1x1x12x20xf32>
  %a = tensor.collapse_shape %a4 [[0, 1], [2], [3]] : tensor<1x1x12x20xf32> into tensor<1x12x20xf32>
  %vd = call @make(%c1, %c1, %c20, %c24, %c1, %c1, %c2, %c5) : (index, index, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %v4 = tensor.cast %vd : tensor<?x?x?x?xf32> to tensor<1x1x20x24xf32>
  %v = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x1x20x24xf32> into tensor<1x20x24xf32>
  %r3 = call @matmul_hardtanh(%a, %v) : (tensor<1x12x20xf32>, tensor<1x20x24xf32>) -> tensor<1x12x24xf32>
  %r3e = tensor.expand_shape %r3 [[0, 1], [2], [3]] output_shape [1, 1, 12, 24] : tensor<1x12x24xf32> into tensor<1x1x12x24xf32>
  %r3d = tensor.cast %r3e : tensor<1x1x12x24xf32> to tensor<?x?x?x?xf32>
  call @print(%r3d) : (tensor<?x?x?x?xf32>) -> ()
  %ld = call @make(%c1, %c1, %c24, %c20, %c1, %c1, %c5, %c3) : (index, index, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %l4 = tensor.cast %ld : tensor<?x?x?x?xf32> to tensor<1x1x24x20xf32>
  %l = tensor.collapse_shape %l4 [[0, 1], [2], [3]] : tensor<1x1x24x20xf32> into tensor<1x24x20xf32>
  %ed = call @make(%c1, %c1, %c1, %c24, %c1, %c1, %c1, %c2) : (index, index, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %e4 = tensor.cast %ed : tensor<?x?x?x?xf32> to tensor<1x1x1x24xf32>
  %e = tensor.collapse_shape %e4 [[0, 1], [2], [3]] : tensor<1x1x1x24xf32> into tensor<1x1x24xf32>
  %r4 = call @linear(%a, %l, %e) : (tensor<1x12x20xf32>, tensor<1x24x20xf32>, tensor<1x1x24xf32>) -> tensor<1x12x24xf32>
  %r4e = tensor.expand_shape %r4 [[0, 1], [2], [3]] output_shape [1, 1, 12, 24] : tensor<1x12x24xf32> into tensor<1x1x12x24xf32>
  %r4d = tensor.cast %r4e : tensor<1x1x12x24xf32> to tensor<?x?x?x?xf32>
  call @print(%r4d) : (tensor<?x?x?x?xf32>) -> ()
  return
}
