// 8-bit operands into i32, as quantized models reach linalg with zero
// points of 0: a signed linear layer (weight through linalg.transpose, a
// zero-filled i32 accumulator, linalg.matmul extending both i8 inputs with
// extsi), and a generic that zero-extends its activations (u8) and
// sign-extends its weights (s8). On tensors, bufferized with
// one-shot-bufferize's function boundaries. They become VPDPBUSD kernels
// (s8s8gemm, u8s8gemm); run with and without the pass and compared exactly
// over the types' whole ranges. B unsigned (cast_unsigned) is left alone
// with its reason: VPDPBUSD takes unsigned A and signed B bytes. Few rows
// against a weight as stored (a JAX-style dense layer, s8 with K in two
// blocks; u8 activations through a generic) stream the weight's rows in
// place where the host has no AMX-INT8 (`_brows64x<R>`), and few rows of
// a linear layer (the weight transposed) read its rows in place, a dot
// product per output (`_gemv8`). Matrix-vector products are GEMMs of one
// row, the vector A: an s8 linalg.matvec (its vector the second input, so
// A and B swap roles), and a generic whose vector (its second input too)
// is zero-extended: u8 A against the s8 matrix.
// REQUIRES: host-avx512f, host-avx512bw, host-avx512vnni
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir 2> %t.remarks
// RUN: FileCheck %s < %t.v1.mlir
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s --qimeng-tensorop 2>/dev/null | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Without the tiles (amx=false; what a host without AMX-INT8 runs anyway)
// the few rows stream the weight's rows:
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=amx=false' -o %t.v2.mlir 2>/dev/null
// RUN: FileCheck %s --check-prefix=STREAM < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// The kernels are what ran: broken ones (validation off) change the output.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' 2>/dev/null \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// CHECK-LABEL: func.func @s8_linear(
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     linalg.matmul
// CHECK:         llvm.call @qm_s8s8gemm_29x70x131_nt_{{(adirect_)?}}b0_ldrt_
// CHECK-LABEL: func.func @u8s8_generic(
// CHECK:         llvm.call @qm_u8s8gemm_37x45x66_nn_{{(adirect_)?}}ldrt_
// CHECK-LABEL: func.func @s8_dense_rows(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_s8s8gemm_3x70x600_nn_b0_ldrt_
// CHECK-LABEL: func.func @u8s8_rows(
// CHECK:         llvm.call @qm_u8s8gemm_7x150x66_nn_ldrt_
// STREAM-LABEL: func.func @s8_dense_rows(
// STREAM:         llvm.call @qm_s8s8gemm_3x70x600_nn_b0_ldrt_brows64x3_kc512_x86_64_avx512vnni(
// STREAM-LABEL: func.func @u8s8_rows(
// STREAM:         llvm.call @qm_u8s8gemm_7x150x66_nn_ldrt_brows64x4_x86_64_avx512vnni(
// STREAM-LABEL: func.func @s8_linear_rows(
// STREAM:         llvm.call @qm_s8s8gemm_5x70x131_nt_b0_ldrt_gemv8_x86_64_avx512vnni(
// CHECK-LABEL: func.func @s8_linear_rows(
// CHECK-NOT:     linalg.transpose
// CHECK:         llvm.call @qm_s8s8gemm_5x70x131_nt_b0_ldrt_
// CHECK-LABEL: func.func @s8_matvec(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_s8s8gemm_1x70x131_nt_b0_ldrt_
// CHECK-LABEL: func.func @u8s8_matvec(
// CHECK:         llvm.call @qm_u8s8gemm_1x70x131_nt_ldrt_
// CHECK-LABEL: func.func @u8u8(
// CHECK:         linalg.matmul
// CHECK: llvm.func internal @qm_s8s8gemm_

// REMARK: remark: not accelerated: operand B is unsigned (zero-extended): VPDPBUSD takes unsigned A and signed B bytes

// OUT-COUNT-6: rank = 2
// OUT-COUNT-2: rank = 1

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @s8_linear(%x: tensor<29x131xi8>, %w: tensor<70x131xi8>) -> tensor<29x70xi32> {
  %zero = arith.constant 0 : i32
  %wt0 = tensor.empty() : tensor<131x70xi8>
  %wt = linalg.transpose ins(%w : tensor<70x131xi8>) outs(%wt0 : tensor<131x70xi8>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<29x70xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%acc0 : tensor<29x70xi32>) -> tensor<29x70xi32>
  %mm = linalg.matmul ins(%x, %wt : tensor<29x131xi8>, tensor<131x70xi8>) outs(%acc : tensor<29x70xi32>) -> tensor<29x70xi32>
  return %mm : tensor<29x70xi32>
}

func.func @u8s8_generic(%a: tensor<37x66xi8>, %b: tensor<66x45xi8>, %c: tensor<37x45xi32>) -> tensor<37x45xi32> {
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<37x66xi8>, tensor<66x45xi8>) outs(%c : tensor<37x45xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extui %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %p = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<37x45xi32>
  return %r : tensor<37x45xi32>
}

