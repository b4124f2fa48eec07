// REQUIRES: cross-aarch64
// torch's linear layer with relu on tensors, as in
// linear-transposed-weights.mlir (the weight through linalg.transpose, a
// zero fill, the matmul, a broadcast bias add and relu), at a size the
// partition splits (70 x 100 x 300: two parts of 2.1 MFLOP) and on two
// threads: the pass on tensors before one-shot-bufferize's defaults, the
// transpose, fill, bias and relu folded into the parallel NEON kernel
// ("nt_b0_bias_relu ... par"), whose parts each pack their columns of the
// weight; over a dynamic number of rows, the run-time-M kernel's parts
// split the columns ("_cols"), the call's rows written at run time. The
// module links LLVM's OpenMP runtime for arm64 (scripts/setup.sh extracts
// it) and runs under qemu on two threads against linear_main.c's exact
// reference, at 70 rows and at 1, 5, 70 and 300 (more than the
// representative 256).
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon threads=2" --one-shot-bufferize="bufferize-function-boundaries" %dealloc \
// RUN:   | tee %t.mlir | FileCheck %s
// RUN: %mlir-opt %t.mlir %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.o
// RUN: %llvm-nm %t.o | FileCheck %s --check-prefix=SYMBOLS
// RUN: %if cross-aarch64-openmp %{ %cross-cc-dynamic-aarch64 -DM=70 -DN=100 -DK=300 -DLDX=302 -DLDW=301 -DMAX_ROWS=300 %S/Inputs/linear_main.c %t.o %openmp-aarch64 -o %t.exe %}
// RUN: %if cross-aarch64-openmp %{ %qemu-aarch64 -cpu neoverse-n1 -E OMP_DISPLAY_AFFINITY=true -E "OMP_AFFINITY_FORMAT=thread %%n of %%N" %t.exe 2>&1 | FileCheck %s --check-prefix=EXEC %}
// The kernels are what ran: with a broken one (validation off) Y is wrong.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon threads=2 test-inject-fault=drop-k validate=false" --one-shot-bufferize="bufferize-function-boundaries" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.broken.o
// RUN: %if cross-aarch64-openmp %{ %cross-cc-dynamic-aarch64 -DM=70 -DN=100 -DK=300 -DLDX=302 -DLDW=301 -DMAX_ROWS=300 %S/Inputs/linear_main.c %t.broken.o %openmp-aarch64 -o %t.broken.exe %}
// RUN: %if cross-aarch64-openmp %{ not %qemu-aarch64 -cpu neoverse-n1 %t.broken.exe | FileCheck %s --check-prefix=BROKEN %}

// CHECK-LABEL: func.func @linear
// CHECK-NOT:   linalg.fill
// CHECK:         llvm.call @qm_sgemm_70x100x300_nt_b0_bias_relu_ldrt_{{[0-9]+x[0-9]+}}_ku{{[0-9]}}_par_aarch64_neon_parts2(
// CHECK:       } else {
// CHECK:         linalg.transpose
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK:       return
// CHECK-LABEL: func.func @linear_dyn
// CHECK-NOT:   linalg.fill
// CHECK:         llvm.call @qm_sgemm_256x100x300_nt_mrt_b0_bias_relu_ldrt_{{[0-9]+x[0-9]+}}_ku{{[0-9]}}_par_aarch64_neon_parts2_cols(
// CHECK:       omp.parallel
// SYMBOLS: U __kmpc_fork_call
// EXEC-DAG: thread 0 of 2
// EXEC-DAG: thread 1 of 2
// EXEC: PASS 70x100x300 and 1, 5, 70, 300 rows
// BROKEN: FAIL: linear with 70 rows

func.func @linear(%x: tensor<70x300xf32>, %w: tensor<100x300xf32>, %bias: tensor<100xf32>) -> tensor<70x100xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<300x100xf32>
  %wt = linalg.transpose ins(%w : tensor<100x300xf32>) outs(%wt0 : tensor<300x100xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<70x100xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<70x100xf32>) -> tensor<70x100xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<70x300xf32>, tensor<300x100xf32>) outs(%f : tensor<70x100xf32>) -> tensor<70x100xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<70x100xf32>, tensor<100xf32>) outs(%e : tensor<70x100xf32>) {
  ^bb0(%m: f32, %b: f32, %o: f32):
    %s = arith.addf %m, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<70x100xf32>
  return %y : tensor<70x100xf32>
}

func.func @linear_dyn(%x: tensor<?x300xf32>, %w: tensor<100x300xf32>, %bias: tensor<100xf32>) -> tensor<?x100xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x300xf32>
  %wt0 = tensor.empty() : tensor<300x100xf32>
  %wt = linalg.transpose ins(%w : tensor<100x300xf32>) outs(%wt0 : tensor<300x100xf32>) permutation = [1, 0]
  %e = tensor.empty(%m) : tensor<?x100xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x100xf32>) -> tensor<?x100xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<?x300xf32>, tensor<300x100xf32>) outs(%f : tensor<?x100xf32>) -> tensor<?x100xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<?x100xf32>, tensor<100xf32>) outs(%e : tensor<?x100xf32>) {
  ^bb0(%mv: f32, %b: f32, %o: f32):
    %s = arith.addf %mv, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x100xf32>
  return %y : tensor<?x100xf32>
}
