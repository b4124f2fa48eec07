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
#include <nvrtc.h>
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

namespace {
/// One NVRTC program, destroyed on every path.
struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle)
      nvrtcDestroyProgram(&handle);
  }
};
} // namespace

llvm::Expected<CompiledCudaKernel>
qimeng::compileCudaKernel(const CudaKernelSource &kernel) {
  auto fail = [&](llvm::StringRef step, nvrtcResult r) {
    return llvm::createStringError(
        llvm::formatv("NVRTC {0} failed for {1}: {2}", step, kernel.symbol,
                      nvrtcGetErrorString(r))
            .str());
  };
  Program program;
  const std::string name = kernel.symbol + ".cu";
  if (nvrtcResult r = nvrtcCreateProgram(&program.handle, kernel.text.c_str(),
                                         name.c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    return fail("nvrtcCreateProgram", r);
  // Straight to SASS for the architecture (sm_90a's wgmma needs the "a"
  // variant); ptxas's resource lines and warnings come back in the log.
  const std::string arch = "--gpu-architecture=" + kernel.arch;
  const char *options[] = {arch.c_str(), "--std=c++17", "--ptxas-options=-v"};
  nvrtcResult compiled =
      nvrtcCompileProgram(program.handle, std::size(options), options);
  CompiledCudaKernel out;
  size_t logSize = 0;
  if (nvrtcGetProgramLogSize(program.handle, &logSize) == NVRTC_SUCCESS &&
      logSize > 1) {
    out.log.resize(logSize);
    nvrtcGetProgramLog(program.handle, out.log.data());
    out.log.resize(logSize - 1); // the terminating NUL
  }
  if (compiled != NVRTC_SUCCESS)
    return llvm::createStringError(
        llvm::formatv("NVRTC could not compile {0} for {1}:\n{2}",
                      kernel.symbol, kernel.arch, out.log)
            .str());
  size_t cubinSize = 0;
  if (nvrtcResult r = nvrtcGetCUBINSize(program.handle, &cubinSize);
      r != NVRTC_SUCCESS)
    return fail("nvrtcGetCUBINSize", r);
  out.cubin.resize(cubinSize);
  if (nvrtcResult r = nvrtcGetCUBIN(program.handle, out.cubin.data());
      r != NVRTC_SUCCESS)
    return fail("nvrtcGetCUBIN", r);
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
