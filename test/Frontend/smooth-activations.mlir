// Smooth activations after a matmul or a convolution, in the forms
// frontends write them, fused into the kernel's epilogue (computed in f32
// to a few ulps: x86.py's emit_smooth_activation):
// - torch-mlir's aten.gelu (exact: 0.5 (1 + erf((x - 0) / math.sqrt(2)))
//   times x) after aten.linear's bias add, merged into one generic;
// - jax.nn.gelu (approximate: tanh, x^3 as products) after a dense
//   layer's bias add in a generic of its own;
// - GPT-2's gelu_new (math.powf(x, 3.0)), without a bias;
// - torch's aten.silu (x * sigmoid(x), sigmoid as 1 / (1 + exp(-x)));
// - TOSA's sigmoid (a binary classifier's output);
// - a YOLOv5 convolution block: NHWC convolution, bias, silu as
//   x / (1 + exp(-x));
// - a binary classifier's head: one output column, sigmoid (the product
//   of one column is computed as its transpose, one row against the
//   features' rows read in place: the matrix-vector form);
// - MobileNetV3's hardswish, x * relu6(x + 3) / 6: after an NHWC
//   convolution's bias with relu6 as torch-mlir's aten.clamp writes it
//   (cmpf ult and ugt, select), and after a linear layer as
//   arith.maximumf and minimumf;
// - BERT's pooler: a linear layer's bias, then math.tanh;
// - YOLOv4's mish after an NHWC convolution's bias, as torch-mlir
//   decomposes aten.mish: x * tanh(softplus(x)), softplus behind its
//   threshold (x > 20 ? x : log1p(exp(x))), and after a linear layer as
//   ONNX writes it (log(exp(x) + 1), the product tanh * x);
// - Mamba's dt projection: a linear layer's bias, then torch-mlir's
//   softplus (x > 20 ? x : log1p(exp(x)), beta 1 as a multiplication
//   and a division by 1), and JAX's (jax.nn.softplus: logaddexp(x, 0),
//   max(x, 0) + log1p(exp(-|x - 0|)) behind its NaN select);
// - hardsigmoid (MobileNetV3's squeeze-and-excitation gate) after an NHWC
//   convolution's bias as torch-mlir decomposes aten.hardsigmoid
//   (min(max((x + 3) / 6, 0), 1)), and after a dense layer as
//   jax.nn.hard_sigmoid writes it (relu6(x + 3) / 6);
// and a gelu with the wrong constant, a mish whose softplus threshold
// (5) changes its results and relu6(x + 2) / 6 left alone. Run with and without
// --qimeng-tensorop (the stock side through libm: erff, tanhf, expf,
// powf) in three placements, compared number by number within 2e-5
// relative + 1e-6 (printMemrefF32's six digits; the activations differ
// from libm's by a few ulps).
// REQUIRES: host-avx2, host-fma
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// Default layout, the pass before deallocation:
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
// After deallocation:
// RUN: %mlir-opt %t.default.mlir %dealloc \
// RUN:   | %qimeng-opt --qimeng-tensorop | %mlir-opt --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: %python %S/Inputs/compare_close.py %t.reference %t.v3 2e-5 1e-6
//
// The kernels are what ran: with a fault injected into them the output
// differs.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not %python %S/Inputs/compare_close.py %t.reference %t.fault 2e-5 1e-6 > /dev/null

