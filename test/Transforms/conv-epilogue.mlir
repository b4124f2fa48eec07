// Convolutions with their initialisers and elementwise consumers folded
// into the kernel: a zero-filled NHWC convolution whose bias add and relu
// follow (bias along the GEMM's columns), and a bias-initialised NCHW one
// whose relu follows (bias along the rows, relu as cmpf ugt + select), and
// a ResNet block's end as torch-mlir writes it without linalg's elementwise
// fusion (a bias-initialised convolution, then a generic that adds the
// residual, then one that applies relu: a chain, fused whole); run
// with and without the pass and compared exactly (small integers, both
// signs).
// REQUIRES: host-avx2, host-fma
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: %mlir-opt %s %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: %mlir-opt %t.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.out
// RUN: diff %t.reference %t.out
// RUN: FileCheck %s --check-prefix=OUT < %t.reference

// CHECK-LABEL: func.func @nhwc_fill_bias_relu(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s1x1_d1x1_b0_bias_relu_
// CHECK-NOT:     linalg.
// CHECK:         return
// CHECK-LABEL: func.func @nchw_bias_init_relu(
// CHECK:         llvm.call @qm_sconv2d_nchw_fchw_1x9x9x4_f6_k3x3_s1x1_d1x1_b0_bias_relu_
// CHECK-NOT:     linalg.
// CHECK:         return
// The residual is copied into the output, the kernel accumulates onto it
// (no "_b0") with the bias and relu.
// CHECK-LABEL: func.func @nchw_residual_chain(
// CHECK:         linalg.copy
// CHECK:         llvm.call @qm_sconv2d_nchw_fchw_1x9x9x4_f6_k3x3_s1x1_d1x1_bias_relu_
// CHECK-NOT:     linalg.
// CHECK:         return

// OUT: rank = 4 offset = 0 sizes = [1, 7, 7, 8]
// OUT: rank = 4 offset = 0 sizes = [1, 6, 7, 7]
// OUT: rank = 4 offset = 0 sizes = [1, 6, 7, 7]

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>
#second = affine_map<(d0, d1, d2, d3) -> (d1)>

func.func @nhwc_fill_bias_relu(%x: memref<1x9x9x4xf32>, %w: memref<3x3x4x8xf32>, %b: memref<8xf32>) -> memref<1x7x7x8xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x7x7x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x7x7x8xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x9x9x4xf32>, memref<3x3x4x8xf32>) outs(%acc : memref<1x7x7x8xf32>)
  %out = memref.alloc() : memref<1x7x7x8xf32>
  linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc, %b : memref<1x7x7x8xf32>, memref<8xf32>) outs(%out : memref<1x7x7x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return %out : memref<1x7x7x8xf32>
}

func.func @nchw_bias_init_relu(%x: memref<1x4x9x9xf32>, %w: memref<6x4x3x3xf32>, %b: memref<6xf32>) -> memref<1x6x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x6x7x7xf32>
  linalg.generic {indexing_maps = [#second, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : memref<6xf32>) outs(%acc : memref<1x6x7x7xf32>) {
  ^bb0(%bv: f32, %o: f32):
    linalg.yield %bv : f32
  }
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x4x9x9xf32>, memref<6x4x3x3xf32>) outs(%acc : memref<1x6x7x7xf32>)
  %out = memref.alloc() : memref<1x6x7x7xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : memref<1x6x7x7xf32>) outs(%out : memref<1x6x7x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %gt = arith.cmpf ugt, %v, %zero : f32
    %r = arith.select %gt, %v, %zero : f32
    linalg.yield %r : f32
  }
  return %out : memref<1x6x7x7xf32>
}

func.func @nchw_residual_chain(%x: memref<1x4x9x9xf32>, %w: memref<6x4x3x3xf32>, %b: memref<6xf32>, %res: memref<1x6x7x7xf32>) -> memref<1x6x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x6x7x7xf32>
  linalg.generic {indexing_maps = [#second, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : memref<6xf32>) outs(%acc : memref<1x6x7x7xf32>) {
  ^bb0(%bv: f32, %o: f32):
    linalg.yield %bv : f32
  }
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x4x9x9xf32>, memref<6x4x3x3xf32>) outs(%acc : memref<1x6x7x7xf32>)
  %sum = memref.alloc() : memref<1x6x7x7xf32>
  linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc, %res : memref<1x6x7x7xf32>, memref<1x6x7x7xf32>) outs(%sum : memref<1x6x7x7xf32>) {
  ^bb0(%v: f32, %rv: f32, %o: f32):
    %s = arith.addf %v, %rv : f32
    linalg.yield %s : f32
  }
  %out = memref.alloc() : memref<1x6x7x7xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sum : memref<1x6x7x7xf32>) outs(%out : memref<1x6x7x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %out : memref<1x6x7x7xf32>
}

