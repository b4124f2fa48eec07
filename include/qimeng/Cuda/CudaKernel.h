//===- CudaKernel.h - Emitted CUDA kernels and NVRTC ------------*- C++ -*-===//
//
// The NVIDIA path's first stage: a CUDA C++ kernel the emitters wrote
// (kind cuda_gemm, python_emitters/qimeng_emitters/cuda_gemm.py), its
// `// qm.` header read back, and its compilation in process with NVRTC to
// a cubin for its architecture, with ptxas's resource report (registers,
// spills, stack) and warnings recorded: a kernel that spills or draws a
// ptxas warning is not a clean candidate. No GPU is needed for any of it;
// the CUDA driver is never linked (docs/Cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_CUDA_CUDAKERNEL_H
#define QIMENG_CUDA_CUDAKERNEL_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/GpuMachines.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace qimeng {

/// An emitted CUDA kernel: its source and how to launch it.
struct CudaKernelSource {
  std::string text;   ///< the .cu source, header comments included
  std::string symbol; ///< the extern "C" __global__ function
  std::string arch;   ///< sm_80, sm_90a, ...
  std::array<unsigned, 3> grid = {1, 1, 1};
  std::array<unsigned, 3> block = {1, 1, 1};
  uint64_t sharedBytes = 0; ///< static shared memory per block
  /// Dynamic shared memory a launch asks for (wgmma kernels).
  uint64_t dynamicSharedBytes = 0;
  std::string engine; ///< ffma, mma or wgmma
  /// The parameters: "A,B,C" (pointers) or "A:tma64x128,B:tma64x64,C" (A
  /// and B as the copy engine's tensor maps, boxes innermost first).
  std::string args;
  std::string generatorVersion;
};

/// Reads the `// qm.` header of a CUDA kernel (symbol, arch, grid, block,
/// and shared_bytes or dynamic_shared_bytes required).
llvm::Expected<CudaKernelSource> parseCudaKernel(std::string text);

/// Runs the emitter on a cuda_gemm request (JSON) and parses its kernel.
llvm::Expected<CudaKernelSource> emitCudaKernel(llvm::StringRef requestJson,
                                                const EmitterOptions &options);

/// What ptxas reported for a kernel (`--ptxas-options=-v`).
struct PtxasReport {
  unsigned registers = 0;
  uint64_t stackBytes = 0, spillStores = 0, spillLoads = 0;
  /// ptxas's warnings (C7xxx pipeline warnings among them) and NVRTC's.
  std::vector<std::string> warnings;

  bool clean() const {
    return spillStores == 0 && spillLoads == 0 && warnings.empty();
  }
};

/// Reads a compilation log: the first function's resource lines and every
/// warning line.
PtxasReport parsePtxasLog(llvm::StringRef log);

/// A kernel compiled for its architecture.
struct CompiledCudaKernel {
  std::string cubin; ///< the ELF image the driver loads
  std::string ptx;   ///< the PTX ptxas assembled it from (text)
  std::string log;   ///< NVRTC's and ptxas's messages
  PtxasReport ptxas;
};

/// Whether this build compiles CUDA kernels (NVRTC found at configure
/// time); the reason when it does not.
bool nvrtcAvailable();
std::string nvrtcUnavailableReason();

/// NVRTC's version, "13.0".
std::string nvrtcVersionText();

/// Compiles `kernel` with NVRTC for `kernel.arch` straight to a cubin
/// (`--gpu-architecture=<arch>`, ptxas verbose). A compile error is an
/// error carrying NVRTC's log, whose lines name the source line
/// ("<symbol>.cu(12): error: ...").
llvm::Expected<CompiledCudaKernel>
compileCudaKernel(const CudaKernelSource &kernel);

/// The SM version a cubin was compiled for, from its ELF header (machine
/// EM_CUDA, 190): 80 for sm_80, 90 for sm_90 and sm_90a (the header does
/// not tell the two apart). An error for anything else.
llvm::Expected<unsigned> cubinSmVersion(llvm::StringRef cubin);

/// A GEMM kernel for `gpu` (C (+)= A B, or A B^T with B N x K where
/// `bTransposed`; A and B in `dtype` (f32, tf32, bf16 or f16), C in f32,
/// row-major, sized for its multiprocessors), emitted and compiled with
/// NVRTC: the cuda_gemm emitter's choice of engine and tiles. A kernel
/// that spills or draws a ptxas warning is an error.
struct CudaGemmKernel {
  CudaKernelSource source;
  CompiledCudaKernel compiled;
};
llvm::Expected<CudaGemmKernel> buildCudaGemm(const GpuMachine &gpu,
                                             llvm::StringRef dtype, int64_t m,
                                             int64_t n, int64_t k,
                                             bool overwrite, bool bTransposed,
                                             const EmitterOptions &options);

/// What qimeng-cuda-runner said of a kernel: validated and timed against
/// cuBLAS on the GPU, or why it did not run (no GPU, no runner).
struct CudaRunReport {
  bool ran = false;
  std::string why;
  std::string device; ///< the GPU's name
  double oursMs = 0, oursTflops = 0, cublasMs = 0, cublasTflops = 0;
  /// The runner's words: how the kernel was validated, and cuBLAS's
  /// configuration.
  std::string validation, cublasConfig;
};

/// Runs `runner` (qimeng-cuda-runner) on the kernel source at
/// `sourcePath`, `runs` timed calls each. A kernel that fails validation
/// or the runner failing is an error with its output; no GPU (exit 77) or
/// no runner is a report that did not run.
llvm::Expected<CudaRunReport> runCudaKernel(llvm::StringRef runner,
                                            llvm::StringRef sourcePath,
                                            unsigned runs);

/// runCudaKernel on `kernel`'s source, written to a temporary file for the
/// run and removed after it.
llvm::Expected<CudaRunReport>
runCudaKernelSource(llvm::StringRef runner, const CudaKernelSource &kernel,
                    unsigned runs);

} // namespace qimeng

#endif // QIMENG_CUDA_CUDAKERNEL_H
