// JAX/Flax-style dense layers on few rows, the weight [in, out] as stored
// (B read where it lies, K x N) and an argument: a zero-filled matmul and a
// broadcast bias add with relu, on 8 rows (one 8x32 sliver at kc 16) and
// on 16 rows of a 96-wide weight (two 8x48 slivers at kc 256), A read in
// place. The target names an L3 of 64 KiB so that these weights (96 and
// 113 KiB) stream from "memory": the kernels sweep the weight's next
// panel into L2 (`_sweepb`, docs/KernelContract.md "B in place, swept"),
// with the default layout's run-time strides too. Bufferized
// with one-shot-bufferize's function boundaries, run with and without
// --qimeng-tensorop and compared exactly (small-integer inputs: every sum
// is exact).
// REQUIRES: host-avx512f, host-avx512bw, host-avx512vl, host-bmi2
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:x86-64-v4:+avx,+avx2,+fma,+bmi2,+avx512f,+avx512bw,+avx512vl:l1d=48K,l2=1M,l3=64K' \
// RUN:   | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Default layout (run-time leading dimensions), the pass before
// deallocation:
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:x86-64-v4:+avx,+avx2,+fma,+bmi2,+avx512f,+avx512bw,+avx512vl:l1d=48K,l2=1M,l3=64K' -o %t.v1.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// Identity layout (immediate leading dimensions), the pass after
// deallocation: the swept kernels.
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:x86-64-v4:+avx,+avx2,+fma,+bmi2,+avx512f,+avx512bw,+avx512vl:l1d=48K,l2=1M,l3=64K' -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=IDENTITY < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2

// DEFAULT-LABEL: func.func @dense8(
// DEFAULT:         llvm.call @qm_sgemm_8x96x256_nn_b0_bias_relu_ldrt_8x32_ku4_kc16_{{.*}}_nopackb_irjr_adirect_sweepb_x86_64_avx512
// DEFAULT-LABEL: func.func @dense16(
// DEFAULT:         llvm.call @qm_sgemm_16x96x300_nn_b0_bias_relu_ldrt_8x48_ku4_kc256_{{.*}}_nopackb_irjr_adirect_sweepb_x86_64_avx512

// IDENTITY-LABEL: func.func @dense8(
// IDENTITY:         llvm.call @qm_sgemm_8x96x256_nn_b0_bias_relu_lda256_ldb96_ldc96_8x32_ku4_kc16_{{.*}}_nopackb_irjr_adirect_sweepb_x86_64_avx512
// IDENTITY-LABEL: func.func @dense16(
// IDENTITY:         llvm.call @qm_sgemm_16x96x300_nn_b0_bias_relu_lda300_ldb96_ldc96_8x48_ku4_kc256_{{.*}}_nopackb_irjr_adirect_sweepb_x86_64_avx512

// OUT-COUNT-2: rank = 2 offset = 0 sizes = [{{8|16}}, 96]

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @dense8(%x: tensor<8x256xf32>, %w: tensor<256x96xf32>, %b: tensor<96xf32>) -> tensor<8x96xf32> {
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<8x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<8x96xf32>) -> tensor<8x96xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x256xf32>, tensor<256x96xf32>) outs(%acc : tensor<8x96xf32>) -> tensor<8x96xf32>
  %out0 = tensor.empty() : tensor<8x96xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<8x96xf32>, tensor<96xf32>) outs(%out0 : tensor<8x96xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x96xf32>
  return %y : tensor<8x96xf32>
}

func.func @dense16(%x: tensor<16x300xf32>, %w: tensor<300x96xf32>, %b: tensor<96xf32>) -> tensor<16x96xf32> {
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<16x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<16x96xf32>) -> tensor<16x96xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<16x300xf32>, tensor<300x96xf32>) outs(%acc : tensor<16x96xf32>) -> tensor<16x96xf32>
  %out0 = tensor.empty() : tensor<16x96xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<16x96xf32>, tensor<96xf32>) outs(%out0 : tensor<16x96xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x96xf32>
  return %y : tensor<16x96xf32>
}

// (i * x + j * y) mod 7 - 3 as f32: small integers.
func.func private @pattern2(%t: tensor<?x?xf32>, %x: index, %y: index) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %s = arith.addi %ix, %jy : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %s, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %c3 = arith.constant 3 : i64
    %v = arith.subi %mi, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%y: tensor<?x96xf32>) {
  %ym = bufferization.to_buffer %y : tensor<?x96xf32> to memref<?x96xf32>
  %yu = memref.cast %ym : memref<?x96xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c96 = arith.constant 96 : index
  %c256 = arith.constant 256 : index
  %c300 = arith.constant 300 : index
  %eb = tensor.empty(%c1, %c96) : tensor<?x?xf32>
  %bd = call @pattern2(%eb, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %bs = tensor.cast %bd : tensor<?x?xf32> to tensor<1x96xf32>
  %b = tensor.collapse_shape %bs [[0, 1]] : tensor<1x96xf32> into tensor<96xf32>

  %ex8 = tensor.empty(%c8, %c256) : tensor<?x?xf32>
  %x8d = call @pattern2(%ex8, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x8 = tensor.cast %x8d : tensor<?x?xf32> to tensor<8x256xf32>
  %ew8 = tensor.empty(%c256, %c96) : tensor<?x?xf32>
  %w8d = call @pattern2(%ew8, %c2, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w8 = tensor.cast %w8d : tensor<?x?xf32> to tensor<256x96xf32>
  %y8 = call @dense8(%x8, %w8, %b) : (tensor<8x256xf32>, tensor<256x96xf32>, tensor<96xf32>) -> tensor<8x96xf32>
  %y8d = tensor.cast %y8 : tensor<8x96xf32> to tensor<?x96xf32>
  call @print(%y8d) : (tensor<?x96xf32>) -> ()

  %ex16 = tensor.empty(%c16, %c300) : tensor<?x?xf32>
  %x16d = call @pattern2(%ex16, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x16 = tensor.cast %x16d : tensor<?x?xf32> to tensor<16x300xf32>
  %ew16 = tensor.empty(%c300, %c96) : tensor<?x?xf32>
  %w16d = call @pattern2(%ew16, %c2, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w16 = tensor.cast %w16d : tensor<?x?xf32> to tensor<300x96xf32>
  %y16 = call @dense16(%x16, %w16, %b) : (tensor<16x300xf32>, tensor<300x96xf32>, tensor<96xf32>) -> tensor<16x96xf32>
  %y16d = tensor.cast %y16 : tensor<16x96xf32> to tensor<?x96xf32>
  call @print(%y16d) : (tensor<?x96xf32>) -> ()
  return
}
