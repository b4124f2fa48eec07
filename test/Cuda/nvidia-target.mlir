// The pass for an NVIDIA GPU (target=nvptx64-nvidia-cuda:ARCH), on a
// machine without one (validate=false): each static, dense matmul becomes
// a call of a launcher the module carries, with the cubin NVRTC compiled
// for the architecture embedded; the stock lowering and llc take the
// result, which calls nothing but the CUDA driver and libc. Running it
// needs a GPU: scripts/device-check.sh does (pass_e2e).
// REQUIRES: nvrtc
// RUN: %qimeng-opt --qimeng-tensorop="target=nvptx64-nvidia-cuda:sm_90a validate=false tf32=true" \
// RUN:   %S/Inputs/pass-e2e.mlir -o %t.mlir 2> %t.remarks
// RUN: FileCheck %s --check-prefix=REMARKS < %t.remarks
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: %mlir-opt %t.mlir %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -filetype=obj -relocation-model=pic -o %t.o
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=OBJECT
// RUN: %qimeng-opt --qimeng-tensorop="target=nvptx64-nvidia-cuda:A100 validate=false" \
// RUN:   %S/Inputs/pass-e2e.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=A100
// RUN: %qimeng-opt --qimeng-tensorop="target=nvptx64-nvidia-cuda:sm_90a validate=false" \
// RUN:   %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOT
// RUN: %qimeng-opt --qimeng-tensorop="target=nvptx64-nvidia-cuda:sm_90a" \
// RUN:   %S/Inputs/pass-e2e.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=VALIDATE
// RUN: not %qimeng-opt --qimeng-tensorop="target=nvptx64-nvidia-cuda:sm_99" %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-GPU
// RUN: not %qimeng-opt --qimeng-tensorop="tf32=true" %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-TF32

// The engine each takes, and the cubin's architecture read back from its
// ELF header (sm_90a's cubins say 90).
// REMARKS: pass-e2e.mlir:11:3: remark: accelerated on the NVIDIA H200: qm_cuda_bf16gemm_1000x776x336_bm128_bn128_bk64_s6g8_ctma_sm_90a (wgmma, cubin for sm_90, {{[0-9]+}} bytes; not validated (validate=false))
// REMARKS: pass-e2e.mlir:20:3: remark: accelerated on the NVIDIA H200: qm_cuda_tf32gemm_200x136x96_bt_{{.*}}_sm_90a (wgmma, cubin for sm_90,
// REMARKS: pass-e2e.mlir:32:3: remark: accelerated on the NVIDIA H200: qm_cuda_f16gemm_130x70x333_{{.*}}_sm_90a (mma, cubin for sm_90,

// The contractions are gone; each call passes A, B and C's first elements.
// IR-LABEL: func.func @gemm_bf16
// IR-NOT: linalg.matmul
// IR: llvm.call @qm_cuda_bf16gemm_1000x776x336_bm128_bn128_bk64_s6g8_ctma_sm_90a_launch(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// IR-LABEL: func.func @linear_tf32
// IR-NOT: linalg.matmul
// IR: llvm.call @qm_cuda_tf32gemm_200x136x96_bt_
// IR-LABEL: func.func @gemm_f16
// IR-NOT: linalg.matmul
// IR: llvm.func @cuTensorMapEncodeTiled(
// IR: llvm.func @cuLaunchKernel(
// The cubin, an ELF image, and the kernel's name, as constants.
// IR: llvm.mlir.global internal constant @qm_cuda_bf16gemm_1000x776x336_bm128_bn128_bk64_s6g8_ctma_sm_90a_cubin("\7FELF
// IR: llvm.mlir.global internal constant @qm_cuda_bf16gemm_1000x776x336_bm128_bn128_bk64_s6g8_ctma_sm_90a_name("qm_cuda_bf16gemm_1000x776x336_bm128_bn128_bk64_s6g8_ctma_sm_90a\00")
// The wgmma kernel's tensor maps: A (1000 x 336, box 64 x 128), B
// (336 x 776, box 64 x 64), C (f32, box 32 x 64); its launch shape.
// IR-LABEL: llvm.func internal @qm_cuda_bf16gemm_1000x776x336_bm128_bn128_bk64_s6g8_ctma_sm_90a_launch(
// IR: llvm.mlir.constant(9 : i32)
// IR-NEXT: llvm.mlir.constant(1000 : i64)
// IR-NEXT: llvm.mlir.constant(336 : i64)
// IR-NEXT: llvm.mlir.constant(2 : i64)
// IR-NEXT: llvm.mlir.constant(64 : i32)
// IR-NEXT: llvm.mlir.constant(128 : i32)
// IR: llvm.call @qm_cuda_tensor_map(
// IR: llvm.mlir.constant(7 : i32)
// IR-NEXT: llvm.mlir.constant(1000 : i64)
// IR-NEXT: llvm.mlir.constant(776 : i64)
// IR-NEXT: llvm.mlir.constant(4 : i64)
// IR-NEXT: llvm.mlir.constant(32 : i32)
// IR-NEXT: llvm.mlir.constant(64 : i32)
// IR: llvm.mlir.constant(56 : i32)
// IR: llvm.mlir.constant(384 : i32)
// IR: llvm.call @cuLaunchKernel(
// IR: llvm.call @cuCtxSynchronize()
// B N x K for the tf32 kernel: 136 rows of 96, box 32 x 128.
// IR-LABEL: llvm.func internal @qm_cuda_tf32gemm_200x136x96_bt_
// IR: llvm.mlir.constant(7 : i32)
// IR: llvm.mlir.constant(7 : i32)
// IR-NEXT: llvm.mlir.constant(136 : i64)
// IR-NEXT: llvm.mlir.constant(96 : i64)

