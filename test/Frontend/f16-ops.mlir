// f16 x f16 -> f32 contractions on the AMX-BF16 tiles (amx.py's split:
// each f16 packed as two bf16 parts, the four partial products exact in
// f32): linalg.matmul into a zero-filled f32 accumulator, torch-mlir's
// form (a generic extending both inputs, arith.truncf to f16 after: the
// kernel's f16 output, rounded once, `_of16`), a
// batch_matmul into a bias, a matmul with a bias and relu (fused), a
// linear layer whose weight is stored N x K (each column's k split where
// it lies; for its 8 rows the matrix-vector form, B^T read in place and
// widened where it is loaded, `_gemv8`), a JAX dense layer on 4 rows (B
// as stored: its rows streamed in place, `_brows64x4`, its bias and relu
// fused), those two again with a truncf to f16 (rounded where the
// in-place forms store, `_of16`), the linear
// layer over a dynamic batch
// (a run-time M: `_mrt`, with the pass's kernels for few rows: up to 1
// and up to 12 rows the matrix-vector form, the model's bucket), an nhwc
// convolution of a padded input into a zero-filled f32 output
// (`shconv2d` on the tiles), and the two the tiles do not take, on the
// dot kernels (f16 widened where the input is gathered, `_avx512`):
// torch's nchw layout and a 3-channel stem (a run of KW*C = 21 k, not
// whole tile steps of 8); A transposed is left alone with a remark.
// On tensors, bufferized with one-shot-bufferize's function
// boundaries (dynamic strides: run-time leading dimensions). Compared
// exactly with the stock pipeline under mlir-runner and ahead of time:
// integers up to 260 in magnitude (9 significant bits, so that most have
// a low part past bf16's 8), every f32 sum of them exact.
// REQUIRES: host-amx-bf16, host-cc
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir 2> %t.remarks
// RUN: FileCheck %s < %t.v1.mlir
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// Two threads.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=threads=2' 2> /dev/null \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
//
// On tensors, before bufferization (torch's truncf to f16 the kernel's
// f16 output there too):
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.tensor.mlir 2> /dev/null
// RUN: FileCheck %s --check-prefix=TENSOR < %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// Ahead of time, nothing of ours linked.
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -filetype=obj -relocation-model=pic -o %t.o
// RUN: cc %t.o -o %t.exe %runner-libs-link -Wl,-rpath,%llvm-lib-dir
// RUN: %t.exe | %strip-address > %t.aot
// RUN: diff %t.reference %t.aot
//
// The kernels are what ran: without f16's low parts (validation off; the
// split's, and the widened B^T's in the matrix-vector form) the output
// changes.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-low' 2> /dev/null \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null

