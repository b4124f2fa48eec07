// Leaky relu after a matmul or a convolution, in the forms frontends write
// it, fused into the kernel's epilogue (x > 0 ? x : s * x: the larger of x
// and s * x for a slope below 1, the smaller above):
// - torch-mlir's aten.leaky_relu after aten.linear's bias add (linalg's
//   elementwise fusion merged them): addf(select(ugt), mulf(select, s));
// - jax.nn.leaky_relu after a dense layer, unmerged: a bias-add generic,
//   then select(cmpf oge(x, 0), x, mulf(s, x));
// - TOSA's maximum(x, mul(x, s)) (TFLite's LEAKY_RELU), and a slope above
//   1 as minimumf with a select the other way round (olt);
// - an NHWC convolution's bias add then leaky relu (YOLO's conv blocks);
// and a negative slope (neither max nor min computes it) left alone. The
// arguments arrive with dynamic strides: each kernel runs under its
// run-time check, the stock ops in the other branch.
// The bias holds a NaN in one column: leaky relu keeps it in every form.
// Bufferized with one-shot-bufferize's function boundaries, run with and
// without --qimeng-tensorop in three placements and compared exactly.
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// Default layout, the pass before deallocation:
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// On tensors, before bufferization:
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.tensor.mlir
// RUN: FileCheck %s < %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// After deallocation:
// RUN: %mlir-opt %t.default.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop | %mlir-opt %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
//
// The kernels are what ran: with a fault injected into them the output
// differs.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// CHECK-LABEL: func.func @torch_linear_leaky(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nt_b0_bias_leaky3c23d70a_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @jax_dense_leaky(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_leaky3e4ccccd_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @tosa_leaky(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_leaky3dcccccd_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @steep_leaky(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_leaky40400000_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @conv_bias_leaky(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s1x1_d1x1{{(_isrt)?}}_b0_bias_leaky3dcccccd_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @negative_slope(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_ldrt_
// CHECK:         linalg.generic
// CHECK:         return

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>

