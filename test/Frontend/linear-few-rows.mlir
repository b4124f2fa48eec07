// torch-mlir style linear layers on few rows, the weight an argument (not
// a constant the pass could pack): one token (1 x 40), a small batch
// (5 x 40) and a dynamic batch (? x 40, called with 1, 3 and 20 rows),
// each a linalg.transpose of the [out, in] weight, a zero-filled matmul and
// a broadcast bias add with relu (the dynamic one leaky relu). On AVX-512
// the kernels read the weight's rows where they lie, a dot product per
// output column (the matrix-vector form, `_gemv8`): the weight streams
// once and nothing packs it. Bufferized with one-shot-bufferize's function
// boundaries, run with and without --qimeng-tensorop and compared exactly
// (small-integer inputs: every sum is exact).
// REQUIRES: host-avx512f, host-avx512bw, host-avx512vl, host-bmi2
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s '--qimeng-tensorop=representative-m=64' \
// RUN:   | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Default layout (run-time leading dimensions), the pass before
// deallocation; the dynamic batch with m-buckets for 1 and 16 rows:
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=representative-m=64' -o %t.v1.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// Identity layout (immediate leading dimensions), the pass after
// deallocation:
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt '--qimeng-tensorop=representative-m=64' -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=IDENTITY < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// The matrix-vector kernels are what ran: with a k dropped from them the
// output differs.
// RUN: %qimeng-opt %t.identity.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k representative-m=64' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// DEFAULT-LABEL: func.func @token(
// DEFAULT-NOT:     linalg.transpose
// DEFAULT:         llvm.call @qm_sgemm_1x24x40_nt_b0_bias_relu_ldrt_gemv8_x86_64_avx512
// DEFAULT-LABEL: func.func @batch(
// DEFAULT:         llvm.call @qm_sgemm_5x24x40_nt_b0_bias_relu_ldrt_gemv8_x86_64_avx512
// The dynamic batch: up to 1 row, up to 16 (both the matrix-vector form),
// else the kernel blocked for 64 rows, which packs the weight.
// DEFAULT-LABEL: func.func @any_batch(
// DEFAULT-DAG:     llvm.call @qm_sgemm_1x24x40_nt_mrt_b0_bias_leaky{{[0-9a-f]+}}_ldrt_gemv8_x86_64_avx512
// DEFAULT-DAG:     llvm.call @qm_sgemm_16x24x40_nt_mrt_b0_bias_leaky{{[0-9a-f]+}}_ldrt_gemv8_x86_64_avx512
// DEFAULT-DAG:     llvm.call @qm_sgemm_64x24x40_nt_mrt_b0_bias_leaky{{[0-9a-f]+}}_ldrt_{{[0-9]+}}x{{[0-9]+}}_
// DEFAULT-LABEL: func.func @main(

// IDENTITY-LABEL: func.func @token(
// IDENTITY:         llvm.call @qm_sgemm_1x24x40_nt_b0_bias_relu_lda40_ldb40_ldc24_gemv8_x86_64_avx512
// IDENTITY-LABEL: func.func @batch(
// IDENTITY:         llvm.call @qm_sgemm_5x24x40_nt_b0_bias_relu_lda40_ldb40_ldc24_gemv8_x86_64_avx512

// OUT-COUNT-4: rank = 2 offset = 0 sizes = [{{1|5|3|20}}, 24]

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @token(%x: tensor<1x40xf32>, %w: tensor<24x40xf32>, %b: tensor<24xf32>) -> tensor<1x24xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<40x24xf32>
  %wt = linalg.transpose ins(%w : tensor<24x40xf32>) outs(%wt0 : tensor<40x24xf32>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<1x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<1x24xf32>) -> tensor<1x24xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<1x40xf32>, tensor<40x24xf32>) outs(%acc : tensor<1x24xf32>) -> tensor<1x24xf32>
  %out0 = tensor.empty() : tensor<1x24xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<1x24xf32>, tensor<24xf32>) outs(%out0 : tensor<1x24xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x24xf32>
  return %y : tensor<1x24xf32>
}

func.func @batch(%x: tensor<5x40xf32>, %w: tensor<24x40xf32>, %b: tensor<24xf32>) -> tensor<5x24xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<40x24xf32>
  %wt = linalg.transpose ins(%w : tensor<24x40xf32>) outs(%wt0 : tensor<40x24xf32>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<5x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<5x24xf32>) -> tensor<5x24xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<5x40xf32>, tensor<40x24xf32>) outs(%acc : tensor<5x24xf32>) -> tensor<5x24xf32>
  %out0 = tensor.empty() : tensor<5x24xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<5x24xf32>, tensor<24xf32>) outs(%out0 : tensor<5x24xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<5x24xf32>
  return %y : tensor<5x24xf32>
}

