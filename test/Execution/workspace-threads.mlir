// Kernel calls on several threads at once: the module's one cached
// workspace goes to whichever call claims it, grown when a larger kernel's
// call claims it after a smaller one's, and a call that finds it claimed
// allocates its own (lib/Transforms/KernelWorkspace.h). An scf.parallel
// (OpenMP, two threads) runs 6 iterations of a small product then a large
// one, each into its own slice of one output; a workspace two calls
// shared would mix their packed panels. Checked against the same module
// without the pass: a weighted sum of each iteration's block (small
// integers: exact).
// REQUIRES: host-avx2, host-fma
// RUN: %qimeng-opt %s '--qimeng-tensorop=threads=1' -o %t.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: %mlir-opt %t.mlir --convert-scf-to-openmp %lower-to-llvm \
// RUN:   | env OMP_NUM_THREADS=2 %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs > %t.out
// RUN: %mlir-opt %s --convert-scf-to-openmp %lower-to-llvm \
// RUN:   | env OMP_NUM_THREADS=2 %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs > %t.ref
// RUN: diff %t.ref %t.out
// RUN: FileCheck %s < %t.out

// IR-LABEL: func.func @large(
// IR:         llvm.call @qm_workspace_acquire
// IR:         llvm.call @qm_sgemm_200x192x256_
// IR:         llvm.call @qm_workspace_release
// IR-LABEL: func.func @small(
// IR:         llvm.call @qm_workspace_acquire
// IR:         llvm.call @qm_sgemm_40x48x24_

// CHECK-COUNT-6: {{^-?[0-9]+$}}

#c = strided<[192, 1], offset: ?>

func.func @large(%a: memref<200x256xf32, strided<[256, 1], offset: ?>>, %b: memref<256x192xf32>, %c: memref<200x192xf32, #c>) {
  linalg.matmul ins(%a, %b : memref<200x256xf32, strided<[256, 1], offset: ?>>, memref<256x192xf32>)
      outs(%c : memref<200x192xf32, #c>)
  return
}

func.func @small(%a: memref<40x24xf32, strided<[256, 1], offset: ?>>, %b: memref<24x48xf32, strided<[192, 1]>>, %c: memref<40x48xf32, #c>) {
  linalg.matmul ins(%a, %b : memref<40x24xf32, strided<[256, 1], offset: ?>>, memref<24x48xf32, strided<[192, 1]>>)
      outs(%c : memref<40x48xf32, #c>)
  return
}

// (i * x + j * y + z) mod 9 - 4 over a 2-D buffer: small integers.
func.func private @fill(%m: memref<?x?xf32>, %x: index, %y: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c4 = arith.constant 4 : i64
  %rows = memref.dim %m, %c0 : memref<?x?xf32>
  %cols = memref.dim %m, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %ix = arith.muli %i, %x : index
      %jy = arith.muli %j, %y : index
      %s = arith.addi %ix, %jy : index
      %r = arith.remui %s, %c9 : index
      %ri = arith.index_cast %r : index to i64
      %v = arith.subi %ri, %c4 : i64
      %f = arith.sitofp %v : i64 to f32
      memref.store %f, %m[%i, %j] : memref<?x?xf32>
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
  %c11 = arith.constant 11 : index
  %c12 = arith.constant 12 : index
  %c192 = arith.constant 192 : index
  %c200 = arith.constant 200 : index
  %c256 = arith.constant 256 : index
  %c6 = arith.constant 6 : index
  %c40 = arith.constant 40 : index
  %c240 = arith.constant 240 : index
  %c1440 = arith.constant 1440 : index
  // A: 6 blocks of 240 rows (a small product's 40, a large one's 200);
  // B: one 256x192.
  %a = memref.alloc(%c1440, %c256) : memref<?x?xf32>
  call @fill(%a, %c3, %c5) : (memref<?x?xf32>, index, index) -> ()
  %b = memref.alloc(%c256, %c192) : memref<?x?xf32>
  call @fill(%b, %c7, %c2) : (memref<?x?xf32>, index, index) -> ()
  %out = memref.alloc(%c1440, %c192) : memref<?x?xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<?x?xf32>)
  %as = memref.cast %a : memref<?x?xf32> to memref<1440x256xf32>
  %bs = memref.cast %b : memref<?x?xf32> to memref<256x192xf32>
  %os = memref.cast %out : memref<?x?xf32> to memref<1440x192xf32>
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    %row = arith.muli %i, %c240 : index
    %row2 = arith.addi %row, %c40 : index
    %a1 = memref.subview %as[%row, 0] [40, 24] [1, 1] : memref<1440x256xf32> to memref<40x24xf32, strided<[256, 1], offset: ?>>
    %b1 = memref.subview %bs[0, 0] [24, 48] [1, 1] : memref<256x192xf32> to memref<24x48xf32, strided<[192, 1]>>
    %o1 = memref.subview %os[%row, 0] [40, 48] [1, 1] : memref<1440x192xf32> to memref<40x48xf32, #c>
    func.call @small(%a1, %b1, %o1) : (memref<40x24xf32, strided<[256, 1], offset: ?>>, memref<24x48xf32, strided<[192, 1]>>, memref<40x48xf32, #c>) -> ()
    %a2 = memref.subview %as[%row2, 0] [200, 256] [1, 1] : memref<1440x256xf32> to memref<200x256xf32, strided<[256, 1], offset: ?>>
    %o2 = memref.subview %os[%row2, 0] [200, 192] [1, 1] : memref<1440x192xf32> to memref<200x192xf32, #c>
    func.call @large(%a2, %bs, %o2) : (memref<200x256xf32, strided<[256, 1], offset: ?>>, memref<256x192xf32>, memref<200x192xf32, #c>) -> ()
    scf.reduce
  }
  // Per iteration: sum over its block of out(r, j) * ((r * 7 + j * 3) mod 11 + 1).
  scf.for %i = %c0 to %c6 step %c1 {
    %row0 = arith.muli %i, %c240 : index
    %row1 = arith.addi %row0, %c240 : index
    %sum = scf.for %r = %row0 to %row1 step %c1 iter_args(%s = %c0) -> (index) {
      %t = scf.for %j = %c0 to %c192 step %c1 iter_args(%u = %s) -> (index) {
        %v = memref.load %out[%r, %j] : memref<?x?xf32>
        %vi = arith.fptosi %v : f32 to i64
        %vx = arith.index_cast %vi : i64 to index
        %r7 = arith.muli %r, %c7 : index
        %j3 = arith.muli %j, %c3 : index
        %w0 = arith.addi %r7, %j3 : index
        %w1 = arith.remui %w0, %c11 : index
        %w = arith.addi %w1, %c1 : index
        %p = arith.muli %vx, %w : index
        %n = arith.addi %u, %p : index
        scf.yield %n : index
      }
      scf.yield %t : index
    }
    %si = arith.index_cast %sum : index to i64
    vector.print %si : i64
  }
  memref.dealloc %a : memref<?x?xf32>
  memref.dealloc %b : memref<?x?xf32>
  memref.dealloc %out : memref<?x?xf32>
  return
}
