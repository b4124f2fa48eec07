// Batched contractions as frontends write them: torch's bmm
// (linalg.batch_matmul), attention scores Q K^T (batch_matmul with K
// transposed through its indexing map), a 2-D weight broadcast over the
// batch, and StableHLO's dot_general written as a linalg.generic
// contraction. Bufferized, run with and without --qimeng-tensorop in four
// placements and compared exactly.
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
//
// Default layout (dynamic strides), the pass before deallocation:
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop=threads=2 -o %t.v1.mlir
// RUN: FileCheck %s --check-prefix=GUARDED < %t.v1.mlir
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
//
// Identity layout, the pass before deallocation:
// RUN: %qimeng-opt %t.identity.mlir --qimeng-tensorop=threads=1 -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=STATIC < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// Both layouts, the pass after deallocation:
// RUN: %mlir-opt %t.default.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop=threads=2 | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop=threads=1 | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v4
// RUN: diff %t.reference %t.v4
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// The guarded kernels are what ran: with a fault injected into them the
// output differs.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// Every contraction is rewritten; default-layout arguments give the
// kernels their leading dimensions and the calls their batch strides at
// run time ("ldrt"; the strides in bytes from extract_strided_metadata)
// and have their unit strides checked at run time.
// With two threads the batch of GEMMs too small to split runs
// concurrently, from a launcher that takes the batch's count and strides;
// with one, an scf.for calls the kernel per batch.
// GUARDED-LABEL: func.func @bmm(
// GUARDED:         scf.if
// GUARDED:           arith.muli %strides_{{[0-9]+}}#0, %c4
// GUARDED:           arith.muli %strides_{{[0-9]+}}#0, %c4
// GUARDED:           llvm.call @qm_sgemm_4x6x8_nn_b0_ldrt_{{.*}}_batch_t2(
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.fill
// GUARDED-NEXT:      linalg.batch_matmul
// GUARDED-LABEL: func.func @scores(
// GUARDED:           llvm.call @qm_sgemm_4x6x8_nt_b0_ldrt_{{.*}}_batch_t2(
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.fill
// GUARDED-NEXT:      linalg.batch_matmul
// GUARDED-LABEL: func.func @shared_weight(
// GUARDED:           llvm.call @qm_sgemm_4x6x8_nn_b0_ldrt_{{.*}}_batch_t2(
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.fill
// GUARDED-NEXT:      linalg.batch_matmul
// GUARDED-LABEL: func.func @dot_general(
// GUARDED:           llvm.call @qm_sgemm_4x6x8_nn_b0_ldrt_
// GUARDED:         } else {
// GUARDED-NEXT:      linalg.fill
// GUARDED-NEXT:      linalg.generic
// GUARDED-LABEL: func.func @main(
// GUARDED:       llvm.func internal @qm_sgemm_4x6x8_nn_b0_{{.*}}_batch_t2(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// GUARDED:         omp.parallel num_threads(%{{.+}} : i32) {
// GUARDED:           omp.loop_nest
// GUARDED:             llvm.call @omp_get_thread_num()

// STATIC-LABEL: func.func @bmm(
// STATIC-NOT:      linalg.batch_matmul
// STATIC:          scf.for
// STATIC:            llvm.call @qm_sgemm_4x6x8_nn_b0_lda8_ldb6_ldc6_
// STATIC-LABEL: func.func @scores(
// STATIC-NOT:      linalg.batch_matmul
// STATIC:            llvm.call @qm_sgemm_4x6x8_nt_b0_lda8_ldb8_ldc6_
// STATIC-LABEL: func.func @shared_weight(
// STATIC-NOT:      linalg.batch_matmul
// STATIC:            llvm.call @qm_sgemm_4x6x8_nn_b0_lda8_ldb6_ldc6_
// STATIC-LABEL: func.func @dot_general(
// STATIC-NOT:      linalg.generic
// STATIC:            llvm.call @qm_sgemm_4x6x8_nn_b0_lda8_ldb6_ldc6_
// STATIC-LABEL: func.func @main(

// OUT-COUNT-4: rank = 3 offset = 0 sizes = [3, 4, 6]

// TENSOR: bufferization.to_tensor {{.*}} restrict writable
// TENSOR: llvm.func internal @qm_s

func.func @bmm(%a: tensor<3x4x8xf32>, %b: tensor<3x8x6xf32>) -> tensor<3x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x4x8xf32>, tensor<3x8x6xf32>) outs(%z : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  return %r : tensor<3x4x6xf32>
}

