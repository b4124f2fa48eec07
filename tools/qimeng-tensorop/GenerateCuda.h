//===- GenerateCuda.h - qimeng-tensorop for an NVIDIA GPU -------*- C++ -*-===//
#ifndef QIMENG_TOOLS_TENSOROP_GENERATECUDA_H
#define QIMENG_TOOLS_TENSOROP_GENERATECUDA_H

#include "qimeng/LLM/TaskPrompt.h"
#include "llvm/Support/Error.h"
#include <string>

namespace qimeng {

/// Writes `data` to `path` (qimeng-tensorop.cpp).
llvm::Error writeFile(const std::string &path, llvm::StringRef data);

/// "generate a 8192x8192x8192 bf16 GEMM for the H200": the cuda_gemm
/// emitter's kernel for the GPU's architecture, compiled with NVRTC, written
/// to `outDir` as <symbol>.cu, <symbol>.cubin and <symbol>.h; validated and
/// timed against cuBLAS by qimeng-cuda-runner (beside `runnerDir`) where a
/// GPU is present, and said so where not. Returns the exit status.
int generateForGpu(const Task &task, const std::string &parsedBy,
                   const std::string &outDir, const std::string &runnerDir,
                   bool json);

} // namespace qimeng

#endif // QIMENG_TOOLS_TENSOROP_GENERATECUDA_H
