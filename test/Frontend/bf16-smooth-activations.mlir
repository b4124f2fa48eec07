// Smooth activations after bf16 products, fused into the AVX512-BF16
// kernels' epilogue on their f32 sums (VDPBF16PS; the dot kernels, also
// where AMX is, whose tile kernels take none): torch-mlir's bf16
// aten.linear into f32 with its bias and aten.gelu; a dense layer's
// aten.silu on 5 rows (B's rows streamed in place); a bf16 NHWC
// convolution with a bias and silu (a YOLOv5 block in bf16). The bias
// holds a NaN in column 3, which stays NaN. Run with and without
// --qimeng-tensorop (the stock side through libm), compared number by
// number within 2e-5 relative + 1e-6 (every product exact in f32: the
// inputs are small dyadic fractions).
// REQUIRES: host-avx512f, host-avx512bw, host-avx512bf16
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: %python %S/Inputs/compare_close.py %t.reference %t.v1 2e-5 1e-6
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.tensor.mlir
// RUN: FileCheck %s < %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: %python %S/Inputs/compare_close.py %t.reference %t.tensor 2e-5 1e-6
//
// aten.linear's bias and aten.silu, then truncf to bf16: the kernel's bf16
// output (`_obf16`), silu on the f32 sums and the result rounded once, as
// the stock lowering rounds; an element whose sum lies within a few ulps
// of a bf16 rounding boundary may round the other way, so this output is
// compared within one bf16 ulp (2^-8 relative).
// RUN: %mlir-opt %t.default.mlir %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-runner -e main_bf16 -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference16
// RUN: FileCheck %s --check-prefix=OUT16 < %t.reference16
// RUN: %mlir-opt %t.v1.mlir %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-runner -e main_bf16 -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1.16
// RUN: %python %S/Inputs/compare_close.py %t.reference16 %t.v1.16 4e-3 1e-6
//
// The kernels are what ran: with a fault injected the output differs.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not %python %S/Inputs/compare_close.py %t.reference %t.fault 2e-5 1e-6 > /dev/null

// OUT: rank = 2 offset = 0 sizes = [13, 37]
// OUT-NEXT: nan
// OUT: rank = 2 offset = 0 sizes = [5, 37]
// OUT: rank = 4 offset = 0 sizes = [1, 7, 7, 12]
// OUT16: rank = 2 offset = 0 sizes = [13, 37]
// OUT16-NEXT: nan

// CHECK-LABEL: func.func @bf16_linear_gelu(
// CHECK:         llvm.call @qm_sbgemm_13x37x70_nt_b0_bias_gelu_erf_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @bf16_dense_silu(
// CHECK:         llvm.call @qm_sbgemm_5x37x70_nn_b0_bias_silu_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// The bias, silu and the rounding to bf16 all the kernel's, on buffers
// and on tensors alike (the tensor placement moves the truncf's generic
// onto a bf16 allocation).
// CHECK-LABEL: func.func @bf16_linear_silu_to_bf16(
// CHECK:         llvm.call @qm_sbgemm_13x37x70_nt_b0_bias_silu_obf16_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @bf16_conv_silu(
// CHECK:         llvm.call @qm_sbconv2d_nhwc_hwcf_1x9x9x8_f12_k3x3_s1x1_d1x1{{(_isrt)?(_adirect)?}}_b0_bias_silu_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>

// aten.linear in bf16 (weights 37x70, transposed) into f32, + bias, then
// aten.gelu, merged.
func.func @bf16_linear_gelu(%x: tensor<13x70xbf16>, %w: tensor<37x70xbf16>, %b: tensor<37xf32>) -> tensor<13x37xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<70x37xbf16>
  %wt = linalg.transpose ins(%w : tensor<37x70xbf16>) outs(%e : tensor<70x37xbf16>) permutation = [1, 0]
  %c0 = tensor.empty() : tensor<13x37xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<13x37xf32>) -> tensor<13x37xf32>
  %p = linalg.matmul ins(%x, %wt : tensor<13x70xbf16>, tensor<70x37xbf16>) outs(%c : tensor<13x37xf32>) -> tensor<13x37xf32>
  %o = tensor.empty() : tensor<13x37xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<13x37xf32>, tensor<37xf32>) outs(%o : tensor<13x37xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %cst1 = arith.constant 1.0 : f32
    %half = arith.constant 0.5 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32
    %arg = arith.mulf %s, %rsqrt2 : f32
    %erf = math.erf %arg : f32
    %plus1 = arith.addf %cst1, %erf : f32
    %cdf = arith.mulf %half, %plus1 : f32
    %y = arith.mulf %s, %cdf : f32
    linalg.yield %y : f32
  } -> tensor<13x37xf32>
  return %r : tensor<13x37xf32>
}