// TENSOR-LABEL: func.func @torch_f16_mm(
// TENSOR:         llvm.call @qm_shgemm_64x40x150_nn_b0_of16_ldrt_{{.*}}_x86_64_amxbf16(
// TENSOR-LABEL: func.func @f16_linear_nt_half(
// TENSOR:         llvm.call @qm_shgemm_8x30x64_nt_b0_of16_ldrt_gemv8_x86_64_avx512(
// CHECK-LABEL: func.func @f16_matmul(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_shgemm_70x45x100_nn_b0_ldrt_{{.*}}_x86_64_amxbf16(
// CHECK-LABEL: func.func @torch_f16_mm(
// CHECK-NOT:     arith.truncf
// CHECK:         llvm.call @qm_shgemm_64x40x150_nn_b0_of16_ldrt_{{.*}}_x86_64_amxbf16(
// CHECK-LABEL: func.func @f16_bmm(
// CHECK:         @qm_shgemm_40x33x70_nn_ldrt_{{.*}}_x86_64_amxbf16
// CHECK-LABEL: func.func @f16_bias_relu(
// CHECK:         llvm.call @qm_shgemm_50x70x64_nn_b0_bias_relu_ldrt_{{.*}}_x86_64_amxbf16(
// CHECK-LABEL: func.func @f16_linear_nt(
// CHECK:         llvm.call @qm_shgemm_8x30x64_nt_b0_ldrt_gemv8_x86_64_avx512(
// CHECK-LABEL: func.func @f16_linear_nt_half(
// CHECK-NOT:     arith.truncf
// CHECK:         llvm.call @qm_shgemm_8x30x64_nt_b0_of16_ldrt_gemv8_x86_64_avx512(
// CHECK-LABEL: func.func @f16_dense_rows(
// CHECK-NOT:     linalg.generic
// CHECK:         llvm.call @qm_shgemm_4x70x100_nn_b0_bias_relu_ldrt_brows64x4_x86_64_avx512(
// CHECK-LABEL: func.func @f16_dense_rows_half(
// CHECK-NOT:     linalg.generic
// CHECK:         llvm.call @qm_shgemm_4x70x100_nn_b0_bias_relu_of16_ldrt_brows64x4_x86_64_avx512(
// CHECK-LABEL: func.func @f16_transposed_a(
// CHECK:         linalg.matmul
// CHECK-LABEL: func.func @f16_dynamic_linear(
// CHECK-DAG:     llvm.call @qm_shgemm_1x30x64_nt_mrt_b0_ldrt_gemv8_x86_64_avx512(
// CHECK-DAG:     llvm.call @qm_shgemm_12x30x64_nt_mrt_b0_ldrt_gemv8_x86_64_avx512(
// CHECK-DAG:     llvm.call @qm_shgemm_{{[0-9]+}}x30x64_nt_mrt_b0_ldrt_{{.*}}_x86_64_amxbf16(
// CHECK-LABEL: func.func @f16_conv(
// CHECK:         llvm.call @qm_shconv2d_nhwc_hwcf_1x12x12x16_f24_k3x3_s1x1_d1x1_b0_{{.*}}_x86_64_amxbf16(
// CHECK-LABEL: func.func @f16_conv_nchw(
// CHECK:         llvm.call @qm_shconv2d_nchw_fchw_1x12x12x16_f24_k3x3_s1x1_d1x1_b0_{{.*}}_x86_64_avx512(
// CHECK-LABEL: func.func @f16_stem(
// CHECK:         llvm.call @qm_shconv2d_nhwc_hwcf_1x13x13x3_f8_k7x7_s2x2_d1x1_isrt_b0_{{.*}}_x86_64_avx512(
// CHECK: llvm.inline_asm has_side_effects {{.*}}vcvtph2ps
// CHECK-SAME: ~{tmm0}

// REMARK-DAG: :{{[0-9]+}}:{{[0-9]+}}: remark: not accelerated: f16 operands are split into bf16 parts (AMX tiles) or widened to f32 (AVX-512) where they are packed or loaded: A as stored, B as stored or transposed (not prepacked)
// REMARK-NOT: not accelerated

// OUT-COUNT-13: rank =

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @f16_matmul(%a: tensor<70x100xf16>, %b: tensor<100x45xf16>) -> tensor<70x45xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<70x45xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<70x45xf32>) -> tensor<70x45xf32>
  %r = linalg.matmul ins(%a, %b : tensor<70x100xf16>, tensor<100x45xf16>) outs(%acc : tensor<70x45xf32>) -> tensor<70x45xf32>
  return %r : tensor<70x45xf32>
}

// torch-mlir's aten.mm on f16 with an f32 accumulator, rounded to f16.
func.func @torch_f16_mm(%a: tensor<64x150xf16>, %b: tensor<150x40xf16>) -> tensor<64x40xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x40xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x40xf32>) -> tensor<64x40xf32>
  %mm = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x150xf16>, tensor<150x40xf16>) outs(%acc : tensor<64x40xf32>) {
  ^bb0(%x: f16, %y: f16, %s: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<64x40xf32>
  %o = tensor.empty() : tensor<64x40xf16>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<64x40xf32>) outs(%o : tensor<64x40xf16>) {
  ^bb0(%v: f32, %u: f16):
    %t = arith.truncf %v : f32 to f16
    linalg.yield %t : f16
  } -> tensor<64x40xf16>
  return %r : tensor<64x40xf16>
}

func.func @f16_bmm(%a: tensor<3x40x70xf16>, %b: tensor<3x70x33xf16>, %c: tensor<3x40x33xf32>) -> tensor<3x40x33xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x40x70xf16>, tensor<3x70x33xf16>) outs(%c : tensor<3x40x33xf32>) -> tensor<3x40x33xf32>
  return %r : tensor<3x40x33xf32>
}

