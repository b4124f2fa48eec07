// Matrix-vector products as frontends write them: torch's aten.mv
// (linalg.matvec into a zero fill, then a bias and relu), a vector times a
// matrix (linalg.vecmat), torch.bmm of matrices and vectors
// (linalg.batch_matvec accumulating into its output), a generic reading
// the matrix transposed (y[i] = sum_j A[j, i] x[j], the vector its second
// input), aten.mv on a dynamic number of rows, and a linear layer of one
// output (a regression head: N = 1, computed as its transpose); also
// torch's batch of vectors times matrices (batch_vecmat). Each is the GEMM
// of one row: the vector is A, the matrix B (read as a transposed B where its
// rows are the result's, linalg.matvec), the result C's one row. On
// tensors, bufferized with one-shot-bufferize's function boundaries, run
// with and without --qimeng-tensorop in four placements and compared
// exactly (small-integer inputs).
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
//
// Default layout (dynamic strides), the pass before deallocation:
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir 2> %t.remarks
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.v1.mlir
// RUN: FileCheck %s --check-prefix=REMARK --allow-empty < %t.remarks
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Identity layout, the pass before deallocation:
// RUN: %qimeng-opt %t.identity.mlir --qimeng-tensorop -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=IDENTITY < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// Both layouts, the pass after deallocation:
// RUN: %mlir-opt %t.default.mlir %dealloc | %qimeng-opt --qimeng-tensorop | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
// RUN: %mlir-opt %t.identity.mlir %dealloc | %qimeng-opt --qimeng-tensorop | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v4
// RUN: diff %t.reference %t.v4
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// The kernels are what ran: with a fault injected into them the output
// differs.
// RUN: %qimeng-opt %t.identity.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// Every matrix-vector product is rewritten: no remark.
// REMARK-NOT: remark

// aten.mv with a bias and relu: the matrix read as B^T (nt) by the
// matrix-vector kernel (`_gemv8`), the consumer fused: its bias has the
// result's shape, so it is where C starts (a residual: the kernel
// accumulates onto it, no b0) and relu is the kernel's. With dynamic
// strides the kernel runs where the unit strides it assumes hold.
// DEFAULT-LABEL: func.func @mv_bias_relu(
// DEFAULT:         scf.if
// DEFAULT:           linalg.copy
// DEFAULT:           llvm.call @qm_sgemm_1x64x32_nt_relu_ldrt_gemv8_
// DEFAULT:         } else {
// DEFAULT:           linalg.matvec
// IDENTITY-LABEL: func.func @mv_bias_relu(
// IDENTITY-NOT:    linalg.matvec
// IDENTITY-NOT:    linalg.generic
// IDENTITY:        llvm.call @qm_sgemm_1x64x32_nt_relu_lda32_ldb32_ldc64_gemv8_

// A vector times a matrix: the matrix is B as stored (nn).
// IDENTITY-LABEL: func.func @vecmat(
// IDENTITY-NOT:    linalg.vecmat
// IDENTITY:        llvm.call @qm_sgemm_1x48x32_nn_b0_

// A batch of matrices times vectors, accumulating: one kernel call a batch
// element.
// IDENTITY-LABEL: func.func @batch_mv(
// IDENTITY-NOT:    linalg.batch_matvec
// IDENTITY:        llvm.call @qm_sgemm_1x64x32_nt_lda32_ldb32_ldc64_gemv8_{{.*}}_batch_t2(

// A batch of vectors times matrices.
// IDENTITY-LABEL: func.func @batch_vm(
// IDENTITY-NOT:    linalg.batch_vecmat
// IDENTITY:        llvm.call @qm_sgemm_1x48x32_nn_

// The generic's matrix transposed: B as stored.
// IDENTITY-LABEL: func.func @generic_mv_transposed(
// IDENTITY-NOT:    linalg.generic
// IDENTITY:        llvm.call @qm_sgemm_1x40x32_nn_b0_

// A linear layer of one output feature: C (37 x 1) = X W^T is C^T = W X^T,
// the weight's row the vector (its transpose folded), X read as B^T.
// IDENTITY-LABEL: func.func @regression_head(
// IDENTITY-NOT:    linalg.matmul
// IDENTITY-NOT:    linalg.transpose
// IDENTITY:        llvm.call @qm_sgemm_1x37x32_nt_b0_{{.*}}gemv8_

// A dynamic number of rows: the GEMM's N read at run time, by the
// matrix-vector kernel (its columns from the header).
// IDENTITY-LABEL: func.func @mv_dynamic(
// IDENTITY-NOT:    linalg.matvec
// IDENTITY:        llvm.call @qm_sgemm_1x256x32_nt_nrt_b0_ldrt_gemv8_

// OUT-COUNT-7: rank = {{[12]}} offset = 0

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

