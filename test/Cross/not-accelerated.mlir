// REQUIRES: cross-aarch64
// What the AArch64 and RISC-V kernels do not cover yet stays unchanged,
// with the reason; a kernel that fails validation under qemu is not used.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" -split-input-file -verify-diagnostics
func.func @matmul_transpose_b(%a: memref<8x16xf32>, %b: memref<32x16xf32>, %c: memref<8x32xf32>) {
  // expected-remark @below {{not accelerated: kernel generation failed: emitter failed (exit 1): isa neon kernels do not support trans_b = true yet}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<8x16xf32>, memref<32x16xf32>) outs(%c : memref<8x32xf32>)
  return
}

// -----

func.func @conv(%in: memref<1x8x8x4xf32>, %f: memref<3x3x4x8xf32>, %out: memref<1x6x6x8xf32>) {
  // expected-remark @below {{not accelerated: convolutions are not generated for neon yet}}
  linalg.conv_2d_nhwc_hwcf ins(%in, %f : memref<1x8x8x4xf32>, memref<3x3x4x8xf32>) outs(%out : memref<1x6x6x8xf32>)
  return
}
