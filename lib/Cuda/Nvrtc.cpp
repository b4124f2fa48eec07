//===- Nvrtc.cpp - CUDA kernels compiled in process -----------------------===//
//
// NVRTC straight to a cubin: no CUDA driver, no GPU. Built only when the
// CUDA toolkit was found at configure time (QIMENG_HAVE_NVRTC); otherwise
// every compilation says why it cannot run.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Cuda/CudaKernel.h"
#include "llvm/Support/FormatVariadic.h"

#ifdef QIMENG_HAVE_NVRTC
#include "qimeng/Cuda/NvrtcCompile.h"
#endif

using namespace qimeng;

#ifdef QIMENG_HAVE_NVRTC

bool qimeng::nvrtcAvailable() { return true; }

std::string qimeng::nvrtcUnavailableReason() { return ""; }

std::string qimeng::nvrtcVersionText() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return "unknown";
  return llvm::formatv("{0}.{1}", major, minor).str();
}

llvm::Expected<CompiledCudaKernel>
qimeng::compileCudaKernel(const CudaKernelSource &kernel) {
  NvrtcOutput compiled =
      nvrtcCompileToCubin(kernel.text, kernel.symbol, kernel.arch);
  if (!compiled.error.empty())
    return llvm::createStringError(compiled.error);
  CompiledCudaKernel out;
  out.cubin = std::move(compiled.cubin);
  out.ptx = std::move(compiled.ptx);
  out.log = std::move(compiled.log);
  out.ptxas = parsePtxasLog(out.log);
  return out;
}

#else // !QIMENG_HAVE_NVRTC

bool qimeng::nvrtcAvailable() { return false; }

std::string qimeng::nvrtcUnavailableReason() {
  return "built without NVRTC (the CUDA toolkit was not found at configure "
         "time, or QIMENG_ENABLE_NVRTC is off)";
}

std::string qimeng::nvrtcVersionText() { return "none"; }

llvm::Expected<CompiledCudaKernel>
qimeng::compileCudaKernel(const CudaKernelSource &kernel) {
  return llvm::createStringError("cannot compile " + kernel.symbol + ": " +
                                 nvrtcUnavailableReason());
}

#endif
