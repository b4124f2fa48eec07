// Ahead of time: the output compiles through mlir-translate | llc and links with
// nothing but libc and libomp (multi-core kernels run inside omp.parallel),
// then runs and checks itself against scalar loops
// computed in the same run on integer-valued inputs (exact partial sums); the
// exit status is the number of mismatches.
// REQUIRES: host-avx2, host-fma, host-cc
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: %mlir-opt %t.mlir %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -filetype=obj -relocation-model=pic -o %t.o
// RUN: cc %t.o -o %t.exe -L%llvm-lib-dir -lomp -Wl,-rpath,%llvm-lib-dir
// RUN: %t.exe | FileCheck %s

// IR-LABEL: func.func @matmul_aot_45x70x33(
// IR-NOT:   linalg.matmul
// IR:       llvm.call @qm_sgemm_
// IR:       llvm.func internal @qm_sgemm_
// IR:       llvm.inline_asm has_side_effects

// CHECK: matmul_aot_45x70x33: mismatches = 0

func.func @matmul_aot_45x70x33(%a: memref<45x33xf32>, %b: memref<70x33xf32>, %c: memref<45x70xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<45x33xf32>, memref<70x33xf32>)
      outs(%c : memref<45x70xf32>)
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

func.func @main() -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %cM = arith.constant 45 : index
  %cN = arith.constant 70 : index
  %cK = arith.constant 33 : index
  %a = memref.alloc() : memref<45x33xf32>
  %a_dyn = memref.cast %a : memref<45x33xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %b = memref.alloc() : memref<70x33xf32>
  %b_dyn = memref.cast %b : memref<70x33xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %c = memref.alloc() : memref<45x70xf32>
  %c_dyn = memref.cast %c : memref<45x70xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %ref = memref.alloc() : memref<45x70xf32>
  call @fill(%a_dyn, %c3, %c5) : (memref<?x?xf32, strided<[?, 1], offset: ?>>, index, index) -> ()
  call @fill(%b_dyn, %c7, %c2) : (memref<?x?xf32, strided<[?, 1], offset: ?>>, index, index) -> ()
  call @fill(%c_dyn, %c1, %c3) : (memref<?x?xf32, strided<[?, 1], offset: ?>>, index, index) -> ()
  // Reference: ref = C0 + op(A) * op(B) with scalar loops.
  scf.for %i = %c0 to %cM step %c1 {
    scf.for %j = %c0 to %cN step %c1 {
      %c0v = memref.load %c[%i, %j] : memref<45x70xf32>
      %sum = scf.for %k = %c0 to %cK step %c1 iter_args(%acc = %c0v) -> (f32) {
        %av = memref.load %a[%i, %k] : memref<45x33xf32>
        %bv = memref.load %b[%j, %k] : memref<70x33xf32>
        %p = arith.mulf %av, %bv : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      memref.store %sum, %ref[%i, %j] : memref<45x70xf32>
    }
  }
  call @matmul_aot_45x70x33(%a, %b, %c) : (memref<45x33xf32>, memref<70x33xf32>, memref<45x70xf32>) -> ()
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %bad = scf.for %i = %c0 to %cM step %c1 iter_args(%n0 = %zero) -> (i64) {
    %row = scf.for %j = %c0 to %cN step %c1 iter_args(%n1 = %n0) -> (i64) {
      %got = memref.load %c[%i, %j] : memref<45x70xf32>
      %want = memref.load %ref[%i, %j] : memref<45x70xf32>
      %ne = arith.cmpf une, %got, %want : f32
      %inc = arith.select %ne, %one, %zero : i64
      %n2 = arith.addi %n1, %inc : i64
      scf.yield %n2 : i64
    }
    scf.yield %row : i64
  }
  call @printCaseName() : () -> ()
  call @printSmall(%bad) : (i64) -> ()
  memref.dealloc %a : memref<45x33xf32>
  memref.dealloc %b : memref<70x33xf32>
  memref.dealloc %c : memref<45x70xf32>
  memref.dealloc %ref : memref<45x70xf32>
  %status = arith.trunci %bad : i64 to i32
  return %status : i32
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
  %ch7 = arith.constant 97 : i32
  call @putchar(%ch7) : (i32) -> i32
  %ch8 = arith.constant 111 : i32
  call @putchar(%ch8) : (i32) -> i32
  %ch9 = arith.constant 116 : i32
  call @putchar(%ch9) : (i32) -> i32
  %ch10 = arith.constant 95 : i32
  call @putchar(%ch10) : (i32) -> i32
  %ch11 = arith.constant 52 : i32
  call @putchar(%ch11) : (i32) -> i32
  %ch12 = arith.constant 53 : i32
  call @putchar(%ch12) : (i32) -> i32
  %ch13 = arith.constant 120 : i32
  call @putchar(%ch13) : (i32) -> i32
  %ch14 = arith.constant 55 : i32
  call @putchar(%ch14) : (i32) -> i32
  %ch15 = arith.constant 48 : i32
  call @putchar(%ch15) : (i32) -> i32
  %ch16 = arith.constant 120 : i32
  call @putchar(%ch16) : (i32) -> i32
  %ch17 = arith.constant 51 : i32
  call @putchar(%ch17) : (i32) -> i32
  %ch18 = arith.constant 51 : i32
  call @putchar(%ch18) : (i32) -> i32
  %ch19 = arith.constant 58 : i32
  call @putchar(%ch19) : (i32) -> i32
  %ch20 = arith.constant 32 : i32
  call @putchar(%ch20) : (i32) -> i32
  %ch21 = arith.constant 109 : i32
  call @putchar(%ch21) : (i32) -> i32
  %ch22 = arith.constant 105 : i32
  call @putchar(%ch22) : (i32) -> i32
  %ch23 = arith.constant 115 : i32
  call @putchar(%ch23) : (i32) -> i32
  %ch24 = arith.constant 109 : i32
  call @putchar(%ch24) : (i32) -> i32
  %ch25 = arith.constant 97 : i32
  call @putchar(%ch25) : (i32) -> i32
  %ch26 = arith.constant 116 : i32
  call @putchar(%ch26) : (i32) -> i32
  %ch27 = arith.constant 99 : i32
  call @putchar(%ch27) : (i32) -> i32
  %ch28 = arith.constant 104 : i32
  call @putchar(%ch28) : (i32) -> i32
  %ch29 = arith.constant 101 : i32
  call @putchar(%ch29) : (i32) -> i32
  %ch30 = arith.constant 115 : i32
  call @putchar(%ch30) : (i32) -> i32
  %ch31 = arith.constant 32 : i32
  call @putchar(%ch31) : (i32) -> i32
  %ch32 = arith.constant 61 : i32
  call @putchar(%ch32) : (i32) -> i32
  %ch33 = arith.constant 32 : i32
  call @putchar(%ch33) : (i32) -> i32
  return
}
func.func private @putchar(i32) -> i32
// Prints 0-9, or '+' for more, then a newline: libc only.
func.func private @printSmall(%v: i64) {
  %c9 = arith.constant 9 : i64
  %c48 = arith.constant 48 : i64
  %plus = arith.constant 43 : i32
  %nl = arith.constant 10 : i32
  %big = arith.cmpi ugt, %v, %c9 : i64
  %d = arith.addi %v, %c48 : i64
  %d32 = arith.trunci %d : i64 to i32
  %ch = arith.select %big, %plus, %d32 : i32
  %r0 = call @putchar(%ch) : (i32) -> i32
  %r1 = call @putchar(%nl) : (i32) -> i32
  return
}
