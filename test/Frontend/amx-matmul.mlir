// bf16 and int8 matmuls on AMX tiles (amx.py: TDPBF16PS, TDPBSSD,
// TDPBUSD), on a host that has them: torch-mlir's bf16 matmul into a
// zero-filled f32 accumulator, its bf16 linear layer (the weight through
// linalg.transpose, arith.truncf after: the kernel's bf16 output), a
// batch_matmul accumulating into a bias, a quantized s8 x s8 -> i32 matmul
// and a u8 x s8 generic; a token batch of 8 rows through a linear layer
// with a bias and relu, and a u8 x s8 generic of 16 rows against a
// weight stored N x K (both K whole tile steps: the product transposed,
// C^T = B^T A^T with the weights read where they lie, `_btdirect`; the
// u8 one as TDPBSUD), and a matmul whose K is whole tile steps (A read in
// place, `_adirect`). On tensors,
// bufferized with one-shot-bufferize's function boundaries (dynamic
// strides: the kernels read their leading dimensions at run time). Run
// with and without the pass under stock mlir-runner, and ahead of time
// through mlir-translate | llc linked with nothing of ours (each kernel
// asks Linux for the tile data itself), each compared exactly with the
// stock pipeline (small-integer bf16 inputs: exact in every f32 sum;
// bytes over their whole range).
// REQUIRES: host-amx-bf16, host-amx-int8, host-cc
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// Two threads: the parts of C in omp.parallel, each thread its own tiles.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=threads=2' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// Ahead of time: an executable of the lowered module and MLIR's runner
// utilities (printMemref) only.
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -filetype=obj -relocation-model=pic -o %t.o
// RUN: cc %t.o -o %t.exe %runner-libs-link -Wl,-rpath,%llvm-lib-dir
// RUN: %t.exe | %strip-address > %t.aot
// RUN: diff %t.reference %t.aot
//
// The kernels are what ran: broken ones (validation off) change the output.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// CHECK-LABEL: func.func @bf16_matmul(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sbgemm_70x45x100_nn_b0_ldrt_{{.*}}_x86_64_amxbf16(
// CHECK-LABEL: func.func @linear_bf16(
// CHECK-NOT:       arith.truncf
// CHECK:           llvm.call @qm_sbgemm_64x45x100_nt_b0_obf16_ldrt_{{.*}}_x86_64_amxbf16(
// CHECK-LABEL: func.func @bf16_bmm(
// CHECK:         @qm_sbgemm_40x33x70_nn_ldrt_{{.*}}_x86_64_amxbf16
// CHECK-LABEL: func.func @s8_matmul(
// CHECK:         llvm.call @qm_s8s8gemm_37x45x131_nn_b0_ldrt_{{.*}}_x86_64_amxint8(
// CHECK-LABEL: func.func @u8s8_generic(
// CHECK:         llvm.call @qm_u8s8gemm_33x20x200_nn_ldrt_{{.*}}_x86_64_amxint8(
// CHECK-LABEL: func.func @decode_linear_bias_relu(
// CHECK:         llvm.call @qm_sbgemm_8x70x64_nt_b0_bias_relu_ldrt_btdirect_{{.*}}_adirect_x86_64_amxbf16(
// CHECK-LABEL: func.func @u8s8_linear(
// CHECK:         llvm.call @qm_u8s8gemm_16x40x128_nt_ldrt_btdirect_{{.*}}_x86_64_amxint8(
// CHECK-LABEL: func.func @bf16_whole_steps(
// CHECK:         llvm.call @qm_sbgemm_50x45x64_nn_b0_ldrt_{{.*}}_adirect_x86_64_amxbf16(
// CHECK: llvm.inline_asm has_side_effects {{.*}}tdpbf16ps
// CHECK-SAME: ~{tmm0}

// OUT-COUNT-8: rank =

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @bf16_matmul(%a: tensor<70x100xbf16>, %b: tensor<100x45xbf16>) -> tensor<70x45xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<70x45xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<70x45xf32>) -> tensor<70x45xf32>
  %r = linalg.matmul ins(%a, %b : tensor<70x100xbf16>, tensor<100x45xbf16>) outs(%acc : tensor<70x45xf32>) -> tensor<70x45xf32>
  return %r : tensor<70x45xf32>
}

