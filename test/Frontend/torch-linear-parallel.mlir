// torch-mlir style aten.linear (transposed weight, zero fill, matmul,
// broadcast bias, relu) large enough that threads=2 splits the kernel into
// two parts run by an OpenMP launcher: the deallocation pipeline after the
// pass must leave the launcher alone. Compared exactly with the pipeline
// without the pass.
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop=threads=2 -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// On tensors, before bufferization (the ops move onto buffers in place:
// to_buffer, a fresh allocation, to_tensor restrict writable):
// RUN: %qimeng-opt %s --qimeng-tensorop=threads=2 -o %t.tensor.mlir
// RUN: FileCheck %s --check-prefix=TENSOR < %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
// RUN: %mlir-opt %t.default.mlir %dealloc | %qimeng-opt --qimeng-tensorop=threads=2 | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2

// CHECK-LABEL: func.func @linear_relu(
// CHECK:         scf.if
// CHECK:           llvm.call @qm_sgemm_96x256x128_nt_b0_{{.*}}_par_{{.*}}_parts2(
// CHECK:         } else {
// CHECK-NEXT:      linalg.transpose
// CHECK-NEXT:      linalg.fill
// CHECK-NEXT:      linalg.matmul

// TENSOR: bufferization.to_tensor {{.*}} restrict writable
// TENSOR: llvm.func internal @qm_s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @linear_relu(%x: tensor<96x128xf32>, %w: tensor<256x128xf32>, %b: tensor<256xf32>) -> tensor<96x256xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<128x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x128xf32>) outs(%wt0 : tensor<128x256xf32>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<96x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<96x256xf32>) -> tensor<96x256xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<96x128xf32>, tensor<128x256xf32>) outs(%acc : tensor<96x256xf32>) -> tensor<96x256xf32>
  %out0 = tensor.empty() : tensor<96x256xf32>
  %biased = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<96x256xf32>, tensor<256xf32>) outs(%out0 : tensor<96x256xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<96x256xf32>
  return %biased : tensor<96x256xf32>
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

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %ex = tensor.empty(%c96, %c128) : tensor<?x?xf32>
  %xd = call @pattern2(%ex, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x = tensor.cast %xd : tensor<?x?xf32> to tensor<96x128xf32>
  %ew = tensor.empty(%c256, %c128) : tensor<?x?xf32>
  %wd = call @pattern2(%ew, %c2, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w = tensor.cast %wd : tensor<?x?xf32> to tensor<256x128xf32>
  %eb = tensor.empty(%c1, %c256) : tensor<?x?xf32>
  %bd = call @pattern2(%eb, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %bs = tensor.cast %bd : tensor<?x?xf32> to tensor<1x256xf32>
  %b = tensor.collapse_shape %bs [[0, 1]] : tensor<1x256xf32> into tensor<256xf32>
  %y = call @linear_relu(%x, %w, %b) : (tensor<96x128xf32>, tensor<256x128xf32>, tensor<256xf32>) -> tensor<96x256xf32>
  %ym = bufferization.to_buffer %y : tensor<96x256xf32> to memref<96x256xf32>
  %yu = memref.cast %ym : memref<96x256xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  return
}
