// Which elementwise consumers of a zero-filled product fuse into the
// kernel's store of C (bias along the columns, a residual, relu with
// arith.maximumf's semantics and its bound, relu6), and which stay linalg
// ops; each function run with and
// without the pass on inputs that give negative sums, NaN-free, compared
// exactly.
// REQUIRES: host-avx2, host-fma
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: %qimeng-opt %s '--qimeng-tensorop=fuse-epilogues=false' | FileCheck %s --check-prefix=OFF
// RUN: %mlir-opt %s %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: %mlir-opt %t.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.out
// RUN: diff %t.reference %t.out
// RUN: FileCheck %s --check-prefix=OUT < %t.reference

// OFF: llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// OFF-NOT: _b0_relu
// OFF-NOT: _b0_bias

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

// relu as torch-mlir writes it: cmpf ugt + select; no bias. The output's
// allocation comes after the matmul and moves before it.
// CHECK-LABEL: func.func @relu_select(
// CHECK:         memref.alloc() : memref<6x20xf32>
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_relu_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @relu_select(%a: memref<6x9xf32>, %b: memref<9x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %gt = arith.cmpf ugt, %v, %zero : f32
    %r = arith.select %gt, %v, %zero : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// bias + c (operands the other way round) and maximumf(0, x).
// CHECK-LABEL: func.func @bias_relu_commuted(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_relu_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @bias_relu_commuted(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  %o = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<20xf32>, memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%bv: f32, %v: f32, %out: f32):
    %s = arith.addf %bv, %v : f32
    %r = arith.maximumf %zero, %s : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// In place, as one-shot-bufferize leaves torch's linear when the fill and
// the bias add share one tensor.empty: the generic reads the product and
// writes it back. The kernel stores the epilogue's result into C itself;
// C's users after the generic (the return) are the output's.
// CHECK-LABEL: func.func @bias_relu_in_place(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_relu_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @bias_relu_in_place(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x20xf32>, memref<20xf32>) outs(%c : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return %c : memref<6x20xf32>
}

// In place, but the product is read before the generic rewrites it: the
// kernel without an epilogue, the generic stays.
// CHECK-LABEL: func.func @in_place_read_before(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         memref.copy
// CHECK:         linalg.generic
func.func @in_place_read_before(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %keep: memref<6x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  memref.copy %c, %keep : memref<6x20xf32> to memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x20xf32>) outs(%c : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %c : memref<6x20xf32>
}

// A bias broadcast into C before the matmul (linalg.broadcast, and a
// generic that copies it) is the overwrite mode plus the bias epilogue; a
// relu after it fuses as well.
// CHECK-LABEL: func.func @bias_init(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_lda9_ldb20_ldc20_
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_relu_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @bias_init(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>, %o1: memref<6x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c1 = memref.alloc() : memref<6x20xf32>
  linalg.broadcast ins(%bias : memref<20xf32>) outs(%c1 : memref<6x20xf32>) dimensions = [0]
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c1 : memref<6x20xf32>)
  memref.copy %c1, %o1 : memref<6x20xf32> to memref<6x20xf32>
  %c2 = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<20xf32>) outs(%c2 : memref<6x20xf32>) {
  ^bb0(%bv: f32, %out: f32):
    linalg.yield %bv : f32
  }
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c2 : memref<6x20xf32>)
  %o2 = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2 : memref<6x20xf32>) outs(%o2 : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %o2 : memref<6x20xf32>
}

// A residual connection: relu((c + residual) + bias). The residual is
// copied into the output, the kernel accumulates onto it (no "_b0") and
// adds the bias and applies relu as it stores; the fill and the generic go.
// CHECK-LABEL: func.func @residual_bias_relu(
// CHECK-SAME:      %[[RES:[^:]+]]: memref<6x20xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         linalg.copy ins(%[[RES]] : memref<6x20xf32>) outs(%[[FUSED:.*]] : memref<6x20xf32>)
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_bias_relu_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[FUSED]]
func.func @residual_bias_relu(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>, %res: memref<6x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias, %res : memref<6x20xf32>, memref<20xf32>, memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %rv: f32, %out: f32):
    %s = arith.addf %v, %rv : f32
    %t = arith.addf %s, %bv : f32
    %r = arith.maximumf %t, %zero : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// relu6 as min then max (max(min(x, 6), 0) equals min(max(x, 0), 6),