func.func @f16_bias_relu(%x: tensor<50x64xf16>, %w: tensor<64x70xf16>, %b: tensor<70xf32>) -> tensor<50x70xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<50x70xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<50x70xf32>) -> tensor<50x70xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<50x64xf16>, tensor<64x70xf16>) outs(%acc : tensor<50x70xf32>) -> tensor<50x70xf32>
  %o = tensor.empty() : tensor<50x70xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<50x70xf32>, tensor<70xf32>) outs(%o : tensor<50x70xf32>) {
  ^bb0(%v: f32, %bias: f32, %u: f32):
    %s = arith.addf %v, %bias : f32
    %relu = arith.maximumf %s, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<50x70xf32>
  return %r : tensor<50x70xf32>
}

func.func @f16_linear_nt(%x: tensor<8x64xf16>, %w: tensor<30x64xf16>) -> tensor<8x30xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<64x30xf16>
  %wt = linalg.transpose ins(%w : tensor<30x64xf16>) outs(%wt0 : tensor<64x30xf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<8x30xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x30xf32>) -> tensor<8x30xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<8x64xf16>, tensor<64x30xf16>) outs(%acc : tensor<8x30xf32>) -> tensor<8x30xf32>
  return %r : tensor<8x30xf32>
}

// The linear layer rounded to f16 (torch-mlir's truncf after the f32
// accumulator): the matrix-vector form's f16 output.
func.func @f16_linear_nt_half(%x: tensor<8x64xf16>, %w: tensor<30x64xf16>) -> tensor<8x30xf16> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<64x30xf16>
  %wt = linalg.transpose ins(%w : tensor<30x64xf16>) outs(%wt0 : tensor<64x30xf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<8x30xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x30xf32>) -> tensor<8x30xf32>
  %f = linalg.matmul ins(%x, %wt : tensor<8x64xf16>, tensor<64x30xf16>) outs(%acc : tensor<8x30xf32>) -> tensor<8x30xf32>
  %o = tensor.empty() : tensor<8x30xf16>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%f : tensor<8x30xf32>) outs(%o : tensor<8x30xf16>) {
  ^bb0(%v: f32, %u: f16):
    %t = arith.truncf %v : f32 to f16
    linalg.yield %t : f16
  } -> tensor<8x30xf16>
  return %r : tensor<8x30xf16>
}

// A JAX dense layer on 4 rows (jnp.dot of activations and a K x N
// kernel, + bias, relu): B's rows streamed in place, 64 columns a block
// and the edge, the bias and relu where C is stored.
func.func @f16_dense_rows(%x: tensor<4x100xf16>, %w: tensor<100x70xf16>, %b: tensor<70xf32>) -> tensor<4x70xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x70xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x70xf32>) -> tensor<4x70xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x100xf16>, tensor<100x70xf16>) outs(%acc : tensor<4x70xf32>) -> tensor<4x70xf32>
  %o = tensor.empty() : tensor<4x70xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x70xf32>, tensor<70xf32>) outs(%o : tensor<4x70xf32>) {
  ^bb0(%v: f32, %bias: f32, %u: f32):
    %s = arith.addf %v, %bias : f32
    %relu = arith.maximumf %s, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<4x70xf32>
  return %r : tensor<4x70xf32>
}

// The dense layer with its bias, relu and the rounding to f16 in one
// generic (StableHLO's dot_general with an f32 preferred type, then a
// convert): all of it where the streamed form stores.
func.func @f16_dense_rows_half(%x: tensor<4x100xf16>, %w: tensor<100x70xf16>, %b: tensor<70xf32>) -> tensor<4x70xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x70xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x70xf32>) -> tensor<4x70xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x100xf16>, tensor<100x70xf16>) outs(%acc : tensor<4x70xf32>) -> tensor<4x70xf32>
  %o = tensor.empty() : tensor<4x70xf16>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x70xf32>, tensor<70xf32>) outs(%o : tensor<4x70xf16>) {
  ^bb0(%v: f32, %bias: f32, %u: f16):
    %s = arith.addf %v, %bias : f32
    %relu = arith.maximumf %s, %zero : f32
    %t = arith.truncf %relu : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x70xf16>
  return %r : tensor<4x70xf16>
}

func.func @f16_transposed_a(%a: tensor<64x20xf16>, %b: tensor<64x30xf16>) -> tensor<20x30xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<20x30xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<20x30xf32>) -> tensor<20x30xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<64x20xf16>, tensor<64x30xf16>) outs(%acc : tensor<20x30xf32>) -> tensor<20x30xf32>
  return %r : tensor<20x30xf32>
}