// Leaky relu as torch-mlir writes it: select(x > 0, x, 0.25 x).
func.func @any_batch(%x: tensor<?x40xf32>, %w: tensor<24x40xf32>, %b: tensor<24xf32>) -> tensor<?x24xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.25 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x40xf32>
  %wt0 = tensor.empty() : tensor<40x24xf32>
  %wt = linalg.transpose ins(%w : tensor<24x40xf32>) outs(%wt0 : tensor<40x24xf32>) permutation = [1, 0]
  %acc0 = tensor.empty(%rows) : tensor<?x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x24xf32>) -> tensor<?x24xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<?x40xf32>, tensor<40x24xf32>) outs(%acc : tensor<?x24xf32>) -> tensor<?x24xf32>
  %out0 = tensor.empty(%rows) : tensor<?x24xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<?x24xf32>, tensor<24xf32>) outs(%out0 : tensor<?x24xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %pos = arith.cmpf ogt, %s, %zero : f32
    %neg = arith.mulf %s, %slope : f32
    %r = arith.select %pos, %s, %neg : f32
    linalg.yield %r : f32
  } -> tensor<?x24xf32>
  return %y : tensor<?x24xf32>
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

func.func @print(%y: tensor<?x24xf32>) {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %y, %c0 : tensor<?x24xf32>
  %ym = bufferization.to_buffer %y : tensor<?x24xf32> to memref<?x24xf32>
  %yu = memref.cast %ym : memref<?x24xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c20 = arith.constant 20 : index
  %c24 = arith.constant 24 : index
  %c40 = arith.constant 40 : index
  %ew = tensor.empty(%c24, %c40) : tensor<?x?xf32>
  %wd = call @pattern2(%ew, %c2, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w = tensor.cast %wd : tensor<?x?xf32> to tensor<24x40xf32>
  %eb = tensor.empty(%c1, %c24) : tensor<?x?xf32>
  %bd = call @pattern2(%eb, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %bs = tensor.cast %bd : tensor<?x?xf32> to tensor<1x24xf32>
  %b = tensor.collapse_shape %bs [[0, 1]] : tensor<1x24xf32> into tensor<24xf32>

  %e1 = tensor.empty(%c1, %c40) : tensor<?x?xf32>
  %x1d = call @pattern2(%e1, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x1 = tensor.cast %x1d : tensor<?x?xf32> to tensor<1x40xf32>
  %y1 = call @token(%x1, %w, %b) : (tensor<1x40xf32>, tensor<24x40xf32>, tensor<24xf32>) -> tensor<1x24xf32>
  %y1d = tensor.cast %y1 : tensor<1x24xf32> to tensor<?x24xf32>
  call @print(%y1d) : (tensor<?x24xf32>) -> ()

  %e5 = tensor.empty(%c5, %c40) : tensor<?x?xf32>
  %x5d = call @pattern2(%e5, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x5 = tensor.cast %x5d : tensor<?x?xf32> to tensor<5x40xf32>
  %y5 = call @batch(%x5, %w, %b) : (tensor<5x40xf32>, tensor<24x40xf32>, tensor<24xf32>) -> tensor<5x24xf32>
  %y5d = tensor.cast %y5 : tensor<5x24xf32> to tensor<?x24xf32>
  call @print(%y5d) : (tensor<?x24xf32>) -> ()

  %e3 = tensor.empty(%c3, %c40) : tensor<?x?xf32>
  %x3d = call @pattern2(%e3, %c5, %c1) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x3 = tensor.cast %x3d : tensor<?x?xf32> to tensor<?x40xf32>
  %y3 = call @any_batch(%x3, %w, %b) : (tensor<?x40xf32>, tensor<24x40xf32>, tensor<24xf32>) -> tensor<?x24xf32>
  call @print(%y3) : (tensor<?x24xf32>) -> ()

  %e20 = tensor.empty(%c20, %c40) : tensor<?x?xf32>
  %x20d = call @pattern2(%e20, %c5, %c1) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x20 = tensor.cast %x20d : tensor<?x?xf32> to tensor<?x40xf32>
  %y20 = call @any_batch(%x20, %w, %b) : (tensor<?x40xf32>, tensor<24x40xf32>, tensor<24xf32>) -> tensor<?x24xf32>
  call @print(%y20) : (tensor<?x24xf32>) -> ()
  return
}
