//===- GpuMachines.cpp - NVIDIA GPUs a prompt may name --------------------===//
#include "qimeng/Kernel/GpuMachines.h"
#include <regex>

using namespace qimeng;

namespace {

struct GpuRow {
  const char *title;
  std::vector<const char *> names; ///< lower case, as words of a prompt
  const char *arch;
  unsigned sms;
};

// The SXM parts' multiprocessor counts, from NVIDIA's datasheets; sm_90a
// is Hopper with its wgmma and tensor-memory-accelerator instructions.
const GpuRow gpuRows[] = {
    {"NVIDIA H200", {"h200"}, "sm_90a", 132},
    {"NVIDIA H100", {"h100"}, "sm_90a", 132},
    {"NVIDIA A100", {"a100"}, "sm_80", 108},
    {"NVIDIA GeForce RTX 4090", {"rtx 4090", "rtx4090"}, "sm_89", 128},
    {"NVIDIA GeForce RTX 4060", {"rtx 4060", "rtx4060"}, "sm_89", 24},
};

GpuMachine machineOf(const GpuRow &row) {
  return GpuMachine{row.title, row.arch, row.sms};
}

} // namespace

std::optional<GpuMachine> qimeng::gpuMachineInText(llvm::StringRef lowerText) {
  const std::string text = lowerText.str();
  for (const GpuRow &row : gpuRows)
    for (const char *name : row.names)
      if (std::regex_search(text,
                            std::regex(std::string("\\b") + name + "\\b")))
        return machineOf(row);
  return std::nullopt;
}

std::optional<GpuMachine> qimeng::gpuMachineNamed(llvm::StringRef name) {
  // Every title holds one of its row's names as a word.
  return gpuMachineInText(name.trim().lower());
}

std::optional<GpuMachine> qimeng::gpuMachineForArch(llvm::StringRef arch) {
  for (const GpuRow &row : gpuRows)
    if (arch == row.arch)
      return machineOf(row);
  return std::nullopt;
}

std::vector<std::string> qimeng::gpuMachineTitles() {
  std::vector<std::string> titles;
  for (const GpuRow &row : gpuRows)
    titles.push_back(row.title);
  return titles;
}