// aten.linear (weights 20x9, transposed) + bias, then aten.leaky_relu
// (0.01), merged into one generic.
func.func @torch_linear_leaky(%x: tensor<6x9xf32>, %w: tensor<20x9xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.01 : f32
  %e = tensor.empty() : tensor<9x20xf32>
  %wt = linalg.transpose ins(%w : tensor<20x9xf32>) outs(%e : tensor<9x20xf32>) permutation = [1, 0]
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %wt : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<6x20xf32>, tensor<20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %gt = arith.cmpf ugt, %s, %zero : f32
    %pos = arith.select %gt, %s, %zero : f32
    %neg = arith.select %gt, %zero, %s : f32
    %scaled = arith.mulf %neg, %slope : f32
    %y = arith.addf %pos, %scaled : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// A dense layer's bias add, then jax.nn.leaky_relu (0.2) in a generic of
// its own.
func.func @jax_dense_leaky(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.2 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o1 = tensor.empty() : tensor<6x20xf32>
  %s = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<6x20xf32>, tensor<20xf32>) outs(%o1 : tensor<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %y = arith.addf %v, %bv : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  %o2 = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<6x20xf32>) outs(%o2 : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %ge = arith.cmpf oge, %v, %zero : f32
    %m = arith.mulf %slope, %v : f32
    %y = arith.select %ge, %v, %m : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// TOSA's maximum(x, mul(x, 0.1)).
func.func @tosa_leaky(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.1 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %m = arith.mulf %v, %slope : f32
    %y = arith.maximumf %v, %m : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// A slope of 3: select(x olt 0, 3x, x), the smaller of x and 3x.
func.func @steep_leaky(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 3.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %lt = arith.cmpf olt, %v, %zero : f32
    %m = arith.mulf %v, %slope : f32
    %y = arith.select %lt, %m, %v : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// A YOLO-style convolution block: NHWC convolution, bias add, leaky relu
// (0.1) as maximumf.
func.func @conv_bias_leaky(%x: tensor<1x9x9x4xf32>, %w: tensor<3x3x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x7x7x8xf32> {
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.1 : f32
  %c0 = tensor.empty() : tensor<1x7x7x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>) outs(%c : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %o = tensor.empty() : tensor<1x7x7x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<1x7x7x8xf32>, tensor<8xf32>) outs(%o : tensor<1x7x7x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %m = arith.mulf %s, %slope : f32
    %y = arith.maximumf %s, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x7x7x8xf32>
  return %r : tensor<1x7x7x8xf32>
}

// A slope of -0.5: x > 0 ? x : -0.5 x is neither max(x, -0.5 x) nor min;
// the generic stays.
func.func @negative_slope(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant -0.5 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %gt = arith.cmpf ogt, %v, %zero : f32
    %m = arith.mulf %v, %slope : f32
    %y = arith.select %gt, %v, %m : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// Element i of a buffer: (i * 5) mod 7 - 3 as f32.
func.func private @fill(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c3 = arith.constant 3 : i64
  %n = memref.dim %m, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %s = arith.muli %i, %c5 : index
    %r = arith.remui %s, %c7 : index
    %ri = arith.index_cast %r : index to i64
    %v = arith.subi %ri, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    memref.store %f, %m[%i] : memref<?xf32>
  }
  return
}

// A tensor of `n` elements filled by @fill.
func.func private @filled(%n: index) -> memref<?xf32> {
  %m = memref.alloc(%n) : memref<?xf32>
  call @fill(%m) : (memref<?xf32>) -> ()
  return %m : memref<?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

// OUT: rank = 2 offset = 0 sizes = [6, 20]
// OUT-NEXT: nan
// OUT-COUNT-5: rank = {{[24]}} offset = 0
func.func @main() {
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c20 = arith.constant 20 : index
  %c54 = arith.constant 54 : index
  %c180 = arith.constant 180 : index
  %c288 = arith.constant 288 : index
  %c324 = arith.constant 324 : index
  %xm = call @filled(%c54) : (index) -> memref<?xf32>
  %wm = call @filled(%c180) : (index) -> memref<?xf32>
  %bm = call @filled(%c20) : (index) -> memref<?xf32>
  // A NaN in the bias's column 3 (0/0 at run time).
  %z = memref.load %bm[%c3] : memref<?xf32>
  %zz = arith.subf %z, %z : f32
  %nan = arith.divf %zz, %zz : f32
  memref.store %nan, %bm[%c3] : memref<?xf32>
  %cxm = call @filled(%c324) : (index) -> memref<?xf32>
  %cwm = call @filled(%c288) : (index) -> memref<?xf32>
  %cbm = call @filled(%c8) : (index) -> memref<?xf32>
  %xs = memref.cast %xm : memref<?xf32> to memref<54xf32>
  %ws = memref.cast %wm : memref<?xf32> to memref<180xf32>
  %bs = memref.cast %bm : memref<?xf32> to memref<20xf32>
  %cxs = memref.cast %cxm : memref<?xf32> to memref<324xf32>
  %cws = memref.cast %cwm : memref<?xf32> to memref<288xf32>
  %cbs = memref.cast %cbm : memref<?xf32> to memref<8xf32>
  %xt = bufferization.to_tensor %xs restrict : memref<54xf32> to tensor<54xf32>
  %wt = bufferization.to_tensor %ws restrict : memref<180xf32> to tensor<180xf32>
  %b = bufferization.to_tensor %bs restrict : memref<20xf32> to tensor<20xf32>
  %cxt = bufferization.to_tensor %cxs restrict : memref<324xf32> to tensor<324xf32>
  %cwt = bufferization.to_tensor %cws restrict : memref<288xf32> to tensor<288xf32>
  %cb = bufferization.to_tensor %cbs restrict : memref<8xf32> to tensor<8xf32>
  %x = tensor.expand_shape %xt [[0, 1]] output_shape [6, 9] : tensor<54xf32> into tensor<6x9xf32>
  %w = tensor.expand_shape %wt [[0, 1]] output_shape [9, 20] : tensor<180xf32> into tensor<9x20xf32>
  %wT = tensor.expand_shape %wt [[0, 1]] output_shape [20, 9] : tensor<180xf32> into tensor<20x9xf32>
  %cx = tensor.expand_shape %cxt [[0, 1, 2, 3]] output_shape [1, 9, 9, 4] : tensor<324xf32> into tensor<1x9x9x4xf32>
  %cw = tensor.expand_shape %cwt [[0, 1, 2, 3]] output_shape [3, 3, 4, 8] : tensor<288xf32> into tensor<3x3x4x8xf32>
  %r1 = call @torch_linear_leaky(%x, %wT, %b) : (tensor<6x9xf32>, tensor<20x9xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %r2 = call @jax_dense_leaky(%x, %w, %b) : (tensor<6x9xf32>, tensor<9x20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %r3 = call @tosa_leaky(%x, %w) : (tensor<6x9xf32>, tensor<9x20xf32>) -> tensor<6x20xf32>
  %r4 = call @steep_leaky(%x, %w) : (tensor<6x9xf32>, tensor<9x20xf32>) -> tensor<6x20xf32>
  %r5 = call @conv_bias_leaky(%cx, %cw, %cb) : (tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>, tensor<8xf32>) -> tensor<1x7x7x8xf32>
  %r6 = call @negative_slope(%x, %w) : (tensor<6x9xf32>, tensor<9x20xf32>) -> tensor<6x20xf32>
  %m1 = bufferization.to_buffer %r1 : tensor<6x20xf32> to memref<6x20xf32>
  %m2 = bufferization.to_buffer %r2 : tensor<6x20xf32> to memref<6x20xf32>
  %m3 = bufferization.to_buffer %r3 : tensor<6x20xf32> to memref<6x20xf32>
  %m4 = bufferization.to_buffer %r4 : tensor<6x20xf32> to memref<6x20xf32>
  %m5 = bufferization.to_buffer %r5 : tensor<1x7x7x8xf32> to memref<1x7x7x8xf32>
  %m6 = bufferization.to_buffer %r6 : tensor<6x20xf32> to memref<6x20xf32>
  %u1 = memref.cast %m1 : memref<6x20xf32> to memref<*xf32>
  %u2 = memref.cast %m2 : memref<6x20xf32> to memref<*xf32>
  %u3 = memref.cast %m3 : memref<6x20xf32> to memref<*xf32>
  %u4 = memref.cast %m4 : memref<6x20xf32> to memref<*xf32>
  %u5 = memref.cast %m5 : memref<1x7x7x8xf32> to memref<*xf32>
  %u6 = memref.cast %m6 : memref<6x20xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u4) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u5) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u6) : (memref<*xf32>) -> ()
  return
}