// What the object needs from outside: the driver and libc, nothing of ours.
// OBJECT-DAG: T _mlir_ciface_gemm_bf16
// OBJECT-DAG: U cuLaunchKernel
// OBJECT-DAG: U cuModuleLoadData
// OBJECT-DAG: U cuTensorMapEncodeTiled
// OBJECT-NOT: U qm
// OBJECT-NOT: U _mlir

// A100: remark: accelerated on the NVIDIA A100: qm_cuda_bf16gemm_1000x776x336_{{.*}}_sm_80 (mma, cubin for sm_80,

// Validation needs a GPU: with one the kernel runs against cuBLAS first;
// without, the op stays and says how to generate anyway.
// VALIDATE: {{remark: accelerated on the NVIDIA H200: qm_cuda_bf16gemm.*validated on the|remark: not accelerated: cannot validate kernel qm_cuda_bf16gemm.* pass validate=false to generate for another machine}}

// BAD-GPU: invalid option target='nvptx64-nvidia-cuda:sm_99': unknown GPU 'sm_99'
// BAD-TF32: invalid option tf32: it is for NVIDIA targets

// What the NVIDIA target does not take yet stays, with the reason.
func.func @batched(%A: memref<4x64x32xbf16>, %B: memref<4x32x64xbf16>,
                   %C: memref<4x64x64xf32>) {
  // NOT: remark: not accelerated: a batch of GEMMs is not generated for NVIDIA GPUs yet
  linalg.batch_matmul ins(%A, %B : memref<4x64x32xbf16>, memref<4x32x64xbf16>)
                      outs(%C : memref<4x64x64xf32>)
  return
}

func.func @transposed_a(%A: memref<32x64xbf16>, %B: memref<32x64xbf16>,
                        %C: memref<64x64xf32>) {
  // NOT: remark: not accelerated: a transposed A is not generated for NVIDIA GPUs yet
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                 affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
                ins(%A, %B : memref<32x64xbf16>, memref<32x64xbf16>)
                outs(%C : memref<64x64xf32>)
  return
}

func.func @dynamic(%A: memref<?x64xbf16>, %B: memref<64x64xbf16>,
                   %C: memref<?x64xf32>) {
  // NOT: remark: not accelerated: NVIDIA kernels take static sizes
  linalg.matmul ins(%A, %B : memref<?x64xbf16>, memref<64x64xbf16>)
                outs(%C : memref<?x64xf32>)
  return
}

func.func @strided(%A: memref<64x64xbf16, strided<[?, 1], offset: ?>>,
                   %B: memref<64x64xbf16>, %C: memref<64x64xf32>) {
  // NOT: remark: not accelerated: NVIDIA kernels take dense row-major operands with static strides
  linalg.matmul ins(%A, %B : memref<64x64xbf16, strided<[?, 1], offset: ?>>, memref<64x64xbf16>)
                outs(%C : memref<64x64xf32>)
  return
}

func.func @on_tensors(%A: tensor<64x64xbf16>, %B: tensor<64x64xbf16>,
                      %C: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // NOT: remark: not accelerated: for an NVIDIA target the pass runs on buffers (after one-shot-bufferize)
  %0 = linalg.matmul ins(%A, %B : tensor<64x64xbf16>, tensor<64x64xbf16>)
                     outs(%C : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

func.func @conv(%I: memref<1x10x10x8xf32>, %F: memref<3x3x8x16xf32>,
                %O: memref<1x8x8x16xf32>) {
  // NOT: remark: not accelerated: convolutions are not generated for NVIDIA GPUs yet
  linalg.conv_2d_nhwc_hwcf ins(%I, %F : memref<1x10x10x8xf32>, memref<3x3x8x16xf32>)
                           outs(%O : memref<1x8x8x16xf32>)
  return
}

func.func @host_output(%A: memref<64x64xbf16>, %B: memref<64x64xbf16>)
    -> memref<64x64xf32> {
  %C = memref.alloc() : memref<64x64xf32>
  // NOT: remark: not accelerated: operand C is host memory (memref.alloc); the NVIDIA target's kernels read device memory: pass the buffer in from the caller
  linalg.matmul ins(%A, %B : memref<64x64xbf16>, memref<64x64xbf16>)
                outs(%C : memref<64x64xf32>)
  return %C : memref<64x64xf32>
}

func.func @int8(%A: memref<64x64xi8>, %B: memref<64x64xi8>,
                %C: memref<64x64xi32>) {
  // NOT: remark: not accelerated: NVIDIA kernels take f32, bf16 or f16 inputs with f32 sums, not s8s8
  linalg.matmul ins(%A, %B : memref<64x64xi8>, memref<64x64xi8>)
                outs(%C : memref<64x64xi32>)
  return
}
