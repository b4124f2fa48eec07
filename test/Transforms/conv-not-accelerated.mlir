// Convolutions the pass does not handle stay unchanged, with a remark
// naming why.
// RUN: %qimeng-opt %s -split-input-file -verify-diagnostics \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma validate=false' \
// RUN: | FileCheck %s

// CHECK-LABEL: func.func @depthwise(
// CHECK:         linalg.depthwise_conv_2d_nhwc_hwc
func.func @depthwise(%in: memref<1x8x8x4xf32>, %flt: memref<3x3x4xf32>, %out: memref<1x6x6x4xf32>) {
  // expected-remark @below {{not accelerated: linalg.depthwise_conv_2d_nhwc_hwc is not supported; supported convolutions are linalg.conv_2d_nhwc_hwcf, linalg.conv_2d_nhwc_fhwc and linalg.conv_2d_nchw_fchw, and their _q forms with zero points (grouped, depthwise, 1-D and 3-D convolutions are not)}}
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x8x8x4xf32>, memref<3x3x4xf32>) outs(%out : memref<1x6x6x4xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @grouped(
// CHECK:         linalg.conv_2d_ngchw_fgchw
func.func @grouped(%in: memref<1x2x4x8x8xf32>, %flt: memref<6x2x4x3x3xf32>, %out: memref<1x2x6x6x6xf32>) {
  // expected-remark @below {{not accelerated: linalg.conv_2d_ngchw_fgchw is not supported}}
  linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x2x4x8x8xf32>, memref<6x2x4x3x3xf32>) outs(%out : memref<1x2x6x6x6xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @conv_1d(
// CHECK:         linalg.conv_1d_nwc_wcf
func.func @conv_1d(%in: memref<1x8x4xf32>, %flt: memref<3x4x8xf32>, %out: memref<1x6x8xf32>) {
  // expected-remark @below {{not accelerated: linalg.conv_1d_nwc_wcf is not supported}}
  linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
      ins(%in, %flt : memref<1x8x4xf32>, memref<3x4x8xf32>) outs(%out : memref<1x6x8xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @f16(
// CHECK:         linalg.conv_2d_nhwc_hwcf
func.func @f16(%in: memref<1x8x8x4xf16>, %flt: memref<3x3x4x8xf16>, %out: memref<1x6x6x8xf16>) {
  // expected-remark @below {{not accelerated: element type 'f16' of the output is not supported; need f32, bf16 or f16 inputs with an f32 output}}
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x8x8x4xf16>, memref<3x3x4x8xf16>) outs(%out : memref<1x6x6x8xf16>)
  return
}

// -----

// A dynamic batch is taken (one kernel call per image,
// test/Frontend/dynamic-batch-conv.mlir); other dynamic sizes are not.
// CHECK-LABEL: func.func @dynamic_height(
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @dynamic_height(%in: memref<1x4x?x8xf32>, %flt: memref<8x4x3x3xf32>, %out: memref<1x8x?x6xf32>) {
  // expected-remark @below {{not accelerated: dynamic size in the input other than the batch}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x4x?x8xf32>, memref<8x4x3x3xf32>) outs(%out : memref<1x8x?x6xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @dynamic_filter(
// CHECK:         linalg.conv_2d_nhwc_hwcf
func.func @dynamic_filter(%in: memref<?x8x8x4xf32>, %flt: memref<3x3x4x?xf32>, %out: memref<?x6x6x?xf32>) {
  // expected-remark @below {{not accelerated: dynamic size in the filter}}
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<?x8x8x4xf32>, memref<3x3x4x?xf32>) outs(%out : memref<?x6x6x?xf32>)
  return
}

// -----

// On tensors the op moves onto buffers in place (the filter with dynamic
// strides is checked at run time, the op staying for the other case).
// CHECK-LABEL: func.func @tensors(
// CHECK:         bufferization.to_buffer %arg0 read_only
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_
// CHECK:         bufferization.to_tensor {{.*}} restrict writable
func.func @tensors(%in: tensor<1x8x8x4xf32>, %flt: tensor<3x3x4x8xf32>, %out: tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) outs(%out : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  return %r : tensor<1x6x6x8xf32>
}

// -----

// A channel stride other than 1 (every other channel of a buffer).
// CHECK-LABEL: func.func @strided_channels(
// CHECK:         linalg.conv_2d_nhwc_hwcf
func.func @strided_channels(%buf: memref<1x8x8x8xf32>, %flt: memref<3x3x4x8xf32>, %out: memref<1x6x6x8xf32>) {
  %in = memref.subview %buf[0, 0, 0, 0] [1, 8, 8, 4] [1, 1, 1, 2]
      : memref<1x8x8x8xf32> to memref<1x8x8x4xf32, strided<[512, 64, 8, 2]>>
  // expected-remark @below {{not accelerated: non-unit innermost stride 2 in the input}}
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x8x8x4xf32, strided<[512, 64, 8, 2]>>, memref<3x3x4x8xf32>) outs(%out : memref<1x6x6x8xf32>)
  return
}

// -----

// A filter that is a view into a larger one.
// CHECK-LABEL: func.func @filter_view(
// CHECK:         linalg.conv_2d_nhwc_hwcf
func.func @filter_view(%in: memref<1x8x8x4xf32>, %big: memref<3x3x4x16xf32>, %out: memref<1x6x6x8xf32>) {
  %flt = memref.subview %big[0, 0, 0, 0] [3, 3, 4, 8] [1, 1, 1, 1]
      : memref<3x3x4x16xf32> to memref<3x3x4x8xf32, strided<[192, 64, 16, 1]>>
  // expected-remark @below {{not accelerated: the filter is not dense (only the input may be a strided view)}}
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x8x8x4xf32>, memref<3x3x4x8xf32, strided<[192, 64, 16, 1]>>) outs(%out : memref<1x6x6x8xf32>)
  return
}
