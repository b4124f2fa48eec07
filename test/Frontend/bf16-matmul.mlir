// bf16 operands as torch-mlir emits them for a bf16 model: aten.linear's
// weight through linalg.transpose, a zero-filled f32 accumulator,
// linalg.matmul on bf16 x bf16 -> f32 (linalg extends the inputs, so each
// product is exact in f32), then arith.truncf back to bf16;
// a batch_matmul of the same kind, and a generic contraction that extends
// its inputs in its body. On tensors, bufferized with one-shot-bufferize's
// function boundaries (dynamic strides). The contractions become sbgemm
// kernels (AVX512-BF16's VDPBF16PS, or AMX's tiles where the host has them
// and the kernel takes the problem); the linear layer's truncf becomes its
// kernel's bf16 output (rounded once, as the truncf rounds the f32 sum),
// its f32 accumulator the kernel's scratch; run with and
// without the pass and compared exactly (small-integer inputs, exact in
// bf16 and in every f32 sum).
// REQUIRES: host-avx512f, host-avx512bw, host-avx512bf16
// RUN: %mlir-opt %s --one-shot-bufferize="bufferize-function-boundaries" -o %t.default.mlir
// RUN: %mlir-opt %t.default.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.reference
// RUN: %qimeng-opt %t.default.mlir --qimeng-tensorop -o %t.v1.mlir
// RUN: FileCheck %s < %t.v1.mlir
// RUN: %mlir-opt %t.v1.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v1
// RUN: diff %t.reference %t.v1
//
// On two threads: the dynamic-M kernel (blocked for 4096 rows, enough
// work for two parts) in its parallel form, once per part of C's columns
// on all the call's rows (the launcher in omp.parallel).
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=threads=2 representative-m=4096' -o %t.v2.mlir
// RUN: FileCheck %s --check-prefix=PARTS < %t.v2.mlir
// RUN: %mlir-opt %t.v2.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v2
// RUN: diff %t.reference %t.v2
// RUN: FileCheck %s --check-prefix=OUT < %t.reference
//
// On one thread: a batch's GEMMs one after the other (scf.for), each
// call's bf16 output pointer written into the header before it (on two
// threads, above, the batch launcher writes it into each thread's slice).
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=threads=1' -o %t.v3.mlir
// RUN: FileCheck %s --check-prefix=ONE < %t.v3.mlir
// RUN: %mlir-opt %t.v3.mlir %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.v3
// RUN: diff %t.reference %t.v3
//
// On tensors, before bufferization: the truncf moves onto buffers with
// the product and is the kernel's bf16 output there too.
// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.tensor.mlir
// RUN: FileCheck %s --check-prefix=TENSOR < %t.tensor.mlir
// RUN: %mlir-opt %t.tensor.mlir --one-shot-bufferize="bufferize-function-boundaries" %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.tensor
// RUN: diff %t.reference %t.tensor
//
// The kernels are what ran: broken ones (validation off) change the output.
// RUN: %qimeng-opt %t.default.mlir '--qimeng-tensorop=validate=false test-inject-fault=drop-k' \
// RUN:   | %mlir-opt %dealloc %lower-to-llvm \
// RUN:   | %mlir-runner -e main -entry-point-result=void --shared-libs=%runner-libs | %strip-address > %t.fault
// RUN: not diff %t.reference %t.fault > /dev/null
//
// A product rounded to bf16 before the sum is another computation: left
// alone, with the reason.
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// The truncf is the kernel's (the else branch, for strides other than the
// unit ones the kernel assumes, keeps the ops).
// CHECK-LABEL: func.func @linear_bf16(
// CHECK:         scf.if
// CHECK-NOT:       linalg.
// CHECK-NOT:       arith.truncf
// CHECK:           llvm.call @qm_sbgemm_67x45x33_nt_{{(adirect_)?}}b0_obf16_ldrt_
// CHECK-NEXT:      llvm.call @qm_workspace_release
// CHECK-NEXT:    } else {
// CHECK:           linalg.matmul
// CHECK:           arith.truncf
// CHECK-LABEL: func.func @bmm_bf16(
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         @qm_sbgemm_20x37x19_nn_ldrt_
// CHECK-LABEL: func.func @bmm_bf16_to_bf16(
// CHECK-NOT:       arith.truncf
// CHECK:           llvm.call @qm_sbgemm_20x37x19_nn_b0_obf16_ldrt_
// ONE-LABEL: func.func @bmm_bf16_to_bf16(
// ONE:         scf.for
// ONE-NOT:       arith.truncf
// ONE:           llvm.call @qm_sbgemm_20x37x19_nn_b0_obf16_ldrt_{{[a-z0-9_]*}}{{avx512bf16|amxbf16}}(
// CHECK-LABEL: func.func @generic_bf16(
// CHECK:         llvm.call @qm_sbgemm_9x70x131_nn_ldrt_
// The batch's M is read at run time (`_mrt`).
// One row at run time takes the 1-row bucket's kernel, which reads the
// transposed weight in place, a dot product per output (`_gemv8`).
// CHECK-LABEL: func.func @linear_dynamic_batch(
// CHECK:         llvm.call @qm_sbgemm_1x100x33_nt_mrt_b0_ldrt_gemv8_
// CHECK:         llvm.call @qm_sbgemm_256x100x33_nt_mrt_{{(adirect_)?}}b0_ldrt_
// CHECK-LABEL: func.func @linear_dynamic_batch_bf16(
// CHECK:         llvm.call @qm_sbgemm_16x40x150_nn_mrt_b0_obf16_ldrt_
// CHECK:         llvm.call @qm_sbgemm_256x40x150_nn_mrt_{{(adirect_)?}}b0_obf16_ldrt_
// A dynamic number of output features: N is read at run time (`_nrt`).
// CHECK-LABEL: func.func @linear_dynamic_features(
// CHECK:         llvm.call @qm_sbgemm_67x256x33_nn_nrt_{{(adirect_)?}}b0_ldrt_
// A bias and relu after a bf16 product are the kernel's epilogue, as for
// f32 (the else branch, for a bias stride other than the unit one the
// kernel assumes, keeps the generic).
// CHECK-LABEL: func.func @linear_bias_relu(
// CHECK:         scf.if
// CHECK-NOT:       arith.maximumf
// CHECK:           llvm.call @qm_sbgemm_67x45x33_nn_{{(adirect_)?}}b0_bias_relu_ldrt_
// CHECK:         } else {
// CHECK:           arith.maximumf
// StableHLO's dot_general with an f32 preferred type, a bias, relu6 (a
// clamp to [0, 6]) and a convert to bf16, in one generic: all of it the
// kernel's, rounded once at the end.
// CHECK-LABEL: func.func @linear_bias_relu6_to_bf16(
// CHECK:         scf.if
// CHECK-NOT:       arith.truncf
// CHECK:           llvm.call @qm_sbgemm_67x45x33_nn_{{(adirect_)?}}b0_bias_relu_max40c00000_obf16_ldrt_
// CHECK:         } else {
// CHECK:           arith.truncf
// jax.nn.leaky_relu (slope 0.01) after a bf16 dense layer's f32 product
// and bias, rounded to bf16 at the end: leaky relu too is the kernel's
// (s * x in f32, as the generic computes it), then the rounding.
// CHECK-LABEL: func.func @linear_bias_leaky_to_bf16(
// CHECK:         scf.if
// CHECK-NOT:       arith.select
// CHECK:           llvm.call @qm_sbgemm_67x45x33_nn_{{(adirect_)?}}b0_bias_leaky3c23d70a_obf16_ldrt_
// CHECK:         } else {
// CHECK:           arith.select
// torch's aten.mv in bf16: the GEMM of one row, the matrix read as B^T.
// CHECK-LABEL: func.func @mv_bf16(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sbgemm_1x70x131_nt_b0_ldrt_
// The same over a run-time number of rows: the matrix-vector form, its
// columns (the matrix's rows) from the header.
// CHECK-LABEL: func.func @mv_bf16_dynamic_rows(
// CHECK-NOT:     linalg.fill
// CHECK:         llvm.call @qm_sbgemm_1x256x131_nt_nrt_b0_ldrt_gemv8_
// CHECK-LABEL: func.func @product_in_bf16(
// CHECK:         linalg.generic
// A smooth activation after a bf16 product fuses (on the f32 sums; its
// accuracy against libm is test/Frontend/bf16-smooth-activations.mlir's).
// CHECK-LABEL: func.func @linear_bf16_silu(
// CHECK:         llvm.call @qm_sbgemm_6x20x9_nn_b0_silu_
// CHECK-NOT:     linalg.generic
// CHECK:         } else {
// CHECK: llvm.func internal @qm_sbgemm_

