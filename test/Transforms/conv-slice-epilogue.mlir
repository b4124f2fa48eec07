// A convolution's elementwise consumer that writes a channel slice of a
// fresh buffer (a concatenation written in place) fuses, and the kernel
// writes the slice (`_ldo<stride>`), when nothing touches the buffer from
// the convolution to the consumer but through slices of other channels,
// and the convolution reads none of the slice's elements; otherwise the
// consumer stays.
// RUN: %qimeng-opt %s -split-input-file \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:l1d=32K,l2=512K,l3=32M,cores=8 threads=1 validate=false' \
// RUN: | FileCheck %s

#id = affine_map<(a, b, c, d) -> (a, b, c, d)>

// The buffer allocated after the convolution, another slice copied in
// between (bufferization's copy of the concatenation's first part).
// CHECK-LABEL: func.func @relu_into_slice(
// CHECK:         memref.alloc() : memref<1x7x7x16xf32>
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s1x1_d1x1_ldo16_b0_relu_
// CHECK-NOT:     linalg.generic
// CHECK:         return
// A DenseNet layer: the convolution reads the buffer's first channels, the
// slice takes others.
// CHECK-LABEL: func.func @dense_layer(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x7x7x4_f8_k1x1_s1x1_d1x1_is784x112x16_ldo16_b0_relu_
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @relu_into_slice(%x: memref<1x9x9x4xf32>, %w: memref<3x3x4x8xf32>, %first: memref<1x7x7x8xf32>) -> memref<1x7x7x16xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x7x7x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x7x7x8xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x9x9x4xf32>, memref<3x3x4x8xf32>) outs(%acc : memref<1x7x7x8xf32>)
  %cat = memref.alloc() : memref<1x7x7x16xf32>
  %left = memref.subview %cat[0, 0, 0, 0] [1, 7, 7, 8] [1, 1, 1, 1] : memref<1x7x7x16xf32> to memref<1x7x7x8xf32, strided<[784, 112, 16, 1]>>
  memref.copy %first, %left : memref<1x7x7x8xf32> to memref<1x7x7x8xf32, strided<[784, 112, 16, 1]>>
  %right = memref.subview %cat[0, 0, 0, 8] [1, 7, 7, 8] [1, 1, 1, 1] : memref<1x7x7x16xf32> to memref<1x7x7x8xf32, strided<[784, 112, 16, 1], offset: 8>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : memref<1x7x7x8xf32>) outs(%right : memref<1x7x7x8xf32, strided<[784, 112, 16, 1], offset: 8>>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %cat : memref<1x7x7x16xf32>
}
func.func @dense_layer(%w: memref<1x1x4x8xf32>) -> memref<1x7x7x16xf32> {
  %zero = arith.constant 0.0 : f32
  %cat = memref.alloc() : memref<1x7x7x16xf32>
  %in = memref.subview %cat[0, 0, 0, 0] [1, 7, 7, 4] [1, 1, 1, 1] : memref<1x7x7x16xf32> to memref<1x7x7x4xf32, strided<[784, 112, 16, 1]>>
  %acc = memref.alloc() : memref<1x7x7x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x7x7x8xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x7x7x4xf32, strided<[784, 112, 16, 1]>>, memref<1x1x4x8xf32>) outs(%acc : memref<1x7x7x8xf32>)
  %right = memref.subview %cat[0, 0, 0, 8] [1, 7, 7, 8] [1, 1, 1, 1] : memref<1x7x7x16xf32> to memref<1x7x7x8xf32, strided<[784, 112, 16, 1], offset: 8>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : memref<1x7x7x8xf32>) outs(%right : memref<1x7x7x8xf32, strided<[784, 112, 16, 1], offset: 8>>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %cat : memref<1x7x7x16xf32>
}

// -----

// The whole buffer read between the convolution and the consumer, or the
// convolution reading channels of the same buffer that the slice takes
// too: the consumer stays.
// CHECK-LABEL: func.func @buffer_read_between(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s1x1_d1x1_b0_{{[0-9]}}
// CHECK:         memref.copy
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @conv_reads_the_slice(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x7x7x4_f8_k1x1_s1x1_d1x1_is784x112x16_b0_{{[0-9]}}
// CHECK:         linalg.generic
#id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @buffer_read_between(%x: memref<1x9x9x4xf32>, %w: memref<3x3x4x8xf32>, %out: memref<1x7x7x16xf32>) -> memref<1x7x7x16xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x7x7x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x7x7x8xf32>)
  %cat = memref.alloc() : memref<1x7x7x16xf32>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x9x9x4xf32>, memref<3x3x4x8xf32>) outs(%acc : memref<1x7x7x8xf32>)
  memref.copy %cat, %out : memref<1x7x7x16xf32> to memref<1x7x7x16xf32>
  %right = memref.subview %cat[0, 0, 0, 8] [1, 7, 7, 8] [1, 1, 1, 1] : memref<1x7x7x16xf32> to memref<1x7x7x8xf32, strided<[784, 112, 16, 1], offset: 8>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : memref<1x7x7x8xf32>) outs(%right : memref<1x7x7x8xf32, strided<[784, 112, 16, 1], offset: 8>>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %cat : memref<1x7x7x16xf32>
}
func.func @conv_reads_the_slice(%w: memref<1x1x4x8xf32>) -> memref<1x7x7x16xf32> {
  %zero = arith.constant 0.0 : f32
  %cat = memref.alloc() : memref<1x7x7x16xf32>
  %in = memref.subview %cat[0, 0, 0, 6] [1, 7, 7, 4] [1, 1, 1, 1] : memref<1x7x7x16xf32> to memref<1x7x7x4xf32, strided<[784, 112, 16, 1], offset: 6>>
  %acc = memref.alloc() : memref<1x7x7x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x7x7x8xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x7x7x4xf32, strided<[784, 112, 16, 1], offset: 6>>, memref<1x1x4x8xf32>) outs(%acc : memref<1x7x7x8xf32>)
  %right = memref.subview %cat[0, 0, 0, 8] [1, 7, 7, 8] [1, 1, 1, 1] : memref<1x7x7x16xf32> to memref<1x7x7x8xf32, strided<[784, 112, 16, 1], offset: 8>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : memref<1x7x7x8xf32>) outs(%right : memref<1x7x7x8xf32, strided<[784, 112, 16, 1], offset: 8>>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %cat : memref<1x7x7x16xf32>
}