func.func @mv_bias_relu(%a: tensor<64x32xf32>, %x: tensor<32xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %y = linalg.matvec ins(%a, %x : tensor<64x32xf32>, tensor<32xf32>) outs(%f : tensor<64xf32>) -> tensor<64xf32>
  %o = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%y, %b : tensor<64xf32>, tensor<64xf32>) outs(%o : tensor<64xf32>) {
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %s = arith.addf %v, %bias : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

func.func @vecmat(%x: tensor<32xf32>, %a: tensor<32x48xf32>) -> tensor<48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<48xf32>) -> tensor<48xf32>
  %y = linalg.vecmat ins(%x, %a : tensor<32xf32>, tensor<32x48xf32>) outs(%f : tensor<48xf32>) -> tensor<48xf32>
  return %y : tensor<48xf32>
}

func.func @batch_mv(%a: tensor<3x64x32xf32>, %x: tensor<3x32xf32>, %acc: tensor<3x64xf32>) -> tensor<3x64xf32> {
  %y = linalg.batch_matvec ins(%a, %x : tensor<3x64x32xf32>, tensor<3x32xf32>) outs(%acc : tensor<3x64xf32>) -> tensor<3x64xf32>
  return %y : tensor<3x64xf32>
}

func.func @batch_vm(%x: tensor<3x32xf32>, %a: tensor<3x32x48xf32>, %acc: tensor<3x48xf32>) -> tensor<3x48xf32> {
  %y = linalg.batch_vecmat ins(%x, %a : tensor<3x32xf32>, tensor<3x32x48xf32>) outs(%acc : tensor<3x48xf32>) -> tensor<3x48xf32>
  return %y : tensor<3x48xf32>
}

func.func @generic_mv_transposed(%a: tensor<32x40xf32>, %x: tensor<32xf32>) -> tensor<40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<40xf32>) -> tensor<40xf32>
  %y = linalg.generic {indexing_maps = [#tr2, #col, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a, %x : tensor<32x40xf32>, tensor<32xf32>) outs(%f : tensor<40xf32>) {
  ^bb0(%av: f32, %xv: f32, %yv: f32):
    %p = arith.mulf %av, %xv : f32
    %s = arith.addf %yv, %p : f32
    linalg.yield %s : f32
  } -> tensor<40xf32>
  return %y : tensor<40xf32>
}

func.func @regression_head(%x: tensor<37x32xf32>, %w: tensor<1x32xf32>) -> tensor<37x1xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<32x1xf32>
  %wt = linalg.transpose ins(%w : tensor<1x32xf32>) outs(%wt0 : tensor<32x1xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<37x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37x1xf32>) -> tensor<37x1xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<37x32xf32>, tensor<32x1xf32>) outs(%f : tensor<37x1xf32>) -> tensor<37x1xf32>
  return %y : tensor<37x1xf32>
}

