// A dynamic K in bf16, f16 and int8, as a model exported with a dynamic
// sequence length reaches linalg: attention's probabilities times V
// (batch_matmul over the sequence, bf16 x bf16 or f16 x f16 into a
// zero-filled f32 accumulator) and an s8 x s8 -> i32 matmul whose depth is
// the sequence.
// Each becomes its kernel's run-time depth (`_krt`, representative-k; the
// call writes K into the header): AMX's tiles where the host has them, else
// (and with amx=false) AVX512-BF16/VNNI's dot kernels. The zero fill stays
// (the kernel accumulates; with K = 0 it stores nothing). Run at sequence
// lengths 0, 3 (a partial pair and quad), 45 and 333 (several kc blocks),
// with and without the pass in four placements, compared exactly (small
// integers, exact in bf16 and in every f32 sum; int8 over its whole range).
// (Every host with AVX512-BF16 has AVX512VL and F16C, which f16 needs.)
// REQUIRES: host-avx512f, host-avx512bw, host-avx512bf16, host-avx512vnni
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -o %t.identity.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// Default layout (dynamic strides), the pass before deallocation:
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s --qimeng-tensorop | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Identity layout, the pass after deallocation, on the dot kernels:
// RUN: %mlir-opt %t.identity.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop=amx=false -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=DOT < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// Two threads (the batch's GEMMs run concurrently), default layout after
// deallocation:
// RUN: %mlir-opt %t.default.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop=threads=2 | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
//
// The kernels are what ran: broken ones (validation off) change the output.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// CHECK-LABEL: func.func @probs_times_v(
// CHECK:         linalg.fill
// CHECK:         llvm.call @qm_sbgemm_4x8x256_nn_krt_ldrt_
// CHECK-LABEL: func.func @f16_probs_times_v(
// CHECK:         linalg.fill
// CHECK:         llvm.call @qm_shgemm_4x8x256_nn_krt_ldrt_
// CHECK-LABEL: func.func @s8_dynamic_depth(
// CHECK:         linalg.fill
// CHECK:         llvm.call @qm_s8s8gemm_5x7x256_nn_krt_ldrt_
// CHECK-LABEL: func.func @main(

// DOT-LABEL: func.func @probs_times_v(
// DOT:         llvm.call @qm_sbgemm_4x8x256_nn_krt_ldrt_{{.*}}_avx512bf16
// DOT-LABEL: func.func @f16_probs_times_v(
// DOT:         llvm.call @qm_shgemm_4x8x256_nn_krt_ldrt_{{.*}}_x86_64_avx512{{(_batch_t2)?}}(
// DOT-LABEL: func.func @s8_dynamic_depth(
// DOT:         llvm.call @qm_s8s8gemm_5x7x256_nn_krt_ldrt_{{.*}}_avx512vnni

// Four sequence lengths, each printing the two attention outputs and the
// int8 product.
// OUT-COUNT-8: rank = 3 offset = 0 sizes = [3, 4, 8]
// OUT-NOT: rank = 3

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

func.func @probs_times_v(%p: tensor<3x4x?xbf16>, %v: tensor<3x?x8xbf16>) -> tensor<3x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  %r = linalg.batch_matmul ins(%p, %v : tensor<3x4x?xbf16>, tensor<3x?x8xbf16>) outs(%z : tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  return %r : tensor<3x4x8xf32>
}

func.func @f16_probs_times_v(%p: tensor<3x4x?xf16>, %v: tensor<3x?x8xf16>) -> tensor<3x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  %r = linalg.batch_matmul ins(%p, %v : tensor<3x4x?xf16>, tensor<3x?x8xf16>) outs(%z : tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  return %r : tensor<3x4x8xf32>
}

func.func @s8_dynamic_depth(%a: tensor<5x?xi8>, %b: tensor<?x7xi8>) -> tensor<5x7xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<5x7xi32>
  %z = linalg.fill ins(%zero : i32) outs(%e : tensor<5x7xi32>) -> tensor<5x7xi32>
  %r = linalg.matmul ins(%a, %b : tensor<5x?xi8>, tensor<?x7xi8>) outs(%z : tensor<5x7xi32>) -> tensor<5x7xi32>
  return %r : tensor<5x7xi32>
}