func.func @scores(%q: tensor<3x4x8xf32>, %k: tensor<3x6x8xf32>) -> tensor<3x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %r = linalg.batch_matmul indexing_maps = [
         affine_map<(b, m, n, k) -> (b, m, k)>,
         affine_map<(b, m, n, k) -> (b, n, k)>,
         affine_map<(b, m, n, k) -> (b, m, n)>]
       ins(%q, %k : tensor<3x4x8xf32>, tensor<3x6x8xf32>) outs(%z : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  return %r : tensor<3x4x6xf32>
}

func.func @shared_weight(%a: tensor<3x4x8xf32>, %w: tensor<8x6xf32>) -> tensor<3x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %r = linalg.batch_matmul indexing_maps = [
         affine_map<(b, m, n, k) -> (b, m, k)>,
         affine_map<(b, m, n, k) -> (k, n)>,
         affine_map<(b, m, n, k) -> (b, m, n)>]
       ins(%a, %w : tensor<3x4x8xf32>, tensor<8x6xf32>) outs(%z : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  return %r : tensor<3x4x6xf32>
}

func.func @dot_general(%a: tensor<3x4x8xf32>, %b: tensor<3x8x6xf32>) -> tensor<3x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %r = linalg.generic {
         indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                          affine_map<(b, m, n, k) -> (b, k, n)>,
                          affine_map<(b, m, n, k) -> (b, m, n)>],
         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
       ins(%a, %b : tensor<3x4x8xf32>, tensor<3x8x6xf32>) outs(%z : tensor<3x4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x4x6xf32>
  return %r : tensor<3x4x6xf32>
}

// (i * x + j * y) mod 7 - 3 as f32: small integers.
func.func private @pattern2(%t: tensor<?x?xf32>, %x: index, %y: index) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xf32>) {
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

// (b * z + i * x + j * y) mod 7 - 3 as f32.
func.func private @pattern3(%t: tensor<?x?x?xf32>, %z: index, %x: index, %y: index) -> tensor<?x?x?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?xf32>) {
  ^bb0(%o: f32):
    %b = linalg.index 0 : index
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %bz = arith.muli %b, %z : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %s0 = arith.addi %ix, %jy : index
    %s = arith.addi %s0, %bz : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %s, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %c3 = arith.constant 3 : i64
    %v = arith.subi %mi, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @print3(%t: tensor<3x4x6xf32>) {
  %m = bufferization.to_buffer %t : tensor<3x4x6xf32> to memref<3x4x6xf32>
  %u = memref.cast %m : memref<3x4x6xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %ea = tensor.empty(%c3, %c4, %c8) : tensor<?x?x?xf32>
  %ad = call @pattern3(%ea, %c2, %c3, %c5) : (tensor<?x?x?xf32>, index, index, index) -> tensor<?x?x?xf32>
  %a = tensor.cast %ad : tensor<?x?x?xf32> to tensor<3x4x8xf32>
  %eb = tensor.empty(%c3, %c8, %c6) : tensor<?x?x?xf32>
  %bd = call @pattern3(%eb, %c1, %c2, %c3) : (tensor<?x?x?xf32>, index, index, index) -> tensor<?x?x?xf32>
  %b = tensor.cast %bd : tensor<?x?x?xf32> to tensor<3x8x6xf32>
  %ek = tensor.empty(%c3, %c6, %c8) : tensor<?x?x?xf32>
  %kd = call @pattern3(%ek, %c4, %c1, %c2) : (tensor<?x?x?xf32>, index, index, index) -> tensor<?x?x?xf32>
  %k = tensor.cast %kd : tensor<?x?x?xf32> to tensor<3x6x8xf32>
  %ew = tensor.empty(%c8, %c6) : tensor<?x?xf32>
  %wd = call @pattern2(%ew, %c5, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w = tensor.cast %wd : tensor<?x?xf32> to tensor<8x6xf32>
  %r1 = call @bmm(%a, %b) : (tensor<3x4x8xf32>, tensor<3x8x6xf32>) -> tensor<3x4x6xf32>
  call @print3(%r1) : (tensor<3x4x6xf32>) -> ()
  %r2 = call @scores(%a, %k) : (tensor<3x4x8xf32>, tensor<3x6x8xf32>) -> tensor<3x4x6xf32>
  call @print3(%r2) : (tensor<3x4x6xf32>) -> ()
  %r3 = call @shared_weight(%a, %w) : (tensor<3x4x8xf32>, tensor<8x6xf32>) -> tensor<3x4x6xf32>
  call @print3(%r3) : (tensor<3x4x6xf32>) -> ()
  %r4 = call @dot_general(%a, %b) : (tensor<3x4x8xf32>, tensor<3x8x6xf32>) -> tensor<3x4x6xf32>
  call @print3(%r4) : (tensor<3x4x6xf32>) -> ()
  return
}
