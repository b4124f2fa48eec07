// Execution: convolutions whose input has dynamic strides (one-shot-
// bufferize's default function-boundary layout) run the kernel that reads
// the input's strides at run time (qm.input_strides: runtime, "_isrt")
// whatever they are: a dense input, or a window of a larger buffer (NHWC:
// rows 30 floats apart in a 3x9x10x3 buffer; NCHW: rows 10 and channels 90
// floats apart in a 2x4x9x10 buffer). An NHWC input whose channels are
// not adjacent (every other one) is the op's: the kernel needs a unit
// inner stride, the guard checks it. With a fault injected into the
// kernels, only the kernels' results change: the check picks the path.
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
// Each result is 11 lines (a 10x20 view: the header and 10 rows).
// RUN: for b in 0 1 2 3 4; do sed -n "$((b*11+1)),$((b*11+11))p" %t.reference > %t.ref.$b; sed -n "$((b*11+1)),$((b*11+11))p" %t.fault > %t.fault.$b; done
// RUN: not diff %t.ref.0 %t.fault.0 > /dev/null
// RUN: not diff %t.ref.1 %t.fault.1 > /dev/null
// RUN: diff %t.ref.2 %t.fault.2
// RUN: not diff %t.ref.3 %t.fault.3 > /dev/null
// RUN: not diff %t.ref.4 %t.fault.4 > /dev/null
// RUN: FileCheck %s < %t.reference

// The input's three outer strides go to the kernel's header (64, 72, 80);
// the guard checks the unit strides and the filter and output (dense).
// IR-LABEL: func.func @nhwc(
// IR:         scf.if
// IR:           llvm.store {{.*}} : i64, !llvm.ptr
// IR:           llvm.call @qm_sconv2d_nhwc_hwcf_2x7x7x3_f4_k3x3_s1x1_d1x1_isrt_
// IR:         } else {
// IR-NEXT:      linalg.conv_2d_nhwc_hwcf
// IR-LABEL: func.func @nchw(
// IR:           llvm.call @qm_sconv2d_nchw_fchw_2x7x7x3_f4_k3x3_s1x1_d1x1_isrt_
// IR:         } else {
// IR-NEXT:      linalg.conv_2d_nchw_fchw

// CHECK-COUNT-5: rank = 2 offset = 0 sizes = [10, 20]

#s4 = strided<[?, ?, ?, ?], offset: ?>

func.func @nhwc(%in: memref<2x7x7x3xf32, #s4>, %f: memref<3x3x3x4xf32, #s4>, %out: memref<2x5x5x4xf32, #s4>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%in, %f : memref<2x7x7x3xf32, #s4>, memref<3x3x3x4xf32, #s4>) outs(%out : memref<2x5x5x4xf32, #s4>)
  return
}

func.func @nchw(%in: memref<2x3x7x7xf32, #s4>, %f: memref<4x3x3x3xf32, #s4>, %out: memref<2x4x5x5xf32, #s4>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%in, %f : memref<2x3x7x7xf32, #s4>, memref<4x3x3x3xf32, #s4>) outs(%out : memref<2x4x5x5xf32, #s4>)
  return
}