// REMARK: remark: not accelerated: the products are rounded to bf16 before the f32 sum
// REMARK-NOT: remark: silu not fused

// TENSOR-LABEL: func.func @linear_bf16(
// TENSOR:         llvm.call @qm_sbgemm_67x45x33_nt_{{(adirect_)?}}b0_obf16_ldrt_
// TENSOR-LABEL: func.func @bmm_bf16_to_bf16(
// TENSOR:         llvm.call @qm_sbgemm_20x37x19_nn_b0_obf16_ldrt_
// TENSOR-LABEL: func.func @linear_dynamic_batch_bf16(
// TENSOR:         llvm.call @qm_sbgemm_16x40x150_nn_mrt_b0_obf16_ldrt_
// TENSOR-LABEL: func.func @linear_bias_relu6_to_bf16(
// TENSOR:         llvm.call @qm_sbgemm_67x45x33_nn_{{(adirect_)?}}b0_bias_relu_max40c00000_obf16_ldrt_
// TENSOR-LABEL: func.func @linear_bias_leaky_to_bf16(
// TENSOR:         llvm.call @qm_sbgemm_67x45x33_nn_{{(adirect_)?}}b0_bias_leaky3c23d70a_obf16_ldrt_

// PARTS: llvm.call @qm_sbgemm_20x37x19_nn_b0_obf16_ldrt_{{.*}}_x86_64_{{avx512bf16|amxbf16}}_batch_t2(
// PARTS: llvm.call @qm_sbgemm_4096x100x33_nt_mrt_{{(adirect_)?}}b0_ldrt_{{.*}}_par_x86_64_{{avx512bf16|amxbf16}}_parts2_cols(

