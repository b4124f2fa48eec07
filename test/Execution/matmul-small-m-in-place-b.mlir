// Execution: 4x128x77 on strided subviews, where the model reads B in place
// (few rows of A: no B packing), checked against scalar loops computed in
// the same run on integer-valued inputs (exact partial sums).
// REQUIRES: host-avx2, host-fma
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: %mlir-opt %t.mlir %lower-to-llvm | %mlir-runner -e main \
// RUN:   -entry-point-result=void --shared-libs=%runner-libs | FileCheck %s

// IR-LABEL: func.func @matmul_small_m_in_place_b(
// IR-NOT:   linalg.matmul
// IR:       llvm.call @qm_sgemm_4x128x77_{{.*}}_nopackb_
// IR:       llvm.func internal @qm_sgemm_
// IR:       llvm.inline_asm has_side_effects

// CHECK: matmul_small_m_in_place_b: mismatches = 0

func.func @matmul_small_m_in_place_b(%a: memref<4x77xf32, strided<[82, 1], offset: 84>>, %b: memref<77x128xf32, strided<[133, 1], offset: 135>>, %c: memref<4x128xf32, strided<[133, 1], offset: 135>>) {
  linalg.matmul ins(%a, %b : memref<4x77xf32, strided<[82, 1], offset: 84>>, memref<77x128xf32, strided<[133, 1], offset: 135>>)
      outs(%c : memref<4x128xf32, strided<[133, 1], offset: 135>>)
  return
}

// (i * x + j * y) mod 9 - 4: small integers.
func.func private @fill(%m: memref<?x?xf32, strided<[?, 1], offset: ?>>, %x: index, %y: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c4 = arith.constant 4 : i64
  %rows = memref.dim %m, %c0 : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %c1i = arith.constant 1 : index
  %cols = memref.dim %m, %c1i : memref<?x?xf32, strided<[?, 1], offset: ?>>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %ix = arith.muli %i, %x : index
      %jy = arith.muli %j, %y : index
      %s = arith.addi %ix, %jy : index
      %r = arith.remui %s, %c9 : index
      %ri = arith.index_cast %r : index to i64
      %v = arith.subi %ri, %c4 : i64
      %f = arith.sitofp %v : i64 to f32
      memref.store %f, %m[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    }
  }
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %cM = arith.constant 4 : index
  %cN = arith.constant 128 : index
  %cK = arith.constant 77 : index
  %a_big = memref.alloc() : memref<7x82xf32>
  %a = memref.subview %a_big[1, 2] [4, 77] [1, 1] : memref<7x82xf32> to memref<4x77xf32, strided<[82, 1], offset: 84>>
  %a_dyn = memref.cast %a : memref<4x77xf32, strided<[82, 1], offset: 84>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %b_big = memref.alloc() : memref<80x133xf32>
  %b = memref.subview %b_big[1, 2] [77, 128] [1, 1] : memref<80x133xf32> to memref<77x128xf32, strided<[133, 1], offset: 135>>
  %b_dyn = memref.cast %b : memref<77x128xf32, strided<[133, 1], offset: 135>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %c_big = memref.alloc() : memref<7x133xf32>
  %c = memref.subview %c_big[1, 2] [4, 128] [1, 1] : memref<7x133xf32> to memref<4x128xf32, strided<[133, 1], offset: 135>>
  %c_dyn = memref.cast %c : memref<4x128xf32, strided<[133, 1], offset: 135>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %ref = memref.alloc() : memref<4x128xf32>
  call @fill(%a_dyn, %c3, %c5) : (memref<?x?xf32, strided<[?, 1], offset: ?>>, index, index) -> ()
  call @fill(%b_dyn, %c7, %c2) : (memref<?x?xf32, strided<[?, 1], offset: ?>>, index, index) -> ()
  call @fill(%c_dyn, %c1, %c3) : (memref<?x?xf32, strided<[?, 1], offset: ?>>, index, index) -> ()
  // Reference: ref = C0 + op(A) * op(B) with scalar loops.
  scf.for %i = %c0 to %cM step %c1 {
    scf.for %j = %c0 to %cN step %c1 {
      %c0v = memref.load %c[%i, %j] : memref<4x128xf32, strided<[133, 1], offset: 135>>
      %sum = scf.for %k = %c0 to %cK step %c1 iter_args(%acc = %c0v) -> (f32) {
        %av = memref.load %a[%i, %k] : memref<4x77xf32, strided<[82, 1], offset: 84>>
        %bv = memref.load %b[%k, %j] : memref<77x128xf32, strided<[133, 1], offset: 135>>
        %p = arith.mulf %av, %bv : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      memref.store %sum, %ref[%i, %j] : memref<4x128xf32>
    }
  }
  call @matmul_small_m_in_place_b(%a, %b, %c) : (memref<4x77xf32, strided<[82, 1], offset: 84>>, memref<77x128xf32, strided<[133, 1], offset: 135>>, memref<4x128xf32, strided<[133, 1], offset: 135>>) -> ()
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %bad = scf.for %i = %c0 to %cM step %c1 iter_args(%n0 = %zero) -> (i64) {
    %row = scf.for %j = %c0 to %cN step %c1 iter_args(%n1 = %n0) -> (i64) {
      %got = memref.load %c[%i, %j] : memref<4x128xf32, strided<[133, 1], offset: 135>>
      %want = memref.load %ref[%i, %j] : memref<4x128xf32>
      %ne = arith.cmpf une, %got, %want : f32
      %inc = arith.select %ne, %one, %zero : i64
      %n2 = arith.addi %n1, %inc : i64
      scf.yield %n2 : i64
    }
    scf.yield %row : i64
  }
  call @printCaseName() : () -> ()
  call @printI64(%bad) : (i64) -> ()
  call @printNewline() : () -> ()
  memref.dealloc %a_big : memref<7x82xf32>
  memref.dealloc %b_big : memref<80x133xf32>
  memref.dealloc %c_big : memref<7x133xf32>
  memref.dealloc %ref : memref<4x128xf32>
  return
}

