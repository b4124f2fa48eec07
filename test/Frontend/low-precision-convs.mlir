// bf16 and 8-bit convolutions as frontends emit them: StableHLO's bf16
// convolution with an f32 preferred type (tensor.pad of the bf16 image, a
// zero-filled f32 output, linalg.conv_2d_nhwc_hwcf extending its bf16
// inputs, then a bias and relu in one generic); TOSA's nhwc_fhwc
// convolution, stride 2, accumulating into an f32 output; a quantized
// convolution with zero points of 0 (i8 x i8 -> i32, a zero fill). On
// tensors, bufferized with one-shot-bufferize's function boundaries. They
// become sbconv2d and s8s8conv2d kernels (AVX512-BF16's VDPBF16PS,
// AVX512-VNNI's VPDPBUSD; the pixels read where they lie in the input,
// an s8 one signed against its filter packed plus 128); run with
// and without the pass and compared exactly (small integers in bf16, whose
// every f32 sum is exact; bytes over the whole s8 range). Three channels in
// bf16 (an RGB image) are not whole pairs: blocks of the odd run of k
// (KW*C = 9), each ending in half a pair the packs complete with zero.
// The same StableHLO convolution with TOSA's leaky relu (maximum(x,
// mul(x, 0.1)), a YOLO block's) after the bias: the kernel's epilogue
// too (`_bias_leaky3dcccccd`: slope 0.1's bits); and with a convert back
// to bf16 after the relu: the kernel's bf16 output (`_obf16`).
// torch-mlir's forms in nchw_fchw: a bf16 convolution accumulating into
// an f32 output initialised with the broadcast bias, then rounded to bf16
// (arith.truncf), and a quantized s8 one over a batch of two: the filter
// is the GEMM's A, read where it lies (an s8 one signed, B packed plus
// 128), the image's pixels gathered into B; the bf16 one's bias init folds
// into the kernel (a bias along the GEMM's rows: `_b0_bias`), and its
// truncf too: the kernel rounds its sums once into the bf16 result
// (`_obf16`), the f32 accumulator its scratch; the same over a dynamic
// batch of three (a call of the one-image kernel an image, D stepped as
// the output is). On the dot
// instructions (amx=false); on a host with AMX its tiles take the nhwc
// convolutions instead, their runs of k (KW*C = 24, 18, 48, 9) each padded
// with zero k to whole tile steps (last RUN lines).
// REQUIRES: host-avx512f, host-avx512bw, host-avx512bf16, host-avx512vnni
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=amx=false' -o %t.v1.mlir 2> %t.remarks
// RUN: FileCheck %s < %t.v1.mlir
// RUN: FileCheck %s --check-prefix=REMARK --allow-empty < %t.remarks
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// One thread (the dynamic batch's images in an scf.for, D stepped there):
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=threads=1 amx=false' 2>/dev/null \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1t
// RUN: diff %t.reference %t.v1t
//
// Two threads: each its own pixels (the dynamic batch's images
// concurrently, the batch launcher stepping D).
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=threads=2 amx=false' 2>/dev/null \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s '--qimeng-tensorop=amx=false' 2>/dev/null | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// The kernels are what ran: broken ones (validation off) change the output.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k amx=false' 2>/dev/null \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// With AMX (the default where the host has it), one thread and two.
// RUN: %if host-amx-bf16 %{ %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.amx.mlir %}
// RUN: %if host-amx-bf16 %{ FileCheck %s --check-prefix=AMX < %t.amx.mlir %}
// RUN: %if host-amx-bf16 %{ %mlir-opt %t.amx.mlir %dealloc %lower-to-llvm | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.amx %}
// RUN: %if host-amx-bf16 %{ diff %t.reference %t.amx %}
// RUN: %if host-amx-bf16 %{ %qimeng-opt %t.default.mlir '--qimeng-tensorop=threads=2' 2>/dev/null | %mlir-opt %dealloc %lower-to-llvm | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.amx2 %}
// RUN: %if host-amx-bf16 %{ diff %t.reference %t.amx2 %}

