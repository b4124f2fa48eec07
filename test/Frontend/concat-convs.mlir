// Concatenations written in place, as frontends make them: an Inception
// block (two NHWC convolutions, a 1x1 and a padded 3x3, each into a zero
// fill, the first's bias add and relu, the second's relu, as two generics
// and one, their outputs concatenated along the channels), a DenseNet layer
// (a 1x1 convolution of the features so far, its output appended to the
// same buffer), torch's torch.cat of two NCHW convolutions along the
// channels (batch 2: each image's output is dense, the images a wider
// image apart, so the one-image kernel runs once per image), two linear
// projections concatenated along the features, and two linear layers
// (bias add and relu, bias add) concatenated so.
// MLIR's --eliminate-empty-tensors (as IREE-style pipelines run it before
// bufferization) makes each op write its slice of the concatenation in
// place: an NHWC output whose pixels lie the whole concatenation's channels
// apart (`_ldo<stride>`), a matmul's C with the concatenation's row stride;
// the Inception branches' and the linear layers' last generics write
// their slices, so the kernels do, with those generics as their epilogues.
// The zero fills of those slices fold (nothing else touches the buffer in
// between; the DenseNet layer reads a copy of its features, which
// one-shot-bufferize makes since the layer writes the same buffer). Run
// with and without --qimeng-tensorop and compared exactly (small
// integers).
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.plain.mlir
// RUN: %mlir-opt %t.plain.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// Identity layout, slices written in place, the pass before deallocation:
// RUN: %mlir-opt %s --eliminate-empty-tensors --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | %qimeng-opt --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// Default layout (dynamic strides at the function boundaries), the pass
// after deallocation:
// RUN: %mlir-opt %s --eliminate-empty-tensors --one-shot-bufferize="bufferize-function-boundaries" %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// The kernels are what ran: with a fault injected into them the output
// differs.
// RUN: %mlir-opt %s --eliminate-empty-tensors --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | %qimeng-opt '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// CHECK-LABEL: func.func @inception(
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     linalg.conv_2d
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_2x9x9x4_f8_k1x1_s1x1_d1x1_ldo14_b0_bias_relu_
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_2x11x11x4_f6_k3x3_s1x1_d1x1_ldo14_b0_relu_
// CHECK-NOT:     linalg.conv_2d
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @densenet_layer(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_2x9x9x4_f6_k1x1_s1x1_d1x1_ldo10_b0_
// CHECK-NOT:     linalg.conv_2d
// One image a call, the images on two threads (the batch launcher).
// CHECK-LABEL: func.func @torch_cat(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sconv2d_nchw_fchw_1x9x9x4_f8_k1x1_s1x1_d1x1_b0_{{.*}}_batch_t2(
// CHECK:         llvm.call @qm_sconv2d_nchw_fchw_1x11x11x4_f6_k3x3_s1x1_d1x1_b0_bias_{{.*}}_batch_t2(
// CHECK-NOT:     linalg.conv_2d
// CHECK-LABEL: func.func @projections(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sgemm_12x8x20_nn_b0_lda20_ldb8_ldc16_
// CHECK:         llvm.call @qm_sgemm_12x8x20_nn_b0_lda20_ldb8_ldc16_
// CHECK-NOT:     linalg.matmul
// CHECK-LABEL: func.func @linear_cat(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sgemm_12x8x20_nn_b0_bias_relu_lda20_ldb8_ldc16_
// CHECK:         llvm.call @qm_sgemm_12x8x20_nn_b0_bias_lda20_ldb8_ldc16_
// CHECK-NOT:     linalg.matmul
// CHECK-NOT:     linalg.generic
// CHECK:         return

// The inputs arrive with dynamic strides: checked at run time.
// DEFAULT-LABEL: func.func @inception(
// DEFAULT:         llvm.call @qm_sconv2d_nhwc_hwcf_2x9x9x4_f8_k1x1_s1x1_d1x1_ldo14_{{(isrt_)?}}b0_bias_relu_
// DEFAULT:         llvm.call @qm_sconv2d_nhwc_hwcf_2x11x11x4_f6_k3x3_s1x1_d1x1_ldo14_b0_relu_
// DEFAULT-LABEL: func.func @projections(
// DEFAULT:         llvm.call @qm_sgemm_12x8x20_nn_b0_
// DEFAULT-LABEL: func.func @linear_cat(
// DEFAULT:         llvm.call @qm_sgemm_12x8x20_nn_b0_{{.*}}bias_relu_
// DEFAULT:         llvm.call @qm_sgemm_12x8x20_nn_b0_{{.*}}bias_

// OUT: rank = 4 offset = 0 sizes = [2, 9, 9, 14]
// OUT: rank = 4 offset = 0 sizes = [2, 9, 9, 10]
// OUT: rank = 4 offset = 0 sizes = [2, 14, 9, 9]
// OUT: rank = 2 offset = 0 sizes = [12, 16]
// OUT: rank = 2 offset = 0 sizes = [12, 16]

#bias4 = affine_map<(a, b, c, d) -> (d)>
#id4i = affine_map<(a, b, c, d) -> (a, b, c, d)>

func.func @inception(%x: tensor<2x9x9x4xf32>, %w1: tensor<1x1x4x8xf32>, %w3: tensor<3x3x4x6xf32>, %bias: tensor<8xf32>) -> tensor<2x9x9x14xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x9x9x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x9x9x8xf32>) -> tensor<2x9x9x8xf32>
  %p1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w1 : tensor<2x9x9x4xf32>, tensor<1x1x4x8xf32>) outs(%z1 : tensor<2x9x9x8xf32>) -> tensor<2x9x9x8xf32>
  %a1 = tensor.empty() : tensor<2x9x9x8xf32>
  %s1 = linalg.generic {indexing_maps = [#id4i, #bias4, #id4i], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p1, %bias : tensor<2x9x9x8xf32>, tensor<8xf32>) outs(%a1 : tensor<2x9x9x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<2x9x9x8xf32>
  %r1 = tensor.empty() : tensor<2x9x9x8xf32>
  %b1 = linalg.generic {indexing_maps = [#id4i, #id4i], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s1 : tensor<2x9x9x8xf32>) outs(%r1 : tensor<2x9x9x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x9x9x8xf32>
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x9x9x4xf32> to tensor<2x11x11x4xf32>
  %e3 = tensor.empty() : tensor<2x9x9x6xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x9x9x6xf32>) -> tensor<2x9x9x6xf32>
  %p3 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w3 : tensor<2x11x11x4xf32>, tensor<3x3x4x6xf32>) outs(%z3 : tensor<2x9x9x6xf32>) -> tensor<2x9x9x6xf32>
  %r3 = tensor.empty() : tensor<2x9x9x6xf32>
  %b3 = linalg.generic {indexing_maps = [#id4i, #id4i], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p3 : tensor<2x9x9x6xf32>) outs(%r3 : tensor<2x9x9x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %gt = arith.cmpf ugt, %v, %zero : f32
    %r = arith.select %gt, %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x9x9x6xf32>
  %e = tensor.empty() : tensor<2x9x9x14xf32>
  %c1 = tensor.insert_slice %b1 into %e[0, 0, 0, 0] [2, 9, 9, 8] [1, 1, 1, 1] : tensor<2x9x9x8xf32> into tensor<2x9x9x14xf32>
  %c2 = tensor.insert_slice %b3 into %c1[0, 0, 0, 8] [2, 9, 9, 6] [1, 1, 1, 1] : tensor<2x9x9x6xf32> into tensor<2x9x9x14xf32>
  return %c2 : tensor<2x9x9x14xf32>
}

func.func @densenet_layer(%x: tensor<2x9x9x4xf32>, %w: tensor<1x1x4x6xf32>) -> tensor<2x9x9x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x9x9x10xf32>
  %features = tensor.insert_slice %x into %e[0, 0, 0, 0] [2, 9, 9, 4] [1, 1, 1, 1] : tensor<2x9x9x4xf32> into tensor<2x9x9x10xf32>
  %so_far = tensor.extract_slice %features[0, 0, 0, 0] [2, 9, 9, 4] [1, 1, 1, 1] : tensor<2x9x9x10xf32> to tensor<2x9x9x4xf32>
  %eo = tensor.empty() : tensor<2x9x9x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x9x9x6xf32>) -> tensor<2x9x9x6xf32>
  %new = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%so_far, %w : tensor<2x9x9x4xf32>, tensor<1x1x4x6xf32>) outs(%z : tensor<2x9x9x6xf32>) -> tensor<2x9x9x6xf32>
  %r = tensor.insert_slice %new into %features[0, 0, 0, 4] [2, 9, 9, 6] [1, 1, 1, 1] : tensor<2x9x9x6xf32> into tensor<2x9x9x10xf32>
  return %r : tensor<2x9x9x10xf32>
}

