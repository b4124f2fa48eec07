// IR shape of the convolution rewrite, on a pinned target (no host
// dependence, no validation run since the kernel may not run here).
// RUN: %qimeng-opt %s -split-input-file \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:l1d=32K,l2=512K,l3=32M,cores=8 threads=1 validate=false' \
// RUN: | FileCheck %s

// CHECK-LABEL: func.func @conv_nhwc_hwcf(
// CHECK-SAME:    %[[I:.+]]: memref<1x18x18x16xf32>, %[[W:.+]]: memref<3x3x16x32xf32>, %[[O:.+]]: memref<1x16x16x32xf32>)
// CHECK-NOT:     linalg.conv_2d
// CHECK:         memref.extract_aligned_pointer_as_index %[[I]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[W]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[O]]
// CHECK:         %[[WS:.+]] = llvm.call @qm_workspace_acquire(
// CHECK:         %[[PI:.+]] = llvm.inttoptr
// CHECK:         %[[PW:.+]] = llvm.inttoptr
// CHECK:         %[[PO:.+]] = llvm.inttoptr
// CHECK:         llvm.call @[[KERNEL:qm_sconv2d_nhwc_hwcf_1x18x18x16_f32_k3x3_s1x1_d1x1_6x16_[a-z0-9_]+_x86_64_avx2]](%[[PI]], %[[PW]], %[[PO]], %{{.+}})
// CHECK:         llvm.call @qm_workspace_release(%[[WS]])
// CHECK:       llvm.func internal @[[KERNEL]](
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att
// CHECK-SAME:      offset tables of the gathered operand
// CHECK-SAME:      A in place: 6-pixel slivers read from the input
// CHECK-NOT:       zmm
// CHECK:         llvm.return
func.func @conv_nhwc_hwcf(%in: memref<1x18x18x16xf32>, %flt: memref<3x3x16x32xf32>, %out: memref<1x16x16x32xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x18x18x16xf32>, memref<3x3x16x32xf32>)
      outs(%out : memref<1x16x16x32xf32>)
  return
}

// -----

// Strides, dilations and the input's strided layout are in the symbol.
// CHECK-LABEL: func.func @conv_nhwc_subview_stride2_dilation2(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x13x13x3_f8_k3x3_s2x2_d2x2_is1200x80x5_
func.func @conv_nhwc_subview_stride2_dilation2(%padded: memref<1x15x16x5xf32>, %flt: memref<3x3x3x8xf32>, %out: memref<1x5x5x8xf32>) {
  %in = memref.subview %padded[0, 1, 1, 1] [1, 13, 13, 3] [1, 1, 1, 1]
      : memref<1x15x16x5xf32> to memref<1x13x13x3xf32, strided<[1200, 80, 5, 1], offset: 86>>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%in, %flt : memref<1x13x13x3xf32, strided<[1200, 80, 5, 1], offset: 86>>, memref<3x3x3x8xf32>)
      outs(%out : memref<1x5x5x8xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @conv_nchw_fchw(
// CHECK-NOT:     linalg.conv_2d
// CHECK:         llvm.call @[[KERNEL:qm_sconv2d_nchw_fchw_2x10x12x3_f7_k3x3_s1x1_d1x1_[a-z0-9_]+]](
// CHECK:       llvm.func internal @[[KERNEL]](
// CHECK:         llvm.inline_asm
// CHECK-SAME:      next image of the batch
func.func @conv_nchw_fchw(%in: memref<2x3x10x12xf32>, %flt: memref<7x3x3x3xf32>, %out: memref<2x7x8x10xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<2x3x10x12xf32>, memref<7x3x3x3xf32>)
      outs(%out : memref<2x7x8x10xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @conv_nhwc_fhwc(
// CHECK:         llvm.call @qm_sconv2d_nhwc_fhwc_1x9x9x4_f16_k3x3_s1x1_d1x1_
func.func @conv_nhwc_fhwc(%in: memref<1x9x9x4xf32>, %flt: memref<16x3x3x4xf32>, %out: memref<1x7x7x16xf32>) {
  linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x9x9x4xf32>, memref<16x3x3x4xf32>)
      outs(%out : memref<1x7x7x16xf32>)
  return
}

// -----

// Two convolutions of one shape share a kernel; a matmul beside them gets
// its own.
// CHECK-LABEL: func.func @two_convs_and_a_matmul(
// CHECK:         llvm.call @[[CONV:qm_sconv2d_nhwc_hwcf_[a-z0-9_]+]](
// CHECK:         llvm.call @[[CONV]](
// CHECK:         llvm.call @qm_sgemm_
// CHECK-COUNT-1: llvm.func internal @qm_sconv2d_
// CHECK-COUNT-1: llvm.func internal @qm_sgemm_
func.func @two_convs_and_a_matmul(%in: memref<1x6x6x2xf32>, %flt: memref<3x3x2x8xf32>, %o1: memref<1x4x4x8xf32>, %o2: memref<1x4x4x8xf32>, %a: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x6x6x2xf32>, memref<3x3x2x8xf32>) outs(%o1 : memref<1x4x4x8xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %flt : memref<1x6x6x2xf32>, memref<3x3x2x8xf32>) outs(%o2 : memref<1x4x4x8xf32>)
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  return
}
