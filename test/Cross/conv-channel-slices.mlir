// REQUIRES: cross-aarch64, cross-riscv64
// An Inception block's two NHWC convolutions written in place into their
// channel slices of the concatenation (--eliminate-empty-tensors before
// one-shot-bufferize), for NEON (Neoverse-N1) and RVV at VLEN 256: each
// kernel's output rows (pixels) are the concatenation's 14 channels apart
// (`_ldo14`, the C leading dimension its header gets), the zero fills of
// the slices folded ("b0"). The pass validates each kernel under qemu, on
// a wider output whose other channels must keep their values; the modules
// compile with llc for the target.
//
// RUN: %mlir-opt %s --eliminate-empty-tensors --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.mlir
// RUN: %qimeng-opt %t.mlir --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" -o %t.neon.mlir
// RUN: FileCheck %s --check-prefixes=CHECK,NEON < %t.neon.mlir
// RUN: %mlir-opt %t.neon.mlir %dealloc %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.o
// RUN: %qimeng-opt %t.mlir --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" -o %t.rvv.mlir
// RUN: FileCheck %s --check-prefixes=CHECK,RVV < %t.rvv.mlir
// RUN: %mlir-opt %t.rvv.mlir %dealloc %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.o

// CHECK-LABEL: func.func @inception(
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     linalg.conv_2d
// NEON:          llvm.call @qm_sconv2d_nhwc_hwcf_2x9x9x4_f8_k1x1_s1x1_d1x1_ldo14_b0_{{.*}}_aarch64_neon
// RVV:           llvm.call @qm_sconv2d_nhwc_hwcf_2x9x9x4_f8_k1x1_s1x1_d1x1_ldo14_b0_{{.*}}_riscv64_rvv
// NEON:          llvm.call @qm_sconv2d_nhwc_hwcf_2x11x11x4_f6_k3x3_s1x1_d1x1_ldo14_b0_{{.*}}_aarch64_neon
// RVV:           llvm.call @qm_sconv2d_nhwc_hwcf_2x11x11x4_f6_k3x3_s1x1_d1x1_ldo14_b0_{{.*}}_riscv64_rvv
// CHECK-NOT:     linalg.conv_2d

func.func @inception(%x: tensor<2x9x9x4xf32>, %w1: tensor<1x1x4x8xf32>, %w3: tensor<3x3x4x6xf32>) -> tensor<2x9x9x14xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x9x9x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x9x9x8xf32>) -> tensor<2x9x9x8xf32>
  %b1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w1 : tensor<2x9x9x4xf32>, tensor<1x1x4x8xf32>) outs(%z1 : tensor<2x9x9x8xf32>) -> tensor<2x9x9x8xf32>
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x9x9x4xf32> to tensor<2x11x11x4xf32>
  %e3 = tensor.empty() : tensor<2x9x9x6xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x9x9x6xf32>) -> tensor<2x9x9x6xf32>
  %b3 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w3 : tensor<2x11x11x4xf32>, tensor<3x3x4x6xf32>) outs(%z3 : tensor<2x9x9x6xf32>) -> tensor<2x9x9x6xf32>
  %e = tensor.empty() : tensor<2x9x9x14xf32>
  %c1 = tensor.insert_slice %b1 into %e[0, 0, 0, 0] [2, 9, 9, 8] [1, 1, 1, 1] : tensor<2x9x9x8xf32> into tensor<2x9x9x14xf32>
  %c2 = tensor.insert_slice %b3 into %c1[0, 0, 0, 8] [2, 9, 9, 6] [1, 1, 1, 1] : tensor<2x9x9x6xf32> into tensor<2x9x9x14xf32>
  return %c2 : tensor<2x9x9x14xf32>
}