// A bf16 dense layer on 5 rows, + bias, then aten.silu.
func.func @bf16_dense_silu(%x: tensor<5x70xbf16>, %w: tensor<70x37xbf16>, %b: tensor<37xf32>) -> tensor<5x37xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<5x37xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<5x37xf32>) -> tensor<5x37xf32>
  %p = linalg.matmul ins(%x, %w : tensor<5x70xbf16>, tensor<70x37xbf16>) outs(%c : tensor<5x37xf32>) -> tensor<5x37xf32>
  %o = tensor.empty() : tensor<5x37xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<5x37xf32>, tensor<37xf32>) outs(%o : tensor<5x37xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %v, %bv : f32
    %neg = arith.negf %s : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %exp, %one : f32
    %sig = arith.divf %one, %den : f32
    %y = arith.mulf %sig, %s : f32
    linalg.yield %y : f32
  } -> tensor<5x37xf32>
  return %r : tensor<5x37xf32>
}

// aten.linear in bf16 with its bias, aten.silu, back to bf16 (torch-mlir's
// bf16 model: the truncf in the same generic).
func.func @bf16_linear_silu_to_bf16(%x: tensor<13x70xbf16>, %w: tensor<37x70xbf16>, %b: tensor<37xf32>) -> tensor<13x37xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<70x37xbf16>
  %wt = linalg.transpose ins(%w : tensor<37x70xbf16>) outs(%e : tensor<70x37xbf16>) permutation = [1, 0]
  %c0 = tensor.empty() : tensor<13x37xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<13x37xf32>) -> tensor<13x37xf32>
  %p = linalg.matmul ins(%x, %wt : tensor<13x70xbf16>, tensor<70x37xbf16>) outs(%c : tensor<13x37xf32>) -> tensor<13x37xf32>
  %o = tensor.empty() : tensor<13x37xbf16>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<13x37xf32>, tensor<37xf32>) outs(%o : tensor<13x37xbf16>) {
  ^bb0(%v: f32, %bv: f32, %out: bf16):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %v, %bv : f32
    %neg = arith.negf %s : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %exp, %one : f32
    %sig = arith.divf %one, %den : f32
    %y = arith.mulf %sig, %s : f32
    %t = arith.truncf %y : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<13x37xbf16>
  return %r : tensor<13x37xbf16>
}

// A bf16 NHWC convolution into f32, bias, silu as x / (1 + exp(-x)).
func.func @bf16_conv_silu(%x: tensor<1x9x9x8xbf16>, %w: tensor<3x3x8x12xbf16>, %b: tensor<12xf32>) -> tensor<1x7x7x12xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<1x7x7x12xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x8xbf16>, tensor<3x3x8x12xbf16>) outs(%c : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
  %o = tensor.empty() : tensor<1x7x7x12xf32>
  %r = linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<1x7x7x12xf32>, tensor<12xf32>) outs(%o : tensor<1x7x7x12xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %minus1 = arith.constant -1.0 : f32
    %s = arith.addf %v, %bv : f32
    %neg = arith.mulf %s, %minus1 : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %one, %exp : f32
    %y = arith.divf %s, %den : f32
    linalg.yield %y : f32
  } -> tensor<1x7x7x12xf32>
  return %r : tensor<1x7x7x12xf32>
}

