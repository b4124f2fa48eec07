// What the pass leaves alone in frontend IR, each op with a remark that
// names it and says why: an f16 matmul accumulating in f16 (the kernels
// sum f16 products in f32), a grouped quantized convolution, a dot product
// (no M or N: test/Frontend/matrix-vector.mlir has the matrix-vector
// products, which are rewritten), depthwise and grouped convolutions.
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" --mlir-print-debuginfo \
// RUN:   | %qimeng-opt --qimeng-tensorop=validate=false -o %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.mlir

// CHECK-LABEL: func.func @half(
func.func @half(%a: tensor<8x8xf16>, %b: tensor<8x8xf16>, %c: tensor<8x8xf16>) -> tensor<8x8xf16> {
  // REMARK-DAG: left-alone.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: not accelerated: element type 'f16' of operand C is not supported; need f32, bf16 or f16 inputs with an f32 output
  %r = linalg.matmul ins(%a, %b : tensor<8x8xf16>, tensor<8x8xf16>) outs(%c : tensor<8x8xf16>) -> tensor<8x8xf16>
  return %r : tensor<8x8xf16>
}

// CHECK-LABEL: func.func @dot(
// CHECK:         linalg.dot
func.func @dot(%a: tensor<16xf32>, %x: tensor<16xf32>, %y: tensor<f32>) -> tensor<f32> {
  // REMARK-DAG: left-alone.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: not accelerated: 0 batch, 0 M, 0 N and 1 K dimensions; the kernel takes at most one batch, exactly one K, and one M and one N or one of them (a matrix-vector product): dot products and multi-dimensional contractions are not supported
  %r = linalg.dot ins(%a, %x : tensor<16xf32>, tensor<16xf32>) outs(%y : tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// CHECK-LABEL: func.func @depthwise(
func.func @depthwise(%x: tensor<1x10x10x8xf32>, %w: tensor<3x3x8xf32>, %o: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  // REMARK-DAG: left-alone.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: not accelerated: linalg.depthwise_conv_2d_nhwc_hwc is not supported
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x10x10x8xf32>, tensor<3x3x8xf32>) outs(%o : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

// CHECK-LABEL: func.func @grouped(
func.func @grouped(%x: tensor<1x2x4x10x10xf32>, %w: tensor<2x4x4x3x3xf32>, %o: tensor<1x2x4x8x8xf32>) -> tensor<1x2x4x8x8xf32> {
  // REMARK-DAG: left-alone.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: not accelerated: linalg.conv_2d_ngchw_gfchw is not supported
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x4x10x10xf32>, tensor<2x4x4x3x3xf32>) outs(%o : tensor<1x2x4x8x8xf32>) -> tensor<1x2x4x8x8xf32>
  return %r : tensor<1x2x4x8x8xf32>
}

// CHECK-LABEL: func.func @quantized_grouped(
func.func @quantized_grouped(%x: tensor<1x2x4x10x10xi8>, %w: tensor<2x8x4x3x3xi8>, %zx: i32, %zw: i32, %o: tensor<1x2x8x8x8xi32>) -> tensor<1x2x8x8x8xi32> {
  // REMARK-DAG: left-alone.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: not accelerated: linalg.conv_2d_ngchw_gfchw_q is not supported
  %r = linalg.conv_2d_ngchw_gfchw_q {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w, %zx, %zw : tensor<1x2x4x10x10xi8>, tensor<2x8x4x3x3xi8>, i32, i32) outs(%o : tensor<1x2x8x8x8xi32>) -> tensor<1x2x8x8x8xi32>
  return %r : tensor<1x2x8x8x8xi32>
}