func.func @linear_bf16(%x: tensor<64x100xbf16>, %w: tensor<45x100xbf16>) -> tensor<64x45xbf16> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<100x45xbf16>
  %wt = linalg.transpose ins(%w : tensor<45x100xbf16>) outs(%wt0 : tensor<100x45xbf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<64x45xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x45xf32>) -> tensor<64x45xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<64x100xbf16>, tensor<100x45xbf16>) outs(%acc : tensor<64x45xf32>) -> tensor<64x45xf32>
  %o = tensor.empty() : tensor<64x45xbf16>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<64x45xf32>) outs(%o : tensor<64x45xbf16>) {
  ^bb0(%v: f32, %u: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x45xbf16>
  return %r : tensor<64x45xbf16>
}

func.func @bf16_bmm(%a: tensor<3x40x70xbf16>, %b: tensor<3x70x33xbf16>, %c: tensor<3x40x33xf32>) -> tensor<3x40x33xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x40x70xbf16>, tensor<3x70x33xbf16>) outs(%c : tensor<3x40x33xf32>) -> tensor<3x40x33xf32>
  return %r : tensor<3x40x33xf32>
}

func.func @s8_matmul(%a: tensor<37x131xi8>, %b: tensor<131x45xi8>) -> tensor<37x45xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<37x45xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<37x45xi32>) -> tensor<37x45xi32>
  %r = linalg.matmul ins(%a, %b : tensor<37x131xi8>, tensor<131x45xi8>) outs(%acc : tensor<37x45xi32>) -> tensor<37x45xi32>
  return %r : tensor<37x45xi32>
}

func.func @u8s8_generic(%a: tensor<33x200xi8>, %b: tensor<200x20xi8>, %c: tensor<33x20xi32>) -> tensor<33x20xi32> {
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<33x200xi8>, tensor<200x20xi8>) outs(%c : tensor<33x20xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extui %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %p = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<33x20xi32>
  return %r : tensor<33x20xi32>
}

func.func @decode_linear_bias_relu(%x: tensor<8x64xbf16>, %w: tensor<70x64xbf16>, %b: tensor<70xf32>) -> tensor<8x70xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<64x70xbf16>
  %wt = linalg.transpose ins(%w : tensor<70x64xbf16>) outs(%wt0 : tensor<64x70xbf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<8x70xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x70xf32>) -> tensor<8x70xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<8x64xbf16>, tensor<64x70xbf16>) outs(%acc : tensor<8x70xf32>) -> tensor<8x70xf32>
  %o = tensor.empty() : tensor<8x70xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<8x70xf32>, tensor<70xf32>) outs(%o : tensor<8x70xf32>) {
  ^bb0(%v: f32, %bias: f32, %u: f32):
    %s = arith.addf %v, %bias : f32
    %relu = arith.maximumf %s, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<8x70xf32>
  return %r : tensor<8x70xf32>
}

func.func @u8s8_linear(%a: tensor<16x128xi8>, %w: tensor<40x128xi8>, %c: tensor<16x40xi32>) -> tensor<16x40xi32> {
  %r = linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<16x128xi8>, tensor<40x128xi8>) outs(%c : tensor<16x40xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extui %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %p = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<16x40xi32>
  return %r : tensor<16x40xi32>
}

func.func @bf16_whole_steps(%a: tensor<50x64xbf16>, %b: tensor<64x45xbf16>) -> tensor<50x45xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<50x45xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<50x45xf32>) -> tensor<50x45xf32>
  %r = linalg.matmul ins(%a, %b : tensor<50x64xbf16>, tensor<64x45xbf16>) outs(%acc : tensor<50x45xf32>) -> tensor<50x45xf32>
  return %r : tensor<50x45xf32>
}

// A bf16 matrix of small integers ((i * x + j * y) mod 9 - 4).
func.func private @smallints2d(%rows: index, %cols: index, %x: index, %y: index) -> tensor<?x?xbf16> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty(%c1, %rows, %cols) : tensor<?x?x?xbf16>
  %t = call @smallints(%e, %c1, %x, %y) : (tensor<?x?x?xbf16>, index, index, index) -> tensor<?x?x?xbf16>
  %r = tensor.collapse_shape %t [[0, 1], [2]] : tensor<?x?x?xbf16> into tensor<?x?xbf16>
  return %r : tensor<?x?xbf16>
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