// NaN included): relu with its bound, by its binary32 bits.
// CHECK-LABEL: func.func @bias_relu6(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_relu_max40c00000_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @bias_relu6(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x20xf32>, memref<20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %m = arith.minimumf %s, %six : f32
    %r = arith.maximumf %m, %zero : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// A bias of rank 2 whose rows are one (TOSA's tosa.add of a 1xN bias: the
// map reads row 0) is the same bias along the columns; a 6x1 bias read
// along the rows is not, and stays with its relu.
// CHECK-LABEL: func.func @bias_1xn(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_relu_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @row_bias_6x1(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         linalg.generic
func.func @bias_1xn(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<1x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (0, d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x20xf32>, memref<1x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}
func.func @row_bias_6x1(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<6x1xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0, 0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x20xf32>, memref<6x1xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// hardtanh's clamp (torch's F.hardtanh, TOSA's clamp with a negative
// minimum): relu with the floor -2 and the bound 3, by their bits.
// CHECK-LABEL: func.func @bias_hardtanh(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_relu_minc0000000_max40400000_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @bias_hardtanh(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %lo = arith.constant -2.0 : f32
  %hi = arith.constant 3.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x20xf32>, memref<20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %f = arith.maximumf %s, %lo : f32
    %r = arith.minimumf %f, %hi : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// A floor above 0 as cmpf ugt + select (NaN kept, as maximumf keeps it).
// CHECK-LABEL: func.func @floor_select(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_relu_min3fc00000_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @floor_select(%a: memref<6x9xf32>, %b: memref<9x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %lo = arith.constant 1.5 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %gt = arith.cmpf ugt, %v, %lo : f32
    %r = arith.select %gt, %v, %lo : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// Clamps the kernel's relu is not: a floor of -0 (maximumf keeps -0
// there, relu makes it +0), a bound at or below the floor. maxnumf and
// minnumf are a floor that takes a NaN (`_nf`) and its bound.
// CHECK-LABEL: func.func @floor_negative_zero(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @floor_takes_nan(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_relu_nf_minbf800000_max40000000_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @bound_below_floor(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         linalg.generic
func.func @floor_negative_zero(%a: memref<6x9xf32>, %b: memref<9x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %lo = arith.constant -0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %lo : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}
func.func @floor_takes_nan(%a: memref<6x9xf32>, %b: memref<9x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %lo = arith.constant -1.0 : f32
  %hi = arith.constant 2.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %f = arith.maxnumf %v, %lo : f32
    %r = arith.minnumf %f, %hi : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}
func.func @bound_below_floor(%a: memref<6x9xf32>, %b: memref<9x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %lo = arith.constant 2.0 : f32
  %hi = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %f = arith.maximumf %v, %lo : f32
    %r = arith.minimumf %f, %hi : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// torch-mlir's aten.clamp (hardtanh, relu6): cmpf ult + select to the
// floor, then cmpf ugt + select to the bound, so a NaN becomes the floor
// (`_nf`); the bias holds a NaN in column 3. After a floor that keeps the
// NaN, the select bound (which would turn it into the bound) stays.
// CHECK-LABEL: func.func @torch_clamp(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_relu_nf_minc0200000_max40c00000_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @select_bound_keeps_nan(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         linalg.generic
func.func @torch_clamp(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %lo = arith.constant -2.5 : f32
  %hi = arith.constant 6.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x20xf32>, memref<20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %lt = arith.cmpf ult, %s, %lo : f32
    %f = arith.select %lt, %lo, %s : f32
    %gt = arith.cmpf ugt, %f, %hi : f32
    %r = arith.select %gt, %hi, %f : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}
func.func @select_bound_keeps_nan(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %hi = arith.constant 6.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x20xf32>, memref<20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %f = arith.maximumf %s, %zero : f32
    %gt = arith.cmpf ugt, %f, %hi : f32
    %r = arith.select %gt, %hi, %f : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// A bound without relu (a clamp from above only) is not an epilogue yet.
// CHECK-LABEL: func.func @bound_only(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         linalg.generic
func.func @bound_only(%a: memref<6x9xf32>, %b: memref<9x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %m = arith.minimumf %v, %six : f32
    linalg.yield %m : f32
  }
  return %o : memref<6x20xf32>
}

// The residual written between the product and the consumer: the copy
// before the kernel would read the old value, so nothing fuses.
// CHECK-LABEL: func.func @residual_written_between(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         memref.store
// CHECK:         linalg.generic
func.func @residual_written_between(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %res: memref<6x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %seven = arith.constant 7.0 : f32
  %c0 = arith.constant 0 : index
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  memref.store %seven, %res[%c0, %c0] : memref<6x20xf32>
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%res, %c : memref<6x20xf32>, memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%rv: f32, %v: f32, %out: f32):
    %s = arith.addf %rv, %v : f32
    linalg.yield %s : f32
  }
  return %o : memref<6x20xf32>
}

// Left as linalg ops, the kernel without an epilogue:
// leaky relu with a negative slope (x > 0 ? x : -x/4 is neither the max
// nor the min of x and -x/4, which the kernels compute), a bias along
// the rows, and a product that another op reads too.
// CHECK-LABEL: func.func @not_fused(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         linalg.generic
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         linalg.generic
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_lda9_ldb20_ldc20_
// CHECK:         linalg.generic
// CHECK:         memref.copy
func.func @not_fused(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %rb: memref<6xf32>,
                     %o1: memref<6x20xf32>, %o2: memref<6x20xf32>, %o3: memref<6x20xf32>, %keep: memref<6x20xf32>) {
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant -0.25 : f32
  %c1 = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c1 : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c1 : memref<6x20xf32>)
  %t1 = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c1 : memref<6x20xf32>) outs(%t1 : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %gt = arith.cmpf ugt, %v, %zero : f32
    %m = arith.mulf %v, %slope : f32
    %r = arith.select %gt, %v, %m : f32
    linalg.yield %r : f32
  }
  memref.copy %t1, %o1 : memref<6x20xf32> to memref<6x20xf32>
  %c2 = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c2 : memref<6x20xf32>)
  %t2 = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2, %rb : memref<6x20xf32>, memref<6xf32>) outs(%t2 : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %r = arith.addf %v, %bv : f32
    linalg.yield %r : f32
  }
  memref.copy %t2, %o2 : memref<6x20xf32> to memref<6x20xf32>
  %c3 = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c3 : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c3 : memref<6x20xf32>)
  %t3 = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c3 : memref<6x20xf32>) outs(%t3 : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %c3, %keep : memref<6x20xf32> to memref<6x20xf32>
  memref.copy %t3, %o3 : memref<6x20xf32> to memref<6x20xf32>
  return
}