// Element i: ((i * 5) mod 11 - 5) / 8 (exact in bf16; the sums of 70
// products between about -6 and 6).
func.func private @value(%i: index) -> f32 {
  %c5 = arith.constant 5 : index
  %c11 = arith.constant 11 : index
  %m5 = arith.constant 5 : i64
  %eighth = arith.constant 0.125 : f32
  %s = arith.muli %i, %c5 : index
  %r = arith.remui %s, %c11 : index
  %ri = arith.index_cast %r : index to i64
  %v = arith.subi %ri, %m5 : i64
  %f = arith.sitofp %v : i64 to f32
  %q = arith.mulf %f, %eighth : f32
  return %q : f32
}

func.func private @filled_bf16(%n: index) -> memref<?xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.alloc(%n) : memref<?xbf16>
  scf.for %i = %c0 to %n step %c1 {
    %f = func.call @value(%i) : (index) -> f32
    %h = arith.truncf %f : f32 to bf16
    memref.store %h, %m[%i] : memref<?xbf16>
  }
  return %m : memref<?xbf16>
}

func.func private @filled_f32(%n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %f = func.call @value(%i) : (index) -> f32
    memref.store %f, %m[%i] : memref<?xf32>
  }
  return %m : memref<?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %c3 = arith.constant 3 : index
  %c12 = arith.constant 12 : index
  %c37 = arith.constant 37 : index
  %c350 = arith.constant 350 : index
  %c648 = arith.constant 648 : index
  %c864 = arith.constant 864 : index
  %c910 = arith.constant 910 : index
  %c2590 = arith.constant 2590 : index
  %xm = call @filled_bf16(%c910) : (index) -> memref<?xbf16>
  %x5m = call @filled_bf16(%c350) : (index) -> memref<?xbf16>
  %wm = call @filled_bf16(%c2590) : (index) -> memref<?xbf16>
  %bm = call @filled_f32(%c37) : (index) -> memref<?xf32>
  // A NaN in the bias's column 3 (0/0 at run time): NaN stays NaN.
  %z = memref.load %bm[%c3] : memref<?xf32>
  %zz = arith.subf %z, %z : f32
  %nan = arith.divf %zz, %zz : f32
  memref.store %nan, %bm[%c3] : memref<?xf32>
  %cxm = call @filled_bf16(%c648) : (index) -> memref<?xbf16>
  %cwm = call @filled_bf16(%c864) : (index) -> memref<?xbf16>
  %cbm = call @filled_f32(%c12) : (index) -> memref<?xf32>
  %xs = memref.cast %xm : memref<?xbf16> to memref<910xbf16>
  %x5s = memref.cast %x5m : memref<?xbf16> to memref<350xbf16>
  %ws = memref.cast %wm : memref<?xbf16> to memref<2590xbf16>
  %bs = memref.cast %bm : memref<?xf32> to memref<37xf32>
  %cxs = memref.cast %cxm : memref<?xbf16> to memref<648xbf16>
  %cws = memref.cast %cwm : memref<?xbf16> to memref<864xbf16>
  %cbs = memref.cast %cbm : memref<?xf32> to memref<12xf32>
  %xt = bufferization.to_tensor %xs restrict : memref<910xbf16> to tensor<910xbf16>
  %x5t = bufferization.to_tensor %x5s restrict : memref<350xbf16> to tensor<350xbf16>
  %wt = bufferization.to_tensor %ws restrict : memref<2590xbf16> to tensor<2590xbf16>
  %b = bufferization.to_tensor %bs restrict : memref<37xf32> to tensor<37xf32>
  %cxt = bufferization.to_tensor %cxs restrict : memref<648xbf16> to tensor<648xbf16>
  %cwt = bufferization.to_tensor %cws restrict : memref<864xbf16> to tensor<864xbf16>
  %cb = bufferization.to_tensor %cbs restrict : memref<12xf32> to tensor<12xf32>
  %x = tensor.expand_shape %xt [[0, 1]] output_shape [13, 70] : tensor<910xbf16> into tensor<13x70xbf16>
  %x5 = tensor.expand_shape %x5t [[0, 1]] output_shape [5, 70] : tensor<350xbf16> into tensor<5x70xbf16>
  %wT = tensor.expand_shape %wt [[0, 1]] output_shape [37, 70] : tensor<2590xbf16> into tensor<37x70xbf16>
  %w = tensor.expand_shape %wt [[0, 1]] output_shape [70, 37] : tensor<2590xbf16> into tensor<70x37xbf16>
  %cx = tensor.expand_shape %cxt [[0, 1, 2, 3]] output_shape [1, 9, 9, 8] : tensor<648xbf16> into tensor<1x9x9x8xbf16>
  %cw = tensor.expand_shape %cwt [[0, 1, 2, 3]] output_shape [3, 3, 8, 12] : tensor<864xbf16> into tensor<3x3x8x12xbf16>
  %r1 = call @bf16_linear_gelu(%x, %wT, %b) : (tensor<13x70xbf16>, tensor<37x70xbf16>, tensor<37xf32>) -> tensor<13x37xf32>
  %r2 = call @bf16_dense_silu(%x5, %w, %b) : (tensor<5x70xbf16>, tensor<70x37xbf16>, tensor<37xf32>) -> tensor<5x37xf32>
  %r3 = call @bf16_conv_silu(%cx, %cw, %cb) : (tensor<1x9x9x8xbf16>, tensor<3x3x8x12xbf16>, tensor<12xf32>) -> tensor<1x7x7x12xf32>
  %m1 = bufferization.to_buffer %r1 : tensor<13x37xf32> to memref<13x37xf32>
  %m2 = bufferization.to_buffer %r2 : tensor<5x37xf32> to memref<5x37xf32>
  %m3 = bufferization.to_buffer %r3 : tensor<1x7x7x12xf32> to memref<1x7x7x12xf32>
  %u1 = memref.cast %m1 : memref<13x37xf32> to memref<*xf32>
  %u2 = memref.cast %m2 : memref<5x37xf32> to memref<*xf32>
  %u3 = memref.cast %m3 : memref<1x7x7x12xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
  return
}

