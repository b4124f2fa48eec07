// torch-mlir style linear layers on a batch of rows against a wider
// weight that is an argument (not a constant the pass could pack): 20 x 40
// tokens through a [100, 40] weight with a bias and relu, and 40 x 48
// through a [200, 48] weight, each a linalg.transpose of the weight and a
// zero-filled matmul, and a dynamic batch (? x 24 through a [128, 24]
// weight, called with 3, 16, 20 and 50 rows). On AVX-512 the kernels compute the product
// transposed (C^T = W * X^T, `_ct`): the weight's rows are read where they
// lie as the kernel's A, the tokens packed, C's tiles transposed as they
// are stored; the dynamic batch's kernels for up to 1, 7 and 15 rows are
// the matrix-vector form, those for 16 and for the representative 32
// (run for any more) the product transposed. Bufferized with one-shot-bufferize's function boundaries,
// run with and without --qimeng-tensorop (one thread and two) and compared
// exactly (small-integer inputs: every sum is exact).
// REQUIRES: host-avx512f, host-avx512bw, host-avx512vl, host-bmi2
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s '--qimeng-tensorop=representative-m=32' \
// RUN:   | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Default layout (run-time leading dimensions), the pass before
// deallocation:
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=representative-m=32' -o %t.v1.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// Identity layout (immediate leading dimensions), the pass after
// deallocation, two threads:
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt '--qimeng-tensorop=threads=2 representative-m=32' -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=IDENTITY < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// The transposed products are what ran: with a k dropped from them the
// output differs.
// RUN: %qimeng-opt %t.identity.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k representative-m=32' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// DEFAULT-LABEL: func.func @layer(
// DEFAULT-NOT:     linalg.transpose
// DEFAULT:         llvm.call @qm_sgemm_20x100x40_nt_b0_bias_relu_ldrt_{{.*}}_adirect_ct_{{.*}}avx512
// DEFAULT-LABEL: func.func @wide(
// DEFAULT:         llvm.call @qm_sgemm_48x384x112_nt_b0_ldrt_{{.*}}_adirect_ct_{{.*}}avx512
// DEFAULT-LABEL: func.func @any_batch(
// DEFAULT-DAG:     llvm.call @qm_sgemm_1x128x24_nt_mrt_b0_bias_relu_ldrt_gemv8_x86_64_avx512
// DEFAULT-DAG:     llvm.call @qm_sgemm_7x128x24_nt_mrt_b0_bias_relu_ldrt_gemv8_x86_64_avx512
// DEFAULT-DAG:     llvm.call @qm_sgemm_15x128x24_nt_mrt_b0_bias_relu_ldrt_gemv8_x86_64_avx512
// DEFAULT-DAG:     llvm.call @qm_sgemm_16x128x24_nt_mrt_b0_bias_relu_ldrt_{{.*}}_ct_{{.*}}avx512
// DEFAULT-DAG:     llvm.call @qm_sgemm_32x128x24_nt_mrt_b0_bias_relu_ldrt_{{.*}}_ct_{{.*}}avx512

// IDENTITY-LABEL: func.func @layer(
// IDENTITY:         llvm.call @qm_sgemm_20x100x40_nt_b0_bias_relu_lda40_ldb40_ldc100_{{.*}}_ct_{{.*}}avx512
// IDENTITY-LABEL: func.func @wide(
// IDENTITY:         llvm.call @qm_sgemm_48x384x112_nt_b0_lda112_ldb112_ldc384_{{.*}}_ct_par_x86_64_avx512

// OUT: rank = 2 offset = 0 sizes = [20, 100]
// OUT: rank = 2 offset = 0 sizes = [48, 384]
// OUT: rank = 2 offset = 0 sizes = [3, 128]
// OUT: rank = 2 offset = 0 sizes = [16, 128]
// OUT: rank = 2 offset = 0 sizes = [20, 128]
// OUT: rank = 2 offset = 0 sizes = [50, 128]

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @layer(%x: tensor<20x40xf32>, %w: tensor<100x40xf32>, %b: tensor<100xf32>) -> tensor<20x100xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<40x100xf32>
  %wt = linalg.transpose ins(%w : tensor<100x40xf32>) outs(%wt0 : tensor<40x100xf32>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<20x100xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<20x100xf32>) -> tensor<20x100xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<20x40xf32>, tensor<40x100xf32>) outs(%acc : tensor<20x100xf32>) -> tensor<20x100xf32>
  %out0 = tensor.empty() : tensor<20x100xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<20x100xf32>, tensor<100xf32>) outs(%out0 : tensor<20x100xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<20x100xf32>
  return %y : tensor<20x100xf32>
}

func.func @wide(%x: tensor<48x112xf32>, %w: tensor<384x112xf32>) -> tensor<48x384xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<112x384xf32>
  %wt = linalg.transpose ins(%w : tensor<384x112xf32>) outs(%wt0 : tensor<112x384xf32>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<48x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<48x384xf32>) -> tensor<48x384xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<48x112xf32>, tensor<112x384xf32>) outs(%acc : tensor<48x384xf32>) -> tensor<48x384xf32>
  return %mm : tensor<48x384xf32>
}

