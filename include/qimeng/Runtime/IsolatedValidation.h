//===- IsolatedValidation.h - Validate a kernel in another process -*- C++
//-*-===//
//
// The compiler never runs generated code in its own process: a kernel is
// validated by `qimeng-runner`, spawned as a program (never a fork of the
// multithreaded compiler), which assembles the text, loads it, runs the
// validator and answers in JSON. A crash, hang or bad answer rejects the
// kernel with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_ISOLATEDVALIDATION_H
#define QIMENG_RUNTIME_ISOLATEDVALIDATION_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/Kernel/Partition.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace qimeng {

struct IsolatedValidationOptions {
  std::string runnerPath; ///< qimeng-runner executable
  unsigned timeoutSeconds = 120;
  /// Address-space limit of the runner (its data segment and mappings);
  /// 0: none.
  unsigned memoryLimitMB = 8192;

  /// QIMENG_RUNNER when set, else the build's bin/qimeng-runner.
  static IsolatedValidationOptions defaults();
};

/// The runner's stdin: the problem ("op": "sgemm" with the GemmDesc, or
/// "sconv2d" with the ConvDesc), target, kernel text and, for a parallel
/// kernel, the parts of C (Partition.h; of a convolution's GEMM view) as
/// one JSON object. With parts the runner calls the kernel once per part,
/// on an OpenMP team, each part with its own workspace, exactly as the
/// compiled module will.
std::string validationRequestJson(const KernelProblem &problem,
                                  const Target &target,
                                  const EmittedKernel &kernel,
                                  const std::vector<GemmRange> &parts = {});

/// Compiler side: runs the runner on `kernel` (GemmValidator.h or
/// ConvValidator.h, as `problem` is). A report with passed = false carries
/// the reason (wrong result, crash, timeout); an llvm::Error means the
/// runner itself could not be run or answered garbage.
llvm::Expected<ValidationReport>
validateIsolated(const KernelProblem &problem, const Target &target,
                 const EmittedKernel &kernel,
                 const IsolatedValidationOptions &options,
                 const std::vector<GemmRange> &parts = {});

/// validateIsolated for a GEMM.
llvm::Expected<ValidationReport>
validateGemmIsolated(const GemmDesc &desc, const Target &target,
                     const EmittedKernel &kernel,
                     const IsolatedValidationOptions &options,
                     const std::vector<GemmRange> &parts = {});

/// A kernel validated, timed and validated again in qimeng-runner.
struct MeasuredKernel {
  ValidationReport validation; ///< passed = both validations passed
  double gflops = 0;           ///< median over the timed rounds
  double spread = 0;           ///< (max - min) / median
};

/// Validates `kernel`, times it for `runs` rounds (median), validates it
/// again, all in one qimeng-runner process. A crash, timeout or wrong
/// result is a report with passed = false and the reason.
llvm::Expected<MeasuredKernel>
measureIsolated(const KernelProblem &problem, const Target &target,
                const EmittedKernel &kernel, int runs,
                const IsolatedValidationOptions &options,
                const std::vector<GemmRange> &parts = {});

/// One kernel of a side-by-side comparison: validated in the comparing
/// process, then timed interleaved with the others.
struct ComparedKernel {
  bool passed = false; ///< validated (then timed)
  std::string failure;
  double gflops = 0;  ///< median over the rounds
  double speedup = 0; ///< over the first kernel: median of per-round ratios
};

/// `kernels` (each with its parts of C; empty: one call) of one problem in
/// one qimeng-runner process: each validated, then those that pass timed
/// side by side, interleaved round by round for `rounds` rounds on the
/// same inputs (timeInterleaved), so that the machine's slow spells hit
/// all of them alike. speedup is relative to the first kernel timed. A
/// crash or timeout of any kernel fails the whole comparison (an error);
/// the runner's limit is options.timeoutSeconds a kernel.
llvm::Expected<std::vector<ComparedKernel>> compareIsolated(
    const KernelProblem &problem, const Target &target,
    const std::vector<std::pair<EmittedKernel, std::vector<GemmRange>>>
        &kernels,
    int rounds, const IsolatedValidationOptions &options);

/// measureIsolated for a GEMM.
llvm::Expected<MeasuredKernel>
measureGemmIsolated(const GemmDesc &desc, const Target &target,
                    const EmittedKernel &kernel, int runs,
                    const IsolatedValidationOptions &options,
                    const std::vector<GemmRange> &parts = {});

/// This core's FMA peak in GFLOPS, from the emitter's fma_peak probe run in
/// qimeng-runner.
llvm::Expected<double>
measurePeakIsolated(const EmittedKernel &probe,
                    const IsolatedValidationOptions &options);

} // namespace qimeng

#endif // QIMENG_RUNTIME_ISOLATEDVALIDATION_H
