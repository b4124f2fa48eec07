//===- CudaLaunch.h - Contractions -> NVIDIA kernels launched in place
//-----===//
//
// The pass's NVIDIA target (target=nvptx64-nvidia-cuda:ARCH): each
// linalg.matmul-like contraction on buffers becomes a call of a launcher
// that the module itself carries: the cuda_gemm kernel, compiled with NVRTC
// for ARCH, embedded as a cubin, loaded and launched with the CUDA driver
// API (cuModuleLoadData, cuTensorMapEncodeTiled, cuLaunchKernel), so that
// the module runs where a driver is with nothing of ours linked
// (docs/Cuda.md, "The pass").
//
// The memory contract: A, B and C of a rewritten op are device memory the
// driver can address (cuMemAlloc, cudaMalloc or managed memory), in the
// current context (device 0's primary context is made current when the
// thread has none); the launch is synchronous (cuCtxSynchronize), so the
// op's results are there when the call returns, as the op's were.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_CUDALAUNCH_H
#define QIMENG_LIB_TRANSFORMS_CUDALAUNCH_H

#include "mlir/IR/BuiltinOps.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/GpuMachines.h"
#include <string>

namespace qimeng {

struct CudaRewriteOptions {
  GpuMachine gpu;
  /// f32 contractions on tensor cores in tf32 (else FFMA in f32).
  bool tf32 = false;
  /// Validate each kernel with qimeng-cuda-runner on this machine's GPU;
  /// without one the op stays, with the reason.
  bool validate = true;
  std::string cudaRunner; ///< path of qimeng-cuda-runner
  EmitterOptions emitter;
};

/// The GPU a target string names: "nvptx64-nvidia-cuda:sm_90a" (the first
/// known GPU of that architecture sizes the grid) or
/// "nvptx64-nvidia-cuda:H200"; nullopt for another triple; an error for
/// an unknown GPU.
llvm::Expected<std::optional<GpuMachine>>
parseCudaTarget(llvm::StringRef target);

/// Rewrites the contractions of `module` for `options.gpu`; an op it does
/// not take keeps running as it was and gets a remark with the reason.
void rewriteForCuda(mlir::ModuleOp module, const CudaRewriteOptions &options);

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_CUDALAUNCH_H