#chan = affine_map<(n, c, h, w) -> (c)>
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>

func.func @torch_cat(%x: tensor<2x4x9x9xf32>, %w1: tensor<8x4x1x1xf32>, %w3: tensor<6x4x3x3xf32>, %bias: tensor<6xf32>) -> tensor<2x14x9x9xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x8x9x9xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8x9x9xf32>) -> tensor<2x8x9x9xf32>
  %b1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w1 : tensor<2x4x9x9xf32>, tensor<8x4x1x1xf32>) outs(%z1 : tensor<2x8x9x9xf32>) -> tensor<2x8x9x9xf32>
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x4x9x9xf32> to tensor<2x4x11x11xf32>
  %e3 = tensor.empty() : tensor<2x6x9x9xf32>
  %init = linalg.generic {indexing_maps = [#chan, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<6xf32>) outs(%e3 : tensor<2x6x9x9xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<2x6x9x9xf32>
  %b3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w3 : tensor<2x4x11x11xf32>, tensor<6x4x3x3xf32>) outs(%init : tensor<2x6x9x9xf32>) -> tensor<2x6x9x9xf32>
  %e = tensor.empty() : tensor<2x14x9x9xf32>
  %c1 = tensor.insert_slice %b1 into %e[0, 0, 0, 0] [2, 8, 9, 9] [1, 1, 1, 1] : tensor<2x8x9x9xf32> into tensor<2x14x9x9xf32>
  %c2 = tensor.insert_slice %b3 into %c1[0, 8, 0, 0] [2, 6, 9, 9] [1, 1, 1, 1] : tensor<2x6x9x9xf32> into tensor<2x14x9x9xf32>
  return %c2 : tensor<2x14x9x9xf32>
}