func.func @s8_dense_rows(%x: tensor<3x600xi8>, %w: tensor<600x70xi8>) -> tensor<3x70xi32> {
  %zero = arith.constant 0 : i32
  %acc0 = tensor.empty() : tensor<3x70xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%acc0 : tensor<3x70xi32>) -> tensor<3x70xi32>
  %mm = linalg.matmul ins(%x, %w : tensor<3x600xi8>, tensor<600x70xi8>) outs(%acc : tensor<3x70xi32>) -> tensor<3x70xi32>
  return %mm : tensor<3x70xi32>
}

func.func @u8s8_rows(%a: tensor<7x66xi8>, %b: tensor<66x150xi8>, %c: tensor<7x150xi32>) -> tensor<7x150xi32> {
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<7x66xi8>, tensor<66x150xi8>) outs(%c : tensor<7x150xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extui %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %p = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<7x150xi32>
  return %r : tensor<7x150xi32>
}

func.func @s8_linear_rows(%x: tensor<5x131xi8>, %w: tensor<70x131xi8>) -> tensor<5x70xi32> {
  %zero = arith.constant 0 : i32
  %wt0 = tensor.empty() : tensor<131x70xi8>
  %wt = linalg.transpose ins(%w : tensor<70x131xi8>) outs(%wt0 : tensor<131x70xi8>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<5x70xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%acc0 : tensor<5x70xi32>) -> tensor<5x70xi32>
  %mm = linalg.matmul ins(%x, %wt : tensor<5x131xi8>, tensor<131x70xi8>) outs(%acc : tensor<5x70xi32>) -> tensor<5x70xi32>
  return %mm : tensor<5x70xi32>
}

func.func @s8_matvec(%w: tensor<70x131xi8>, %x: tensor<131xi8>) -> tensor<70xi32> {
  %zero = arith.constant 0 : i32
  %acc0 = tensor.empty() : tensor<70xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%acc0 : tensor<70xi32>) -> tensor<70xi32>
  %y = linalg.matvec ins(%w, %x : tensor<70x131xi8>, tensor<131xi8>) outs(%acc : tensor<70xi32>) -> tensor<70xi32>
  return %y : tensor<70xi32>
}

func.func @u8s8_matvec(%w: tensor<70x131xi8>, %x: tensor<131xi8>, %c: tensor<70xi32>) -> tensor<70xi32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]}
      ins(%w, %x : tensor<70x131xi8>, tensor<131xi8>) outs(%c : tensor<70xi32>) {
  ^bb0(%wv: i8, %xv: i8, %acc: i32):
    %wi = arith.extsi %wv : i8 to i32
    %xi = arith.extui %xv : i8 to i32
    %p = arith.muli %wi, %xi : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<70xi32>
  return %r : tensor<70xi32>
}

func.func @u8u8(%a: tensor<5x8xi8>, %b: tensor<8x6xi8>, %c: tensor<5x6xi32>) -> tensor<5x6xi32> {
  %r = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%a, %b : tensor<5x8xi8>, tensor<8x6xi8>) outs(%c : tensor<5x6xi32>) -> tensor<5x6xi32>
  return %r : tensor<5x6xi32>
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

func.func private @printMemrefI32(memref<*xi32>)