// (i * 3 + j * 5 + k * 2 + l * 7 + seed) mod 7 - 3 as f32.
func.func private @fill(%m: memref<?x?x?x?xf32, #s4>, %seed: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %three = arith.constant 3 : i64
  %d0 = memref.dim %m, %c0 : memref<?x?x?x?xf32, #s4>
  %d1 = memref.dim %m, %c1 : memref<?x?x?x?xf32, #s4>
  %d2 = memref.dim %m, %c2 : memref<?x?x?x?xf32, #s4>
  %d3 = memref.dim %m, %c3 : memref<?x?x?x?xf32, #s4>
  scf.for %i = %c0 to %d0 step %c1 {
    scf.for %j = %c0 to %d1 step %c1 {
      scf.for %k = %c0 to %d2 step %c1 {
        scf.for %l = %c0 to %d3 step %c1 {
          %a = arith.muli %i, %c3 : index
          %b = arith.muli %j, %c5 : index
          %c = arith.muli %k, %c2 : index
          %d = arith.muli %l, %c7 : index
          %s0 = arith.addi %a, %b : index
          %s1 = arith.addi %s0, %c : index
          %s2 = arith.addi %s1, %d : index
          %s3 = arith.addi %s2, %seed : index
          %r = arith.remui %s3, %c7 : index
          %ri = arith.index_cast %r : index to i64
          %v = arith.subi %ri, %three : i64
          %fv = arith.sitofp %v : i64 to f32
          memref.store %fv, %m[%i, %j, %k, %l] : memref<?x?x?x?xf32, #s4>
        }
      }
    }
  }
  return
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%out: memref<2x5x5x4xf32>) {
  %flat = memref.collapse_shape %out [[0, 1], [2, 3]] : memref<2x5x5x4xf32> into memref<10x20xf32>
  %u = memref.cast %flat : memref<10x20xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @print_nchw(%out: memref<2x4x5x5xf32>) {
  %flat = memref.collapse_shape %out [[0, 1], [2, 3]] : memref<2x4x5x5xf32> into memref<8x25xf32>
  %r = memref.reinterpret_cast %flat to offset: [0], sizes: [10, 20], strides: [20, 1] : memref<8x25xf32> to memref<10x20xf32>
  %u = memref.cast %r : memref<10x20xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %fh = memref.alloc() : memref<3x3x3x4xf32>
  %fhd = memref.cast %fh : memref<3x3x3x4xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%fhd, %c1) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %fhs = memref.cast %fh : memref<3x3x3x4xf32> to memref<3x3x3x4xf32, #s4>
  %fc = memref.alloc() : memref<4x3x3x3xf32>
  %fcd = memref.cast %fc : memref<4x3x3x3xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%fcd, %c2) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %fcs = memref.cast %fc : memref<4x3x3x3xf32> to memref<4x3x3x3xf32, #s4>

  // NHWC, a dense input: the kernel.
  %x = memref.alloc() : memref<2x7x7x3xf32>
  %xd = memref.cast %x : memref<2x7x7x3xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%xd, %c3) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %xs = memref.cast %x : memref<2x7x7x3xf32> to memref<2x7x7x3xf32, #s4>
  %o0 = memref.alloc() : memref<2x5x5x4xf32>
  %o0d = memref.cast %o0 : memref<2x5x5x4xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%o0d, %c4) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %o0s = memref.cast %o0 : memref<2x5x5x4xf32> to memref<2x5x5x4xf32, #s4>
  call @nhwc(%xs, %fhs, %o0s) : (memref<2x7x7x3xf32, #s4>, memref<3x3x3x4xf32, #s4>, memref<2x5x5x4xf32, #s4>) -> ()
  call @print(%o0) : (memref<2x5x5x4xf32>) -> ()

  // NHWC, a 2x7x7x3 window of a 3x9x10x3 buffer (strides 270, 30, 3):
  // the same kernel.
  %big = memref.alloc() : memref<3x9x10x3xf32>
  %bigd = memref.cast %big : memref<3x9x10x3xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%bigd, %c5) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %win = memref.subview %big[1, 1, 2, 0] [2, 7, 7, 3] [1, 1, 1, 1] : memref<3x9x10x3xf32> to memref<2x7x7x3xf32, strided<[270, 30, 3, 1], offset: 306>>
  %wins = memref.cast %win : memref<2x7x7x3xf32, strided<[270, 30, 3, 1], offset: 306>> to memref<2x7x7x3xf32, #s4>
  %o1 = memref.alloc() : memref<2x5x5x4xf32>
  %o1d = memref.cast %o1 : memref<2x5x5x4xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%o1d, %c4) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %o1s = memref.cast %o1 : memref<2x5x5x4xf32> to memref<2x5x5x4xf32, #s4>
  call @nhwc(%wins, %fhs, %o1s) : (memref<2x7x7x3xf32, #s4>, memref<3x3x3x4xf32, #s4>, memref<2x5x5x4xf32, #s4>) -> ()
  call @print(%o1) : (memref<2x5x5x4xf32>) -> ()

  // NHWC, every other channel of a 2x7x7x6 buffer (inner stride 2): the op.
  %wide = memref.alloc() : memref<2x7x7x6xf32>
  %wided = memref.cast %wide : memref<2x7x7x6xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%wided, %c1) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %every = memref.subview %wide[0, 0, 0, 0] [2, 7, 7, 3] [1, 1, 1, 2] : memref<2x7x7x6xf32> to memref<2x7x7x3xf32, strided<[294, 42, 6, 2]>>
  %everys = memref.cast %every : memref<2x7x7x3xf32, strided<[294, 42, 6, 2]>> to memref<2x7x7x3xf32, #s4>
  %o2 = memref.alloc() : memref<2x5x5x4xf32>
  %o2d = memref.cast %o2 : memref<2x5x5x4xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%o2d, %c4) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %o2s = memref.cast %o2 : memref<2x5x5x4xf32> to memref<2x5x5x4xf32, #s4>
  call @nhwc(%everys, %fhs, %o2s) : (memref<2x7x7x3xf32, #s4>, memref<3x3x3x4xf32, #s4>, memref<2x5x5x4xf32, #s4>) -> ()
  call @print(%o2) : (memref<2x5x5x4xf32>) -> ()

  // NCHW, a dense input: the kernel.
  %y = memref.alloc() : memref<2x3x7x7xf32>
  %yd = memref.cast %y : memref<2x3x7x7xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%yd, %c3) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %ys = memref.cast %y : memref<2x3x7x7xf32> to memref<2x3x7x7xf32, #s4>
  %o3 = memref.alloc() : memref<2x4x5x5xf32>
  %o3d = memref.cast %o3 : memref<2x4x5x5xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%o3d, %c4) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %o3s = memref.cast %o3 : memref<2x4x5x5xf32> to memref<2x4x5x5xf32, #s4>
  call @nchw(%ys, %fcs, %o3s) : (memref<2x3x7x7xf32, #s4>, memref<4x3x3x3xf32, #s4>, memref<2x4x5x5xf32, #s4>) -> ()
  call @print_nchw(%o3) : (memref<2x4x5x5xf32>) -> ()

  // NCHW, a 2x3x7x7 window of a 2x4x9x10 buffer (strides 360, 90, 10): the
  // same kernel.
  %bigc = memref.alloc() : memref<2x4x9x10xf32>
  %bigcd = memref.cast %bigc : memref<2x4x9x10xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%bigcd, %c5) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %winc = memref.subview %bigc[0, 1, 1, 2] [2, 3, 7, 7] [1, 1, 1, 1] : memref<2x4x9x10xf32> to memref<2x3x7x7xf32, strided<[360, 90, 10, 1], offset: 102>>
  %wincs = memref.cast %winc : memref<2x3x7x7xf32, strided<[360, 90, 10, 1], offset: 102>> to memref<2x3x7x7xf32, #s4>
  %o4 = memref.alloc() : memref<2x4x5x5xf32>
  %o4d = memref.cast %o4 : memref<2x4x5x5xf32> to memref<?x?x?x?xf32, #s4>
  call @fill(%o4d, %c4) : (memref<?x?x?x?xf32, #s4>, index) -> ()
  %o4s = memref.cast %o4 : memref<2x4x5x5xf32> to memref<2x4x5x5xf32, #s4>
  call @nchw(%wincs, %fcs, %o4s) : (memref<2x3x7x7xf32, #s4>, memref<4x3x3x3xf32, #s4>, memref<2x4x5x5xf32, #s4>) -> ()
  call @print_nchw(%o4) : (memref<2x4x5x5xf32>) -> ()
  return
}