func.func @projections(%a: tensor<12x20xf32>, %wq: tensor<20x8xf32>, %wk: tensor<20x8xf32>) -> tensor<12x16xf32> {
  %zero = arith.constant 0.0 : f32
  %eq = tensor.empty() : tensor<12x8xf32>
  %zq = linalg.fill ins(%zero : f32) outs(%eq : tensor<12x8xf32>) -> tensor<12x8xf32>
  %q = linalg.matmul ins(%a, %wq : tensor<12x20xf32>, tensor<20x8xf32>) outs(%zq : tensor<12x8xf32>) -> tensor<12x8xf32>
  %ek = tensor.empty() : tensor<12x8xf32>
  %zk = linalg.fill ins(%zero : f32) outs(%ek : tensor<12x8xf32>) -> tensor<12x8xf32>
  %k = linalg.matmul ins(%a, %wk : tensor<12x20xf32>, tensor<20x8xf32>) outs(%zk : tensor<12x8xf32>) -> tensor<12x8xf32>
  %e = tensor.empty() : tensor<12x16xf32>
  %c1 = tensor.insert_slice %q into %e[0, 0] [12, 8] [1, 1] : tensor<12x8xf32> into tensor<12x16xf32>
  %c2 = tensor.insert_slice %k into %c1[0, 8] [12, 8] [1, 1] : tensor<12x8xf32> into tensor<12x16xf32>
  return %c2 : tensor<12x16xf32>
}

#id2 = affine_map<(i, j) -> (i, j)>
#bias2 = affine_map<(i, j) -> (j)>