func.func @f16_dynamic_linear(%x: tensor<?x64xf16>, %w: tensor<30x64xf16>) -> tensor<?x30xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x64xf16>
  %wt0 = tensor.empty() : tensor<64x30xf16>
  %wt = linalg.transpose ins(%w : tensor<30x64xf16>) outs(%wt0 : tensor<64x30xf16>) permutation = [1, 0]
  %e = tensor.empty(%rows) : tensor<?x30xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x30xf32>) -> tensor<?x30xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x64xf16>, tensor<64x30xf16>) outs(%acc : tensor<?x30xf32>) -> tensor<?x30xf32>
  return %r : tensor<?x30xf32>
}

func.func @f16_conv(%x: tensor<1x10x10x16xf16>, %w: tensor<3x3x16x24xf16>) -> tensor<1x10x10x24xf32> {
  %zh = arith.constant 0.0 : f16
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zh : f16
  } : tensor<1x10x10x16xf16> to tensor<1x12x12x16xf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x10x10x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x10x10x24xf32>) -> tensor<1x10x10x24xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x12x12x16xf16>, tensor<3x3x16x24xf16>) outs(%acc : tensor<1x10x10x24xf32>) -> tensor<1x10x10x24xf32>
  return %r : tensor<1x10x10x24xf32>
}

// torch's layout: an nchw convolution of a padded f16 image (the dot
// kernels: the image gathered and widened where PACK B packs it).
func.func @f16_conv_nchw(%x: tensor<1x16x10x10xf16>, %w: tensor<24x16x3x3xf16>) -> tensor<1x24x10x10xf32> {
  %zh = arith.constant 0.0 : f16
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zh : f16
  } : tensor<1x16x10x10xf16> to tensor<1x16x12x12xf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x24x10x10xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x24x10x10xf32>) -> tensor<1x24x10x10xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x16x12x12xf16>, tensor<24x16x3x3xf16>) outs(%acc : tensor<1x24x10x10xf32>) -> tensor<1x24x10x10xf32>
  return %r : tensor<1x24x10x10xf32>
}

func.func @f16_stem(%x: tensor<1x13x13x3xf16>, %w: tensor<7x7x3x8xf16>) -> tensor<1x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x13x13x3xf16>, tensor<7x7x3x8xf16>) outs(%acc : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %r : tensor<1x4x4x8xf32>
}

// (i * x + j * y + k * z) mod 521 - 260 as f16 (a 2-D tensor: k = 0).
func.func private @ints(%t: tensor<?x?x?xf16>, %x: index, %y: index, %z: index) -> tensor<?x?x?xf16> {
  %r = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?xf16>) {
  ^bb0(%o: f16):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %kz = arith.muli %k, %z : index
    %s0 = arith.addi %ix, %jy : index
    %s = arith.addi %s0, %kz : index
    %c521 = arith.constant 521 : index
    %m = arith.remui %s, %c521 : index
    %mi = arith.index_cast %m : index to i64
    %f = arith.sitofp %mi : i64 to f32
    %c260 = arith.constant 260.0 : f32
    %v = arith.subf %f, %c260 : f32
    %h = arith.truncf %v : f32 to f16
    linalg.yield %h : f16
  } -> tensor<?x?x?xf16>
  return %r : tensor<?x?x?xf16>
}

func.func private @ints2d(%rows: index, %cols: index, %x: index, %y: index) -> tensor<?x?xf16> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty(%c1, %rows, %cols) : tensor<?x?x?xf16>
  %t = call @ints(%e, %c1, %x, %y) : (tensor<?x?x?xf16>, index, index, index) -> tensor<?x?x?xf16>
  %r = tensor.collapse_shape %t [[0, 1], [2]] : tensor<?x?x?xf16> into tensor<?x?xf16>
  return %r : tensor<?x?xf16>
}

