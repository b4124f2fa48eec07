// Execution: a matmul whose operands have dynamic strides (one-shot-
// bufferize's default function-boundary layout) runs the kernel
// specialised for dense strides when the strides at run time are those,
// and the op itself when they are not (B a column slice of a wider
// buffer). With a fault injected into the kernel, only the dense call's
// result changes: the check picks the path.
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: %mlir-opt %t.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.out
// RUN: diff %t.reference %t.out
// RUN: %qimeng-opt %s '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: head -n 9 %t.reference > %t.reference.dense
// RUN: head -n 9 %t.fault > %t.fault.dense
// RUN: not diff %t.reference.dense %t.fault.dense > /dev/null
// RUN: tail -n 9 %t.reference > %t.reference.slice
// RUN: tail -n 9 %t.fault > %t.fault.slice
// RUN: diff %t.reference.slice %t.fault.slice
// RUN: FileCheck %s < %t.reference

// IR-LABEL: func.func @mm(
// IR:         scf.if
// IR:           llvm.call @qm_sgemm_8x8x8_nn_lda8_ldb8_ldc8_
// IR:         } else {
// IR-NEXT:      linalg.matmul

// CHECK-COUNT-2: rank = 2 offset = {{[0-9]+}} sizes = [8, 8]

#strided = strided<[?, ?], offset: ?>

func.func @mm(%a: memref<8x8xf32, #strided>, %b: memref<8x8xf32, #strided>, %c: memref<8x8xf32, #strided>) {
  linalg.matmul ins(%a, %b : memref<8x8xf32, #strided>, memref<8x8xf32, #strided>)
                outs(%c : memref<8x8xf32, #strided>)
  return
}

// (i * x + j * y) mod 7 - 3 as f32.
func.func private @fill(%m: memref<?x?xf32, #strided>, %x: index, %y: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c3 = arith.constant 3 : i64
  %rows = memref.dim %m, %c0 : memref<?x?xf32, #strided>
  %cols = memref.dim %m, %c1 : memref<?x?xf32, #strided>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %ix = arith.muli %i, %x : index
      %jy = arith.muli %j, %y : index
      %s = arith.addi %ix, %jy : index
      %r = arith.remui %s, %c7 : index
      %ri = arith.index_cast %r : index to i64
      %v = arith.subi %ri, %c3 : i64
      %f = arith.sitofp %v : i64 to f32
      memref.store %f, %m[%i, %j] : memref<?x?xf32, #strided>
    }
  }
  return
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %a = memref.alloc() : memref<8x8xf32>
  %b = memref.alloc() : memref<8x8xf32>
  %wide = memref.alloc() : memref<8x16xf32>
  %c = memref.alloc() : memref<8x8xf32>
  %c2m = memref.alloc() : memref<8x8xf32>
  %ad = memref.cast %a : memref<8x8xf32> to memref<?x?xf32, #strided>
  %bd = memref.cast %b : memref<8x8xf32> to memref<?x?xf32, #strided>
  %wd = memref.cast %wide : memref<8x16xf32> to memref<?x?xf32, #strided>
  %cd = memref.cast %c : memref<8x8xf32> to memref<?x?xf32, #strided>
  %c2d = memref.cast %c2m : memref<8x8xf32> to memref<?x?xf32, #strided>
  call @fill(%ad, %c3, %c5) : (memref<?x?xf32, #strided>, index, index) -> ()
  call @fill(%bd, %c2, %c3) : (memref<?x?xf32, #strided>, index, index) -> ()
  call @fill(%wd, %c2, %c3) : (memref<?x?xf32, #strided>, index, index) -> ()
  call @fill(%cd, %c1, %c2) : (memref<?x?xf32, #strided>, index, index) -> ()
  call @fill(%c2d, %c1, %c2) : (memref<?x?xf32, #strided>, index, index) -> ()
  // Dense operands: the kernel.
  %as = memref.cast %a : memref<8x8xf32> to memref<8x8xf32, #strided>
  %bs = memref.cast %b : memref<8x8xf32> to memref<8x8xf32, #strided>
  %cs = memref.cast %c : memref<8x8xf32> to memref<8x8xf32, #strided>
  call @mm(%as, %bs, %cs) : (memref<8x8xf32, #strided>, memref<8x8xf32, #strided>, memref<8x8xf32, #strided>) -> ()
  %cu = memref.cast %c : memref<8x8xf32> to memref<*xf32>
  call @printMemrefF32(%cu) : (memref<*xf32>) -> ()
  // B the right half of an 8x16 buffer (row stride 16): the op itself.
  %slice = memref.subview %wide[0, 8] [8, 8] [1, 1] : memref<8x16xf32> to memref<8x8xf32, strided<[16, 1], offset: 8>>
  %sliced = memref.cast %slice : memref<8x8xf32, strided<[16, 1], offset: 8>> to memref<8x8xf32, #strided>
  %c2s = memref.cast %c2m : memref<8x8xf32> to memref<8x8xf32, #strided>
  call @mm(%as, %sliced, %c2s) : (memref<8x8xf32, #strided>, memref<8x8xf32, #strided>, memref<8x8xf32, #strided>) -> ()
  %c2u = memref.cast %c2m : memref<8x8xf32> to memref<*xf32>
  call @printMemrefF32(%c2u) : (memref<*xf32>) -> ()
  return
}
