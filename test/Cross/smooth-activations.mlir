// REQUIRES: cross-aarch64, cross-riscv64
// Smooth activations fused into the NEON, SVE and RVV kernels' epilogue
// (smooth.py's programs, spelled per ISA): torch's aten.linear with its
// weight transposed, bias and aten.gelu (erf); a dense layer's bias and
// jax.nn.gelu (tanh) in a generic of its own; aten.silu; TOSA's sigmoid;
// a YOLOv5 block (NHWC convolution, bias, silu); a MobileNetV3 block
// (the same convolution, bias, hardswish x * relu6(x + 3) / 6); a
// classifier head (one output column, sigmoid); BERT's pooler (bias,
// tanh); a YOLOv4 block (the convolution, bias, torch-mlir's mish: x *
// tanh(x > 20 ? x : log1p(exp(x)))); MobileNetV3's squeeze-and-excitation
// gate (the convolution, bias, torch-mlir's hardsigmoid min(max((x + 3) /
// 6, 0), 1)) and a dense layer's jax.nn.hard_sigmoid relu6(x + 3) / 6.
// The bias holds a NaN in column 3, which stays
// NaN through each activation (RVV's vfmin and vfmax would drop it).
// Each module is compiled with and without --qimeng-tensorop (the stock
// side through libm: erff, tanhf, expf, log1pf), linked statically with
// smooth_main.c, run under qemu, and the two outputs are compared number
// by number within 2e-5 relative + 1e-6 (the kernels compute the
// activations to a few ulps of libm's).
//
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-translate --mlir-to-llvmir | %llc -O2 -mtriple=aarch64-linux-gnu -filetype=obj -o %t.ref.a64.o
// RUN: %cross-cc-aarch64 %S/Inputs/smooth_main.c %t.ref.a64.o -lm -o %t.ref.a64.exe
// RUN: %qemu-aarch64 -cpu cortex-a76 %t.ref.a64.exe > %t.ref.a64
// RUN: FileCheck %s --check-prefix=OUT < %t.ref.a64
//
// NEON, the pass on tensors before bufferization:
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" --one-shot-bufferize="bufferize-function-boundaries" -o %t.neon.mlir
// RUN: FileCheck %s --check-prefixes=CHECK,NEON < %t.neon.mlir
// RUN: %mlir-opt %t.neon.mlir %dealloc --convert-math-to-libm %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.o
// RUN: %cross-cc-aarch64 %S/Inputs/smooth_main.c %t.neon.o -lm -o %t.neon.exe
// RUN: %qemu-aarch64 -cpu neoverse-n1 %t.neon.exe > %t.neon
// RUN: %python %S/../Frontend/Inputs/compare_close.py %t.ref.a64 %t.neon 2e-5 1e-6
//
// 256-bit SVE, after one-shot-bufferize's defaults (dynamic strides):
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve" -o %t.sve.mlir
// RUN: FileCheck %s --check-prefixes=CHECK,SVE < %t.sve.mlir
// RUN: %mlir-opt %t.sve.mlir %dealloc --convert-math-to-libm %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -filetype=obj -o %t.sve.o
// RUN: %cross-cc-aarch64 %S/Inputs/smooth_main.c %t.sve.o -lm -o %t.sve.exe
// RUN: %qemu-aarch64 -cpu max,sve256=on %t.sve.exe > %t.sve
// RUN: %python %S/../Frontend/Inputs/compare_close.py %t.ref.a64 %t.sve 2e-5 1e-6
//
// RVV at VLEN 256 (SpacemiT X60), after bufferization:
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" %dealloc --convert-math-to-libm %lower-to-llvm \
// RUN:   | %mlir-translate --mlir-to-llvmir | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c -filetype=obj -o %t.ref.rv.o
// RUN: %cross-cc-riscv64 %S/Inputs/smooth_main.c %t.ref.rv.o -lm -o %t.ref.rv.exe
// RUN: %qemu-riscv64 %t.ref.rv.exe > %t.ref.rv
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" -o %t.rvv.mlir
// RUN: FileCheck %s --check-prefixes=CHECK,RVV < %t.rvv.mlir
// RUN: %mlir-opt %t.rvv.mlir %dealloc --convert-math-to-libm %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.o
// RUN: %cross-cc-riscv64 %S/Inputs/smooth_main.c %t.rvv.o -lm -o %t.rvv.exe
// RUN: %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.exe > %t.rvv
// RUN: %python %S/../Frontend/Inputs/compare_close.py %t.ref.rv %t.rvv 2e-5 1e-6
//
// The kernels are what ran: with a fault injected into them (validation
// off) the output differs.
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v test-inject-fault=drop-k validate=false" \
// RUN:   | %mlir-opt %dealloc --convert-math-to-libm %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.broken.o
// RUN: %cross-cc-riscv64 %S/Inputs/smooth_main.c %t.broken.o -lm -o %t.broken.exe
// RUN: %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.broken.exe > %t.broken
// RUN: not %python %S/../Frontend/Inputs/compare_close.py %t.ref.rv %t.broken 2e-5 1e-6 > /dev/null

