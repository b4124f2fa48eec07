// A contraction over a dynamic depth, as attention's probabilities times
// V over a dynamic sequence reaches linalg after a batch is flattened: a
// 128 x ? by ? x 64 matmul into a zero-filled C, then a broadcast bias add
// and relu. On x86 the f32 kernel reads K at run time (`_krt`,
// representative-k 256) and stores C at every K, 0 included, so the fill
// folds into its overwrite ("b0") and the bias and relu into its epilogue;
// on two threads its parts split C (`_parts2`). Run at depths 0 (C =
// relu(bias)), 1, 7 and 300 (more than the representative) with and
// without --qimeng-tensorop, on tensors and after bufferization, and
// compared exactly (small integers).
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// Default layout (dynamic strides), the pass before deallocation, two threads:
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=threads=2' -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// On tensors, before bufferization, one thread:
// RUN: %qimeng-opt %s '--qimeng-tensorop=threads=1' \
// RUN:   | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// The kernel is what ran: with a fault injected into it the output differs.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=threads=2 validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// CHECK-LABEL: func.func @pv(
// CHECK:         %[[K:.*]] = memref.dim %{{.*}}, %c1
// CHECK:         llvm.call @qm_sgemm_128x64x256_nn_krt_b0_bias_relu_ldrt_{{.*}}_parts2(
// CHECK:       } else {
// CHECK:         linalg.fill
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK:       return

// OUT-COUNT-4: rank = 2 offset = 0 sizes = [128, 64]

#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

func.func @pv(%p: tensor<128x?xf32>, %v: tensor<?x64xf32>, %bias: tensor<64xf32>) -> tensor<128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %mm = linalg.matmul ins(%p, %v : tensor<128x?xf32>, tensor<?x64xf32>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
  %y = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<128x64xf32>, tensor<64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%m: f32, %b: f32, %o: f32):
    %s = arith.addf %m, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// (i * x + j * y) mod 7 - 3 as f32.
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

func.func @run(%depth: index, %bias: tensor<64xf32>) {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %ep = tensor.empty(%c128, %depth) : tensor<?x?xf32>
  %pd = call @pattern2(%ep, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %p = tensor.cast %pd : tensor<?x?xf32> to tensor<128x?xf32>
  %ev = tensor.empty(%depth, %c64) : tensor<?x?xf32>
  %vd = call @pattern2(%ev, %c2, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %v = tensor.cast %vd : tensor<?x?xf32> to tensor<?x64xf32>
  %y = call @pv(%p, %v, %bias) : (tensor<128x?xf32>, tensor<?x64xf32>, tensor<64xf32>) -> tensor<128x64xf32>
  %m = bufferization.to_buffer %y : tensor<128x64xf32> to memref<128x64xf32>
  %u = memref.cast %m : memref<128x64xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %c64 = arith.constant 64 : index
  %c300 = arith.constant 300 : index
  %eb = tensor.empty(%c1, %c64) : tensor<?x?xf32>
  %bd = call @pattern2(%eb, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %bs = tensor.cast %bd : tensor<?x?xf32> to tensor<1x64xf32>
  %b = tensor.collapse_shape %bs [[0, 1]] : tensor<1x64xf32> into tensor<64xf32>
  call @run(%c0, %b) : (index, tensor<64xf32>) -> ()
  call @run(%c1, %b) : (index, tensor<64xf32>) -> ()
  call @run(%c7, %b) : (index, tensor<64xf32>) -> ()
  call @run(%c300, %b) : (index, tensor<64xf32>) -> ()
  return
}