// (i * x + j * y + k * z) mod 9 - 4 as bf16 (a 2-D tensor takes k = 0).
func.func private @smallints(%t: tensor<?x?x?xbf16>, %x: index, %y: index, %z: index) -> tensor<?x?x?xbf16> {
  %r = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?xbf16>) {
  ^bb0(%o: bf16):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %kz = arith.muli %k, %z : index
    %s0 = arith.addi %ix, %jy : index
    %s = arith.addi %s0, %kz : index
    %c9 = arith.constant 9 : index
    %m = arith.remui %s, %c9 : index
    %mi = arith.index_cast %m : index to i64
    %f = arith.sitofp %mi : i64 to f32
    %c4 = arith.constant 4.0 : f32
    %v = arith.subf %f, %c4 : f32
    %b = arith.truncf %v : f32 to bf16
    linalg.yield %b : bf16
  } -> tensor<?x?x?xbf16>
  return %r : tensor<?x?x?xbf16>
}

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index

  %ea = tensor.empty() : tensor<1x70x100xbf16>
  %ead = tensor.cast %ea : tensor<1x70x100xbf16> to tensor<?x?x?xbf16>
  %a3 = call @smallints(%ead, %c7, %c5, %c1) : (tensor<?x?x?xbf16>, index, index, index) -> tensor<?x?x?xbf16>
  %a3s = tensor.cast %a3 : tensor<?x?x?xbf16> to tensor<1x70x100xbf16>
  %a = tensor.collapse_shape %a3s [[0, 1], [2]] : tensor<1x70x100xbf16> into tensor<70x100xbf16>
  %eb = tensor.empty() : tensor<1x100x45xbf16>
  %ebd = tensor.cast %eb : tensor<1x100x45xbf16> to tensor<?x?x?xbf16>
  %b3 = call @smallints(%ebd, %c3, %c11, %c1) : (tensor<?x?x?xbf16>, index, index, index) -> tensor<?x?x?xbf16>
  %b3s = tensor.cast %b3 : tensor<?x?x?xbf16> to tensor<1x100x45xbf16>
  %b = tensor.collapse_shape %b3s [[0, 1], [2]] : tensor<1x100x45xbf16> into tensor<100x45xbf16>
  %mm = call @bf16_matmul(%a, %b) : (tensor<70x100xbf16>, tensor<100x45xbf16>) -> tensor<70x45xf32>
  %mmm = bufferization.to_buffer %mm : tensor<70x45xf32> to memref<70x45xf32>
  %mmu = memref.cast %mmm : memref<70x45xf32> to memref<*xf32>
  call @printMemrefF32(%mmu) : (memref<*xf32>) -> ()

  %ex = tensor.empty() : tensor<1x64x100xbf16>
  %exd = tensor.cast %ex : tensor<1x64x100xbf16> to tensor<?x?x?xbf16>
  %x3 = call @smallints(%exd, %c11, %c7, %c1) : (tensor<?x?x?xbf16>, index, index, index) -> tensor<?x?x?xbf16>
  %x3s = tensor.cast %x3 : tensor<?x?x?xbf16> to tensor<1x64x100xbf16>
  %x = tensor.collapse_shape %x3s [[0, 1], [2]] : tensor<1x64x100xbf16> into tensor<64x100xbf16>
  %ew = tensor.empty() : tensor<1x45x100xbf16>
  %ewd = tensor.cast %ew : tensor<1x45x100xbf16> to tensor<?x?x?xbf16>
  %w3 = call @smallints(%ewd, %c5, %c13, %c1) : (tensor<?x?x?xbf16>, index, index, index) -> tensor<?x?x?xbf16>
  %w3s = tensor.cast %w3 : tensor<?x?x?xbf16> to tensor<1x45x100xbf16>
  %w = tensor.collapse_shape %w3s [[0, 1], [2]] : tensor<1x45x100xbf16> into tensor<45x100xbf16>
  %lin = call @linear_bf16(%x, %w) : (tensor<64x100xbf16>, tensor<45x100xbf16>) -> tensor<64x45xbf16>
  %line = tensor.empty() : tensor<64x45xf32>
  %linf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%lin : tensor<64x45xbf16>) outs(%line : tensor<64x45xf32>) {
  ^bb0(%v: bf16, %u: f32):
    %t = arith.extf %v : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<64x45xf32>
  %linm = bufferization.to_buffer %linf : tensor<64x45xf32> to memref<64x45xf32>
  %linu = memref.cast %linm : memref<64x45xf32> to memref<*xf32>
  call @printMemrefF32(%linu) : (memref<*xf32>) -> ()

  %eba = tensor.empty() : tensor<3x40x70xbf16>
  %ebad = tensor.cast %eba : tensor<3x40x70xbf16> to tensor<?x?x?xbf16>
  %ba = call @smallints(%ebad, %c5, %c7, %c13) : (tensor<?x?x?xbf16>, index, index, index) -> tensor<?x?x?xbf16>
  %bas = tensor.cast %ba : tensor<?x?x?xbf16> to tensor<3x40x70xbf16>
  %ebb = tensor.empty() : tensor<3x70x33xbf16>
  %ebbd = tensor.cast %ebb : tensor<3x70x33xbf16> to tensor<?x?x?xbf16>
  %bb = call @smallints(%ebbd, %c11, %c3, %c7) : (tensor<?x?x?xbf16>, index, index, index) -> tensor<?x?x?xbf16>
  %bbs = tensor.cast %bb : tensor<?x?x?xbf16> to tensor<3x70x33xbf16>
  %bias = arith.constant 0.5 : f32
  %ebc = tensor.empty() : tensor<3x40x33xf32>
  %bc = linalg.fill ins(%bias : f32) outs(%ebc : tensor<3x40x33xf32>) -> tensor<3x40x33xf32>
  %bm = call @bf16_bmm(%bas, %bbs, %bc) : (tensor<3x40x70xbf16>, tensor<3x70x33xbf16>, tensor<3x40x33xf32>) -> tensor<3x40x33xf32>
  %bmm = bufferization.to_buffer %bm : tensor<3x40x33xf32> to memref<3x40x33xf32>
  %bmu = memref.cast %bmm : memref<3x40x33xf32> to memref<*xf32>
  call @printMemrefF32(%bmu) : (memref<*xf32>) -> ()

  %c20 = arith.constant 20 : index
  %c33 = arith.constant 33 : index
  %c37 = arith.constant 37 : index
  %c45 = arith.constant 45 : index
  %c131 = arith.constant 131 : index
  %c200 = arith.constant 200 : index
  %sad = call @bytes(%c37, %c131, %c7, %c13) : (index, index, index, index) -> tensor<?x?xi8>
  %sbd = call @bytes(%c131, %c45, %c11, %c5) : (index, index, index, index) -> tensor<?x?xi8>
  %sa = tensor.cast %sad : tensor<?x?xi8> to tensor<37x131xi8>
  %sb = tensor.cast %sbd : tensor<?x?xi8> to tensor<131x45xi8>
  %s = call @s8_matmul(%sa, %sb) : (tensor<37x131xi8>, tensor<131x45xi8>) -> tensor<37x45xi32>
  %sm = bufferization.to_buffer %s : tensor<37x45xi32> to memref<37x45xi32>
  %su = memref.cast %sm : memref<37x45xi32> to memref<*xi32>
  call @printMemrefI32(%su) : (memref<*xi32>) -> ()

  %uad = call @bytes(%c33, %c200, %c13, %c7) : (index, index, index, index) -> tensor<?x?xi8>
  %ubd = call @bytes(%c200, %c20, %c5, %c11) : (index, index, index, index) -> tensor<?x?xi8>
  %ua = tensor.cast %uad : tensor<?x?xi8> to tensor<33x200xi8>
  %ub = tensor.cast %ubd : tensor<?x?xi8> to tensor<200x20xi8>
  %one = arith.constant 1 : i32
  %uce = tensor.empty() : tensor<33x20xi32>
  %uc = linalg.fill ins(%one : i32) outs(%uce : tensor<33x20xi32>) -> tensor<33x20xi32>
  %u = call @u8s8_generic(%ua, %ub, %uc) : (tensor<33x200xi8>, tensor<200x20xi8>, tensor<33x20xi32>) -> tensor<33x20xi32>
  %um = bufferization.to_buffer %u : tensor<33x20xi32> to memref<33x20xi32>
  %uu = memref.cast %um : memref<33x20xi32> to memref<*xi32>
  call @printMemrefI32(%uu) : (memref<*xi32>) -> ()

  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c40 = arith.constant 40 : index
  %c50 = arith.constant 50 : index
  %c64 = arith.constant 64 : index
  %c70 = arith.constant 70 : index
  %c128 = arith.constant 128 : index
  %dxd = call @smallints2d(%c8, %c64, %c7, %c5) : (index, index, index, index) -> tensor<?x?xbf16>
  %dx = tensor.cast %dxd : tensor<?x?xbf16> to tensor<8x64xbf16>
  %dwd = call @smallints2d(%c70, %c64, %c11, %c3) : (index, index, index, index) -> tensor<?x?xbf16>
  %dw = tensor.cast %dwd : tensor<?x?xbf16> to tensor<70x64xbf16>
  %db0 = tensor.empty() : tensor<70xf32>
  %db = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%db0 : tensor<70xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %thirty = arith.constant 30 : i64
    %v = arith.subi %ii, %thirty : i64
    %fv = arith.sitofp %v : i64 to f32
    linalg.yield %fv : f32
  } -> tensor<70xf32>
  %dl = call @decode_linear_bias_relu(%dx, %dw, %db) : (tensor<8x64xbf16>, tensor<70x64xbf16>, tensor<70xf32>) -> tensor<8x70xf32>
  %dlm = bufferization.to_buffer %dl : tensor<8x70xf32> to memref<8x70xf32>
  %dlu = memref.cast %dlm : memref<8x70xf32> to memref<*xf32>
  call @printMemrefF32(%dlu) : (memref<*xf32>) -> ()

  %lad = call @bytes(%c16, %c128, %c13, %c7) : (index, index, index, index) -> tensor<?x?xi8>
  %lwd = call @bytes(%c40, %c128, %c5, %c11) : (index, index, index, index) -> tensor<?x?xi8>
  %la = tensor.cast %lad : tensor<?x?xi8> to tensor<16x128xi8>
  %lw = tensor.cast %lwd : tensor<?x?xi8> to tensor<40x128xi8>
  %lce = tensor.empty() : tensor<16x40xi32>
  %lc = linalg.fill ins(%one : i32) outs(%lce : tensor<16x40xi32>) -> tensor<16x40xi32>
  %l = call @u8s8_linear(%la, %lw, %lc) : (tensor<16x128xi8>, tensor<40x128xi8>, tensor<16x40xi32>) -> tensor<16x40xi32>
  %lm = bufferization.to_buffer %l : tensor<16x40xi32> to memref<16x40xi32>
  %lu = memref.cast %lm : memref<16x40xi32> to memref<*xi32>
  call @printMemrefI32(%lu) : (memref<*xi32>) -> ()

  %wad = call @smallints2d(%c50, %c64, %c5, %c13) : (index, index, index, index) -> tensor<?x?xbf16>
  %wa = tensor.cast %wad : tensor<?x?xbf16> to tensor<50x64xbf16>
  %wbd = call @smallints2d(%c64, %c45, %c3, %c7) : (index, index, index, index) -> tensor<?x?xbf16>
  %wb = tensor.cast %wbd : tensor<?x?xbf16> to tensor<64x45xbf16>
  %ws = call @bf16_whole_steps(%wa, %wb) : (tensor<50x64xbf16>, tensor<64x45xbf16>) -> tensor<50x45xf32>
  %wsm = bufferization.to_buffer %ws : tensor<50x45xf32> to memref<50x45xf32>
  %wsu = memref.cast %wsm : memref<50x45xf32> to memref<*xf32>
  call @printMemrefF32(%wsu) : (memref<*xf32>) -> ()
  return
}