func.func private @print2(%t: tensor<?x?xi32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func private @print1(%t: tensor<?xi32>) {
  %m = bufferization.to_buffer %t : tensor<?xi32> to memref<?xi32>
  %u = memref.cast %m : memref<?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %c29 = arith.constant 29 : index
  %c37 = arith.constant 37 : index
  %c45 = arith.constant 45 : index
  %c66 = arith.constant 66 : index
  %c70 = arith.constant 70 : index
  %c131 = arith.constant 131 : index

  %xd = call @bytes(%c29, %c131, %c7, %c13) : (index, index, index, index) -> tensor<?x?xi8>
  %wd = call @bytes(%c70, %c131, %c11, %c5) : (index, index, index, index) -> tensor<?x?xi8>
  %x = tensor.cast %xd : tensor<?x?xi8> to tensor<29x131xi8>
  %w = tensor.cast %wd : tensor<?x?xi8> to tensor<70x131xi8>
  %y = call @s8_linear(%x, %w) : (tensor<29x131xi8>, tensor<70x131xi8>) -> tensor<29x70xi32>
  %yd = tensor.cast %y : tensor<29x70xi32> to tensor<?x?xi32>
  call @print2(%yd) : (tensor<?x?xi32>) -> ()

  %ad = call @bytes(%c37, %c66, %c13, %c7) : (index, index, index, index) -> tensor<?x?xi8>
  %bd = call @bytes(%c66, %c45, %c5, %c11) : (index, index, index, index) -> tensor<?x?xi8>
  %a = tensor.cast %ad : tensor<?x?xi8> to tensor<37x66xi8>
  %b = tensor.cast %bd : tensor<?x?xi8> to tensor<66x45xi8>
  %one = arith.constant 1 : i32
  %ce = tensor.empty() : tensor<37x45xi32>
  %c = linalg.fill ins(%one : i32) outs(%ce : tensor<37x45xi32>) -> tensor<37x45xi32>
  %g = call @u8s8_generic(%a, %b, %c) : (tensor<37x66xi8>, tensor<66x45xi8>, tensor<37x45xi32>) -> tensor<37x45xi32>
  %gd = tensor.cast %g : tensor<37x45xi32> to tensor<?x?xi32>
  call @print2(%gd) : (tensor<?x?xi32>) -> ()

  %c3 = arith.constant 3 : index
  %c150 = arith.constant 150 : index
  %c600 = arith.constant 600 : index
  %sxd = call @bytes(%c3, %c600, %c7, %c13) : (index, index, index, index) -> tensor<?x?xi8>
  %swd = call @bytes(%c600, %c70, %c11, %c5) : (index, index, index, index) -> tensor<?x?xi8>
  %sx = tensor.cast %sxd : tensor<?x?xi8> to tensor<3x600xi8>
  %sw = tensor.cast %swd : tensor<?x?xi8> to tensor<600x70xi8>
  %sy = call @s8_dense_rows(%sx, %sw) : (tensor<3x600xi8>, tensor<600x70xi8>) -> tensor<3x70xi32>
  %syd = tensor.cast %sy : tensor<3x70xi32> to tensor<?x?xi32>
  call @print2(%syd) : (tensor<?x?xi32>) -> ()

  %rad = call @bytes(%c7, %c66, %c13, %c7) : (index, index, index, index) -> tensor<?x?xi8>
  %rbd = call @bytes(%c66, %c150, %c5, %c11) : (index, index, index, index) -> tensor<?x?xi8>
  %ra = tensor.cast %rad : tensor<?x?xi8> to tensor<7x66xi8>
  %rb = tensor.cast %rbd : tensor<?x?xi8> to tensor<66x150xi8>
  %rce = tensor.empty() : tensor<7x150xi32>
  %two = arith.constant 2 : i32
  %rc = linalg.fill ins(%two : i32) outs(%rce : tensor<7x150xi32>) -> tensor<7x150xi32>
  %rr = call @u8s8_rows(%ra, %rb, %rc) : (tensor<7x66xi8>, tensor<66x150xi8>, tensor<7x150xi32>) -> tensor<7x150xi32>
  %rrd = tensor.cast %rr : tensor<7x150xi32> to tensor<?x?xi32>
  call @print2(%rrd) : (tensor<?x?xi32>) -> ()

  %lxd = call @bytes(%c5, %c131, %c13, %c11) : (index, index, index, index) -> tensor<?x?xi8>
  %lx = tensor.cast %lxd : tensor<?x?xi8> to tensor<5x131xi8>
  %ly = call @s8_linear_rows(%lx, %w) : (tensor<5x131xi8>, tensor<70x131xi8>) -> tensor<5x70xi32>
  %lyd = tensor.cast %ly : tensor<5x70xi32> to tensor<?x?xi32>
  call @print2(%lyd) : (tensor<?x?xi32>) -> ()

  %uad = call @bytes(%c5, %c8, %c7, %c11) : (index, index, index, index) -> tensor<?x?xi8>
  %ubd = call @bytes(%c8, %c6, %c13, %c5) : (index, index, index, index) -> tensor<?x?xi8>
  %ua = tensor.cast %uad : tensor<?x?xi8> to tensor<5x8xi8>
  %ub = tensor.cast %ubd : tensor<?x?xi8> to tensor<8x6xi8>
  %zero = arith.constant 0 : i32
  %uce = tensor.empty() : tensor<5x6xi32>
  %uc = linalg.fill ins(%zero : i32) outs(%uce : tensor<5x6xi32>) -> tensor<5x6xi32>
  %u = call @u8u8(%ua, %ub, %uc) : (tensor<5x8xi8>, tensor<8x6xi8>, tensor<5x6xi32>) -> tensor<5x6xi32>
  %ud = tensor.cast %u : tensor<5x6xi32> to tensor<?x?xi32>
  call @print2(%ud) : (tensor<?x?xi32>) -> ()

  %c1 = arith.constant 1 : index
  %vd = call @bytes(%c1, %c131, %c5, %c7) : (index, index, index, index) -> tensor<?x?xi8>
  %vs = tensor.cast %vd : tensor<?x?xi8> to tensor<1x131xi8>
  %v = tensor.collapse_shape %vs [[0, 1]] : tensor<1x131xi8> into tensor<131xi8>
  %mv = call @s8_matvec(%w, %v) : (tensor<70x131xi8>, tensor<131xi8>) -> tensor<70xi32>
  %mvd = tensor.cast %mv : tensor<70xi32> to tensor<?xi32>
  call @print1(%mvd) : (tensor<?xi32>) -> ()
  %three = arith.constant 3 : i32
  %vce = tensor.empty() : tensor<70xi32>
  %vc = linalg.fill ins(%three : i32) outs(%vce : tensor<70xi32>) -> tensor<70xi32>
  %umv = call @u8s8_matvec(%w, %v, %vc) : (tensor<70x131xi8>, tensor<131xi8>, tensor<70xi32>) -> tensor<70xi32>
  %umvd = tensor.cast %umv : tensor<70xi32> to tensor<?xi32>
  call @print1(%umvd) : (tensor<?xi32>) -> ()
  return
}
