//===- NvrtcCompile.h - NVRTC straight to a cubin, plain C++ ----*- C++ -*-===//
//
// One CUDA source compiled with NVRTC for one architecture, straight to
// SASS (sm_90a's wgmma needs the "a" variant), ptxas verbose so that its
// resource lines and warnings come back in the log; the PTX NVRTC
// assembled the cubin from comes back as well. Plain C++17 and
// <nvrtc.h>, nothing of LLVM: lib/Cuda (compileCudaKernel) and
// qimeng-cuda-runner, which a GPU machine builds with g++ alone, both use
// it (docs/Cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_CUDA_NVRTCCOMPILE_H
#define QIMENG_CUDA_NVRTCCOMPILE_H

#include <nvrtc.h>

#include <iterator>
#include <string>

namespace qimeng {

/// A compilation's outcome: the cubin, the PTX it was assembled from and
/// NVRTC's log, or `error` (empty on success; a compile error carries the
/// log, whose lines name the source line as "<symbol>.cu(12): error:
/// ...").
struct NvrtcOutput {
  std::string cubin, ptx, log, error;
};

/// Compiles `source` (the file "<symbol>.cu" to NVRTC) for `arch`.
inline NvrtcOutput nvrtcCompileToCubin(const std::string &source,
                                       const std::string &symbol,
                                       const std::string &arch) {
  NvrtcOutput out;
  auto fail = [&](const char *step, nvrtcResult r) {
    out.error = std::string("NVRTC ") + step + " failed for " + symbol + ": " +
                nvrtcGetErrorString(r);
    return out;
  };
  nvrtcProgram program = nullptr;
  const std::string name = symbol + ".cu";
  if (nvrtcResult r = nvrtcCreateProgram(&program, source.c_str(), name.c_str(),
                                         0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    return fail("nvrtcCreateProgram", r);
  // Destroyed on every path.
  struct Destroy {
    nvrtcProgram &p;
    ~Destroy() { nvrtcDestroyProgram(&p); }
  } destroy{program};
  const std::string archOption = "--gpu-architecture=" + arch;
  const char *options[] = {archOption.c_str(), "--std=c++17",
                           "--ptxas-options=-v"};
  nvrtcResult compiled =
      nvrtcCompileProgram(program, int(std::size(options)), options);
  size_t logSize = 0;
  if (nvrtcGetProgramLogSize(program, &logSize) == NVRTC_SUCCESS &&
      logSize > 1) {
    out.log.resize(logSize);
    nvrtcGetProgramLog(program, out.log.data());
    out.log.resize(logSize - 1); // the terminating NUL
  }
  if (compiled != NVRTC_SUCCESS) {
    out.error =
        "NVRTC could not compile " + symbol + " for " + arch + ":\n" + out.log;
    return out;
  }
  size_t cubinSize = 0;
  if (nvrtcResult r = nvrtcGetCUBINSize(program, &cubinSize);
      r != NVRTC_SUCCESS)
    return fail("nvrtcGetCUBINSize", r);
  out.cubin.resize(cubinSize);
  if (nvrtcResult r = nvrtcGetCUBIN(program, out.cubin.data());
      r != NVRTC_SUCCESS)
    return fail("nvrtcGetCUBIN", r);
  // A real architecture's compilation keeps its PTX too.
  size_t ptxSize = 0;
  if (nvrtcResult r = nvrtcGetPTXSize(program, &ptxSize); r != NVRTC_SUCCESS)
    return fail("nvrtcGetPTXSize", r);
  out.ptx.resize(ptxSize);
  if (nvrtcResult r = nvrtcGetPTX(program, out.ptx.data()); r != NVRTC_SUCCESS)
    return fail("nvrtcGetPTX", r);
  if (!out.ptx.empty() && out.ptx.back() == '\0')
    out.ptx.pop_back();
  return out;
}

} // namespace qimeng

#endif // QIMENG_CUDA_NVRTCCOMPILE_H