// CHECK-LABEL: func.func @torch_linear_gelu(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nt_b0_bias_gelu_erf_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @jax_dense_gelu(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_gelu_tanh_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @gpt2_gelu_new(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_gelu_tanh_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @torch_silu(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_silu_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @tosa_sigmoid(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_sigmoid_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @conv_bias_silu(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s1x1_d1x1{{(_isrt)?}}_b0_bias_silu_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @classifier_head(
// CHECK:         llvm.call @qm_sgemm_1x6x9_nt_b0_sigmoid_{{.*}}gemv8
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @conv_bias_hardswish(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s1x1_d1x1{{(_isrt)?}}_b0_bias_hardswish_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @linear_hardswish(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_hardswish_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @conv_bias_hardsigmoid(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s1x1_d1x1{{(_isrt)?}}_b0_bias_hardsigmoid_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @jax_dense_hard_sigmoid(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_hardsigmoid_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @bert_pooler_tanh(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_tanh_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @yolov4_conv_mish(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x4_f8_k3x3_s1x1_d1x1{{(_isrt)?}}_b0_bias_mish_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @onnx_linear_mish(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_mish_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @mamba_dt_softplus(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_softplus_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @jax_dt_softplus(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_bias_softplus_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @not_mish(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_ldrt_
// CHECK:         linalg.generic
// CHECK:         math.log1p
// CHECK:         return
// CHECK-LABEL: func.func @not_gelu(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_ldrt_
// CHECK:         linalg.generic
// CHECK:         math.erf
// CHECK:         return
// CHECK-LABEL: func.func @not_hardsigmoid(
// CHECK:         llvm.call @qm_sgemm_6x20x9_nn_b0_ldrt_
// CHECK:         linalg.generic
// CHECK:         arith.minimumf
// CHECK:         return

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>

// aten.linear (weights 20x9, transposed) + bias, then aten.gelu, merged.
func.func @torch_linear_gelu(%x: tensor<6x9xf32>, %w: tensor<20x9xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
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
    %cst0 = arith.constant 0.0 : f32
    %cst1 = arith.constant 1.0 : f32
    %cst2 = arith.constant 2.0 : f32
    %half = arith.constant 0.5 : f32
    %centred = arith.subf %s, %cst0 : f32
    %sqrt2 = math.sqrt %cst2 : f32
    %arg = arith.divf %centred, %sqrt2 : f32
    %erf = math.erf %arg : f32
    %plus1 = arith.addf %cst1, %erf : f32
    %cdf = arith.mulf %half, %plus1 : f32
    %y = arith.mulf %s, %cdf : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// A dense layer's bias add, then jax.nn.gelu (approximate) on its own.
func.func @jax_dense_gelu(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
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
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %beta = arith.constant 0.797884583 : f32
    %kappa = arith.constant 0.044715 : f32
    %x2 = arith.mulf %v, %v : f32
    %x3 = arith.mulf %x2, %v : f32
    %kx3 = arith.mulf %kappa, %x3 : f32
    %inner = arith.addf %v, %kx3 : f32
    %u = arith.mulf %beta, %inner : f32
    %t = math.tanh %u : f32
    %onet = arith.addf %one, %t : f32
    %hx = arith.mulf %half, %v : f32
    %y = arith.mulf %hx, %onet : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 pow(x, 3)))).
func.func @gpt2_gelu_new(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %three = arith.constant 3.0 : f32
    %beta = arith.constant 0.797884583 : f32
    %kappa = arith.constant 0.044715 : f32
    %x3 = math.powf %v, %three : f32
    %kx3 = arith.mulf %x3, %kappa : f32
    %inner = arith.addf %v, %kx3 : f32
    %u = arith.mulf %inner, %beta : f32
    %t = math.tanh %u : f32
    %onet = arith.addf %t, %one : f32
    %h = arith.mulf %v, %half : f32
    %y = arith.mulf %h, %onet : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// aten.linear's bias, then aten.silu: x * sigmoid(x), merged.
func.func @torch_silu(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<6x20xf32>, tensor<20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %v, %bv : f32
    %neg = arith.negf %s : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %exp, %one : f32
    %sig = arith.divf %one, %den : f32
    %y = arith.mulf %sig, %s : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// TOSA's sigmoid on a linear layer without a bias.
func.func @tosa_sigmoid(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %v : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %one, %exp : f32
    %y = arith.divf %one, %den : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// A YOLOv5 convolution block: NHWC convolution, bias add, silu as
// x / (1 + exp(-x)).
func.func @conv_bias_silu(%x: tensor<1x9x9x4xf32>, %w: tensor<3x3x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x7x7x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<1x7x7x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>) outs(%c : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %o = tensor.empty() : tensor<1x7x7x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<1x7x7x8xf32>, tensor<8xf32>) outs(%o : tensor<1x7x7x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %minus1 = arith.constant -1.0 : f32
    %s = arith.addf %v, %bv : f32
    %neg = arith.mulf %s, %minus1 : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %one, %exp : f32
    %y = arith.divf %s, %den : f32
    linalg.yield %y : f32
  } -> tensor<1x7x7x8xf32>
  return %r : tensor<1x7x7x8xf32>
}

// A classifier's head: 6 samples of 9 features, one logit each, sigmoid.
func.func @classifier_head(%x: tensor<6x9xf32>, %w: tensor<9x1xf32>) -> tensor<6x1xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x1xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x1xf32>) -> tensor<6x1xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x1xf32>) outs(%c : tensor<6x1xf32>) -> tensor<6x1xf32>
  %o = tensor.empty() : tensor<6x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x1xf32>) outs(%o : tensor<6x1xf32>) {
  ^bb0(%v: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %v : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %one, %exp : f32
    %y = arith.divf %one, %den : f32
    linalg.yield %y : f32
  } -> tensor<6x1xf32>
  return %r : tensor<6x1xf32>
}

// MobileNetV3's block: NHWC convolution, bias, hardswish with relu6 as
// torch-mlir's aten.clamp (cmpf ult to the floor, ugt to the bound).
func.func @conv_bias_hardswish(%x: tensor<1x9x9x4xf32>, %w: tensor<3x3x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x7x7x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<1x7x7x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>) outs(%c : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %o = tensor.empty() : tensor<1x7x7x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<1x7x7x8xf32>, tensor<8xf32>) outs(%o : tensor<1x7x7x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %cst0 = arith.constant 0.0 : f32
    %cst3 = arith.constant 3.0 : f32
    %cst6 = arith.constant 6.0 : f32
    %s = arith.addf %v, %bv : f32
    %t = arith.addf %s, %cst3 : f32
    %lt = arith.cmpf ult, %t, %cst0 : f32
    %lo = arith.select %lt, %cst0, %t : f32
    %gt = arith.cmpf ugt, %lo, %cst6 : f32
    %hi = arith.select %gt, %cst6, %lo : f32
    %m = arith.mulf %s, %hi : f32
    %y = arith.divf %m, %cst6 : f32
    linalg.yield %y : f32
  } -> tensor<1x7x7x8xf32>
  return %r : tensor<1x7x7x8xf32>
}

// A linear layer's bias, then hardswish as x * min(max(x + 3, 0), 6) / 6.
func.func @linear_hardswish(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<6x20xf32>, tensor<20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %cst0 = arith.constant 0.0 : f32
    %cst3 = arith.constant 3.0 : f32
    %cst6 = arith.constant 6.0 : f32
    %s = arith.addf %v, %bv : f32
    %t = arith.addf %cst3, %s : f32
    %lo = arith.maximumf %t, %cst0 : f32
    %hi = arith.minimumf %cst6, %lo : f32
    %m = arith.mulf %hi, %s : f32
    %y = arith.divf %m, %cst6 : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// An NHWC convolution's bias, then torch-mlir's aten.hardsigmoid:
// min(max((x + 3) / 6, 0), 1), the add through its alpha of 1.
func.func @conv_bias_hardsigmoid(%x: tensor<1x9x9x4xf32>, %w: tensor<3x3x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x7x7x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<1x7x7x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>) outs(%c : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %o = tensor.empty() : tensor<1x7x7x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<1x7x7x8xf32>, tensor<8xf32>) outs(%o : tensor<1x7x7x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %cst0 = arith.constant 0.0 : f32
    %cst1 = arith.constant 1.0 : f32
    %cst3 = arith.constant 3.0 : f32
    %cst6 = arith.constant 6.0 : f32
    %s = arith.addf %v, %bv : f32
    %a = arith.mulf %cst3, %cst1 : f32
    %t = arith.addf %s, %a : f32
    %d = arith.divf %t, %cst6 : f32
    %lo = arith.maximumf %d, %cst0 : f32
    %y = arith.minimumf %lo, %cst1 : f32
    linalg.yield %y : f32
  } -> tensor<1x7x7x8xf32>
  return %r : tensor<1x7x7x8xf32>
}

// A dense layer's bias, then jax.nn.hard_sigmoid: relu6(x + 3) / 6.
func.func @jax_dense_hard_sigmoid(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<6x20xf32>, tensor<20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %cst0 = arith.constant 0.0 : f32
    %cst3 = arith.constant 3.0 : f32
    %cst6 = arith.constant 6.0 : f32
    %s = arith.addf %v, %bv : f32
    %t = arith.addf %s, %cst3 : f32
    %lo = arith.maximumf %t, %cst0 : f32
    %hi = arith.minimumf %lo, %cst6 : f32
    %y = arith.divf %hi, %cst6 : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// BERT's pooler: dense layer, bias, tanh.
func.func @bert_pooler_tanh(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<6x20xf32>, tensor<20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %y = math.tanh %s : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// YOLOv4's convolution block: bias, then aten.mish as torch-mlir
// decomposes it (softplus with beta 1 and threshold 20, then tanh and the
// product with x).
func.func @yolov4_conv_mish(%x: tensor<1x9x9x4xf32>, %w: tensor<3x3x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x7x7x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<1x7x7x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>) outs(%c : tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %o = tensor.empty() : tensor<1x7x7x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<1x7x7x8xf32>, tensor<8xf32>) outs(%o : tensor<1x7x7x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %threshold = arith.constant 20.0 : f32
    %s = arith.addf %v, %bv : f32
    %sb = arith.mulf %s, %one : f32
    %e = math.exp %sb : f32
    %l = math.log1p %e : f32
    %lb = arith.divf %l, %one : f32
    %gt = arith.cmpf ugt, %sb, %threshold : f32
    %sp = arith.select %gt, %s, %lb : f32
    %t = math.tanh %sp : f32
    %y = arith.mulf %s, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x7x7x8xf32>
  return %r : tensor<1x7x7x8xf32>
}

// A linear layer's bias, then ONNX's Mish: tanh(log(exp(x) + 1)) * x.
func.func @onnx_linear_mish(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<6x20xf32>, tensor<20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %v, %bv : f32
    %e = math.exp %s : f32
    %e1 = arith.addf %e, %one : f32
    %l = math.log %e1 : f32
    %t = math.tanh %l : f32
    %y = arith.mulf %t, %s : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// Mamba's dt projection: dt_proj's bias, then F.softplus as torch-mlir
// decomposes it.
func.func @mamba_dt_softplus(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<6x20xf32>, tensor<20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %threshold = arith.constant 20.0 : f32
    %s = arith.addf %v, %bv : f32
    %sb = arith.mulf %s, %one : f32
    %e = math.exp %sb : f32
    %l = math.log1p %e : f32
    %lb = arith.divf %l, %one : f32
    %gt = arith.cmpf ugt, %sb, %threshold : f32
    %y = arith.select %gt, %s, %lb : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// The same in JAX: a dense layer's bias, then jax.nn.softplus as
// jnp.logaddexp(x, 0) lowers.
func.func @jax_dt_softplus(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<6x20xf32>, tensor<20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %s = arith.addf %v, %bv : f32
    %amax = arith.maximumf %s, %z : f32
    %delta = arith.subf %s, %z : f32
    %isnan = arith.cmpf une, %delta, %delta : f32
    %nansum = arith.addf %s, %z : f32
    %abs = math.absf %delta : f32
    %neg = arith.negf %abs : f32
    %e = math.exp %neg : f32
    %l = math.log1p %e : f32
    %main = arith.addf %amax, %l : f32
    %y = arith.select %isnan, %nansum, %main : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// softplus with threshold 5: x itself from 5 on, where mish's tanh would
// still be below 1 (tanh(5) = 0.99991): not mish; the generic stays.
func.func @not_mish(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %threshold = arith.constant 5.0 : f32
    %e = math.exp %v : f32
    %l = math.log1p %e : f32
    %gt = arith.cmpf ogt, %v, %threshold : f32
    %sp = arith.select %gt, %v, %l : f32
    %t = math.tanh %sp : f32
    %y = arith.mulf %v, %t : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// 0.5 x (1 + erf(x / 2)): not gelu (erf's argument is x / sqrt(2)); the
// generic stays.
func.func @not_gelu(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %arg = arith.mulf %v, %half : f32
    %erf = math.erf %arg : f32
    %plus1 = arith.addf %one, %erf : f32
    %cdf = arith.mulf %half, %plus1 : f32
    %y = arith.mulf %v, %cdf : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// relu6(x + 2) / 6: not hardsigmoid (its clamp is of x / 6 + 1/3); the
// generic stays.
func.func @not_hardsigmoid(%x: tensor<6x9xf32>, %w: tensor<9x20xf32>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xf32>, tensor<9x20xf32>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %cst0 = arith.constant 0.0 : f32
    %cst2 = arith.constant 2.0 : f32
    %cst6 = arith.constant 6.0 : f32
    %t = arith.addf %v, %cst2 : f32
    %lo = arith.maximumf %t, %cst0 : f32
    %hi = arith.minimumf %lo, %cst6 : f32
    %y = arith.divf %hi, %cst6 : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}

// Element i of a buffer: ((i * 5) mod 7 - 3) / 4 as f32 (every sum of
// products exact; the activations' inputs between -3 and 3 or so).
func.func private @fill(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c3 = arith.constant 3 : i64
  %quarter = arith.constant 0.25 : f32
  %n = memref.dim %m, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %s = arith.muli %i, %c5 : index
    %r = arith.remui %s, %c7 : index
    %ri = arith.index_cast %r : index to i64
    %v = arith.subi %ri, %c3 : i64
    %f = arith.sitofp %v : i64 to f32
    %q = arith.mulf %f, %quarter : f32
    memref.store %q, %m[%i] : memref<?xf32>
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
// OUT-COUNT-18: rank = {{[24]}} offset = 0
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
  // A NaN in the bias's column 3 (0/0 at run time): NaN stays NaN.
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
  %r1 = call @torch_linear_gelu(%x, %wT, %b) : (tensor<6x9xf32>, tensor<20x9xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %r2 = call @jax_dense_gelu(%x, %w, %b) : (tensor<6x9xf32>, tensor<9x20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %r3 = call @gpt2_gelu_new(%x, %w) : (tensor<6x9xf32>, tensor<9x20xf32>) -> tensor<6x20xf32>
  %r4 = call @torch_silu(%x, %w, %b) : (tensor<6x9xf32>, tensor<9x20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %r5 = call @tosa_sigmoid(%x, %w) : (tensor<6x9xf32>, tensor<9x20xf32>) -> tensor<6x20xf32>
  %r6 = call @conv_bias_silu(%cx, %cw, %cb) : (tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>, tensor<8xf32>) -> tensor<1x7x7x8xf32>
  %r7 = call @not_gelu(%x, %w) : (tensor<6x9xf32>, tensor<9x20xf32>) -> tensor<6x20xf32>
  %hw = tensor.extract_slice %w[0, 5] [9, 1] [1, 1] : tensor<9x20xf32> to tensor<9x1xf32>
  %r8 = call @classifier_head(%x, %hw) : (tensor<6x9xf32>, tensor<9x1xf32>) -> tensor<6x1xf32>
  %r9 = call @conv_bias_hardswish(%cx, %cw, %cb) : (tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>, tensor<8xf32>) -> tensor<1x7x7x8xf32>
  %r10 = call @linear_hardswish(%x, %w, %b) : (tensor<6x9xf32>, tensor<9x20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %r11 = call @bert_pooler_tanh(%x, %w, %b) : (tensor<6x9xf32>, tensor<9x20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %r12 = call @yolov4_conv_mish(%cx, %cw, %cb) : (tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>, tensor<8xf32>) -> tensor<1x7x7x8xf32>
  %r13 = call @onnx_linear_mish(%x, %w, %b) : (tensor<6x9xf32>, tensor<9x20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %r14 = call @not_mish(%x, %w) : (tensor<6x9xf32>, tensor<9x20xf32>) -> tensor<6x20xf32>
  %r15 = call @mamba_dt_softplus(%x, %w, %b) : (tensor<6x9xf32>, tensor<9x20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %r16 = call @jax_dt_softplus(%x, %w, %b) : (tensor<6x9xf32>, tensor<9x20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %m1 = bufferization.to_buffer %r1 : tensor<6x20xf32> to memref<6x20xf32>
  %m2 = bufferization.to_buffer %r2 : tensor<6x20xf32> to memref<6x20xf32>
  %m3 = bufferization.to_buffer %r3 : tensor<6x20xf32> to memref<6x20xf32>
  %m4 = bufferization.to_buffer %r4 : tensor<6x20xf32> to memref<6x20xf32>
  %m5 = bufferization.to_buffer %r5 : tensor<6x20xf32> to memref<6x20xf32>
  %m6 = bufferization.to_buffer %r6 : tensor<1x7x7x8xf32> to memref<1x7x7x8xf32>
  %m7 = bufferization.to_buffer %r7 : tensor<6x20xf32> to memref<6x20xf32>
  %m8 = bufferization.to_buffer %r8 : tensor<6x1xf32> to memref<6x1xf32>
  %m9 = bufferization.to_buffer %r9 : tensor<1x7x7x8xf32> to memref<1x7x7x8xf32>
  %m10 = bufferization.to_buffer %r10 : tensor<6x20xf32> to memref<6x20xf32>
  %m11 = bufferization.to_buffer %r11 : tensor<6x20xf32> to memref<6x20xf32>
  %m12 = bufferization.to_buffer %r12 : tensor<1x7x7x8xf32> to memref<1x7x7x8xf32>
  %m13 = bufferization.to_buffer %r13 : tensor<6x20xf32> to memref<6x20xf32>
  %m14 = bufferization.to_buffer %r14 : tensor<6x20xf32> to memref<6x20xf32>
  %u1 = memref.cast %m1 : memref<6x20xf32> to memref<*xf32>
  %u2 = memref.cast %m2 : memref<6x20xf32> to memref<*xf32>
  %u3 = memref.cast %m3 : memref<6x20xf32> to memref<*xf32>
  %u4 = memref.cast %m4 : memref<6x20xf32> to memref<*xf32>
  %u5 = memref.cast %m5 : memref<6x20xf32> to memref<*xf32>
  %u6 = memref.cast %m6 : memref<1x7x7x8xf32> to memref<*xf32>
  %u7 = memref.cast %m7 : memref<6x20xf32> to memref<*xf32>
  %u8 = memref.cast %m8 : memref<6x1xf32> to memref<*xf32>
  %u9 = memref.cast %m9 : memref<1x7x7x8xf32> to memref<*xf32>
  %u10 = memref.cast %m10 : memref<6x20xf32> to memref<*xf32>
  %u11 = memref.cast %m11 : memref<6x20xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u4) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u5) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u6) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u7) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u8) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u9) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u10) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u11) : (memref<*xf32>) -> ()
  %u12 = memref.cast %m12 : memref<1x7x7x8xf32> to memref<*xf32>
  %u13 = memref.cast %m13 : memref<6x20xf32> to memref<*xf32>
  %u14 = memref.cast %m14 : memref<6x20xf32> to memref<*xf32>
  call @printMemrefF32(%u12) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u13) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u14) : (memref<*xf32>) -> ()
  %m15 = bufferization.to_buffer %r15 : tensor<6x20xf32> to memref<6x20xf32>
  %u15 = memref.cast %m15 : memref<6x20xf32> to memref<*xf32>
  call @printMemrefF32(%u15) : (memref<*xf32>) -> ()
  %m16 = bufferization.to_buffer %r16 : tensor<6x20xf32> to memref<6x20xf32>
  %u16 = memref.cast %m16 : memref<6x20xf32> to memref<*xf32>
  call @printMemrefF32(%u16) : (memref<*xf32>) -> ()
  %r17 = call @conv_bias_hardsigmoid(%cx, %cw, %cb) : (tensor<1x9x9x4xf32>, tensor<3x3x4x8xf32>, tensor<8xf32>) -> tensor<1x7x7x8xf32>
  %m17 = bufferization.to_buffer %r17 : tensor<1x7x7x8xf32> to memref<1x7x7x8xf32>
  %u17 = memref.cast %m17 : memref<1x7x7x8xf32> to memref<*xf32>
  call @printMemrefF32(%u17) : (memref<*xf32>) -> ()
  %r18 = call @jax_dense_hard_sigmoid(%x, %w, %b) : (tensor<6x9xf32>, tensor<9x20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %m18 = bufferization.to_buffer %r18 : tensor<6x20xf32> to memref<6x20xf32>
  %u18 = memref.cast %m18 : memref<6x20xf32> to memref<*xf32>
  call @printMemrefF32(%u18) : (memref<*xf32>) -> ()
  %r19 = call @not_hardsigmoid(%x, %w) : (tensor<6x9xf32>, tensor<9x20xf32>) -> tensor<6x20xf32>
  %m19 = bufferization.to_buffer %r19 : tensor<6x20xf32> to memref<6x20xf32>
  %u19 = memref.cast %m19 : memref<6x20xf32> to memref<*xf32>
  call @printMemrefF32(%u19) : (memref<*xf32>) -> ()
  return
}