// OUT: torch_linear_gelu 13x37
// OUT: nan
// OUT: jax_dense_gelu 13x37
// OUT: torch_silu 13x37
// OUT: tosa_sigmoid 13x37
// OUT: conv_bias_silu 1x7x7x12
// OUT: conv_bias_hardswish 1x7x7x12
// OUT: classifier_head 13x1
// OUT: bert_pooler_tanh 13x37
// OUT: yolov4_conv_mish 1x7x7x12
// OUT: conv_bias_hardsigmoid 1x7x7x12
// OUT: jax_dense_hard_sigmoid 13x37

// CHECK-LABEL: func.func @torch_linear_gelu(
// NEON:          llvm.call @qm_sgemm_13x37x70_nt_b0_bias_gelu_erf_ldrt_{{.*}}_aarch64_neon
// SVE:           llvm.call @qm_sgemm_13x37x70_nt_b0_bias_gelu_erf_ldrt_{{.*}}_aarch64_sve_vl256
// RVV:           llvm.call @qm_sgemm_13x37x70_nt_b0_bias_gelu_erf_ldrt_{{.*}}_riscv64_rvv_vlen256
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @jax_dense_gelu(
// CHECK:         llvm.call @qm_sgemm_13x37x70_nn_b0_bias_gelu_tanh_ldrt_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @torch_silu(
// CHECK:         llvm.call @qm_sgemm_13x37x70_nn_b0_bias_silu_ldrt_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @tosa_sigmoid(
// CHECK:         llvm.call @qm_sgemm_13x37x70_nn_b0_sigmoid_ldrt_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @conv_bias_silu(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x5_f12_k3x3_s1x1_d1x1_b0_bias_silu_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @conv_bias_hardswish(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x5_f12_k3x3_s1x1_d1x1_b0_bias_hardswish_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @classifier_head(
// CHECK:         llvm.call @qm_sgemm_1x13x70_nt_b0_sigmoid_ldrt_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @bert_pooler_tanh(
// CHECK:         llvm.call @qm_sgemm_13x37x70_nn_b0_bias_tanh_ldrt_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @yolov4_conv_mish(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x5_f12_k3x3_s1x1_d1x1_b0_bias_mish_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @conv_bias_hardsigmoid(
// CHECK:         llvm.call @qm_sconv2d_nhwc_hwcf_1x9x9x5_f12_k3x3_s1x1_d1x1_b0_bias_hardsigmoid_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK-LABEL: func.func @jax_dense_hard_sigmoid(
// CHECK:         llvm.call @qm_sgemm_13x37x70_nn_b0_bias_hardsigmoid_ldrt_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>

// aten.linear (weights 37x70, transposed) + bias, then aten.gelu, merged.
func.func @torch_linear_gelu(%x: tensor<13x70xf32>, %w: tensor<37x70xf32>, %b: tensor<37xf32>) -> tensor<13x37xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<70x37xf32>
  %wt = linalg.transpose ins(%w : tensor<37x70xf32>) outs(%e : tensor<70x37xf32>) permutation = [1, 0]
  %c0 = tensor.empty() : tensor<13x37xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<13x37xf32>) -> tensor<13x37xf32>
  %p = linalg.matmul ins(%x, %wt : tensor<13x70xf32>, tensor<70x37xf32>) outs(%c : tensor<13x37xf32>) -> tensor<13x37xf32>
  %o = tensor.empty() : tensor<13x37xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<13x37xf32>, tensor<37xf32>) outs(%o : tensor<13x37xf32>) {
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
  } -> tensor<13x37xf32>
  return %r : tensor<13x37xf32>
}