// AMX-LABEL: func.func @stablehlo_conv_bf16(
// AMX:         llvm.call @qm_sbconv2d_nhwc_hwcf_1x12x12x8_f16_k3x3_s1x1_d1x1_b0_bias_relu_{{.*}}_amxbf16(
// AMX-LABEL: func.func @stablehlo_conv_bf16_leaky(
// AMX:         llvm.call @qm_sbconv2d_nhwc_hwcf_1x12x12x8_f16_k3x3_s1x1_d1x1_b0_bias_leaky3dcccccd_{{.*}}_amxbf16(
// AMX-LABEL: func.func @tosa_conv_fhwc_bf16(
// AMX:         llvm.call @qm_sbconv2d_nhwc_fhwc_1x11x11x6_f12_k3x3_s2x2_d1x1_isrt_{{.*}}_amxbf16(
// AMX-LABEL: func.func @quantized_conv_s8(
// AMX:         llvm.call @qm_s8s8conv2d_nhwc_hwcf_1x9x9x16_f24_k3x3_s1x1_d1x1_isrt_b0_{{.*}}_amxint8(
// AMX-LABEL: func.func @bf16_three_channels(
// AMX:         llvm.call @qm_sbconv2d_nhwc_hwcf_1x6x6x3_f4_k3x3_s1x1_d1x1_isrt_{{.*}}_amxbf16(

// CHECK-LABEL: func.func @stablehlo_conv_bf16(
// CHECK:         llvm.call @qm_sbconv2d_nhwc_hwcf_1x12x12x8_f16_k3x3_s1x1_d1x1_adirect_b0_bias_relu_
// CHECK-LABEL: func.func @stablehlo_conv_bf16_convert(
// CHECK-NOT:     arith.truncf
// CHECK:         llvm.call @qm_sbconv2d_nhwc_hwcf_1x12x12x8_f16_k3x3_s1x1_d1x1_adirect_b0_obf16_bias_relu_
// CHECK-NOT:     arith.truncf
// CHECK:         } else {
// CHECK-LABEL: func.func @stablehlo_conv_bf16_leaky(
// CHECK-NOT:     linalg.generic
// CHECK:         llvm.call @qm_sbconv2d_nhwc_hwcf_1x12x12x8_f16_k3x3_s1x1_d1x1_adirect_b0_bias_leaky3dcccccd_
// CHECK-LABEL: func.func @tosa_conv_fhwc_bf16(
// CHECK:         llvm.call @qm_sbconv2d_nhwc_fhwc_1x11x11x6_f12_k3x3_s2x2_d1x1_isrt_adirect_
// CHECK-LABEL: func.func @quantized_conv_s8(
// CHECK:         llvm.call @qm_s8s8conv2d_nhwc_hwcf_1x9x9x16_f24_k3x3_s1x1_d1x1_isrt_adirect_b0_
// CHECK-LABEL: func.func @bf16_three_channels(
// CHECK:         llvm.call @qm_sbconv2d_nhwc_hwcf_1x6x6x3_f4_k3x3_s1x1_d1x1_isrt_
// CHECK-LABEL: func.func @torch_conv_nchw_bf16(
// CHECK-NOT:     arith.truncf
// CHECK:         llvm.call @qm_sbconv2d_nchw_fchw_1x11x22x4_f8_k3x3_s1x1_d1x1_adirect_b0_obf16_bias_8x16_
// CHECK-NOT:     arith.truncf
// CHECK:         } else {
// CHECK-LABEL: func.func @torch_conv_nchw_bf16_dynamic(
// CHECK-NOT:     arith.truncf
// CHECK:         llvm.call @qm_sbconv2d_nchw_fchw_1x11x22x4_f8_k3x3_s1x1_d1x1_adirect_b0_obf16_bias_8x16_
// CHECK-NOT:     arith.truncf
// CHECK:         } else {
// CHECK-LABEL: func.func @torch_quantized_conv_nchw_s8(
// CHECK:         llvm.call @qm_s8s8conv2d_nchw_fchw_2x9x9x16_f24_k3x3_s2x2_d1x1_isrt_adirect_b0_

// REMARK-NOT: not accelerated

// OUT-COUNT-9: rank = 4

#map4 = affine_map<(n, h, w, c) -> (n, h, w, c)>
#bias = affine_map<(n, h, w, c) -> (c)>

