// A torch-mlir style bf16 linear layer on a batch of 24 tokens against a
// [2048, 1024] weight that is an argument (4 MiB: larger than L2), with a
// bias and relu: a linalg.transpose of the weight, a zero-filled
// linalg.matmul on bf16 x bf16 -> f32, then the bias and relu. Without the
// tiles (AMX-BF16) the kernel computes the product transposed (C^T = W
// X^T, `_ct`, dotgemm.py): the weight's rows read where they lie as the
// kernel's A, the tokens packed as its B, C's tiles transposed as they are
// stored, the bias and relu applied to C's rows; with static leading
// dimensions (identity-layout bufferization) and with the default layout's
// run-time ones (the weight's rows reached from base registers). Run with
// and without --qimeng-tensorop (one thread and two) and compared exactly
// (small-integer inputs: every product and sum is exact in f32).
// REQUIRES: host-avx512f, host-avx512bw, host-avx512bf16
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s '--qimeng-tensorop=amx=false threads=1' \
// RUN:   | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Identity layout, the pass after deallocation, one thread and two (the
// parts split C's rows or columns):
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt '--qimeng-tensorop=amx=false threads=1' -o %t.v1.mlir
// RUN: FileCheck %s --check-prefix=IDENTITY < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt '--qimeng-tensorop=amx=false threads=2' -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=IDENTITY < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// Default layout, the pass before deallocation:
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=amx=false' -o %t.v3.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.v3.mlir
// RUN: %mlir-opt %t.v3.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
//
// The transposed product is what ran: with a k dropped from it the output
// differs (both layouts).
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt '--qimeng-tensorop=amx=false threads=1 validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=amx=false threads=1 validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault.default
// RUN: not diff %t.reference %t.fault.default > /dev/null

// IDENTITY-LABEL: func.func @layer(
// IDENTITY-NOT:     linalg.transpose
// IDENTITY:         llvm.call @qm_sbgemm_24x2048x1024_nt_adirect_b0_bias_relu_lda1024_ldb1024_ldc2048_ct_{{.*}}avx512bf16
// IDENTITY-NOT:     linalg.generic
// IDENTITY-LABEL: func.func private @pattern2(

// DEFAULT-LABEL: func.func @layer(
// DEFAULT:         llvm.call @qm_sbgemm_24x2048x1024_nt_adirect_b0_bias_relu_ldrt_ct_{{.*}}avx512bf16

// OUT: rank = 2 offset = 0 sizes = [24, 2048]

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @layer(%x: tensor<24x1024xbf16>, %w: tensor<2048x1024xbf16>, %b: tensor<2048xf32>) -> tensor<24x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<1024x2048xbf16>
  %wt = linalg.transpose ins(%w : tensor<2048x1024xbf16>) outs(%wt0 : tensor<1024x2048xbf16>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<24x2048xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<24x2048xf32>) -> tensor<24x2048xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<24x1024xbf16>, tensor<1024x2048xbf16>) outs(%acc : tensor<24x2048xf32>) -> tensor<24x2048xf32>
  %out0 = tensor.empty() : tensor<24x2048xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<24x2048xf32>, tensor<2048xf32>) outs(%out0 : tensor<24x2048xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x2048xf32>
  return %y : tensor<24x2048xf32>
}

// (i * x + j * y) mod 7 - 3 as bf16: small integers.
func.func private @pattern2(%t: tensor<?x?xbf16>, %x: index, %y: index) -> tensor<?x?xbf16> {
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xbf16>) {
  ^bb0(%o: bf16):
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
    %f = arith.sitofp %v : i64 to bf16
    linalg.yield %f : bf16
  } -> tensor<?x?xbf16>
  return %r : tensor<?x?xbf16>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c24 = arith.constant 24 : index
  %c1024 = arith.constant 1024 : index
  %c2048 = arith.constant 2048 : index
  %xe = tensor.empty(%c24, %c1024) : tensor<?x?xbf16>
  %xd = call @pattern2(%xe, %c3, %c5) : (tensor<?x?xbf16>, index, index) -> tensor<?x?xbf16>
  %x = tensor.cast %xd : tensor<?x?xbf16> to tensor<24x1024xbf16>
  %we = tensor.empty(%c2048, %c1024) : tensor<?x?xbf16>
  %wd = call @pattern2(%we, %c2, %c3) : (tensor<?x?xbf16>, index, index) -> tensor<?x?xbf16>
  %w = tensor.cast %wd : tensor<?x?xbf16> to tensor<2048x1024xbf16>
  // A bias of (j mod 41) - 20.
  %bias0 = tensor.empty() : tensor<2048xf32>
  %bias = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%bias0 : tensor<2048xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %c41 = arith.constant 41 : index
    %m = arith.remui %i, %c41 : index
    %ii = arith.index_cast %m : index to i64
    %twenty = arith.constant 20 : i64
    %v = arith.subi %ii, %twenty : i64
    %fv = arith.sitofp %v : i64 to f32
    linalg.yield %fv : f32
  } -> tensor<2048xf32>
  %y = call @layer(%x, %w, %bias) : (tensor<24x1024xbf16>, tensor<2048x1024xbf16>, tensor<2048xf32>) -> tensor<24x2048xf32>
  %m = bufferization.to_buffer %y : tensor<24x2048xf32> to memref<24x2048xf32>
  %u = memref.cast %m : memref<24x2048xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