// A dense layer's bias add, then jax.nn.gelu (approximate) on its own.
func.func @jax_dense_gelu(%x: tensor<13x70xf32>, %w: tensor<70x37xf32>, %b: tensor<37xf32>) -> tensor<13x37xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<13x37xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<13x37xf32>) -> tensor<13x37xf32>
  %p = linalg.matmul ins(%x, %w : tensor<13x70xf32>, tensor<70x37xf32>) outs(%c : tensor<13x37xf32>) -> tensor<13x37xf32>
  %o1 = tensor.empty() : tensor<13x37xf32>
  %s = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<13x37xf32>, tensor<37xf32>) outs(%o1 : tensor<13x37xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %y = arith.addf %v, %bv : f32
    linalg.yield %y : f32
  } -> tensor<13x37xf32>
  %o2 = tensor.empty() : tensor<13x37xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<13x37xf32>) outs(%o2 : tensor<13x37xf32>) {
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
  } -> tensor<13x37xf32>
  return %r : tensor<13x37xf32>
}

// aten.linear's bias, then aten.silu: x * sigmoid(x), merged.
func.func @torch_silu(%x: tensor<13x70xf32>, %w: tensor<70x37xf32>, %b: tensor<37xf32>) -> tensor<13x37xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<13x37xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<13x37xf32>) -> tensor<13x37xf32>
  %p = linalg.matmul ins(%x, %w : tensor<13x70xf32>, tensor<70x37xf32>) outs(%c : tensor<13x37xf32>) -> tensor<13x37xf32>
  %o = tensor.empty() : tensor<13x37xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<13x37xf32>, tensor<37xf32>) outs(%o : tensor<13x37xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %v, %bv : f32
    %neg = arith.negf %s : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %exp, %one : f32
    %sig = arith.divf %one, %den : f32
    %y = arith.mulf %sig, %s : f32
    linalg.yield %y : f32
  } -> tensor<13x37xf32>
  return %r : tensor<13x37xf32>
}

// TOSA's sigmoid on a linear layer without a bias.
func.func @tosa_sigmoid(%x: tensor<13x70xf32>, %w: tensor<70x37xf32>) -> tensor<13x37xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<13x37xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<13x37xf32>) -> tensor<13x37xf32>
  %p = linalg.matmul ins(%x, %w : tensor<13x70xf32>, tensor<70x37xf32>) outs(%c : tensor<13x37xf32>) -> tensor<13x37xf32>
  %o = tensor.empty() : tensor<13x37xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<13x37xf32>) outs(%o : tensor<13x37xf32>) {
  ^bb0(%v: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %v : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %one, %exp : f32
    %y = arith.divf %one, %den : f32
    linalg.yield %y : f32
  } -> tensor<13x37xf32>
  return %r : tensor<13x37xf32>
}

// A YOLOv5 convolution block: NHWC convolution, bias add, silu as
// x / (1 + exp(-x)).
func.func @conv_bias_silu(%x: tensor<1x9x9x5xf32>, %w: tensor<3x3x5x12xf32>, %b: tensor<12xf32>) -> tensor<1x7x7x12xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<1x7x7x12xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x5xf32>, tensor<3x3x5x12xf32>) outs(%c : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
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

// A MobileNetV3 block: NHWC convolution, bias add, hardswish as
// x * min(max(x + 3, 0), 6) / 6.
func.func @conv_bias_hardswish(%x: tensor<1x9x9x5xf32>, %w: tensor<3x3x5x12xf32>, %b: tensor<12xf32>) -> tensor<1x7x7x12xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<1x7x7x12xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x5xf32>, tensor<3x3x5x12xf32>) outs(%c : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
  %o = tensor.empty() : tensor<1x7x7x12xf32>
  %r = linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<1x7x7x12xf32>, tensor<12xf32>) outs(%o : tensor<1x7x7x12xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %cst0 = arith.constant 0.0 : f32
    %cst3 = arith.constant 3.0 : f32
    %cst6 = arith.constant 6.0 : f32
    %s = arith.addf %v, %bv : f32
    %t = arith.addf %s, %cst3 : f32
    %lo = arith.maximumf %t, %cst0 : f32
    %hi = arith.minimumf %lo, %cst6 : f32
    %m = arith.mulf %s, %hi : f32
    %y = arith.divf %m, %cst6 : f32
    linalg.yield %y : f32
  } -> tensor<1x7x7x12xf32>
  return %r : tensor<1x7x7x12xf32>
}

// A classifier's head: 13 samples of 70 features, one logit each, sigmoid.
func.func @classifier_head(%x: tensor<13x70xf32>, %w: tensor<70x1xf32>) -> tensor<13x1xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<13x1xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<13x1xf32>) -> tensor<13x1xf32>
  %p = linalg.matmul ins(%x, %w : tensor<13x70xf32>, tensor<70x1xf32>) outs(%c : tensor<13x1xf32>) -> tensor<13x1xf32>
  %o = tensor.empty() : tensor<13x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<13x1xf32>) outs(%o : tensor<13x1xf32>) {
  ^bb0(%v: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %v : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %one, %exp : f32
    %y = arith.divf %one, %den : f32
    linalg.yield %y : f32
  } -> tensor<13x1xf32>
  return %r : tensor<13x1xf32>
}