func.func @linear_cat(%a: tensor<12x20xf32>, %w1: tensor<20x8xf32>, %w2: tensor<20x8xf32>, %b: tensor<8xf32>) -> tensor<12x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<12x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<12x8xf32>) -> tensor<12x8xf32>
  %p1 = linalg.matmul ins(%a, %w1 : tensor<12x20xf32>, tensor<20x8xf32>) outs(%z1 : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o1 = tensor.empty() : tensor<12x8xf32>
  %y1 = linalg.generic {indexing_maps = [#id2, #bias2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p1, %b : tensor<12x8xf32>, tensor<8xf32>) outs(%o1 : tensor<12x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<12x8xf32>
  %e2 = tensor.empty() : tensor<12x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<12x8xf32>) -> tensor<12x8xf32>
  %p2 = linalg.matmul ins(%a, %w2 : tensor<12x20xf32>, tensor<20x8xf32>) outs(%z2 : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o2 = tensor.empty() : tensor<12x8xf32>
  %y2 = linalg.generic {indexing_maps = [#id2, #bias2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p2, %b : tensor<12x8xf32>, tensor<8xf32>) outs(%o2 : tensor<12x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<12x8xf32>
  %e = tensor.empty() : tensor<12x16xf32>
  %c1 = tensor.insert_slice %y1 into %e[0, 0] [12, 8] [1, 1] : tensor<12x8xf32> into tensor<12x16xf32>
  %c2 = tensor.insert_slice %y2 into %c1[0, 8] [12, 8] [1, 1] : tensor<12x8xf32> into tensor<12x16xf32>
  return %c2 : tensor<12x16xf32>
}

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>

// (a * p + b * q + c * r + d * s) mod 7 - 3 as f32.
func.func private @pattern4(%t: tensor<?x?x?x?xf32>, %p: index, %q: index, %r: index, %s: index) -> tensor<?x?x?x?xf32> {
  %out = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?x?xf32>) {
  ^bb0(%o: f32):
    %a = linalg.index 0 : index
    %b = linalg.index 1 : index
    %c = linalg.index 2 : index
    %d = linalg.index 3 : index
    %ap = arith.muli %a, %p : index
    %bq = arith.muli %b, %q : index
    %cr = arith.muli %c, %r : index
    %ds = arith.muli %d, %s : index
    %s0 = arith.addi %ap, %bq : index
    %s1 = arith.addi %s0, %cr : index
    %s2 = arith.addi %s1, %ds : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %s2, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %c3 = arith.constant 3 : i64
    %v = arith.subi %mi, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?x?x?xf32>
  return %out : tensor<?x?x?x?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%t: tensor<*xf32>) {
  %m = bufferization.to_buffer %t : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c12 = arith.constant 12 : index
  %c20 = arith.constant 20 : index
  %ex = tensor.empty(%c2, %c9, %c9, %c4) : tensor<?x?x?x?xf32>
  %xd = call @pattern4(%ex, %c1, %c3, %c5, %c2) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %x = tensor.cast %xd : tensor<?x?x?x?xf32> to tensor<2x9x9x4xf32>
  %e1 = tensor.empty(%c1, %c1, %c4, %c8) : tensor<?x?x?x?xf32>
  %w1d = call @pattern4(%e1, %c2, %c5, %c1, %c3) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %w1 = tensor.cast %w1d : tensor<?x?x?x?xf32> to tensor<1x1x4x8xf32>
  %e3 = tensor.empty(%c3, %c3, %c4, %c6) : tensor<?x?x?x?xf32>
  %w3d = call @pattern4(%e3, %c3, %c1, %c2, %c5) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %w3 = tensor.cast %w3d : tensor<?x?x?x?xf32> to tensor<3x3x4x6xf32>
  %eib = tensor.empty(%c1, %c1, %c1, %c8) : tensor<?x?x?x?xf32>
  %ibd = call @pattern4(%eib, %c1, %c1, %c1, %c2) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %ib4 = tensor.cast %ibd : tensor<?x?x?x?xf32> to tensor<1x1x1x8xf32>
  %ibias = tensor.collapse_shape %ib4 [[0, 1, 2, 3]] : tensor<1x1x1x8xf32> into tensor<8xf32>
  %r1 = call @inception(%x, %w1, %w3, %ibias) : (tensor<2x9x9x4xf32>, tensor<1x1x4x8xf32>, tensor<3x3x4x6xf32>, tensor<8xf32>) -> tensor<2x9x9x14xf32>
  %r1u = tensor.cast %r1 : tensor<2x9x9x14xf32> to tensor<*xf32>
  call @print(%r1u) : (tensor<*xf32>) -> ()
  %ed = tensor.empty(%c1, %c1, %c4, %c6) : tensor<?x?x?x?xf32>
  %wdd = call @pattern4(%ed, %c5, %c2, %c1, %c3) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %wd = tensor.cast %wdd : tensor<?x?x?x?xf32> to tensor<1x1x4x6xf32>
  %r2 = call @densenet_layer(%x, %wd) : (tensor<2x9x9x4xf32>, tensor<1x1x4x6xf32>) -> tensor<2x9x9x10xf32>
  %r2u = tensor.cast %r2 : tensor<2x9x9x10xf32> to tensor<*xf32>
  call @print(%r2u) : (tensor<*xf32>) -> ()
  %en = tensor.empty(%c2, %c4, %c9, %c9) : tensor<?x?x?x?xf32>
  %nd = call @pattern4(%en, %c2, %c1, %c3, %c5) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %xn = tensor.cast %nd : tensor<?x?x?x?xf32> to tensor<2x4x9x9xf32>
  %ef1 = tensor.empty(%c8, %c4, %c1, %c1) : tensor<?x?x?x?xf32>
  %f1d = call @pattern4(%ef1, %c3, %c2, %c1, %c1) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %f1 = tensor.cast %f1d : tensor<?x?x?x?xf32> to tensor<8x4x1x1xf32>
  %ef3 = tensor.empty(%c6, %c4, %c3, %c3) : tensor<?x?x?x?xf32>
  %f3d = call @pattern4(%ef3, %c1, %c5, %c2, %c3) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %f3 = tensor.cast %f3d : tensor<?x?x?x?xf32> to tensor<6x4x3x3xf32>
  %eb = tensor.empty(%c1, %c1, %c1, %c6) : tensor<?x?x?x?xf32>
  %bd = call @pattern4(%eb, %c1, %c1, %c1, %c3) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %b4 = tensor.cast %bd : tensor<?x?x?x?xf32> to tensor<1x1x1x6xf32>
  %bias = tensor.collapse_shape %b4 [[0, 1, 2, 3]] : tensor<1x1x1x6xf32> into tensor<6xf32>
  %r4 = call @torch_cat(%xn, %f1, %f3, %bias) : (tensor<2x4x9x9xf32>, tensor<8x4x1x1xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<2x14x9x9xf32>
  %r4u = tensor.cast %r4 : tensor<2x14x9x9xf32> to tensor<*xf32>
  call @print(%r4u) : (tensor<*xf32>) -> ()
  %ea = tensor.empty(%c1, %c1, %c12, %c20) : tensor<?x?x?x?xf32>
  %ad = call @pattern4(%ea, %c1, %c1, %c3, %c2) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %a4 = tensor.cast %ad : tensor<?x?x?x?xf32> to tensor<1x1x12x20xf32>
  %a = tensor.collapse_shape %a4 [[0, 1, 2], [3]] : tensor<1x1x12x20xf32> into tensor<12x20xf32>
  %eq = tensor.empty(%c1, %c1, %c20, %c8) : tensor<?x?x?x?xf32>
  %qd = call @pattern4(%eq, %c1, %c1, %c2, %c5) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %q4 = tensor.cast %qd : tensor<?x?x?x?xf32> to tensor<1x1x20x8xf32>
  %wq = tensor.collapse_shape %q4 [[0, 1, 2], [3]] : tensor<1x1x20x8xf32> into tensor<20x8xf32>
  %kd = call @pattern4(%eq, %c1, %c1, %c3, %c1) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %k4 = tensor.cast %kd : tensor<?x?x?x?xf32> to tensor<1x1x20x8xf32>
  %wk = tensor.collapse_shape %k4 [[0, 1, 2], [3]] : tensor<1x1x20x8xf32> into tensor<20x8xf32>
  %r3 = call @projections(%a, %wq, %wk) : (tensor<12x20xf32>, tensor<20x8xf32>, tensor<20x8xf32>) -> tensor<12x16xf32>
  %r3u = tensor.cast %r3 : tensor<12x16xf32> to tensor<*xf32>
  call @print(%r3u) : (tensor<*xf32>) -> ()
  %r5 = call @linear_cat(%a, %wq, %wk, %ibias) : (tensor<12x20xf32>, tensor<20x8xf32>, tensor<20x8xf32>, tensor<8xf32>) -> tensor<12x16xf32>
  %r5u = tensor.cast %r5 : tensor<12x16xf32> to tensor<*xf32>
  call @print(%r5u) : (tensor<*xf32>) -> ()
  return
}
