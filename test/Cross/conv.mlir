// REQUIRES: cross-aarch64, cross-riscv64
// Convolutions as frontends emit them, for NEON (Neoverse-N1), 256-bit SVE
// (Neoverse-V1) and RVV at VLEN 256 (SpacemiT X60), through
// one-shot-bufferize's defaults: TOSA's conv (tensor.pad, FHWC filter,
// stride 2, dilation 2, the bias broadcast as the initial value),
// StableHLO's (HWCF filter, a zero fill, a batch of 2) and torch's (NCHW,
// tensor.pad, the bias broadcast over channels, a batch of 2). Each becomes
// an implicit-GEMM kernel validated by the pass under qemu: nhwc with the
// pixels and filter taps as tables in its workspace and A gathered per tap
// (FHWC's filter packed as a transposed B); nchw a GEMM an image with the
// filter as A and B's columns gathered from the image a panel at a time.
// The fill folds into overwrite ("b0"); so does the bias broadcast, which
// the kernels add where they store ("b0_bias"). Each module is lowered
// with the stock pipeline, compiled with llc for the target, linked
// statically with conv_main.c and run under qemu against its references.
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" | FileCheck %s --check-prefixes=CHECK,NEON
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.o
// RUN: %cross-cc-aarch64 %S/Inputs/conv_main.c %t.neon.o -o %t.neon.exe
// RUN: %qemu-aarch64 -cpu neoverse-n1 %t.neon.exe | FileCheck %s --check-prefix=EXEC
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve" | FileCheck %s --check-prefixes=CHECK,SVE
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -filetype=obj -o %t.sve.o
// RUN: %cross-cc-aarch64 %S/Inputs/conv_main.c %t.sve.o -o %t.sve.exe
// RUN: %qemu-aarch64 -cpu max,sve256=on %t.sve.exe | FileCheck %s --check-prefix=EXEC
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" | FileCheck %s --check-prefixes=CHECK,RVV
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.o
// RUN: %cross-cc-riscv64 %S/Inputs/conv_main.c %t.rvv.o -o %t.rvv.exe
// RUN: %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.exe | FileCheck %s --check-prefix=EXEC
//
// The kernel path is what ran: the modules with deliberately broken
// kernels (validation off) give a wrong Y.
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon test-inject-fault=drop-k validate=false" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.broken.o
// RUN: %cross-cc-aarch64 %S/Inputs/conv_main.c %t.neon.broken.o -o %t.neon.broken.exe
// RUN: not %qemu-aarch64 -cpu neoverse-n1 %t.neon.broken.exe | FileCheck %s --check-prefix=BROKEN
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v test-inject-fault=drop-k validate=false" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.broken.o
// RUN: %cross-cc-riscv64 %S/Inputs/conv_main.c %t.rvv.broken.o -o %t.rvv.broken.exe
// RUN: not %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.broken.exe | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL: conv_fhwc
// BROKEN: FAIL: conv_nchw
// BROKEN: FAIL: conv_hwcf

// CHECK-LABEL: func.func @conv_fhwc
// CHECK-NOT:   linalg.conv_2d_nhwc_fhwc ins
// CHECK:       scf.if
// NEON:          llvm.call @qm_sconv2d_nhwc_fhwc_1x11x11x5_f7_k3x3_s2x2_d2x2_b0_bias_7x12_ku4_aarch64_neon
// SVE:           llvm.call @qm_sconv2d_nhwc_fhwc_1x11x11x5_f7_k3x3_s2x2_d2x2_b0_bias_{{[0-9]+x[0-9]+}}_ku4_aarch64_sve_vl256
// RVV:           llvm.call @qm_sconv2d_nhwc_fhwc_1x11x11x5_f7_k3x3_s2x2_d2x2_b0_bias_{{[0-9]+x[0-9]+}}_m4_ku8_riscv64_rvv_vlen256
// CHECK:       } else {
// CHECK:         linalg.conv_2d_nhwc_fhwc
// CHECK-LABEL: func.func @conv_nchw
// CHECK-NOT:   linalg.conv_2d_nchw_fchw ins
// NEON:          llvm.call @qm_sconv2d_nchw_fchw_2x10x10x3_f8_k3x3_s1x1_d1x1_b0_bias_7x12_ku4_aarch64_neon
// SVE:           llvm.call @qm_sconv2d_nchw_fchw_2x10x10x3_f8_k3x3_s1x1_d1x1_b0_bias_{{[0-9]+x[0-9]+}}_ku4_aarch64_sve_vl256
// RVV:           llvm.call @qm_sconv2d_nchw_fchw_2x10x10x3_f8_k3x3_s1x1_d1x1_b0_bias_{{[0-9]+x[0-9]+}}_m4_ku8_riscv64_rvv_vlen256
// CHECK-LABEL: func.func @conv_hwcf
// CHECK-NOT:   linalg.fill
// NEON:        llvm.call @qm_sconv2d_nhwc_hwcf_2x8x8x3_f6_k3x3_s1x1_d1x1_b0_7x12_ku4_aarch64_neon
// SVE:         llvm.call @qm_sconv2d_nhwc_hwcf_2x8x8x3_f6_k3x3_s1x1_d1x1_b0_{{[0-9]+x[0-9]+}}_ku4_aarch64_sve_vl256
// RVV:         llvm.call @qm_sconv2d_nhwc_hwcf_2x8x8x3_f6_k3x3_s1x1_d1x1_b0_{{[0-9]+x[0-9]+}}_m4_ku8_riscv64_rvv_vlen256
// EXEC: PASS conv_fhwc conv_nchw conv_hwcf
func.func @conv_fhwc(%x: tensor<1x9x9x5xf32>, %w: tensor<7x3x3x5xf32>, %bias: tensor<7xf32>) -> tensor<1x4x4x7xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x9x9x5xf32> to tensor<1x11x11x5xf32>
  %e = tensor.empty() : tensor<1x4x4x7xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<7xf32>) outs(%e : tensor<1x4x4x7xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<1x4x4x7xf32>
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %w : tensor<1x11x11x5xf32>, tensor<7x3x3x5xf32>) outs(%init : tensor<1x4x4x7xf32>) -> tensor<1x4x4x7xf32>
  return %y : tensor<1x4x4x7xf32>
}

func.func @conv_nchw(%x: tensor<2x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %bias: tensor<8xf32>) -> tensor<2x8x8x8xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
  %e = tensor.empty() : tensor<2x8x8x8xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (f)>, affine_map<(n, f, h, w) -> (n, f, h, w)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<8xf32>) outs(%e : tensor<2x8x8x8xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<2x8x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%init : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %y : tensor<2x8x8x8xf32>
}

func.func @conv_hwcf(%x: tensor<2x8x8x3xf32>, %w: tensor<3x3x3x6xf32>) -> tensor<2x6x6x6xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x6x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x6x6xf32>) -> tensor<2x6x6x6xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x8x8x3xf32>, tensor<3x3x3x6xf32>) outs(%f : tensor<2x6x6x6xf32>) -> tensor<2x6x6x6xf32>
  return %y : tensor<2x6x6x6xf32>
}
