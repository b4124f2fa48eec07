//===- RunnerService.h - qimeng-runner's side of the protocol ---*- C++ -*-===//
//
// Linked by qimeng-runner (and tests and the benchmark), never by the
// compiler or the plugin: this is where generated code runs.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_RUNNERSERVICE_H
#define QIMENG_RUNTIME_RUNNERSERVICE_H

#include "qimeng/Kernel/Partition.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>
#include <vector>

namespace qimeng {

/// Runner side: parses a request, assembles and loads the kernel for the
/// host, validates it and returns the report as JSON. Errors in the request
/// or the assembly come back as an llvm::Error.
llvm::Expected<std::string> serveValidationRequest(llvm::StringRef json);

/// `kernel` run as the compiled module runs it: once per part of C, each
/// part on an OpenMP team with its own slice of `workspace` (parts.size()
/// slices of `workspaceBytes`); a plain call when `parts` is empty. Each
/// slice's header gets its part and, for a run-time-ld `desc`, the
/// leading dimensions; for a run-time M, the rows [0, desc.m) in each part
/// (and a single call's range). An epilogue's bias pointer is the
/// caller's to write into the first slice (writeBias); each part gets it.
void runGemmParts(GemmKernelFn kernel, const GemmDesc &desc,
                  const std::vector<GemmRange> &parts, uint64_t workspaceBytes,
                  const float *a, const float *b, float *c, void *workspace);

} // namespace qimeng

#endif // QIMENG_RUNTIME_RUNNERSERVICE_H