// (b * x + i * y + j * z) mod 7 - 3 as bf16: products and sums of up to
// 333 of them are exact in f32.
func.func private @small(%b: index, %rows: index, %cols: index, %x: index, %y: index, %z: index) -> tensor<?x?x?xbf16> {
  %t = tensor.empty(%b, %rows, %cols) : tensor<?x?x?xbf16>
  %r = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?xbf16>) {
  ^bb0(%o: bf16):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %a0 = arith.muli %i0, %x : index
    %a1 = arith.muli %i1, %y : index
    %a2 = arith.muli %i2, %z : index
    %s0 = arith.addi %a0, %a1 : index
    %s = arith.addi %s0, %a2 : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %s, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %c3 = arith.constant 3 : i64
    %d = arith.subi %mi, %c3 : i64
    %f = arith.sitofp %d : i64 to f32
    %v = arith.truncf %f : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<?x?x?xbf16>
  return %r : tensor<?x?x?xbf16>
}

// (i * x + j * y) mod 256 as i8: every bit pattern, both extremes.
func.func private @bytes(%rows: index, %cols: index, %x: index, %y: index) -> tensor<?x?xi8> {
  %t = tensor.empty(%rows, %cols) : tensor<?x?xi8>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xi8>) {
  ^bb0(%o: i8):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %s = arith.addi %ix, %jy : index
    %c256 = arith.constant 256 : index
    %m = arith.remui %s, %c256 : index
    %mi = arith.index_cast %m : index to i64
    %v = arith.trunci %mi : i64 to i8
    linalg.yield %v : i8
  } -> tensor<?x?xi8>
  return %r : tensor<?x?xi8>
}

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI32(memref<*xi32>)

func.func private @run(%seq: index) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %pd = call @small(%c3, %c4, %seq, %c5, %c3, %c1) : (index, index, index, index, index, index) -> tensor<?x?x?xbf16>
  %vd = call @small(%c3, %seq, %c8, %c1, %c4, %c5) : (index, index, index, index, index, index) -> tensor<?x?x?xbf16>
  %p = tensor.cast %pd : tensor<?x?x?xbf16> to tensor<3x4x?xbf16>
  %v = tensor.cast %vd : tensor<?x?x?xbf16> to tensor<3x?x8xbf16>
  %o = call @probs_times_v(%p, %v) : (tensor<3x4x?xbf16>, tensor<3x?x8xbf16>) -> tensor<3x4x8xf32>
  %om = bufferization.to_buffer %o : tensor<3x4x8xf32> to memref<3x4x8xf32>
  %ou = memref.cast %om : memref<3x4x8xf32> to memref<*xf32>
  call @printMemrefF32(%ou) : (memref<*xf32>) -> ()
  // The same values in f16 (small integers: exact in both).
  %p16e = tensor.empty(%seq) : tensor<3x4x?xf16>
  %v16e = tensor.empty(%seq) : tensor<3x?x8xf16>
  %p16 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p : tensor<3x4x?xbf16>) outs(%p16e : tensor<3x4x?xf16>) {
  ^bb0(%x: bf16, %unused: f16):
    %w = arith.extf %x : bf16 to f32
    %h = arith.truncf %w : f32 to f16
    linalg.yield %h : f16
  } -> tensor<3x4x?xf16>
  %v16 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<3x?x8xbf16>) outs(%v16e : tensor<3x?x8xf16>) {
  ^bb0(%x: bf16, %unused: f16):
    %w = arith.extf %x : bf16 to f32
    %h = arith.truncf %w : f32 to f16
    linalg.yield %h : f16
  } -> tensor<3x?x8xf16>
  %h = call @f16_probs_times_v(%p16, %v16) : (tensor<3x4x?xf16>, tensor<3x?x8xf16>) -> tensor<3x4x8xf32>
  %hm = bufferization.to_buffer %h : tensor<3x4x8xf32> to memref<3x4x8xf32>
  %hu = memref.cast %hm : memref<3x4x8xf32> to memref<*xf32>
  call @printMemrefF32(%hu) : (memref<*xf32>) -> ()

  %ad = call @bytes(%c5, %seq, %c7, %c13) : (index, index, index, index) -> tensor<?x?xi8>
  %bd = call @bytes(%seq, %c7, %c11, %c5) : (index, index, index, index) -> tensor<?x?xi8>
  %a = tensor.cast %ad : tensor<?x?xi8> to tensor<5x?xi8>
  %b = tensor.cast %bd : tensor<?x?xi8> to tensor<?x7xi8>
  %y = call @s8_dynamic_depth(%a, %b) : (tensor<5x?xi8>, tensor<?x7xi8>) -> tensor<5x7xi32>
  %ym = bufferization.to_buffer %y : tensor<5x7xi32> to memref<5x7xi32>
  %yu = memref.cast %ym : memref<5x7xi32> to memref<*xi32>
  call @printMemrefI32(%yu) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c45 = arith.constant 45 : index
  %c333 = arith.constant 333 : index
  call @run(%c0) : (index) -> ()
  call @run(%c3) : (index) -> ()
  call @run(%c45) : (index) -> ()
  call @run(%c333) : (index) -> ()
  return
}