// A chain of consumers, as torch-mlir writes a linear layer's bias add and
// then its activation when linalg's elementwise fusion has not run: each
// generic reads the previous one's output. The bias add, relu (select)
// and its bound (min alone, in place after relu) all fuse; the buffers of
// the product and of the inner generics go.
// CHECK-LABEL: func.func @chain_bias_relu_bound(
// CHECK:         memref.alloc()
// CHECK-NOT:     memref.alloc()
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_relu_max40c00000_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @chain_bias_relu_bound(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  %t = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x20xf32>, memref<20xf32>) outs(%t : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  }
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %gt = arith.cmpf ugt, %v, %zero : f32
    %r = arith.select %gt, %v, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%o : memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %m = arith.minimumf %v, %six : f32
    linalg.yield %m : f32
  }
  return %o : memref<6x20xf32>
}

// A residual added in place, then relu: the residual is copied into the
// output and the kernel accumulates onto it.
// CHECK-LABEL: func.func @chain_residual_relu(
// CHECK-SAME:      %[[RES:[^:]+]]: memref<6x20xf32>
// CHECK:         linalg.copy ins(%[[RES]] : memref<6x20xf32>) outs(%[[DST:.*]] : memref<6x20xf32>)
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_relu_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[DST]]
func.func @chain_residual_relu(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %res: memref<6x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c : memref<6x20xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %res : memref<6x20xf32>, memref<6x20xf32>) outs(%c : memref<6x20xf32>) {
  ^bb0(%v: f32, %rv: f32, %out: f32):
    %s = arith.addf %v, %rv : f32
    linalg.yield %s : f32
  }
  %o = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x20xf32>) outs(%o : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %o : memref<6x20xf32>
}