// BERT's pooler: a dense layer's bias, then tanh.
func.func @bert_pooler_tanh(%x: tensor<13x70xf32>, %w: tensor<70x37xf32>, %b: tensor<37xf32>) -> tensor<13x37xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<13x37xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<13x37xf32>) -> tensor<13x37xf32>
  %p = linalg.matmul ins(%x, %w : tensor<13x70xf32>, tensor<70x37xf32>) outs(%c : tensor<13x37xf32>) -> tensor<13x37xf32>
  %o = tensor.empty() : tensor<13x37xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<13x37xf32>, tensor<37xf32>) outs(%o : tensor<13x37xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %y = math.tanh %s : f32
    linalg.yield %y : f32
  } -> tensor<13x37xf32>
  return %r : tensor<13x37xf32>
}

// A YOLOv4 block: NHWC convolution, bias add, aten.mish as torch-mlir
// decomposes it (softplus's threshold 20, beta 1 folded).
func.func @yolov4_conv_mish(%x: tensor<1x9x9x5xf32>, %w: tensor<3x3x5x12xf32>, %b: tensor<12xf32>) -> tensor<1x7x7x12xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<1x7x7x12xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x5xf32>, tensor<3x3x5x12xf32>) outs(%c : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
  %o = tensor.empty() : tensor<1x7x7x12xf32>
  %r = linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<1x7x7x12xf32>, tensor<12xf32>) outs(%o : tensor<1x7x7x12xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %threshold = arith.constant 20.0 : f32
    %s = arith.addf %v, %bv : f32
    %e = math.exp %s : f32
    %l = math.log1p %e : f32
    %gt = arith.cmpf ugt, %s, %threshold : f32
    %sp = arith.select %gt, %s, %l : f32
    %t = math.tanh %sp : f32
    %y = arith.mulf %s, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x7x7x12xf32>
  return %r : tensor<1x7x7x12xf32>
}

// MobileNetV3's squeeze-and-excitation gate: the convolution's bias, then
// torch-mlir's aten.hardsigmoid, min(max((x + 3) / 6, 0), 1).
func.func @conv_bias_hardsigmoid(%x: tensor<1x9x9x5xf32>, %w: tensor<3x3x5x12xf32>, %b: tensor<12xf32>) -> tensor<1x7x7x12xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<1x7x7x12xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
  %p = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x5xf32>, tensor<3x3x5x12xf32>) outs(%c : tensor<1x7x7x12xf32>) -> tensor<1x7x7x12xf32>
  %o = tensor.empty() : tensor<1x7x7x12xf32>
  %r = linalg.generic {indexing_maps = [#id4, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<1x7x7x12xf32>, tensor<12xf32>) outs(%o : tensor<1x7x7x12xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %cst0 = arith.constant 0.0 : f32
    %cst1 = arith.constant 1.0 : f32
    %cst3 = arith.constant 3.0 : f32
    %cst6 = arith.constant 6.0 : f32
    %s = arith.addf %v, %bv : f32
    %t = arith.addf %s, %cst3 : f32
    %d = arith.divf %t, %cst6 : f32
    %lo = arith.maximumf %d, %cst0 : f32
    %y = arith.minimumf %lo, %cst1 : f32
    linalg.yield %y : f32
  } -> tensor<1x7x7x12xf32>
  return %r : tensor<1x7x7x12xf32>
}

// A dense layer's bias, then jax.nn.hard_sigmoid: relu6(x + 3) / 6.
func.func @jax_dense_hard_sigmoid(%x: tensor<13x70xf32>, %w: tensor<70x37xf32>, %b: tensor<37xf32>) -> tensor<13x37xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<13x37xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<13x37xf32>) -> tensor<13x37xf32>
  %p = linalg.matmul ins(%x, %w : tensor<13x70xf32>, tensor<70x37xf32>) outs(%c : tensor<13x37xf32>) -> tensor<13x37xf32>
  %o = tensor.empty() : tensor<13x37xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<13x37xf32>, tensor<37xf32>) outs(%o : tensor<13x37xf32>) {
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
  } -> tensor<13x37xf32>
  return %r : tensor<13x37xf32>
}
