// REQUIRES: cross-aarch64
// The parallel form on a cross target: with threads=2 the pass splits C
// into two parts (N at a multiple of the block's 12 columns by default, M
// at a multiple of its 7 rows with split=m) and the NEON kernel computes
// one part a call, its rows and columns read from its workspace header;
// an nhwc convolution's parts split its output pixels.
// The pass validates the kernel part by part under qemu (each part a call
// in a workspace of its own, the whole C checked against the fp64
// reference), then emits the same launcher as on x86: an omp.parallel
// over the parts, each writing its range into its own workspace slice.
// The module lowers with the stock pipeline and llc compiles it for
// AArch64; it calls LLVM's OpenMP runtime (__kmpc_fork_call). Debian 12
// has no static libomp for aarch64, so the executable links the arm64
// libomp that scripts/setup.sh extracts into the build tree dynamically
// and runs under qemu on two threads against gemm_main.c's reference
// (the multiarch arm64 glibc as its loader and libc); the convolution runs
// in the pass's validation only.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon threads=2" \
// RUN:   | tee %t.n.mlir | FileCheck %s --check-prefixes=CHECK,SPLITN
// RUN: %mlir-opt %t.n.mlir %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.n.o
// RUN: %llvm-nm %t.n.o | FileCheck %s --check-prefix=SYMBOLS
// RUN: %if cross-aarch64-openmp %{ %cross-cc-dynamic-aarch64 -DM=70 -DN=100 -DK=300 -DLDA=300 -DLDB=100 -DLDC=100 %S/Inputs/gemm_main.c %t.n.o %openmp-aarch64 -o %t.n.exe %}
// RUN: %if cross-aarch64-openmp %{ %qemu-aarch64 -cpu neoverse-n1 -E OMP_DISPLAY_AFFINITY=true -E "OMP_AFFINITY_FORMAT=thread %%n of %%N" %t.n.exe 2>&1 | FileCheck %s --check-prefix=EXEC %}
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon threads=2 kernel-config=split=m" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SPLITM
// A kernel that drops a k fails the pass's validation of its parts: the
// op stays, with the reason.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon threads=2 test-inject-fault=drop-k" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BROKEN

// CHECK-LABEL: func.func @gemm
// CHECK-NOT: linalg.matmul
// CHECK: llvm.call @qm_sgemm_70x100x300_nn_ldrt_7x12_ku4_par_aarch64_neon_parts2
// A linear layer over a dynamic batch (M at run time; the kernel of the
// largest bucket, blocked for representative-m rows, on two threads): its
// parts split N, the call's rows written at run time beside each part's
// columns from the table ("_cols").
// CHECK-LABEL: func.func @linear_dynamic_batch
// CHECK: llvm.call @qm_sgemm_256x100x300_nn_mrt_ldrt_7x12_ku4_par_aarch64_neon_parts2_cols
// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf ins
// CHECK: llvm.call @qm_sconv2d_nhwc_hwcf_1x30x30x16_f32_k3x3_s1x1_d1x1_7x12_ku4_par_aarch64_neon_parts2
// CHECK-LABEL: func.func @conv_nchw
// CHECK-NOT: linalg.conv_2d_nchw_fchw ins
// CHECK: llvm.call @qm_sconv2d_nchw_fchw_1x30x30x16_f32_k3x3_s1x1_d1x1_7x12_ku4_par_aarch64_neon_parts2
// The parts' ranges (m_begin, m_end, n_begin, n_end each), then the
// launcher: an OpenMP team over them, each calling the kernel.
// CHECK: llvm.mlir.global {{.*}}@qm_sgemm_70x100x300_nn_ldrt_7x12_ku4_par_aarch64_neon_parts2_table
// SPLITN-SAME: dense<[0, 70, 0, 60, 0, 70, 60, 100]>
// SPLITM-SAME: dense<[0, 35, 0, 100, 35, 70, 0, 100]>
// CHECK: omp.parallel
// CHECK: llvm.call @qm_sgemm_70x100x300_nn_ldrt_7x12_ku4_par_aarch64_neon(
// The convolution's parts split its output pixels, its default (the GEMM
// view's rows: each part's first row block starts at its pixel in the
// kernel's pixel table).
// CHECK: llvm.mlir.global {{.*}}@qm_sconv2d_nhwc_hwcf_1x30x30x16_f32_k3x3_s1x1_d1x1_7x12_ku4_par_aarch64_neon_parts2_table
// CHECK-SAME: dense<[0, 392, 0, 32, 392, 784, 0, 32]>
// CHECK: omp.parallel
// CHECK: llvm.call @qm_sconv2d_nhwc_hwcf_1x30x30x16_f32_k3x3_s1x1_d1x1_7x12_ku4_par_aarch64_neon(
// torch's nchw convolution: its parts split the filters (the GEMM view's
// rows, each image's pixels whole in every part).
// CHECK: llvm.mlir.global {{.*}}@qm_sconv2d_nchw_fchw_1x30x30x16_f32_k3x3_s1x1_d1x1_7x12_ku4_par_aarch64_neon_parts2_table
// CHECK-SAME: dense<[0, 21, 0, 784, 21, 32, 0, 784]>
// CHECK: omp.parallel
// SYMBOLS: U __kmpc_fork_call
// Each of the team's two threads says so as the launcher's region starts.
// EXEC-DAG: thread 0 of 2
// EXEC-DAG: thread 1 of 2
// EXEC: PASS 70x100x300
// BROKEN: not accelerated: generated kernel qm_sgemm_70x100x300_nn_ldrt_7x12_ku4_par_fault_drop_k_aarch64_neon failed validation under emulation
// BROKEN: not accelerated: generated kernel qm_sconv2d_nhwc_hwcf_1x30x30x16_f32_k3x3_s1x1_d1x1_7x12_ku4_par_fault_drop_k_aarch64_neon failed validation under emulation
// BROKEN: linalg.matmul
// BROKEN: linalg.conv_2d_nhwc_hwcf
// BROKEN: linalg.conv_2d_nchw_fchw

func.func @gemm(%a: memref<70x300xf32>, %b: memref<300x100xf32>,
                %c: memref<70x100xf32>) attributes {llvm.emit_c_interface} {
  linalg.matmul ins(%a, %b : memref<70x300xf32>, memref<300x100xf32>)
                outs(%c : memref<70x100xf32>)
  return
}

func.func @linear_dynamic_batch(%a: memref<?x300xf32>, %b: memref<300x100xf32>,
                                %c: memref<?x100xf32>) {
  linalg.matmul ins(%a, %b : memref<?x300xf32>, memref<300x100xf32>)
                outs(%c : memref<?x100xf32>)
  return
}

// An nhwc convolution (StableHLO's HWCF filter) on two threads, validated
// part by part under qemu.
func.func @conv(%x: memref<1x30x30x16xf32>, %w: memref<3x3x16x32xf32>,
                %y: memref<1x28x28x32xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                            strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x30x30x16xf32>, memref<3x3x16x32xf32>)
    outs(%y : memref<1x28x28x32xf32>)
  return
}

func.func @conv_nchw(%x: memref<1x16x30x30xf32>, %w: memref<32x16x3x3xf32>,
                     %y: memref<1x32x28x28xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                            strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x16x30x30xf32>, memref<32x16x3x3xf32>)
    outs(%y : memref<1x32x28x28xf32>)
  return
}