func.func @any_batch(%x: tensor<?x24xf32>, %w: tensor<128x24xf32>, %b: tensor<128xf32>) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x24xf32>
  %wt0 = tensor.empty() : tensor<24x128xf32>
  %wt = linalg.transpose ins(%w : tensor<128x24xf32>) outs(%wt0 : tensor<24x128xf32>) permutation = [1, 0]
  %acc0 = tensor.empty(%rows) : tensor<?x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x128xf32>) -> tensor<?x128xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<?x24xf32>, tensor<24x128xf32>) outs(%acc : tensor<?x128xf32>) -> tensor<?x128xf32>
  %out0 = tensor.empty(%rows) : tensor<?x128xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<?x128xf32>, tensor<128xf32>) outs(%out0 : tensor<?x128xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x128xf32>
  return %y : tensor<?x128xf32>
}

// Runs @any_batch on `rows` rows and prints the result.
func.func @run_any(%rows: index, %w: tensor<128x24xf32>, %b: tensor<128xf32>) {
  %c24 = arith.constant 24 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %e = tensor.empty(%rows, %c24) : tensor<?x?xf32>
  %xd = call @pattern2(%e, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x = tensor.cast %xd : tensor<?x?xf32> to tensor<?x24xf32>
  %y = call @any_batch(%x, %w, %b) : (tensor<?x24xf32>, tensor<128x24xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %yd = tensor.cast %y : tensor<?x128xf32> to tensor<?x?xf32>
  call @print(%yd) : (tensor<?x?xf32>) -> ()
  return
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

func.func @print(%y: tensor<?x?xf32>) {
  %ym = bufferization.to_buffer %y : tensor<?x?xf32> to memref<?x?xf32>
  %yu = memref.cast %ym : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c20 = arith.constant 20 : index
  %c40 = arith.constant 40 : index
  %c48 = arith.constant 48 : index
  %c100 = arith.constant 100 : index
  %c112 = arith.constant 112 : index
  %c384 = arith.constant 384 : index
  %ew = tensor.empty(%c100, %c40) : tensor<?x?xf32>
  %wd = call @pattern2(%ew, %c2, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w = tensor.cast %wd : tensor<?x?xf32> to tensor<100x40xf32>
  %eb = tensor.empty(%c1, %c100) : tensor<?x?xf32>
  %bd = call @pattern2(%eb, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %bs = tensor.cast %bd : tensor<?x?xf32> to tensor<1x100xf32>
  %b = tensor.collapse_shape %bs [[0, 1]] : tensor<1x100xf32> into tensor<100xf32>
  %ex = tensor.empty(%c20, %c40) : tensor<?x?xf32>
  %xd = call @pattern2(%ex, %c3, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x = tensor.cast %xd : tensor<?x?xf32> to tensor<20x40xf32>
  %y = call @layer(%x, %w, %b) : (tensor<20x40xf32>, tensor<100x40xf32>, tensor<100xf32>) -> tensor<20x100xf32>
  %yd = tensor.cast %y : tensor<20x100xf32> to tensor<?x?xf32>
  call @print(%yd) : (tensor<?x?xf32>) -> ()

  %ev = tensor.empty(%c384, %c112) : tensor<?x?xf32>
  %vd = call @pattern2(%ev, %c5, %c1) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %v = tensor.cast %vd : tensor<?x?xf32> to tensor<384x112xf32>
  %ez = tensor.empty(%c48, %c112) : tensor<?x?xf32>
  %zd = call @pattern2(%ez, %c2, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %z = tensor.cast %zd : tensor<?x?xf32> to tensor<48x112xf32>
  %u = call @wide(%z, %v) : (tensor<48x112xf32>, tensor<384x112xf32>) -> tensor<48x384xf32>
  %ud = tensor.cast %u : tensor<48x384xf32> to tensor<?x?xf32>
  call @print(%ud) : (tensor<?x?xf32>) -> ()

  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  %c50 = arith.constant 50 : index
  %c128 = arith.constant 128 : index
  %ea = tensor.empty(%c128, %c24) : tensor<?x?xf32>
  %ad = call @pattern2(%ea, %c2, %c5) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %a = tensor.cast %ad : tensor<?x?xf32> to tensor<128x24xf32>
  %ec = tensor.empty(%c1, %c128) : tensor<?x?xf32>
  %cd = call @pattern2(%ec, %c3, %c1) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %cs = tensor.cast %cd : tensor<?x?xf32> to tensor<1x128xf32>
  %c = tensor.collapse_shape %cs [[0, 1]] : tensor<1x128xf32> into tensor<128xf32>
  call @run_any(%c3, %a, %c) : (index, tensor<128x24xf32>, tensor<128xf32>) -> ()
  call @run_any(%c16, %a, %c) : (index, tensor<128x24xf32>, tensor<128xf32>) -> ()
  call @run_any(%c20, %a, %c) : (index, tensor<128x24xf32>, tensor<128xf32>) -> ()
  call @run_any(%c50, %a, %c) : (index, tensor<128x24xf32>, tensor<128xf32>) -> ()
  return
}
