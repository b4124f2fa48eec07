//===- GpuMachines.h - NVIDIA GPUs a prompt may name ------------*- C++ -*-===//
//
// The GPUs qimeng-tensorop generates for by name ("... for the H200"): the
// architecture NVRTC compiles for and the multiprocessors the emitter sizes
// its grid by. Data, as the CPU machines are in Target.cpp; the kernels
// are python_emitters' cuda_gemm (docs/Cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_GPUMACHINES_H
#define QIMENG_KERNEL_GPUMACHINES_H

#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace qimeng {

/// The target triple of NVIDIA GPU kernels; a task's target is
/// "<triple>:<arch>" (nvptx64-nvidia-cuda:sm_90a).
inline constexpr const char *kNvptxTriple = "nvptx64-nvidia-cuda";

struct GpuMachine {
  std::string title; ///< "NVIDIA H200"
  std::string arch;  ///< what NVRTC compiles for: sm_90a, sm_80, ...
  unsigned sms = 0;  ///< streaming multiprocessors
  std::string target() const { return std::string(kNvptxTriple) + ":" + arch; }
};

/// The GPU a (lower-case) prompt names as a word ("h200", "a100",
/// "rtx 4090"), if any.
std::optional<GpuMachine> gpuMachineInText(llvm::StringRef lowerText);

/// The GPU with this title or name ("NVIDIA H200", "h200").
std::optional<GpuMachine> gpuMachineNamed(llvm::StringRef name);

/// The titles of every GPU known, for messages.
std::vector<std::string> gpuMachineTitles();

/// The first GPU of the table whose architecture is `arch` (sm_90a: the
/// H200), or none.
std::optional<GpuMachine> gpuMachineForArch(llvm::StringRef arch);

} // namespace qimeng

#endif // QIMENG_KERNEL_GPUMACHINES_H