// Chains the kernel's order cannot compute stop where it breaks: a bias
// added after relu stays (relu(c) + bias), and a consumer of an
// intermediate that something else reads too (the bias add's output,
// copied out) stays with the rest of the chain.
// CHECK-LABEL: func.func @chain_stops(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_relu_lda9_ldb20_ldc20_
// CHECK:         linalg.generic
// CHECK:         arith.addf
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_lda9_ldb20_ldc20_
// CHECK:         memref.copy
// CHECK:         linalg.generic
// CHECK:         arith.maximumf
func.func @chain_stops(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>,
                       %o1: memref<6x20xf32>, %o2: memref<6x20xf32>, %keep: memref<6x20xf32>) {
  %zero = arith.constant 0.0 : f32
  %c1 = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c1 : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c1 : memref<6x20xf32>)
  %t1 = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c1 : memref<6x20xf32>) outs(%t1 : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t1, %bias : memref<6x20xf32>, memref<20xf32>) outs(%o1 : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  }
  %c2 = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x9xf32>, memref<9x20xf32>) outs(%c2 : memref<6x20xf32>)
  %t2 = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2, %bias : memref<6x20xf32>, memref<20xf32>) outs(%t2 : memref<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  }
  memref.copy %t2, %keep : memref<6x20xf32> to memref<6x20xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t2 : memref<6x20xf32>) outs(%o2 : memref<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// Consumers writing the two halves of a wider buffer (a concatenation
// written in place) fuse: each kernel writes its slice, rows 20 apart.
// CHECK-LABEL: func.func @consumers_into_slices(
// CHECK:         llvm.call @qm_sgemm_6x10x9_nn_b0_relu_lda9_ldb20_ldc20_
// CHECK:         llvm.call @qm_sgemm_6x10x9_nn_b0_bias_lda9_ldb20_ldc20_
// CHECK-NOT:     linalg.generic
// CHECK:         return
// The product reads the slice its consumer writes (its A is the buffer's
// first columns): the consumer stays.
// CHECK-LABEL: func.func @slice_read_by_product(
// CHECK:         llvm.call @qm_sgemm_6x10x9_nn_b0_lda20_ldb20_ldc10_
// CHECK:         linalg.generic
func.func @consumers_into_slices(%a: memref<6x9xf32>, %b: memref<9x20xf32>, %bias: memref<20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %bl = memref.subview %b[0, 0] [9, 10] [1, 1] : memref<9x20xf32> to memref<9x10xf32, strided<[20, 1]>>
  %br = memref.subview %b[0, 10] [9, 10] [1, 1] : memref<9x20xf32> to memref<9x10xf32, strided<[20, 1], offset: 10>>
  %c1 = memref.alloc() : memref<6x10xf32>
  linalg.fill ins(%zero : f32) outs(%c1 : memref<6x10xf32>)
  linalg.matmul ins(%a, %bl : memref<6x9xf32>, memref<9x10xf32, strided<[20, 1]>>) outs(%c1 : memref<6x10xf32>)
  %cat = memref.alloc() : memref<6x20xf32>
  %left = memref.subview %cat[0, 0] [6, 10] [1, 1] : memref<6x20xf32> to memref<6x10xf32, strided<[20, 1]>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c1 : memref<6x10xf32>) outs(%left : memref<6x10xf32, strided<[20, 1]>>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  %c2 = memref.alloc() : memref<6x10xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<6x10xf32>)
  linalg.matmul ins(%a, %br : memref<6x9xf32>, memref<9x10xf32, strided<[20, 1], offset: 10>>) outs(%c2 : memref<6x10xf32>)
  %right = memref.subview %cat[0, 10] [6, 10] [1, 1] : memref<6x20xf32> to memref<6x10xf32, strided<[20, 1], offset: 10>>
  %bb = memref.subview %bias[10] [10] [1] : memref<20xf32> to memref<10xf32, strided<[1], offset: 10>>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2, %bb : memref<6x10xf32>, memref<10xf32, strided<[1], offset: 10>>) outs(%right : memref<6x10xf32, strided<[20, 1], offset: 10>>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  }
  return %cat : memref<6x20xf32>
}
func.func @slice_read_by_product(%a: memref<6x9xf32>, %b: memref<9x20xf32>) -> memref<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %cat = memref.alloc() : memref<6x20xf32>
  linalg.fill ins(%zero : f32) outs(%cat : memref<6x20xf32>)
  %first = memref.subview %cat[0, 0] [6, 9] [1, 1] : memref<6x20xf32> to memref<6x9xf32, strided<[20, 1]>>
  memref.copy %a, %first : memref<6x9xf32> to memref<6x9xf32, strided<[20, 1]>>
  %bl = memref.subview %b[0, 0] [9, 10] [1, 1] : memref<9x20xf32> to memref<9x10xf32, strided<[20, 1]>>
  %c = memref.alloc() : memref<6x10xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x10xf32>)
  linalg.matmul ins(%first, %bl : memref<6x9xf32, strided<[20, 1]>>, memref<9x10xf32, strided<[20, 1]>>) outs(%c : memref<6x10xf32>)
  %left = memref.subview %cat[0, 0] [6, 10] [1, 1] : memref<6x20xf32> to memref<6x10xf32, strided<[20, 1]>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<6x10xf32>) outs(%left : memref<6x10xf32, strided<[20, 1]>>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %cat : memref<6x20xf32>
}