// x / 64 (exact in f16): sums of 150 products of these stay finite in
// f16 (at most 2475) and mostly need its rounding.
func.func private @sixtyfourths(%t: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xf16>) {
  ^bb0(%o: f16):
    %s = arith.constant 0.015625 : f16
    %v = arith.mulf %o, %s : f16
    linalg.yield %v : f16
  } -> tensor<?x?xf16>
  return %r : tensor<?x?xf16>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func private @print2d(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %c30 = arith.constant 30 : index
  %c40 = arith.constant 40 : index
  %c45 = arith.constant 45 : index
  %c50 = arith.constant 50 : index
  %c64 = arith.constant 64 : index
  %c70 = arith.constant 70 : index
  %c100 = arith.constant 100 : index
  %c150 = arith.constant 150 : index

  %a0 = call @ints2d(%c70, %c100, %c7, %c5) : (index, index, index, index) -> tensor<?x?xf16>
  %a = tensor.cast %a0 : tensor<?x?xf16> to tensor<70x100xf16>
  %b0 = call @ints2d(%c100, %c45, %c3, %c11) : (index, index, index, index) -> tensor<?x?xf16>
  %b = tensor.cast %b0 : tensor<?x?xf16> to tensor<100x45xf16>
  %mm = call @f16_matmul(%a, %b) : (tensor<70x100xf16>, tensor<100x45xf16>) -> tensor<70x45xf32>
  %mmd = tensor.cast %mm : tensor<70x45xf32> to tensor<?x?xf32>
  call @print2d(%mmd) : (tensor<?x?xf32>) -> ()

  %ta0 = call @ints2d(%c64, %c150, %c11, %c7) : (index, index, index, index) -> tensor<?x?xf16>
  %ta1 = call @sixtyfourths(%ta0) : (tensor<?x?xf16>) -> tensor<?x?xf16>
  %ta = tensor.cast %ta1 : tensor<?x?xf16> to tensor<64x150xf16>
  %tb0 = call @ints2d(%c150, %c40, %c5, %c13) : (index, index, index, index) -> tensor<?x?xf16>
  %tb1 = call @sixtyfourths(%tb0) : (tensor<?x?xf16>) -> tensor<?x?xf16>
  %tb = tensor.cast %tb1 : tensor<?x?xf16> to tensor<150x40xf16>
  %tm = call @torch_f16_mm(%ta, %tb) : (tensor<64x150xf16>, tensor<150x40xf16>) -> tensor<64x40xf16>
  %tme = tensor.empty() : tensor<64x40xf32>
  %tmf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%tm : tensor<64x40xf16>) outs(%tme : tensor<64x40xf32>) {
  ^bb0(%v: f16, %u: f32):
    %t = arith.extf %v : f16 to f32
    linalg.yield %t : f32
  } -> tensor<64x40xf32>
  %tmd = tensor.cast %tmf : tensor<64x40xf32> to tensor<?x?xf32>
  call @print2d(%tmd) : (tensor<?x?xf32>) -> ()

  %ba0 = tensor.empty() : tensor<3x40x70xf16>
  %ba1 = tensor.cast %ba0 : tensor<3x40x70xf16> to tensor<?x?x?xf16>
  %ba2 = call @ints(%ba1, %c5, %c7, %c13) : (tensor<?x?x?xf16>, index, index, index) -> tensor<?x?x?xf16>
  %ba = tensor.cast %ba2 : tensor<?x?x?xf16> to tensor<3x40x70xf16>
  %bb0 = tensor.empty() : tensor<3x70x33xf16>
  %bb1 = tensor.cast %bb0 : tensor<3x70x33xf16> to tensor<?x?x?xf16>
  %bb2 = call @ints(%bb1, %c11, %c3, %c7) : (tensor<?x?x?xf16>, index, index, index) -> tensor<?x?x?xf16>
  %bb = tensor.cast %bb2 : tensor<?x?x?xf16> to tensor<3x70x33xf16>
  %half = arith.constant 0.5 : f32
  %bce = tensor.empty() : tensor<3x40x33xf32>
  %bc = linalg.fill ins(%half : f32) outs(%bce : tensor<3x40x33xf32>) -> tensor<3x40x33xf32>
  %bm = call @f16_bmm(%ba, %bb, %bc) : (tensor<3x40x70xf16>, tensor<3x70x33xf16>, tensor<3x40x33xf32>) -> tensor<3x40x33xf32>
  %bmm = bufferization.to_buffer %bm : tensor<3x40x33xf32> to memref<3x40x33xf32>
  %bmu = memref.cast %bmm : memref<3x40x33xf32> to memref<*xf32>
  call @printMemrefF32(%bmu) : (memref<*xf32>) -> ()

  %xa0 = call @ints2d(%c50, %c64, %c13, %c3) : (index, index, index, index) -> tensor<?x?xf16>
  %xa = tensor.cast %xa0 : tensor<?x?xf16> to tensor<50x64xf16>
  %xw0 = call @ints2d(%c64, %c70, %c7, %c11) : (index, index, index, index) -> tensor<?x?xf16>
  %xw = tensor.cast %xw0 : tensor<?x?xf16> to tensor<64x70xf16>
  %bias = arith.constant dense<[-300000.0, 250000.0, -1.5, 2.5, 1000.0, -1000.0, 0.0, 7.0, -7.0, 123456.0, -123456.0, 3.0, -3.0, 0.5, -0.5, 60000.0, -60000.0, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 8.0, -8.0, 16.0, -16.0, 32.0, -32.0, 64.0, -64.0, 128.0, -128.0, 256.0, -256.0, 512.0, -512.0, 1024.0, -1024.0, 2048.0, -2048.0, 4096.0, -4096.0, 8192.0, -8192.0, 16384.0, -16384.0, 32768.0, -32768.0, 65536.0, -65536.0, 131072.0, -131072.0, 262144.0, -262144.0, 9.0, -9.0, 10.0, -10.0, 11.0, -11.0, 12.0, -12.0, 13.0, -13.0, 14.0, -14.0, 15.0, -15.0, 0.25]> : tensor<70xf32>
  %xr = call @f16_bias_relu(%xa, %xw, %bias) : (tensor<50x64xf16>, tensor<64x70xf16>, tensor<70xf32>) -> tensor<50x70xf32>
  %xrd = tensor.cast %xr : tensor<50x70xf32> to tensor<?x?xf32>
  call @print2d(%xrd) : (tensor<?x?xf32>) -> ()

  %lx0 = call @ints2d(%c8, %c64, %c3, %c5) : (index, index, index, index) -> tensor<?x?xf16>
  %lx = tensor.cast %lx0 : tensor<?x?xf16> to tensor<8x64xf16>
  %lw0 = call @ints2d(%c30, %c64, %c7, %c3) : (index, index, index, index) -> tensor<?x?xf16>
  %lw = tensor.cast %lw0 : tensor<?x?xf16> to tensor<30x64xf16>
  %lr = call @f16_linear_nt(%lx, %lw) : (tensor<8x64xf16>, tensor<30x64xf16>) -> tensor<8x30xf32>
  %lrd = tensor.cast %lr : tensor<8x30xf32> to tensor<?x?xf32>
  call @print2d(%lrd) : (tensor<?x?xf32>) -> ()

  %c4 = arith.constant 4 : index
  %jx0 = call @ints2d(%c4, %c100, %c5, %c7) : (index, index, index, index) -> tensor<?x?xf16>
  %jx = tensor.cast %jx0 : tensor<?x?xf16> to tensor<4x100xf16>
  %jw0 = call @ints2d(%c100, %c70, %c11, %c3) : (index, index, index, index) -> tensor<?x?xf16>
  %jw = tensor.cast %jw0 : tensor<?x?xf16> to tensor<100x70xf16>
  %jr = call @f16_dense_rows(%jx, %jw, %bias) : (tensor<4x100xf16>, tensor<100x70xf16>, tensor<70xf32>) -> tensor<4x70xf32>
  %jrd = tensor.cast %jr : tensor<4x70xf32> to tensor<?x?xf32>
  call @print2d(%jrd) : (tensor<?x?xf32>) -> ()

  // The same two layers rounded to f16, on x / 64 (sums that need it).
  %hx0 = call @sixtyfourths(%lx0) : (tensor<?x?xf16>) -> tensor<?x?xf16>
  %hx = tensor.cast %hx0 : tensor<?x?xf16> to tensor<8x64xf16>
  %hw0 = call @sixtyfourths(%lw0) : (tensor<?x?xf16>) -> tensor<?x?xf16>
  %hw = tensor.cast %hw0 : tensor<?x?xf16> to tensor<30x64xf16>
  %hr = call @f16_linear_nt_half(%hx, %hw) : (tensor<8x64xf16>, tensor<30x64xf16>) -> tensor<8x30xf16>
  %hre = tensor.empty() : tensor<8x30xf32>
  %hrf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%hr : tensor<8x30xf16>) outs(%hre : tensor<8x30xf32>) {
  ^bb0(%v: f16, %u: f32):
    %t = arith.extf %v : f16 to f32
    linalg.yield %t : f32
  } -> tensor<8x30xf32>
  %hrd = tensor.cast %hrf : tensor<8x30xf32> to tensor<?x?xf32>
  call @print2d(%hrd) : (tensor<?x?xf32>) -> ()
  %hjx0 = call @sixtyfourths(%jx0) : (tensor<?x?xf16>) -> tensor<?x?xf16>
  %hjx = tensor.cast %hjx0 : tensor<?x?xf16> to tensor<4x100xf16>
  %hjw0 = call @sixtyfourths(%jw0) : (tensor<?x?xf16>) -> tensor<?x?xf16>
  %hjw = tensor.cast %hjw0 : tensor<?x?xf16> to tensor<100x70xf16>
  %hj = call @f16_dense_rows_half(%hjx, %hjw, %bias) : (tensor<4x100xf16>, tensor<100x70xf16>, tensor<70xf32>) -> tensor<4x70xf16>
  %hje = tensor.empty() : tensor<4x70xf32>
  %hjf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%hj : tensor<4x70xf16>) outs(%hje : tensor<4x70xf32>) {
  ^bb0(%v: f16, %u: f32):
    %t = arith.extf %v : f16 to f32
    linalg.yield %t : f32
  } -> tensor<4x70xf32>
  %hjd = tensor.cast %hjf : tensor<4x70xf32> to tensor<?x?xf32>
  call @print2d(%hjd) : (tensor<?x?xf32>) -> ()

  %c20 = arith.constant 20 : index
  %ta2 = call @ints2d(%c64, %c20, %c5, %c11) : (index, index, index, index) -> tensor<?x?xf16>
  %ta3 = tensor.cast %ta2 : tensor<?x?xf16> to tensor<64x20xf16>
  %tb2 = call @ints2d(%c64, %c30, %c13, %c7) : (index, index, index, index) -> tensor<?x?xf16>
  %tb3 = tensor.cast %tb2 : tensor<?x?xf16> to tensor<64x30xf16>
  %tr = call @f16_transposed_a(%ta3, %tb3) : (tensor<64x20xf16>, tensor<64x30xf16>) -> tensor<20x30xf32>
  %trd = tensor.cast %tr : tensor<20x30xf32> to tensor<?x?xf32>
  call @print2d(%trd) : (tensor<?x?xf32>) -> ()

  %c21 = arith.constant 21 : index
  %dx = call @ints2d(%c21, %c64, %c11, %c3) : (index, index, index, index) -> tensor<?x?xf16>
  %dxs = tensor.cast %dx : tensor<?x?xf16> to tensor<?x64xf16>
  %dr = call @f16_dynamic_linear(%dxs, %lw) : (tensor<?x64xf16>, tensor<30x64xf16>) -> tensor<?x30xf32>
  %drd = tensor.cast %dr : tensor<?x30xf32> to tensor<?x?xf32>
  call @print2d(%drd) : (tensor<?x?xf32>) -> ()

  %c10 = arith.constant 10 : index
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  %cx0 = call @ints2d(%c10, %c16, %c3, %c7) : (index, index, index, index) -> tensor<?x?xf16>
  %cx1 = tensor.empty() : tensor<10x10x16xf16>
  %cx2 = tensor.cast %cx1 : tensor<10x10x16xf16> to tensor<?x?x?xf16>
  %cx3 = call @ints(%cx2, %c13, %c5, %c11) : (tensor<?x?x?xf16>, index, index, index) -> tensor<?x?x?xf16>
  %cx4 = tensor.cast %cx3 : tensor<?x?x?xf16> to tensor<10x10x16xf16>
  %cx = tensor.expand_shape %cx4 [[0, 1], [2], [3]] output_shape [1, 10, 10, 16] : tensor<10x10x16xf16> into tensor<1x10x10x16xf16>
  %cw1 = tensor.empty() : tensor<9x16x24xf16>
  %cw2 = tensor.cast %cw1 : tensor<9x16x24xf16> to tensor<?x?x?xf16>
  %cw3 = call @ints(%cw2, %c7, %c3, %c5) : (tensor<?x?x?xf16>, index, index, index) -> tensor<?x?x?xf16>
  %cw4 = tensor.cast %cw3 : tensor<?x?x?xf16> to tensor<9x16x24xf16>
  %cw = tensor.expand_shape %cw4 [[0, 1], [2], [3]] output_shape [3, 3, 16, 24] : tensor<9x16x24xf16> into tensor<3x3x16x24xf16>
  %cr = call @f16_conv(%cx, %cw) : (tensor<1x10x10x16xf16>, tensor<3x3x16x24xf16>) -> tensor<1x10x10x24xf32>
  %crm = bufferization.to_buffer %cr : tensor<1x10x10x24xf32> to memref<1x10x10x24xf32>
  %cru = memref.cast %crm : memref<1x10x10x24xf32> to memref<*xf32>
  call @printMemrefF32(%cru) : (memref<*xf32>) -> ()

  %nx1 = tensor.empty() : tensor<16x10x10xf16>
  %nx2 = tensor.cast %nx1 : tensor<16x10x10xf16> to tensor<?x?x?xf16>
  %nx3 = call @ints(%nx2, %c11, %c5, %c3) : (tensor<?x?x?xf16>, index, index, index) -> tensor<?x?x?xf16>
  %nx4 = tensor.cast %nx3 : tensor<?x?x?xf16> to tensor<16x10x10xf16>
  %nx = tensor.expand_shape %nx4 [[0, 1], [2], [3]] output_shape [1, 16, 10, 10] : tensor<16x10x10xf16> into tensor<1x16x10x10xf16>
  %nw1 = tensor.empty() : tensor<24x16x9xf16>
  %nw2 = tensor.cast %nw1 : tensor<24x16x9xf16> to tensor<?x?x?xf16>
  %nw3 = call @ints(%nw2, %c3, %c13, %c7) : (tensor<?x?x?xf16>, index, index, index) -> tensor<?x?x?xf16>
  %nw4 = tensor.cast %nw3 : tensor<?x?x?xf16> to tensor<24x16x9xf16>
  %nw = tensor.expand_shape %nw4 [[0], [1], [2, 3]] output_shape [24, 16, 3, 3] : tensor<24x16x9xf16> into tensor<24x16x3x3xf16>
  %nr = call @f16_conv_nchw(%nx, %nw) : (tensor<1x16x10x10xf16>, tensor<24x16x3x3xf16>) -> tensor<1x24x10x10xf32>
  %nrm = bufferization.to_buffer %nr : tensor<1x24x10x10xf32> to memref<1x24x10x10xf32>
  %nru = memref.cast %nrm : memref<1x24x10x10xf32> to memref<*xf32>
  call @printMemrefF32(%nru) : (memref<*xf32>) -> ()

  %sx1 = tensor.empty() : tensor<13x13x3xf16>
  %sx2 = tensor.cast %sx1 : tensor<13x13x3xf16> to tensor<?x?x?xf16>
  %sx3 = call @ints(%sx2, %c5, %c11, %c3) : (tensor<?x?x?xf16>, index, index, index) -> tensor<?x?x?xf16>
  %sx4 = tensor.cast %sx3 : tensor<?x?x?xf16> to tensor<13x13x3xf16>
  %sx = tensor.expand_shape %sx4 [[0, 1], [2], [3]] output_shape [1, 13, 13, 3] : tensor<13x13x3xf16> into tensor<1x13x13x3xf16>
  %sw1 = tensor.empty() : tensor<49x3x8xf16>
  %sw2 = tensor.cast %sw1 : tensor<49x3x8xf16> to tensor<?x?x?xf16>
  %sw3 = call @ints(%sw2, %c3, %c7, %c13) : (tensor<?x?x?xf16>, index, index, index) -> tensor<?x?x?xf16>
  %sw4 = tensor.cast %sw3 : tensor<?x?x?xf16> to tensor<49x3x8xf16>
  %sw = tensor.expand_shape %sw4 [[0, 1], [2], [3]] output_shape [7, 7, 3, 8] : tensor<49x3x8xf16> into tensor<7x7x3x8xf16>
  %sr = call @f16_stem(%sx, %sw) : (tensor<1x13x13x3xf16>, tensor<7x7x3x8xf16>) -> tensor<1x4x4x8xf32>
  %srm = bufferization.to_buffer %sr : tensor<1x4x4x8xf32> to memref<1x4x4x8xf32>
  %sru = memref.cast %srm : memref<1x4x4x8xf32> to memref<*xf32>
  call @printMemrefF32(%sru) : (memref<*xf32>) -> ()
  return
}