func.func @stablehlo_conv_bf16(%x: tensor<1x10x10x8xbf16>, %w: tensor<3x3x8x16xbf16>, %b: tensor<16xf32>) -> tensor<1x10x10x16xf32> {
  %zb = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zb : bf16
  } : tensor<1x10x10x8xbf16> to tensor<1x12x12x8xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x10x10x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x10x10x16xf32>) -> tensor<1x10x10x16xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x12x12x8xbf16>, tensor<3x3x8x16xbf16>) outs(%acc : tensor<1x10x10x16xf32>) -> tensor<1x10x10x16xf32>
  %e2 = tensor.empty() : tensor<1x10x10x16xf32>
  %r = linalg.generic {indexing_maps = [#map4, #bias, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %b : tensor<1x10x10x16xf32>, tensor<16xf32>) outs(%e2 : tensor<1x10x10x16xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x10x10x16xf32>
  return %r : tensor<1x10x10x16xf32>
}

// The same, converted back to bf16 at the end of the generic (StableHLO's
// convert after the bias and relu): the kernel's bf16 output.
func.func @stablehlo_conv_bf16_convert(%x: tensor<1x10x10x8xbf16>, %w: tensor<3x3x8x16xbf16>, %b: tensor<16xf32>) -> tensor<1x10x10x16xbf16> {
  %zb = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zb : bf16
  } : tensor<1x10x10x8xbf16> to tensor<1x12x12x8xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x10x10x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x10x10x16xf32>) -> tensor<1x10x10x16xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x12x12x8xbf16>, tensor<3x3x8x16xbf16>) outs(%acc : tensor<1x10x10x16xf32>) -> tensor<1x10x10x16xf32>
  %e2 = tensor.empty() : tensor<1x10x10x16xbf16>
  %r = linalg.generic {indexing_maps = [#map4, #bias, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %b : tensor<1x10x10x16xf32>, tensor<16xf32>) outs(%e2 : tensor<1x10x10x16xbf16>) {
  ^bb0(%v: f32, %bv: f32, %o: bf16):
    %s = arith.addf %v, %bv : f32
    %m = arith.maximumf %s, %zero : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x10x10x16xbf16>
  return %r : tensor<1x10x10x16xbf16>
}

func.func @stablehlo_conv_bf16_leaky(%x: tensor<1x10x10x8xbf16>, %w: tensor<3x3x8x16xbf16>, %b: tensor<16xf32>) -> tensor<1x10x10x16xf32> {
  %zb = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zb : bf16
  } : tensor<1x10x10x8xbf16> to tensor<1x12x12x8xbf16>
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<1x10x10x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x10x10x16xf32>) -> tensor<1x10x10x16xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x12x12x8xbf16>, tensor<3x3x8x16xbf16>) outs(%acc : tensor<1x10x10x16xf32>) -> tensor<1x10x10x16xf32>
  %e2 = tensor.empty() : tensor<1x10x10x16xf32>
  %r = linalg.generic {indexing_maps = [#map4, #bias, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %b : tensor<1x10x10x16xf32>, tensor<16xf32>) outs(%e2 : tensor<1x10x10x16xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %scaled = arith.mulf %s, %slope : f32
    %m = arith.maximumf %s, %scaled : f32
    linalg.yield %m : f32
  } -> tensor<1x10x10x16xf32>
  return %r : tensor<1x10x10x16xf32>
}

func.func @tosa_conv_fhwc_bf16(%x: tensor<1x11x11x6xbf16>, %w: tensor<12x3x3x6xbf16>, %o: tensor<1x5x5x12xf32>) -> tensor<1x5x5x12xf32> {
  %conv = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x11x11x6xbf16>, tensor<12x3x3x6xbf16>) outs(%o : tensor<1x5x5x12xf32>) -> tensor<1x5x5x12xf32>
  return %conv : tensor<1x5x5x12xf32>
}

func.func @quantized_conv_s8(%x: tensor<1x9x9x16xi8>, %w: tensor<3x3x16x24xi8>) -> tensor<1x7x7x24xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x7x7x24xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<1x7x7x24xi32>) -> tensor<1x7x7x24xi32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x16xi8>, tensor<3x3x16x24xi8>) outs(%acc : tensor<1x7x7x24xi32>) -> tensor<1x7x7x24xi32>
  return %conv : tensor<1x7x7x24xi32>
}