func.func private @printCaseName() {
  %ch0 = arith.constant 109 : i32
  call @putchar(%ch0) : (i32) -> i32
  %ch1 = arith.constant 97 : i32
  call @putchar(%ch1) : (i32) -> i32
  %ch2 = arith.constant 116 : i32
  call @putchar(%ch2) : (i32) -> i32
  %ch3 = arith.constant 109 : i32
  call @putchar(%ch3) : (i32) -> i32
  %ch4 = arith.constant 117 : i32
  call @putchar(%ch4) : (i32) -> i32
  %ch5 = arith.constant 108 : i32
  call @putchar(%ch5) : (i32) -> i32
  %ch6 = arith.constant 95 : i32
  call @putchar(%ch6) : (i32) -> i32
  %ch7 = arith.constant 115 : i32
  call @putchar(%ch7) : (i32) -> i32
  %ch8 = arith.constant 109 : i32
  call @putchar(%ch8) : (i32) -> i32
  %ch9 = arith.constant 97 : i32
  call @putchar(%ch9) : (i32) -> i32
  %ch10 = arith.constant 108 : i32
  call @putchar(%ch10) : (i32) -> i32
  %ch11 = arith.constant 108 : i32
  call @putchar(%ch11) : (i32) -> i32
  %ch12 = arith.constant 95 : i32
  call @putchar(%ch12) : (i32) -> i32
  %ch13 = arith.constant 109 : i32
  call @putchar(%ch13) : (i32) -> i32
  %ch14 = arith.constant 95 : i32
  call @putchar(%ch14) : (i32) -> i32
  %ch15 = arith.constant 105 : i32
  call @putchar(%ch15) : (i32) -> i32
  %ch16 = arith.constant 110 : i32
  call @putchar(%ch16) : (i32) -> i32
  %ch17 = arith.constant 95 : i32
  call @putchar(%ch17) : (i32) -> i32
  %ch18 = arith.constant 112 : i32
  call @putchar(%ch18) : (i32) -> i32
  %ch19 = arith.constant 108 : i32
  call @putchar(%ch19) : (i32) -> i32
  %ch20 = arith.constant 97 : i32
  call @putchar(%ch20) : (i32) -> i32
  %ch21 = arith.constant 99 : i32
  call @putchar(%ch21) : (i32) -> i32
  %ch22 = arith.constant 101 : i32
  call @putchar(%ch22) : (i32) -> i32
  %ch23 = arith.constant 95 : i32
  call @putchar(%ch23) : (i32) -> i32
  %ch24 = arith.constant 98 : i32
  call @putchar(%ch24) : (i32) -> i32
  %ch25 = arith.constant 58 : i32
  call @putchar(%ch25) : (i32) -> i32
  %ch26 = arith.constant 32 : i32
  call @putchar(%ch26) : (i32) -> i32
  %ch27 = arith.constant 109 : i32
  call @putchar(%ch27) : (i32) -> i32
  %ch28 = arith.constant 105 : i32
  call @putchar(%ch28) : (i32) -> i32
  %ch29 = arith.constant 115 : i32
  call @putchar(%ch29) : (i32) -> i32
  %ch30 = arith.constant 109 : i32
  call @putchar(%ch30) : (i32) -> i32
  %ch31 = arith.constant 97 : i32
  call @putchar(%ch31) : (i32) -> i32
  %ch32 = arith.constant 116 : i32
  call @putchar(%ch32) : (i32) -> i32
  %ch33 = arith.constant 99 : i32
  call @putchar(%ch33) : (i32) -> i32
  %ch34 = arith.constant 104 : i32
  call @putchar(%ch34) : (i32) -> i32
  %ch35 = arith.constant 101 : i32
  call @putchar(%ch35) : (i32) -> i32
  %ch36 = arith.constant 115 : i32
  call @putchar(%ch36) : (i32) -> i32
  %ch37 = arith.constant 32 : i32
  call @putchar(%ch37) : (i32) -> i32
  %ch38 = arith.constant 61 : i32
  call @putchar(%ch38) : (i32) -> i32
  %ch39 = arith.constant 32 : i32
  call @putchar(%ch39) : (i32) -> i32
  return
}
func.func private @putchar(i32) -> i32
func.func private @printI64(i64)
func.func private @printNewline()