// OUT-COUNT-13: rank = {{[23]}}
// OUT: rank = 1

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @linear_bf16(%x: tensor<67x33xbf16>, %w: tensor<45x33xbf16>) -> tensor<67x45xbf16> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<33x45xbf16>
  %wt = linalg.transpose ins(%w : tensor<45x33xbf16>) outs(%wt0 : tensor<33x45xbf16>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<67x45xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<67x45xf32>) -> tensor<67x45xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<67x33xbf16>, tensor<33x45xbf16>) outs(%acc : tensor<67x45xf32>) -> tensor<67x45xf32>
  %out0 = tensor.empty() : tensor<67x45xbf16>
  %out = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<67x45xf32>) outs(%out0 : tensor<67x45xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<67x45xbf16>
  return %out : tensor<67x45xbf16>
}

func.func @bmm_bf16(%a: tensor<3x20x19xbf16>, %b: tensor<3x19x37xbf16>, %c: tensor<3x20x37xf32>) -> tensor<3x20x37xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x20x19xbf16>, tensor<3x19x37xbf16>) outs(%c : tensor<3x20x37xf32>) -> tensor<3x20x37xf32>
  return %r : tensor<3x20x37xf32>
}

// Attention scores in bf16 over a batch known at run time: a zero-filled
// f32 accumulator, batch_matmul, truncf back to bf16; each GEMM of the
// batch writes its own bf16 output (its pointer stepped by the output's
// batch stride, read at run time).
func.func @bmm_bf16_to_bf16(%a: tensor<?x20x19xbf16>, %b: tensor<?x19x37xbf16>) -> tensor<?x20x37xbf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %a, %c0 : tensor<?x20x19xbf16>
  %acc0 = tensor.empty(%n) : tensor<?x20x37xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x20x37xf32>) -> tensor<?x20x37xf32>
  %mm = linalg.batch_matmul ins(%a, %b : tensor<?x20x19xbf16>, tensor<?x19x37xbf16>) outs(%acc : tensor<?x20x37xf32>) -> tensor<?x20x37xf32>
  %out0 = tensor.empty(%n) : tensor<?x20x37xbf16>
  %out = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm : tensor<?x20x37xf32>) outs(%out0 : tensor<?x20x37xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x20x37xbf16>
  return %out : tensor<?x20x37xbf16>
}

func.func @generic_bf16(%a: tensor<9x131xbf16>, %b: tensor<131x70xbf16>, %c: tensor<9x70xf32>) -> tensor<9x70xf32> {
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<9x131xbf16>, tensor<131x70xbf16>) outs(%c : tensor<9x70xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<9x70xf32>
  return %r : tensor<9x70xf32>
}

