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

// -----

// GELU after the matmul: the NEON kernel computes relu, its clamp and
// leaky relu, not a smooth activation; the matmul is accelerated, the
// generic stays, with the reason.
func.func @linear_gelu(%x: memref<6x9xf32>, %w: memref<9x20xf32>, %y: memref<6x20xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%x, %w : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  // expected-remark @below {{gelu_erf not fused into the kernel of linalg.matmul: neon's kernels do not compute one (x86's AVX2 and AVX-512 kernels do)}}
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x20xf32>) outs(%y : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32
    %arg = arith.mulf %v, %rsqrt2 : f32
    %erf = math.erf %arg : f32
    %plus1 = arith.addf %one, %erf : f32
    %cdf = arith.mulf %half, %plus1 : f32
    %g = arith.mulf %v, %cdf : f32
    linalg.yield %g : f32
  }
  memref.dealloc %c : memref<6x20xf32>
  return
}
