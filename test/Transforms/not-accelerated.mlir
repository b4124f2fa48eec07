// Ops the pass does not handle stay unchanged, with a remark naming why.
// RUN: %qimeng-opt %s -split-input-file -verify-diagnostics \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma validate=false' \
// RUN: | FileCheck %s

// CHECK-LABEL: func.func @matmul_f16(
// CHECK:         linalg.matmul
// CHECK-NOT:   llvm.func
func.func @matmul_f16(%a: memref<8x8xf16>, %b: memref<8x8xf16>, %c: memref<8x8xf16>) {
  // expected-remark @below {{not accelerated: element type 'f16' of operand C is not supported; need f32, bf16 or f16 inputs with an f32 output}}
  linalg.matmul ins(%a, %b : memref<8x8xf16>, memref<8x8xf16>)
                outs(%c : memref<8x8xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @matmul_mixed_f64_output(
// CHECK:         linalg.matmul
func.func @matmul_mixed_f64_output(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf64>) {
  // expected-remark @below {{not accelerated: element type 'f64' of operand C is not supported; need f32}}
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>)
                outs(%c : memref<8x8xf64>)
  return
}

// -----

// A dynamic M is read at run time (the kernel blocked for the default
// representative M, 256): no longer left alone.
// CHECK-LABEL: func.func @matmul_dynamic_m(
// CHECK:         memref.dim %arg2, %c0
// CHECK:         llvm.call @qm_sgemm_256x8x8_nn_mrt_lda8_ldb8_ldc8_
// CHECK-NOT:     linalg.matmul
func.func @matmul_dynamic_m(%a: memref<?x8xf32>, %b: memref<8x8xf32>, %c: memref<?x8xf32>) {
  linalg.matmul ins(%a, %b : memref<?x8xf32>, memref<8x8xf32>)
                outs(%c : memref<?x8xf32>)
  return
}

// -----

// On tensors the op moves onto buffers in place: its inputs read as
// buffers, its init copied into a fresh allocation the kernel updates,
// which becomes the result.
// CHECK-LABEL: func.func @matmul_tensor(
// CHECK:         %[[A:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK:         %[[C:.*]] = memref.alloc() : memref<8x8xf32>
// CHECK:         memref.copy %{{.*}}, %[[C]]
// CHECK:         llvm.call @qm_sgemm_8x8x8_nn_ldrt_
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[C]] restrict writable
// CHECK:         return %[[R]]
func.func @matmul_tensor(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>)
                     outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// On tensors, an op the kernels do not take stays, with the reason.
// CHECK-LABEL: func.func @matmul_tensor_f16(
// CHECK-NOT:     bufferization
// CHECK:         linalg.matmul
func.func @matmul_tensor_f16(%a: tensor<8x8xf16>, %b: tensor<8x8xf16>, %c: tensor<8x8xf16>) -> tensor<8x8xf16> {
  // expected-remark @below {{not accelerated: element type 'f16' of operand C is not supported; need f32, bf16 or f16 inputs with an f32 output}}
  %0 = linalg.matmul ins(%a, %b : tensor<8x8xf16>, tensor<8x8xf16>)
                     outs(%c : tensor<8x8xf16>) -> tensor<8x8xf16>
  return %0 : tensor<8x8xf16>
}

// -----

// CHECK-LABEL: func.func @matmul_non_unit_inner_stride(
// CHECK:         linalg.matmul
func.func @matmul_non_unit_inner_stride(%a: memref<8x8xf32, strided<[16, 2]>>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  // expected-remark @below {{not accelerated: operand A has no unit stride along M or K (strides 16 and 2)}}
  linalg.matmul ins(%a, %b : memref<8x8xf32, strided<[16, 2]>>, memref<8x8xf32>)
                outs(%c : memref<8x8xf32>)
  return
}

// -----

// A dynamic leading dimension goes to the kernel at run time (its
// workspace header): the kernel reads all three, no check is needed.
// CHECK-LABEL: func.func @matmul_dynamic_leading_dim(
// CHECK-NOT:     scf.if
// CHECK:         llvm.call @qm_workspace_acquire
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg2
// CHECK:         %[[LDC:.*]] = arith.index_cast %[[STRIDES]]#0 : index to i64
// CHECK:         %[[AT:.*]] = llvm.getelementptr %{{.*}}[80]
// CHECK:         llvm.store %[[LDC]], %[[AT]] : i64, !llvm.ptr
// CHECK:         llvm.call @qm_sgemm_8x8x8_nn_ldrt_
// CHECK-NOT:     linalg.matmul
// CHECK:         return
func.func @matmul_dynamic_leading_dim(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32, strided<[?, 1]>>) {
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>)
                outs(%c : memref<8x8xf32, strided<[?, 1]>>)
  return
}