func.func @linear_dynamic_batch(%x: tensor<?x33xbf16>, %w: tensor<100x33xbf16>) -> tensor<?x100xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x33xbf16>
  %wt0 = tensor.empty() : tensor<33x100xbf16>
  %wt = linalg.transpose ins(%w : tensor<100x33xbf16>) outs(%wt0 : tensor<33x100xbf16>) permutation = [1, 0]
  %acc0 = tensor.empty(%rows) : tensor<?x100xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x100xf32>) -> tensor<?x100xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<?x33xbf16>, tensor<33x100xbf16>) outs(%acc : tensor<?x100xf32>) -> tensor<?x100xf32>
  return %mm : tensor<?x100xf32>
}

// A bf16 linear layer over a batch known at run time, K deep enough for
// sums past bf16's 8 bits (rounded to nearest even by the kernel as by the
// truncf): the kernel for its rows (m-buckets) writes the bf16 output.
func.func @linear_dynamic_batch_bf16(%x: tensor<?x150xbf16>, %w: tensor<150x40xbf16>) -> tensor<?x40xbf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x150xbf16>
  %acc0 = tensor.empty(%rows) : tensor<?x40xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<?x40xf32>) -> tensor<?x40xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x150xbf16>, tensor<150x40xbf16>) outs(%acc : tensor<?x40xf32>) -> tensor<?x40xf32>
  %out0 = tensor.empty(%rows) : tensor<?x40xbf16>
  %out = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<?x40xf32>) outs(%out0 : tensor<?x40xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x40xbf16>
  return %out : tensor<?x40xbf16>
}

func.func @linear_dynamic_features(%x: tensor<67x33xbf16>, %w: tensor<33x?xbf16>) -> tensor<67x?xf32> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %w, %c1 : tensor<33x?xbf16>
  %acc0 = tensor.empty(%n) : tensor<67x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<67x?xf32>) -> tensor<67x?xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<67x33xbf16>, tensor<33x?xbf16>) outs(%acc : tensor<67x?xf32>) -> tensor<67x?xf32>
  return %mm : tensor<67x?xf32>
}

func.func @linear_bias_relu(%x: tensor<67x33xbf16>, %w: tensor<33x45xbf16>, %b: tensor<45xf32>) -> tensor<67x45xf32> {
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<67x45xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<67x45xf32>) -> tensor<67x45xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<67x33xbf16>, tensor<33x45xbf16>) outs(%acc : tensor<67x45xf32>) -> tensor<67x45xf32>
  %out0 = tensor.empty() : tensor<67x45xf32>
  %out = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<67x45xf32>, tensor<45xf32>) outs(%out0 : tensor<67x45xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<67x45xf32>
  return %out : tensor<67x45xf32>
}

func.func @linear_bias_relu6_to_bf16(%x: tensor<67x33xbf16>, %w: tensor<33x45xbf16>, %b: tensor<45xf32>) -> tensor<67x45xbf16> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %acc0 = tensor.empty() : tensor<67x45xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<67x45xf32>) -> tensor<67x45xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<67x33xbf16>, tensor<33x45xbf16>) outs(%acc : tensor<67x45xf32>) -> tensor<67x45xf32>
  %out0 = tensor.empty() : tensor<67x45xbf16>
  %out = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<67x45xf32>, tensor<45xf32>) outs(%out0 : tensor<67x45xbf16>) {
  ^bb0(%v: f32, %bias: f32, %o: bf16):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    %c = arith.minimumf %r, %six : f32
    %t = arith.truncf %c : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<67x45xbf16>
  return %out : tensor<67x45xbf16>
}

func.func @linear_bias_leaky_to_bf16(%x: tensor<67x33xbf16>, %w: tensor<33x45xbf16>, %b: tensor<45xf32>) -> tensor<67x45xbf16> {
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.01 : f32
  %acc0 = tensor.empty() : tensor<67x45xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<67x45xf32>) -> tensor<67x45xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<67x33xbf16>, tensor<33x45xbf16>) outs(%acc : tensor<67x45xf32>) -> tensor<67x45xf32>
  %out0 = tensor.empty() : tensor<67x45xbf16>
  %out = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<67x45xf32>, tensor<45xf32>) outs(%out0 : tensor<67x45xbf16>) {
  ^bb0(%v: f32, %bias: f32, %o: bf16):
    %s = arith.addf %v, %bias : f32
    %positive = arith.cmpf oge, %s, %zero : f32
    %scaled = arith.mulf %s, %slope : f32
    %l = arith.select %positive, %s, %scaled : f32
    %t = arith.truncf %l : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<67x45xbf16>
  return %out : tensor<67x45xbf16>
}

