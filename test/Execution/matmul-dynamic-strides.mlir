// Execution: a matmul whose operands have dynamic strides (one-shot-
// bufferize's default function-boundary layout) runs the kernel that reads
// its leading dimensions at run time (qm.leading_dims: runtime) whatever
// they are, dense or a view of a wider buffer (B a column slice, row
// stride 16), and the op itself when an operand's inner stride is not 1
// (B every other column), which the kernel does not take. With a fault
// injected into the kernel, only the kernel's results change: the check
// picks the path.
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
// RUN: sed -n 1,9p %t.reference > %t.reference.dense
// RUN: sed -n 1,9p %t.fault > %t.fault.dense
// RUN: not diff %t.reference.dense %t.fault.dense > /dev/null
// RUN: sed -n 10,18p %t.reference > %t.reference.slice
// RUN: sed -n 10,18p %t.fault > %t.fault.slice
// RUN: not diff %t.reference.slice %t.fault.slice > /dev/null
// RUN: sed -n 19,27p %t.reference > %t.reference.every-other
// RUN: sed -n 19,27p %t.fault > %t.fault.every-other
// RUN: diff %t.reference.every-other %t.fault.every-other
// RUN: FileCheck %s < %t.reference

// The guard checks the unit strides only; the leading dimensions go to
// the kernel's workspace header (offsets 64, 72, 80).
// IR-LABEL: func.func @mm(
// IR:         scf.if
// IR:           memref.extract_strided_metadata
// IR:           llvm.store {{.*}} : i64, !llvm.ptr
// IR:           llvm.call @qm_sgemm_8x8x8_nn_ldrt_
// IR:         } else {
// IR-NEXT:      linalg.matmul

// CHECK-COUNT-3: rank = 2 offset = {{[0-9]+}} sizes = [8, 8]

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
  // B every other column of the 8x16 buffer (strides [16, 2]): the op.
  %c3m = memref.alloc() : memref<8x8xf32>
  %c3d = memref.cast %c3m : memref<8x8xf32> to memref<?x?xf32, #strided>
  call @fill(%c3d, %c1, %c2) : (memref<?x?xf32, #strided>, index, index) -> ()
  %every = memref.subview %wide[0, 0] [8, 8] [1, 2] : memref<8x16xf32> to memref<8x8xf32, strided<[16, 2]>>
  %everyd = memref.cast %every : memref<8x8xf32, strided<[16, 2]>> to memref<8x8xf32, #strided>
  %c3s = memref.cast %c3m : memref<8x8xf32> to memref<8x8xf32, #strided>
  call @mm(%as, %everyd, %c3s) : (memref<8x8xf32, #strided>, memref<8x8xf32, #strided>, memref<8x8xf32, #strided>) -> ()
  %c3u = memref.cast %c3m : memref<8x8xf32> to memref<*xf32>
  call @printMemrefF32(%c3u) : (memref<*xf32>) -> ()
  return
}