// The bf16-output layer's entry: its output widened to f32 and printed.
func.func @main_bf16() {
  %c3 = arith.constant 3 : index
  %c37 = arith.constant 37 : index
  %c910 = arith.constant 910 : index
  %c2590 = arith.constant 2590 : index
  %xm = call @filled_bf16(%c910) : (index) -> memref<?xbf16>
  %wm = call @filled_bf16(%c2590) : (index) -> memref<?xbf16>
  %bm = call @filled_f32(%c37) : (index) -> memref<?xf32>
  %z = memref.load %bm[%c3] : memref<?xf32>
  %zz = arith.subf %z, %z : f32
  %nan = arith.divf %zz, %zz : f32
  memref.store %nan, %bm[%c3] : memref<?xf32>
  %xs = memref.cast %xm : memref<?xbf16> to memref<910xbf16>
  %ws = memref.cast %wm : memref<?xbf16> to memref<2590xbf16>
  %bs = memref.cast %bm : memref<?xf32> to memref<37xf32>
  %xt = bufferization.to_tensor %xs restrict : memref<910xbf16> to tensor<910xbf16>
  %wt = bufferization.to_tensor %ws restrict : memref<2590xbf16> to tensor<2590xbf16>
  %b = bufferization.to_tensor %bs restrict : memref<37xf32> to tensor<37xf32>
  %x = tensor.expand_shape %xt [[0, 1]] output_shape [13, 70] : tensor<910xbf16> into tensor<13x70xbf16>
  %wT = tensor.expand_shape %wt [[0, 1]] output_shape [37, 70] : tensor<2590xbf16> into tensor<37x70xbf16>
  %r = call @bf16_linear_silu_to_bf16(%x, %wT, %b) : (tensor<13x70xbf16>, tensor<37x70xbf16>, tensor<37xf32>) -> tensor<13x37xbf16>
  %e = tensor.empty() : tensor<13x37xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<13x37xbf16>) outs(%e : tensor<13x37xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %f = arith.extf %v : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<13x37xf32>
  %m = bufferization.to_buffer %w : tensor<13x37xf32> to memref<13x37xf32>
  %u = memref.cast %m : memref<13x37xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