// -----

// A dynamic inner stride is assumed to be 1, checked at run time; the op
// itself runs when the check fails. The leading dimension goes to the
// kernel.
// CHECK-LABEL: func.func @matmul_dynamic_inner_stride(
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg2
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[SAME:.*]] = arith.cmpi eq, %[[STRIDES]]#1, %[[ONE]]
// CHECK:         %[[ALL:.*]] = arith.andi %{{.*}}, %[[SAME]]
// CHECK:         scf.if %[[ALL]] {
// CHECK:           llvm.call @qm_sgemm_8x8x8_nn_ldrt_
// CHECK:         } else {
// CHECK-NEXT:      linalg.matmul
func.func @matmul_dynamic_inner_stride(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32, strided<[?, ?]>>) {
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>)
                outs(%c : memref<8x8xf32, strided<[?, ?]>>)
  return
}

// -----

// A broadcast operand (A is a vector over k, the same for every row of C:
// each row the same product) is no GEMM's, nor the matrix-vector product's
// that it resembles.
// CHECK-LABEL: func.func @matmul_broadcast_a(
// CHECK:         linalg.matmul
func.func @matmul_broadcast_a(%a: memref<8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  // expected-remark @below {{not accelerated: loop d0 indexes operand C only: it is no batch, M, N or K dimension of a GEMM}}
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>,
                                 affine_map<(d0, d1, d2) -> (d2, d1)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
                ins(%a, %b : memref<8xf32>, memref<8x8xf32>)
                outs(%c : memref<8x8xf32>)
  return
}

// -----

// Only the unsupported op stays; the supported one in the same function is
// rewritten.
// CHECK-LABEL: func.func @matmul_one_of_two(
// CHECK:         linalg.matmul {{.*}}memref<8x8xf16>
// CHECK:         llvm.call @qm_sgemm_8x8x8_
func.func @matmul_one_of_two(%a: memref<8x8xf16>, %c: memref<8x8xf16>, %x: memref<8x8xf32>, %z: memref<8x8xf32>) {
  // expected-remark @below {{not accelerated: element type 'f16' of operand C is not supported; need f32, bf16 or f16 inputs with an f32 output}}
  linalg.matmul ins(%a, %a : memref<8x8xf16>, memref<8x8xf16>)
                outs(%c : memref<8x8xf16>)
  linalg.matmul ins(%x, %x : memref<8x8xf32>, memref<8x8xf32>)
                outs(%z : memref<8x8xf32>)
  return
}

// -----

// A quantized matmul in a loop on buffers: its zero points' sums would be
// stack allocations at every iteration.
// CHECK-LABEL: func.func @quantized_in_loop(
// CHECK:         linalg.quantized_matmul
func.func @quantized_in_loop(%a: memref<4x8xi8>, %b: memref<8x6xi8>, %c: memref<4x6xi32>, %za: i32, %zb: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    // expected-remark @below {{not accelerated: linalg.quantized_matmul with zero points inside a loop on buffers (the zero points' sums would take stack at every iteration); run the pass on tensors, before bufferization}}
    linalg.quantized_matmul ins(%a, %b, %za, %zb : memref<4x8xi8>, memref<8x6xi8>, i32, i32) outs(%c : memref<4x6xi32>)
  }
  return
}

// -----

// CHECK-LABEL: func.func @quantized_wide(
// CHECK:         linalg.quantized_matmul
func.func @quantized_wide(%a: memref<4x8xi16>, %b: memref<8x6xi16>, %c: memref<4x6xi32>, %za: i32, %zb: i32) {
  // expected-remark @below {{not accelerated: linalg.quantized_matmul: the kernels take i8 operands into an i32 result, with integer scalar zero points}}
  linalg.quantized_matmul ins(%a, %b, %za, %zb : memref<4x8xi16>, memref<8x6xi16>, i32, i32) outs(%c : memref<4x6xi32>)
  return
}
