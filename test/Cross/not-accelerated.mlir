// REQUIRES: cross-aarch64
// What the AArch64 and RISC-V kernels do not cover yet stays unchanged,
// with the reason; a kernel that fails validation under qemu is not used.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" -split-input-file -verify-diagnostics
func.func @matmul_transpose_a_dynamic_m(%a: memref<16x?xf32>, %b: memref<16x32xf32>, %c: memref<?x32xf32>) {
  // expected-remark @below {{not accelerated: kernel generation failed: emitter failed (exit 1): isa neon kernels copy a transposed A into the workspace whole, which a run-time M does not size: trans_a needs a static m}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                 affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<16x?xf32>, memref<16x32xf32>) outs(%c : memref<?x32xf32>)
  return
}

// -----

func.func @depthwise(%in: memref<1x8x8x4xf32>, %f: memref<3x3x4xf32>, %out: memref<1x6x6x4xf32>) {
  // expected-remark @below {{not accelerated: linalg.depthwise_conv_2d_nhwc_hwc is not supported; supported convolutions are linalg.conv_2d_nhwc_hwcf, linalg.conv_2d_nhwc_fhwc and linalg.conv_2d_nchw_fchw, and their _q forms with zero points (grouped, depthwise, 1-D and 3-D convolutions are not)}}
  linalg.depthwise_conv_2d_nhwc_hwc ins(%in, %f : memref<1x8x8x4xf32>, memref<3x3x4xf32>) outs(%out : memref<1x6x6x4xf32>)
  return
}
