//===- BenchKernel.h - The kernel a benchmark row times ---------*- C++ -*-===//
//
// What qimeng-bench runs for one problem: the analytical (or pinned)
// kernel, or with --tuned the tuning database's entry, tuning the problem
// first when there is none. Shared by the sgemm and conv2d benchmarks.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TOOLS_QIMENG_BENCH_BENCHKERNEL_H
#define QIMENG_TOOLS_QIMENG_BENCH_BENCHKERNEL_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/Kernel/Partition.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace qimeng {

struct BenchKernel {
  EmittedKernel emitted;
  GemmConfig config;
  std::vector<GemmRange> parts; ///< one call per part; empty: one call
  int tunedTrials = 0;          ///< the database record's trial count
};

struct BenchKernelOptions {
  bool tuned = false;
  unsigned tuneBudget = 24;
  std::string cacheDir; ///< as the pass option (resolveCacheDir)
  std::string progressPrefix = "qimeng-bench";
};

/// The kernel for `problem` with `config` (threads already set to the
/// partition's part count): emitted, or from the database when tuned.
llvm::Expected<BenchKernel> benchKernel(const KernelProblem &problem,
                                        const GemmConfig &config,
                                        const Target &host,
                                        const EmitterOptions &emitter,
                                        const IsolatedValidationOptions &runner,
                                        const BenchKernelOptions &options);

} // namespace qimeng

#endif // QIMENG_TOOLS_QIMENG_BENCH_BENCHKERNEL_H