// (i * x + j * y) mod 7 - 3 as f32: small integers, both signs.
func.func private @fill(%m: memref<?x?xf32>, %x: index, %y: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c3 = arith.constant 3 : i64
  %rows = memref.dim %m, %c0 : memref<?x?xf32>
  %cols = memref.dim %m, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %ix = arith.muli %i, %x : index
      %jy = arith.muli %j, %y : index
      %s = arith.addi %ix, %jy : index
      %r = arith.remui %s, %c7 : index
      %ri = arith.index_cast %r : index to i64
      %v = arith.subi %ri, %c3 : i64
      %f = arith.sitofp %v : i64 to f32
      memref.store %f, %m[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%m: memref<6x20xf32>) {
  %u = memref.cast %m : memref<6x20xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// OUT-COUNT-31: rank = 2 offset = 0 sizes = [6, 20]

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %a = memref.alloc() : memref<6x9xf32>
  %b = memref.alloc() : memref<9x20xf32>
  %bias2 = memref.alloc() : memref<1x20xf32>
  %rb2 = memref.alloc() : memref<6x1xf32>
  %ad = memref.cast %a : memref<6x9xf32> to memref<?x?xf32>
  %bd = memref.cast %b : memref<9x20xf32> to memref<?x?xf32>
  %biasd = memref.cast %bias2 : memref<1x20xf32> to memref<?x?xf32>
  %rbd = memref.cast %rb2 : memref<6x1xf32> to memref<?x?xf32>
  call @fill(%ad, %c3, %c5) : (memref<?x?xf32>, index, index) -> ()
  call @fill(%bd, %c2, %c3) : (memref<?x?xf32>, index, index) -> ()
  call @fill(%biasd, %c1, %c2) : (memref<?x?xf32>, index, index) -> ()
  call @fill(%rbd, %c1, %c1) : (memref<?x?xf32>, index, index) -> ()
  %bias = memref.collapse_shape %bias2 [[0, 1]] : memref<1x20xf32> into memref<20xf32>
  %rb = memref.collapse_shape %rb2 [[0, 1]] : memref<6x1xf32> into memref<6xf32>
  %r1 = call @relu_select(%a, %b) : (memref<6x9xf32>, memref<9x20xf32>) -> memref<6x20xf32>
  call @print(%r1) : (memref<6x20xf32>) -> ()
  %r2 = call @bias_relu_commuted(%a, %b, %bias) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>) -> memref<6x20xf32>
  call @print(%r2) : (memref<6x20xf32>) -> ()
  %o1 = memref.alloc() : memref<6x20xf32>
  %o2 = memref.alloc() : memref<6x20xf32>
  %o3 = memref.alloc() : memref<6x20xf32>
  %keep = memref.alloc() : memref<6x20xf32>
  call @not_fused(%a, %b, %rb, %o1, %o2, %o3, %keep) : (memref<6x9xf32>, memref<9x20xf32>, memref<6xf32>, memref<6x20xf32>, memref<6x20xf32>, memref<6x20xf32>, memref<6x20xf32>) -> ()
  call @print(%o1) : (memref<6x20xf32>) -> ()
  call @print(%o2) : (memref<6x20xf32>) -> ()
  call @print(%o3) : (memref<6x20xf32>) -> ()
  call @print(%keep) : (memref<6x20xf32>) -> ()
  %i1 = memref.alloc() : memref<6x20xf32>
  %i2 = call @bias_init(%a, %b, %bias, %i1) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>, memref<6x20xf32>) -> memref<6x20xf32>
  call @print(%i1) : (memref<6x20xf32>) -> ()
  call @print(%i2) : (memref<6x20xf32>) -> ()
  %res = memref.alloc() : memref<6x20xf32>
  %resd = memref.cast %res : memref<6x20xf32> to memref<?x?xf32>
  call @fill(%resd, %c5, %c1) : (memref<?x?xf32>, index, index) -> ()
  %r3 = call @residual_bias_relu(%a, %b, %bias, %res) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>, memref<6x20xf32>) -> memref<6x20xf32>
  call @print(%r3) : (memref<6x20xf32>) -> ()
  %r4 = call @residual_written_between(%a, %b, %res) : (memref<6x9xf32>, memref<9x20xf32>, memref<6x20xf32>) -> memref<6x20xf32>
  call @print(%r4) : (memref<6x20xf32>) -> ()
  %r5 = call @bias_relu6(%a, %b, %bias) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>) -> memref<6x20xf32>
  call @print(%r5) : (memref<6x20xf32>) -> ()
  %r6 = call @bound_only(%a, %b) : (memref<6x9xf32>, memref<9x20xf32>) -> memref<6x20xf32>
  call @print(%r6) : (memref<6x20xf32>) -> ()
  %x1 = call @bias_1xn(%a, %b, %bias2) : (memref<6x9xf32>, memref<9x20xf32>, memref<1x20xf32>) -> memref<6x20xf32>
  call @print(%x1) : (memref<6x20xf32>) -> ()
  %x2 = call @row_bias_6x1(%a, %b, %rb2) : (memref<6x9xf32>, memref<9x20xf32>, memref<6x1xf32>) -> memref<6x20xf32>
  call @print(%x2) : (memref<6x20xf32>) -> ()
  %r7 = call @bias_relu_in_place(%a, %b, %bias) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>) -> memref<6x20xf32>
  call @print(%r7) : (memref<6x20xf32>) -> ()
  %kept = memref.alloc() : memref<6x20xf32>
  %r8 = call @in_place_read_before(%a, %b, %kept) : (memref<6x9xf32>, memref<9x20xf32>, memref<6x20xf32>) -> memref<6x20xf32>
  call @print(%kept) : (memref<6x20xf32>) -> ()
  call @print(%r8) : (memref<6x20xf32>) -> ()
  %r9 = call @chain_bias_relu_bound(%a, %b, %bias) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>) -> memref<6x20xf32>
  call @print(%r9) : (memref<6x20xf32>) -> ()
  %r10 = call @chain_residual_relu(%a, %b, %res) : (memref<6x9xf32>, memref<9x20xf32>, memref<6x20xf32>) -> memref<6x20xf32>
  call @print(%r10) : (memref<6x20xf32>) -> ()
  %s1 = memref.alloc() : memref<6x20xf32>
  %s2 = memref.alloc() : memref<6x20xf32>
  %s3 = memref.alloc() : memref<6x20xf32>
  call @chain_stops(%a, %b, %bias, %s1, %s2, %s3) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>, memref<6x20xf32>, memref<6x20xf32>, memref<6x20xf32>) -> ()
  call @print(%s1) : (memref<6x20xf32>) -> ()
  call @print(%s2) : (memref<6x20xf32>) -> ()
  call @print(%s3) : (memref<6x20xf32>) -> ()
  %t1 = call @consumers_into_slices(%a, %b, %bias) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>) -> memref<6x20xf32>
  call @print(%t1) : (memref<6x20xf32>) -> ()
  %t2 = call @slice_read_by_product(%a, %b) : (memref<6x9xf32>, memref<9x20xf32>) -> memref<6x20xf32>
  call @print(%t2) : (memref<6x20xf32>) -> ()
  %h1 = call @bias_hardtanh(%a, %b, %bias) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>) -> memref<6x20xf32>
  call @print(%h1) : (memref<6x20xf32>) -> ()
  %h2 = call @floor_select(%a, %b) : (memref<6x9xf32>, memref<9x20xf32>) -> memref<6x20xf32>
  call @print(%h2) : (memref<6x20xf32>) -> ()
  %h3 = call @floor_negative_zero(%a, %b) : (memref<6x9xf32>, memref<9x20xf32>) -> memref<6x20xf32>
  call @print(%h3) : (memref<6x20xf32>) -> ()
  %h4 = call @floor_takes_nan(%a, %b) : (memref<6x9xf32>, memref<9x20xf32>) -> memref<6x20xf32>
  call @print(%h4) : (memref<6x20xf32>) -> ()
  %h5 = call @bound_below_floor(%a, %b) : (memref<6x9xf32>, memref<9x20xf32>) -> memref<6x20xf32>
  call @print(%h5) : (memref<6x20xf32>) -> ()
  // A bias with a NaN in column 3 (0/0, computed at run time).
  %nbias = memref.alloc() : memref<20xf32>
  memref.copy %bias, %nbias : memref<20xf32> to memref<20xf32>
  %zf = memref.load %bias2[%c0, %c0] : memref<1x20xf32>
  %zz = arith.subf %zf, %zf : f32
  %nan = arith.divf %zz, %zz : f32
  memref.store %nan, %nbias[%c3] : memref<20xf32>
  %n1 = call @torch_clamp(%a, %b, %nbias) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>) -> memref<6x20xf32>
  call @print(%n1) : (memref<6x20xf32>) -> ()
  %n2 = call @select_bound_keeps_nan(%a, %b, %nbias) : (memref<6x9xf32>, memref<9x20xf32>, memref<20xf32>) -> memref<6x20xf32>
  call @print(%n2) : (memref<6x20xf32>) -> ()
  return
}