func.func @bf16_three_channels(%x: tensor<1x6x6x3xbf16>, %w: tensor<3x3x3x4xbf16>, %o: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x3xbf16>, tensor<3x3x3x4xbf16>) outs(%o : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %conv : tensor<1x4x4x4xf32>
}

#chan = affine_map<(n, c, h, w) -> (c)>

func.func @torch_conv_nchw_bf16(%x: tensor<1x4x9x20xbf16>, %w: tensor<8x4x3x3xbf16>, %b: tensor<8xf32>) -> tensor<1x8x9x20xbf16> {
  %zb = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zb : bf16
  } : tensor<1x4x9x20xbf16> to tensor<1x4x11x22xbf16>
  %e = tensor.empty() : tensor<1x8x9x20xf32>
  %init = linalg.generic {indexing_maps = [#chan, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<1x8x9x20xf32>) {
  ^bb0(%bv: f32, %o: f32):
    linalg.yield %bv : f32
  } -> tensor<1x8x9x20xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x4x11x22xbf16>, tensor<8x4x3x3xbf16>) outs(%init : tensor<1x8x9x20xf32>) -> tensor<1x8x9x20xf32>
  %e2 = tensor.empty() : tensor<1x8x9x20xbf16>
  %r = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<1x8x9x20xf32>) outs(%e2 : tensor<1x8x9x20xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x8x9x20xbf16>
  return %r : tensor<1x8x9x20xbf16>
}

// The same over a dynamic batch (a model exported with a dynamic batch
// dimension): one call of the one-image kernel an image, D stepped by its
// batch stride with the output's.
func.func @torch_conv_nchw_bf16_dynamic(%x: tensor<?x4x9x20xbf16>, %w: tensor<8x4x3x3xbf16>, %b: tensor<8xf32>) -> tensor<?x8x9x20xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x9x20xbf16>
  %zb = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zb : bf16
  } : tensor<?x4x9x20xbf16> to tensor<?x4x11x22xbf16>
  %e = tensor.empty(%n) : tensor<?x8x9x20xf32>
  %init = linalg.generic {indexing_maps = [#chan, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<?x8x9x20xf32>) {
  ^bb0(%bv: f32, %o: f32):
    linalg.yield %bv : f32
  } -> tensor<?x8x9x20xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<?x4x11x22xbf16>, tensor<8x4x3x3xbf16>) outs(%init : tensor<?x8x9x20xf32>) -> tensor<?x8x9x20xf32>
  %e2 = tensor.empty(%n) : tensor<?x8x9x20xbf16>
  %r = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<?x8x9x20xf32>) outs(%e2 : tensor<?x8x9x20xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x8x9x20xbf16>
  return %r : tensor<?x8x9x20xbf16>
}

func.func @torch_quantized_conv_nchw_s8(%x: tensor<2x16x9x9xi8>, %w: tensor<24x16x3x3xi8>) -> tensor<2x24x4x4xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<2x24x4x4xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<2x24x4x4xi32>) -> tensor<2x24x4x4xi32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<2x16x9x9xi8>, tensor<24x16x3x3xi8>) outs(%acc : tensor<2x24x4x4xi32>) -> tensor<2x24x4x4xi32>
  return %conv : tensor<2x24x4x4xi32>
}