func.func @mv_dynamic(%a: tensor<?x32xf32>, %x: tensor<32xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %a, %c0 : tensor<?x32xf32>
  %e = tensor.empty(%rows) : tensor<?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %y = linalg.matvec ins(%a, %x : tensor<?x32xf32>, tensor<32xf32>) outs(%f : tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
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

func.func private @matrix(%rows: index, %cols: index, %x: index, %y: index) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %r = call @pattern2(%e, %x, %y) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func private @vector(%n: index, %y: index) -> tensor<?xf32> {
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %m = call @matrix(%c1, %n, %c5, %y) : (index, index, index, index) -> tensor<?x?xf32>
  %v = tensor.collapse_shape %m [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  return %v : tensor<?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func private @print1(%t: tensor<?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?xf32> to memref<?xf32>
  %u = memref.cast %m : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c32 = arith.constant 32 : index
  %c40 = arith.constant 40 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %c192 = arith.constant 192 : index
  %c37 = arith.constant 37 : index

  %ad = call @matrix(%c64, %c32, %c2, %c3) : (index, index, index, index) -> tensor<?x?xf32>
  %a = tensor.cast %ad : tensor<?x?xf32> to tensor<64x32xf32>
  %xd = call @vector(%c32, %c2) : (index, index) -> tensor<?xf32>
  %x = tensor.cast %xd : tensor<?xf32> to tensor<32xf32>
  %bd = call @vector(%c64, %c3) : (index, index) -> tensor<?xf32>
  %b = tensor.cast %bd : tensor<?xf32> to tensor<64xf32>
  %y1 = call @mv_bias_relu(%a, %x, %b) : (tensor<64x32xf32>, tensor<32xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y1d = tensor.cast %y1 : tensor<64xf32> to tensor<?xf32>
  call @print1(%y1d) : (tensor<?xf32>) -> ()

  %wd = call @matrix(%c32, %c48, %c3, %c1) : (index, index, index, index) -> tensor<?x?xf32>
  %w = tensor.cast %wd : tensor<?x?xf32> to tensor<32x48xf32>
  %y2 = call @vecmat(%x, %w) : (tensor<32xf32>, tensor<32x48xf32>) -> tensor<48xf32>
  %y2d = tensor.cast %y2 : tensor<48xf32> to tensor<?xf32>
  call @print1(%y2d) : (tensor<?xf32>) -> ()

  %bad = call @matrix(%c192, %c32, %c1, %c2) : (index, index, index, index) -> tensor<?x?xf32>
  %bas = tensor.cast %bad : tensor<?x?xf32> to tensor<192x32xf32>
  %ba = tensor.expand_shape %bas [[0, 1], [2]] output_shape [3, 64, 32] : tensor<192x32xf32> into tensor<3x64x32xf32>
  %bxd = call @matrix(%c3, %c32, %c2, %c1) : (index, index, index, index) -> tensor<?x?xf32>
  %bx = tensor.cast %bxd : tensor<?x?xf32> to tensor<3x32xf32>
  %bcd = call @matrix(%c3, %c64, %c1, %c1) : (index, index, index, index) -> tensor<?x?xf32>
  %bc = tensor.cast %bcd : tensor<?x?xf32> to tensor<3x64xf32>
  %y3 = call @batch_mv(%ba, %bx, %bc) : (tensor<3x64x32xf32>, tensor<3x32xf32>, tensor<3x64xf32>) -> tensor<3x64xf32>
  %y3m = bufferization.to_buffer %y3 : tensor<3x64xf32> to memref<3x64xf32>
  %y3u = memref.cast %y3m : memref<3x64xf32> to memref<*xf32>
  call @printMemrefF32(%y3u) : (memref<*xf32>) -> ()

  %c96 = arith.constant 96 : index
  %vad = call @matrix(%c96, %c48, %c2, %c5) : (index, index, index, index) -> tensor<?x?xf32>
  %vas = tensor.cast %vad : tensor<?x?xf32> to tensor<96x48xf32>
  %va = tensor.expand_shape %vas [[0, 1], [2]] output_shape [3, 32, 48] : tensor<96x48xf32> into tensor<3x32x48xf32>
  %vcd = call @matrix(%c3, %c48, %c3, %c1) : (index, index, index, index) -> tensor<?x?xf32>
  %vc = tensor.cast %vcd : tensor<?x?xf32> to tensor<3x48xf32>
  %yv = call @batch_vm(%bx, %va, %vc) : (tensor<3x32xf32>, tensor<3x32x48xf32>, tensor<3x48xf32>) -> tensor<3x48xf32>
  %yvm = bufferization.to_buffer %yv : tensor<3x48xf32> to memref<3x48xf32>
  %yvu = memref.cast %yvm : memref<3x48xf32> to memref<*xf32>
  call @printMemrefF32(%yvu) : (memref<*xf32>) -> ()

  %td = call @matrix(%c32, %c40, %c1, %c3) : (index, index, index, index) -> tensor<?x?xf32>
  %t = tensor.cast %td : tensor<?x?xf32> to tensor<32x40xf32>
  %y4 = call @generic_mv_transposed(%t, %x) : (tensor<32x40xf32>, tensor<32xf32>) -> tensor<40xf32>
  %y4d = tensor.cast %y4 : tensor<40xf32> to tensor<?xf32>
  call @print1(%y4d) : (tensor<?xf32>) -> ()

  %hxd = call @matrix(%c37, %c32, %c2, %c1) : (index, index, index, index) -> tensor<?x?xf32>
  %hx = tensor.cast %hxd : tensor<?x?xf32> to tensor<37x32xf32>
  %hwd = call @matrix(%c1, %c32, %c1, %c3) : (index, index, index, index) -> tensor<?x?xf32>
  %hw = tensor.cast %hwd : tensor<?x?xf32> to tensor<1x32xf32>
  %hy = call @regression_head(%hx, %hw) : (tensor<37x32xf32>, tensor<1x32xf32>) -> tensor<37x1xf32>
  %hym = bufferization.to_buffer %hy : tensor<37x1xf32> to memref<37x1xf32>
  %hyu = memref.cast %hym : memref<37x1xf32> to memref<*xf32>
  call @printMemrefF32(%hyu) : (memref<*xf32>) -> ()

  %dd = call @matrix(%c37, %c32, %c3, %c2) : (index, index, index, index) -> tensor<?x?xf32>
  %d = tensor.cast %dd : tensor<?x?xf32> to tensor<?x32xf32>
  %y5 = call @mv_dynamic(%d, %x) : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?xf32>
  call @print1(%y5) : (tensor<?xf32>) -> ()
  return
}
