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
#include <nlohmann/json.hpp>
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

/// One --variant: our kernel with the variant's settings laid over its
/// config, timed side by side with it.
struct VariantResult {
  std::string settings; ///< as given on the command line
  std::string config;   ///< the variant's whole config (GemmConfig::str)
  std::string symbol;   ///< empty when it was not built
  std::string failure;  ///< why it was not built, validated or timed
  bool validated = false;
  double gflops = 0;  ///< median over the rounds
  double speedup = 0; ///< over ours: the median of the per-round ratios
};

/// Our kernel and its variants, timed side by side.
struct VariantComparison {
  double oursGflops = 0; ///< ours in the same rounds (0: not timed)
  std::vector<VariantResult> variants;
};

/// What a variant changes in the kernel's form rather than its config.
struct VariantForm {
  /// `ld=runtime`: leading dimensions (a convolution's input strides)
  bool runtimeLd = false;
  /// Sizes read at run time (and the lds): `m=runtime`, `n=runtime`,
  /// `k=runtime`, or `sizes=runtime` for all three. `m=runtime` alone is
  /// the form the pass gives a matmul over a dynamic batch of rows.
  bool runtimeM = false, runtimeN = false, runtimeK = false;

  bool runtimeSizes() const { return runtimeM || runtimeN || runtimeK; }
  /// `b=prepacked`: B (the filter) packed once outside the timing, the
  /// kernel runs no PACK B (GemmDesc::bPrepacked; not f16)
  bool bPrepacked = false;
};

/// A variant's settings: `ld=runtime` (the kernel reads its leading
/// dimensions at run time, KernelContract.md), `m=runtime`, `n=runtime`,
/// `k=runtime` and `sizes=runtime` (those sizes too, or all three) and
/// `b=prepacked` split off the GemmConfig keys; `settings`
/// keeps the rest.
VariantForm takeFormSettings(std::string &settings);

/// Each of `variants` (GemmConfig::parse settings laid over `ours.config`,
/// clamped to the problem, on `threads` threads as ours; `ld=runtime` for
/// the run-time-ld form of the same GEMM or the run-time-strides form of
/// the same convolution, `sizes=runtime` and the like for a GEMM's
/// run-time-size forms, B then packed unless read in place with masked
/// loads) emitted, then all
/// of them with `ours` first validated and timed interleaved for `rounds`
/// rounds in one qimeng-runner process (compareIsolated). A variant the
/// emitter refuses, one that fails validation, and a comparison that fails
/// as a whole are reported in `failure`, not as errors, and so is every
/// variant when `oursValidated` is false (nothing is timed then); a
/// settings text that does not parse is an error.
llvm::Expected<VariantComparison>
compareVariants(const KernelProblem &problem, const BenchKernel &ours,
                bool oursValidated, const std::vector<std::string> &variants,
                unsigned threads, int rounds, const Target &host,
                const EmitterOptions &emitter,
                const IsolatedValidationOptions &runner);

/// The variants as a JSON row's "variants": objects with settings, config,
/// kernel, validated, gflops, ours_gflops (ours in the same rounds) and
/// speedup_over_ours when timed, else failure.
nlohmann::json variantsJson(const VariantComparison &comparison);

/// The lines under a row of the table: ours in the comparison's rounds, then
/// each variant's settings, GFLOPS and speedup over ours, or why there is
/// none. Empty without variants.
std::string formatVariantLines(const VariantComparison &comparison);

} // namespace qimeng

#endif // QIMENG_TOOLS_QIMENG_BENCH_BENCHKERNEL_H