// ((3a + 5b + 7c + 11d) mod 9) - 4 at index (a, b, c, d): small integers,
// exact in bf16 and in every f32 sum here.
func.func private @small(%t: tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16> {
  %r = linalg.generic {indexing_maps = [#map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?x?xbf16>) {
  ^bb0(%o: bf16):
    %a = linalg.index 0 : index
    %b = linalg.index 1 : index
    %c = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c9 = arith.constant 9 : index
    %c11 = arith.constant 11 : index
    %a3 = arith.muli %a, %c3 : index
    %b5 = arith.muli %b, %c5 : index
    %c7x = arith.muli %c, %c7 : index
    %d11 = arith.muli %d, %c11 : index
    %s1 = arith.addi %a3, %b5 : index
    %s2 = arith.addi %s1, %c7x : index
    %s3 = arith.addi %s2, %d11 : index
    %m = arith.remui %s3, %c9 : index
    %mi = arith.index_cast %m : index to i32
    %four = arith.constant 4 : i32
    %v = arith.subi %mi, %four : i32
    %f = arith.sitofp %v : i32 to bf16
    linalg.yield %f : bf16
  } -> tensor<?x?x?x?xbf16>
  return %r : tensor<?x?x?x?xbf16>
}

// (13a + 7b + 29c + 11d) mod 256 as i8: every bit pattern.
func.func private @bytes(%t: tensor<?x?x?x?xi8>) -> tensor<?x?x?x?xi8> {
  %r = linalg.generic {indexing_maps = [#map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?x?xi8>) {
  ^bb0(%o: i8):
    %a = linalg.index 0 : index
    %b = linalg.index 1 : index
    %c = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c7 = arith.constant 7 : index
    %c11 = arith.constant 11 : index
    %c13 = arith.constant 13 : index
    %c29 = arith.constant 29 : index
    %a13 = arith.muli %a, %c13 : index
    %b7 = arith.muli %b, %c7 : index
    %c29x = arith.muli %c, %c29 : index
    %d11 = arith.muli %d, %c11 : index
    %s1 = arith.addi %a13, %b7 : index
    %s2 = arith.addi %s1, %c29x : index
    %s3 = arith.addi %s2, %d11 : index
    %c256 = arith.constant 256 : index
    %m = arith.remui %s3, %c256 : index
    %mi = arith.index_cast %m : index to i64
    %v = arith.trunci %mi : i64 to i8
    linalg.yield %v : i8
  } -> tensor<?x?x?x?xi8>
  return %r : tensor<?x?x?x?xi8>
}

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI32(memref<*xi32>)

func.func private @printF(%t: tensor<?x?x?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32>
  %u = memref.cast %m : memref<?x?x?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func private @printI(%t: tensor<?x?x?x?xi32>) {
  %m = bufferization.to_buffer %t : tensor<?x?x?x?xi32> to memref<?x?x?x?xi32>
  %u = memref.cast %m : memref<?x?x?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  %x0 = tensor.empty() : tensor<1x10x10x8xbf16>
  %xd = tensor.cast %x0 : tensor<1x10x10x8xbf16> to tensor<?x?x?x?xbf16>
  %xs = call @small(%xd) : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %x = tensor.cast %xs : tensor<?x?x?x?xbf16> to tensor<1x10x10x8xbf16>
  %w0 = tensor.empty() : tensor<3x3x8x16xbf16>
  %wd = tensor.cast %w0 : tensor<3x3x8x16xbf16> to tensor<?x?x?x?xbf16>
  %ws = call @small(%wd) : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %w = tensor.cast %ws : tensor<?x?x?x?xbf16> to tensor<3x3x8x16xbf16>
  %b = arith.constant dense<[-3.0, 2.0, 0.0, 5.0, -1.0, 4.0, -6.0, 1.0, 3.0, -2.0, 7.0, -5.0, 0.0, 2.0, -4.0, 6.0]> : tensor<16xf32>
  %y = call @stablehlo_conv_bf16(%x, %w, %b) : (tensor<1x10x10x8xbf16>, tensor<3x3x8x16xbf16>, tensor<16xf32>) -> tensor<1x10x10x16xf32>
  %yd = tensor.cast %y : tensor<1x10x10x16xf32> to tensor<?x?x?x?xf32>
  call @printF(%yd) : (tensor<?x?x?x?xf32>) -> ()
  %yc = call @stablehlo_conv_bf16_convert(%x, %w, %b) : (tensor<1x10x10x8xbf16>, tensor<3x3x8x16xbf16>, tensor<16xf32>) -> tensor<1x10x10x16xbf16>
  %ycf0 = tensor.empty() : tensor<1x10x10x16xf32>
  %ycf = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%yc : tensor<1x10x10x16xbf16>) outs(%ycf0 : tensor<1x10x10x16xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %t = arith.extf %v : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<1x10x10x16xf32>
  %ycd = tensor.cast %ycf : tensor<1x10x10x16xf32> to tensor<?x?x?x?xf32>
  call @printF(%ycd) : (tensor<?x?x?x?xf32>) -> ()
  %yl = call @stablehlo_conv_bf16_leaky(%x, %w, %b) : (tensor<1x10x10x8xbf16>, tensor<3x3x8x16xbf16>, tensor<16xf32>) -> tensor<1x10x10x16xf32>
  %yld = tensor.cast %yl : tensor<1x10x10x16xf32> to tensor<?x?x?x?xf32>
  call @printF(%yld) : (tensor<?x?x?x?xf32>) -> ()

  %fx0 = tensor.empty() : tensor<1x11x11x6xbf16>
  %fxd = tensor.cast %fx0 : tensor<1x11x11x6xbf16> to tensor<?x?x?x?xbf16>
  %fxs = call @small(%fxd) : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %fx = tensor.cast %fxs : tensor<?x?x?x?xbf16> to tensor<1x11x11x6xbf16>
  %fw0 = tensor.empty() : tensor<12x3x3x6xbf16>
  %fwd = tensor.cast %fw0 : tensor<12x3x3x6xbf16> to tensor<?x?x?x?xbf16>
  %fws = call @small(%fwd) : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %fw = tensor.cast %fws : tensor<?x?x?x?xbf16> to tensor<12x3x3x6xbf16>
  %two = arith.constant 2.0 : f32
  %fo0 = tensor.empty() : tensor<1x5x5x12xf32>
  %fo = linalg.fill ins(%two : f32) outs(%fo0 : tensor<1x5x5x12xf32>) -> tensor<1x5x5x12xf32>
  %fy = call @tosa_conv_fhwc_bf16(%fx, %fw, %fo) : (tensor<1x11x11x6xbf16>, tensor<12x3x3x6xbf16>, tensor<1x5x5x12xf32>) -> tensor<1x5x5x12xf32>
  %fyd = tensor.cast %fy : tensor<1x5x5x12xf32> to tensor<?x?x?x?xf32>
  call @printF(%fyd) : (tensor<?x?x?x?xf32>) -> ()

  %qx0 = tensor.empty() : tensor<1x9x9x16xi8>
  %qxd = tensor.cast %qx0 : tensor<1x9x9x16xi8> to tensor<?x?x?x?xi8>
  %qxs = call @bytes(%qxd) : (tensor<?x?x?x?xi8>) -> tensor<?x?x?x?xi8>
  %qx = tensor.cast %qxs : tensor<?x?x?x?xi8> to tensor<1x9x9x16xi8>
  %qw0 = tensor.empty() : tensor<3x3x16x24xi8>
  %qwd = tensor.cast %qw0 : tensor<3x3x16x24xi8> to tensor<?x?x?x?xi8>
  %qws = call @bytes(%qwd) : (tensor<?x?x?x?xi8>) -> tensor<?x?x?x?xi8>
  %qw = tensor.cast %qws : tensor<?x?x?x?xi8> to tensor<3x3x16x24xi8>
  %qy = call @quantized_conv_s8(%qx, %qw) : (tensor<1x9x9x16xi8>, tensor<3x3x16x24xi8>) -> tensor<1x7x7x24xi32>
  %qyd = tensor.cast %qy : tensor<1x7x7x24xi32> to tensor<?x?x?x?xi32>
  call @printI(%qyd) : (tensor<?x?x?x?xi32>) -> ()

  %tx0 = tensor.empty() : tensor<1x6x6x3xbf16>
  %txd = tensor.cast %tx0 : tensor<1x6x6x3xbf16> to tensor<?x?x?x?xbf16>
  %txs = call @small(%txd) : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %tx = tensor.cast %txs : tensor<?x?x?x?xbf16> to tensor<1x6x6x3xbf16>
  %tw0 = tensor.empty() : tensor<3x3x3x4xbf16>
  %twd = tensor.cast %tw0 : tensor<3x3x3x4xbf16> to tensor<?x?x?x?xbf16>
  %tws = call @small(%twd) : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %tw = tensor.cast %tws : tensor<?x?x?x?xbf16> to tensor<3x3x3x4xbf16>
  %to0 = tensor.empty() : tensor<1x4x4x4xf32>
  %to = linalg.fill ins(%two : f32) outs(%to0 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %ty = call @bf16_three_channels(%tx, %tw, %to) : (tensor<1x6x6x3xbf16>, tensor<3x3x3x4xbf16>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %tyd = tensor.cast %ty : tensor<1x4x4x4xf32> to tensor<?x?x?x?xf32>
  call @printF(%tyd) : (tensor<?x?x?x?xf32>) -> ()

  %nx0 = tensor.empty() : tensor<1x4x9x20xbf16>
  %nxd = tensor.cast %nx0 : tensor<1x4x9x20xbf16> to tensor<?x?x?x?xbf16>
  %nxs = call @small(%nxd) : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %nx = tensor.cast %nxs : tensor<?x?x?x?xbf16> to tensor<1x4x9x20xbf16>
  %nw0 = tensor.empty() : tensor<8x4x3x3xbf16>
  %nwd = tensor.cast %nw0 : tensor<8x4x3x3xbf16> to tensor<?x?x?x?xbf16>
  %nws = call @small(%nwd) : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %nw = tensor.cast %nws : tensor<?x?x?x?xbf16> to tensor<8x4x3x3xbf16>
  %nb = arith.constant dense<[-3.0, 2.0, 0.0, 5.0, -1.0, 4.0, -6.0, 1.0]> : tensor<8xf32>
  %ny = call @torch_conv_nchw_bf16(%nx, %nw, %nb) : (tensor<1x4x9x20xbf16>, tensor<8x4x3x3xbf16>, tensor<8xf32>) -> tensor<1x8x9x20xbf16>
  %nf0 = tensor.empty() : tensor<1x8x9x20xf32>
  %nf = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ny : tensor<1x8x9x20xbf16>) outs(%nf0 : tensor<1x8x9x20xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %t = arith.extf %v : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<1x8x9x20xf32>
  %nfd = tensor.cast %nf : tensor<1x8x9x20xf32> to tensor<?x?x?x?xf32>
  call @printF(%nfd) : (tensor<?x?x?x?xf32>) -> ()
  %dx0 = tensor.empty() : tensor<3x4x9x20xbf16>
  %dxd = tensor.cast %dx0 : tensor<3x4x9x20xbf16> to tensor<?x?x?x?xbf16>
  %dxs = call @small(%dxd) : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %dx = tensor.cast %dxs : tensor<?x?x?x?xbf16> to tensor<?x4x9x20xbf16>
  %dy = call @torch_conv_nchw_bf16_dynamic(%dx, %nw, %nb) : (tensor<?x4x9x20xbf16>, tensor<8x4x3x3xbf16>, tensor<8xf32>) -> tensor<?x8x9x20xbf16>
  %dys = tensor.cast %dy : tensor<?x8x9x20xbf16> to tensor<3x8x9x20xbf16>
  %df0 = tensor.empty() : tensor<3x8x9x20xf32>
  %df = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dys : tensor<3x8x9x20xbf16>) outs(%df0 : tensor<3x8x9x20xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %t = arith.extf %v : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<3x8x9x20xf32>
  %dfd = tensor.cast %df : tensor<3x8x9x20xf32> to tensor<?x?x?x?xf32>
  call @printF(%dfd) : (tensor<?x?x?x?xf32>) -> ()

  %sx0 = tensor.empty() : tensor<2x16x9x9xi8>
  %sxd = tensor.cast %sx0 : tensor<2x16x9x9xi8> to tensor<?x?x?x?xi8>
  %sxs = call @bytes(%sxd) : (tensor<?x?x?x?xi8>) -> tensor<?x?x?x?xi8>
  %sx = tensor.cast %sxs : tensor<?x?x?x?xi8> to tensor<2x16x9x9xi8>
  %sw0 = tensor.empty() : tensor<24x16x3x3xi8>
  %swd = tensor.cast %sw0 : tensor<24x16x3x3xi8> to tensor<?x?x?x?xi8>
  %sws = call @bytes(%swd) : (tensor<?x?x?x?xi8>) -> tensor<?x?x?x?xi8>
  %sw = tensor.cast %sws : tensor<?x?x?x?xi8> to tensor<24x16x3x3xi8>
  %sy = call @torch_quantized_conv_nchw_s8(%sx, %sw) : (tensor<2x16x9x9xi8>, tensor<24x16x3x3xi8>) -> tensor<2x24x4x4xi32>
  %syd = tensor.cast %sy : tensor<2x24x4x4xi32> to tensor<?x?x?x?xi32>
  call @printI(%syd) : (tensor<?x?x?x?xi32>) -> ()
  return
}