// Element i of a buffer: (i * 5) mod 7 - 3 as f32.
func.func private @fill(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c3 = arith.constant 3 : i64
  %n = memref.dim %m, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %s = arith.muli %i, %c5 : index
    %r = arith.remui %s, %c7 : index
    %ri = arith.index_cast %r : index to i64
    %v = arith.subi %ri, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    memref.store %f, %m[%i] : memref<?xf32>
  }
  return
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %x1 = memref.alloc() : memref<324xf32>
  %w1 = memref.alloc() : memref<288xf32>
  %b1 = memref.alloc() : memref<8xf32>
  %x2 = memref.alloc() : memref<324xf32>
  %w2 = memref.alloc() : memref<216xf32>
  %b2 = memref.alloc() : memref<6xf32>
  %bufs = memref.cast %x1 : memref<324xf32> to memref<?xf32>
  call @fill(%bufs) : (memref<?xf32>) -> ()
  %w1d = memref.cast %w1 : memref<288xf32> to memref<?xf32>
  call @fill(%w1d) : (memref<?xf32>) -> ()
  %b1d = memref.cast %b1 : memref<8xf32> to memref<?xf32>
  call @fill(%b1d) : (memref<?xf32>) -> ()
  %x2d = memref.cast %x2 : memref<324xf32> to memref<?xf32>
  call @fill(%x2d) : (memref<?xf32>) -> ()
  %w2d = memref.cast %w2 : memref<216xf32> to memref<?xf32>
  call @fill(%w2d) : (memref<?xf32>) -> ()
  %b2d = memref.cast %b2 : memref<6xf32> to memref<?xf32>
  call @fill(%b2d) : (memref<?xf32>) -> ()
  %x1s = memref.expand_shape %x1 [[0, 1, 2, 3]] output_shape [1, 9, 9, 4] : memref<324xf32> into memref<1x9x9x4xf32>
  %w1s = memref.expand_shape %w1 [[0, 1, 2, 3]] output_shape [3, 3, 4, 8] : memref<288xf32> into memref<3x3x4x8xf32>
  %x2s = memref.expand_shape %x2 [[0, 1, 2, 3]] output_shape [1, 4, 9, 9] : memref<324xf32> into memref<1x4x9x9xf32>
  %w2s = memref.expand_shape %w2 [[0, 1, 2, 3]] output_shape [6, 4, 3, 3] : memref<216xf32> into memref<6x4x3x3xf32>
  %y1 = call @nhwc_fill_bias_relu(%x1s, %w1s, %b1) : (memref<1x9x9x4xf32>, memref<3x3x4x8xf32>, memref<8xf32>) -> memref<1x7x7x8xf32>
  %y1u = memref.cast %y1 : memref<1x7x7x8xf32> to memref<*xf32>
  call @printMemrefF32(%y1u) : (memref<*xf32>) -> ()
  %y2 = call @nchw_bias_init_relu(%x2s, %w2s, %b2) : (memref<1x4x9x9xf32>, memref<6x4x3x3xf32>, memref<6xf32>) -> memref<1x6x7x7xf32>
  %y2u = memref.cast %y2 : memref<1x6x7x7xf32> to memref<*xf32>
  call @printMemrefF32(%y2u) : (memref<*xf32>) -> ()
  %r3 = memref.alloc() : memref<294xf32>
  %r3d = memref.cast %r3 : memref<294xf32> to memref<?xf32>
  call @fill(%r3d) : (memref<?xf32>) -> ()
  %r3s = memref.expand_shape %r3 [[0, 1, 2, 3]] output_shape [1, 6, 7, 7] : memref<294xf32> into memref<1x6x7x7xf32>
  %y3 = call @nchw_residual_chain(%x2s, %w2s, %b2, %r3s) : (memref<1x4x9x9xf32>, memref<6x4x3x3xf32>, memref<6xf32>, memref<1x6x7x7xf32>) -> memref<1x6x7x7xf32>
  %y3u = memref.cast %y3 : memref<1x6x7x7xf32> to memref<*xf32>
  call @printMemrefF32(%y3u) : (memref<*xf32>) -> ()
  return
}