func.func @mv_bf16(%a: tensor<70x131xbf16>, %x: tensor<131xbf16>) -> tensor<70xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<70xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<70xf32>) -> tensor<70xf32>
  %y = linalg.matvec ins(%a, %x : tensor<70x131xbf16>, tensor<131xbf16>) outs(%f : tensor<70xf32>) -> tensor<70xf32>
  return %y : tensor<70xf32>
}

func.func @mv_bf16_dynamic_rows(%a: tensor<?x131xbf16>, %x: tensor<131xbf16>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %a, %c0 : tensor<?x131xbf16>
  %e = tensor.empty(%rows) : tensor<?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %y = linalg.matvec ins(%a, %x : tensor<?x131xbf16>, tensor<131xbf16>) outs(%f : tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

func.func @product_in_bf16(%a: tensor<4x8xbf16>, %b: tensor<8x5xbf16>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xbf16>, tensor<8x5xbf16>) outs(%c : tensor<4x5xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %p = arith.mulf %x, %y : bf16
    %pf = arith.extf %p : bf16 to f32
    %s = arith.addf %acc, %pf : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// (i * x + j * y) mod 7 - 3: small integers, exact in bf16.
func.func private @pattern2(%t: tensor<?x?xbf16>, %x: index, %y: index) -> tensor<?x?xbf16> {
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xbf16>) {
  ^bb0(%o: bf16):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %s = arith.addi %ix, %jy : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %s, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %c3 = arith.constant 3 : i64
    %v = arith.subi %mi, %c3 : i64
    %f = arith.sitofp %v : i64 to bf16
    linalg.yield %f : bf16
  } -> tensor<?x?xbf16>
  return %r : tensor<?x?xbf16>
}

func.func private @matrix(%rows: index, %cols: index, %x: index, %y: index) -> tensor<?x?xbf16> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xbf16>
  %r = call @pattern2(%e, %x, %y) : (tensor<?x?xbf16>, index, index) -> tensor<?x?xbf16>
  return %r : tensor<?x?xbf16>
}

func.func private @widen(%t: tensor<?x?xbf16>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %t, %c0 : tensor<?x?xbf16>
  %d1 = tensor.dim %t, %c1 : tensor<?x?xbf16>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<?x?xbf16>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %f = arith.extf %v : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func private @print2(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c9 = arith.constant 9 : index
  %c19 = arith.constant 19 : index
  %c20 = arith.constant 20 : index
  %c33 = arith.constant 33 : index
  %c37 = arith.constant 37 : index
  %c45 = arith.constant 45 : index
  %c57 = arith.constant 57 : index
  %c60 = arith.constant 60 : index
  %c67 = arith.constant 67 : index
  %c70 = arith.constant 70 : index
  %c131 = arith.constant 131 : index

  %xd = call @matrix(%c67, %c33, %c3, %c5) : (index, index, index, index) -> tensor<?x?xbf16>
  %wd = call @matrix(%c45, %c33, %c2, %c3) : (index, index, index, index) -> tensor<?x?xbf16>
  %x = tensor.cast %xd : tensor<?x?xbf16> to tensor<67x33xbf16>
  %w = tensor.cast %wd : tensor<?x?xbf16> to tensor<45x33xbf16>
  %y = call @linear_bf16(%x, %w) : (tensor<67x33xbf16>, tensor<45x33xbf16>) -> tensor<67x45xbf16>
  %yd = tensor.cast %y : tensor<67x45xbf16> to tensor<?x?xbf16>
  %yf = call @widen(%yd) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
  call @print2(%yf) : (tensor<?x?xf32>) -> ()

  // The same input through a 33x45 weight, a bias of -20 .. 24 and relu.
  %wbd = call @matrix(%c33, %c45, %c2, %c3) : (index, index, index, index) -> tensor<?x?xbf16>
  %wb = tensor.cast %wbd : tensor<?x?xbf16> to tensor<33x45xbf16>
  %bias0 = tensor.empty() : tensor<45xf32>
  %bias = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%bias0 : tensor<45xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %twenty = arith.constant 20 : i64
    %v = arith.subi %ii, %twenty : i64
    %fv = arith.sitofp %v : i64 to f32
    linalg.yield %fv : f32
  } -> tensor<45xf32>
  %yb = call @linear_bias_relu(%x, %wb, %bias) : (tensor<67x33xbf16>, tensor<33x45xbf16>, tensor<45xf32>) -> tensor<67x45xf32>
  %ybd = tensor.cast %yb : tensor<67x45xf32> to tensor<?x?xf32>
  call @print2(%ybd) : (tensor<?x?xf32>) -> ()
  %y6 = call @linear_bias_relu6_to_bf16(%x, %wb, %bias) : (tensor<67x33xbf16>, tensor<33x45xbf16>, tensor<45xf32>) -> tensor<67x45xbf16>
  %y6d = tensor.cast %y6 : tensor<67x45xbf16> to tensor<?x?xbf16>
  %y6f = call @widen(%y6d) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
  call @print2(%y6f) : (tensor<?x?xf32>) -> ()
  %yl = call @linear_bias_leaky_to_bf16(%x, %wb, %bias) : (tensor<67x33xbf16>, tensor<33x45xbf16>, tensor<45xf32>) -> tensor<67x45xbf16>
  %yld = tensor.cast %yl : tensor<67x45xbf16> to tensor<?x?xbf16>
  %ylf = call @widen(%yld) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
  call @print2(%ylf) : (tensor<?x?xf32>) -> ()

  // A batch of 21 rows known at run time only, 100 outputs.
  %c21 = arith.constant 21 : index
  %c100 = arith.constant 100 : index
  %xdd = call @matrix(%c21, %c33, %c5, %c3) : (index, index, index, index) -> tensor<?x?xbf16>
  %xdyn = tensor.cast %xdd : tensor<?x?xbf16> to tensor<?x33xbf16>
  %w2d = call @matrix(%c100, %c33, %c3, %c2) : (index, index, index, index) -> tensor<?x?xbf16>
  %w2 = tensor.cast %w2d : tensor<?x?xbf16> to tensor<100x33xbf16>
  %yd2 = call @linear_dynamic_batch(%xdyn, %w2) : (tensor<?x33xbf16>, tensor<100x33xbf16>) -> tensor<?x100xf32>
  %yd2c = tensor.cast %yd2 : tensor<?x100xf32> to tensor<?x?xf32>
  call @print2(%yd2c) : (tensor<?x?xf32>) -> ()
  // The same layer for one row (a token): the 1-row kernel.
  %x1d = call @matrix(%c1, %c33, %c5, %c3) : (index, index, index, index) -> tensor<?x?xbf16>
  %x1 = tensor.cast %x1d : tensor<?x?xbf16> to tensor<?x33xbf16>
  %y1 = call @linear_dynamic_batch(%x1, %w2) : (tensor<?x33xbf16>, tensor<100x33xbf16>) -> tensor<?x100xf32>
  %y1c = tensor.cast %y1 : tensor<?x100xf32> to tensor<?x?xf32>
  call @print2(%y1c) : (tensor<?x?xf32>) -> ()

  // The same in bf16 through K = 150, for 21 rows and for 3.
  %c150 = arith.constant 150 : index
  %c40 = arith.constant 40 : index
  %x3d = call @matrix(%c21, %c150, %c5, %c3) : (index, index, index, index) -> tensor<?x?xbf16>
  %x3 = tensor.cast %x3d : tensor<?x?xbf16> to tensor<?x150xbf16>
  %w3d = call @matrix(%c150, %c40, %c3, %c2) : (index, index, index, index) -> tensor<?x?xbf16>
  %w3 = tensor.cast %w3d : tensor<?x?xbf16> to tensor<150x40xbf16>
  %y3 = call @linear_dynamic_batch_bf16(%x3, %w3) : (tensor<?x150xbf16>, tensor<150x40xbf16>) -> tensor<?x40xbf16>
  %y3d = tensor.cast %y3 : tensor<?x40xbf16> to tensor<?x?xbf16>
  %y3f = call @widen(%y3d) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
  call @print2(%y3f) : (tensor<?x?xf32>) -> ()
  %x4d = call @matrix(%c3, %c150, %c5, %c3) : (index, index, index, index) -> tensor<?x?xbf16>
  %x4 = tensor.cast %x4d : tensor<?x?xbf16> to tensor<?x150xbf16>
  %y4 = call @linear_dynamic_batch_bf16(%x4, %w3) : (tensor<?x150xbf16>, tensor<150x40xbf16>) -> tensor<?x40xbf16>
  %y4d = tensor.cast %y4 : tensor<?x40xbf16> to tensor<?x?xbf16>
  %y4f = call @widen(%y4d) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
  call @print2(%y4f) : (tensor<?x?xf32>) -> ()

  // 300 output features known at run time only (a kernel blocked for 256).
  %c300 = arith.constant 300 : index
  %wfd = call @matrix(%c33, %c300, %c1, %c4) : (index, index, index, index) -> tensor<?x?xbf16>
  %wf = tensor.cast %wfd : tensor<?x?xbf16> to tensor<33x?xbf16>
  %yf3 = call @linear_dynamic_features(%x, %wf) : (tensor<67x33xbf16>, tensor<33x?xbf16>) -> tensor<67x?xf32>
  %yf3c = tensor.cast %yf3 : tensor<67x?xf32> to tensor<?x?xf32>
  call @print2(%yf3c) : (tensor<?x?xf32>) -> ()

  // batch_matmul: three 20x19 by 19x37 products into a C of 1s.
  %ad = call @matrix(%c60, %c19, %c1, %c2) : (index, index, index, index) -> tensor<?x?xbf16>
  %bd = call @matrix(%c57, %c37, %c2, %c5) : (index, index, index, index) -> tensor<?x?xbf16>
  %as = tensor.cast %ad : tensor<?x?xbf16> to tensor<60x19xbf16>
  %bs = tensor.cast %bd : tensor<?x?xbf16> to tensor<57x37xbf16>
  %a = tensor.expand_shape %as [[0, 1], [2]] output_shape [3, 20, 19] : tensor<60x19xbf16> into tensor<3x20x19xbf16>
  %b = tensor.expand_shape %bs [[0, 1], [2]] output_shape [3, 19, 37] : tensor<57x37xbf16> into tensor<3x19x37xbf16>
  %one = arith.constant 1.0 : f32
  %c0e = tensor.empty() : tensor<3x20x37xf32>
  %c0f = linalg.fill ins(%one : f32) outs(%c0e : tensor<3x20x37xf32>) -> tensor<3x20x37xf32>
  %bmm = call @bmm_bf16(%a, %b, %c0f) : (tensor<3x20x19xbf16>, tensor<3x19x37xbf16>, tensor<3x20x37xf32>) -> tensor<3x20x37xf32>
  %bmmm = bufferization.to_buffer %bmm : tensor<3x20x37xf32> to memref<3x20x37xf32>
  %bmmu = memref.cast %bmmm : memref<3x20x37xf32> to memref<*xf32>
  call @printMemrefF32(%bmmu) : (memref<*xf32>) -> ()
  %ad3 = tensor.cast %a : tensor<3x20x19xbf16> to tensor<?x20x19xbf16>
  %bd3 = tensor.cast %b : tensor<3x19x37xbf16> to tensor<?x19x37xbf16>
  %s3 = call @bmm_bf16_to_bf16(%ad3, %bd3) : (tensor<?x20x19xbf16>, tensor<?x19x37xbf16>) -> tensor<?x20x37xbf16>
  %s3c = tensor.collapse_shape %s3 [[0, 1], [2]] : tensor<?x20x37xbf16> into tensor<?x37xbf16>
  %s3d = tensor.cast %s3c : tensor<?x37xbf16> to tensor<?x?xbf16>
  %s3f = call @widen(%s3d) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
  call @print2(%s3f) : (tensor<?x?xf32>) -> ()

  // The generic contraction, into a C of 2s.
  %gad = call @matrix(%c9, %c131, %c5, %c1) : (index, index, index, index) -> tensor<?x?xbf16>
  %gbd = call @matrix(%c131, %c70, %c4, %c3) : (index, index, index, index) -> tensor<?x?xbf16>
  %ga = tensor.cast %gad : tensor<?x?xbf16> to tensor<9x131xbf16>
  %gb = tensor.cast %gbd : tensor<?x?xbf16> to tensor<131x70xbf16>
  %two = arith.constant 2.0 : f32
  %gce = tensor.empty() : tensor<9x70xf32>
  %gc = linalg.fill ins(%two : f32) outs(%gce : tensor<9x70xf32>) -> tensor<9x70xf32>
  %g = call @generic_bf16(%ga, %gb, %gc) : (tensor<9x131xbf16>, tensor<131x70xbf16>, tensor<9x70xf32>) -> tensor<9x70xf32>
  %gd = tensor.cast %g : tensor<9x70xf32> to tensor<?x?xf32>
  call @print2(%gd) : (tensor<?x?xf32>) -> ()

  // The product in bf16 (left alone): 4x8 by 8x5 into zeros.
  %c8 = arith.constant 8 : index
  %pad = call @matrix(%c4, %c8, %c1, %c3) : (index, index, index, index) -> tensor<?x?xbf16>
  %pa = tensor.cast %pad : tensor<?x?xbf16> to tensor<4x8xbf16>
  %pbd = call @matrix(%c8, %c5, %c2, %c1) : (index, index, index, index) -> tensor<?x?xbf16>
  %pb = tensor.cast %pbd : tensor<?x?xbf16> to tensor<8x5xbf16>
  %zero = arith.constant 0.0 : f32
  %pce = tensor.empty() : tensor<4x5xf32>
  %pc = linalg.fill ins(%zero : f32) outs(%pce : tensor<4x5xf32>) -> tensor<4x5xf32>
  %p = call @product_in_bf16(%pa, %pb, %pc) : (tensor<4x8xbf16>, tensor<8x5xbf16>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %pd = tensor.cast %p : tensor<4x5xf32> to tensor<?x?xf32>
  call @print2(%pd) : (tensor<?x?xf32>) -> ()

  // A matrix times a vector: 70x131 by 131.
  %c131b = arith.constant 131 : index
  %mad = call @matrix(%c70, %c131b, %c3, %c2) : (index, index, index, index) -> tensor<?x?xbf16>
  %ma = tensor.cast %mad : tensor<?x?xbf16> to tensor<70x131xbf16>
  %mxd = call @matrix(%c1, %c131b, %c1, %c5) : (index, index, index, index) -> tensor<?x?xbf16>
  %mxs = tensor.cast %mxd : tensor<?x?xbf16> to tensor<1x131xbf16>
  %mx = tensor.collapse_shape %mxs [[0, 1]] : tensor<1x131xbf16> into tensor<131xbf16>
  %my = call @mv_bf16(%ma, %mx) : (tensor<70x131xbf16>, tensor<131xbf16>) -> tensor<70xf32>
  %mym = bufferization.to_buffer %my : tensor<70xf32> to memref<70xf32>
  %myu = memref.cast %mym : memref<70xf32> to memref<*xf32>
  call @printMemrefF32(%myu) : (memref<*xf32>) -> ()
  // ... its 70 rows as a run-time number.
  %mar = tensor.cast %mad : tensor<?x?xbf16> to tensor<?x131xbf16>
  %mdy = call @mv_bf16_dynamic_rows(%mar, %mx) : (tensor<?x131xbf16>, tensor<131xbf16>) -> tensor<?xf32>
  %mdym = bufferization.to_buffer %mdy : tensor<?xf32> to memref<?xf32>
  %mdyu = memref.cast %mdym : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%mdyu) : (memref<*xf32>) -> ()
  return
}

// aten.linear in bf16 into f32, then aten.silu (not called by @main).
func.func @linear_bf16_silu(%x: tensor<6x9xbf16>, %w: tensor<9x20xbf16>) -> tensor<6x20xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<6x20xf32>) -> tensor<6x20xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x9xbf16>, tensor<9x20xbf16>) outs(%c : tensor<6x20xf32>) -> tensor<6x20xf32>
  %o = tensor.empty() : tensor<6x20xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x20xf32>) outs(%o : tensor<6x20xf32>) {
  ^bb0(%v: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %v : f32
    %exp = math.exp %neg : f32
    %den = arith.addf %one, %exp : f32
    %y = arith.divf %v, %den : f32
    linalg.yield %y : f32
  } -> tensor<6x20xf32>
  return %r : tensor<6x20xf32>
}
