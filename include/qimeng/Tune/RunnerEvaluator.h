//===- RunnerEvaluator.h - Measure candidates in qimeng-runner --*- C++ -*-===//
//
// The production Evaluator: emit the candidate, then in one qimeng-runner
// process validate it, time it and validate it again. Any failure (emitter
// error, assembly error, wrong result, out-of-bounds write, crash, hang,
// a rate above the measured peak twice, the peak probed again between) is a
// failed evaluation with the reason;
// nothing generated runs in the tuner's own process.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TUNE_RUNNEREVALUATOR_H
#define QIMENG_TUNE_RUNNEREVALUATOR_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Runtime/PeakGauge.h"
#include "qimeng/Tune/Search.h"
#include <algorithm>
#include <functional>
#include <map>
#include <memory>

namespace qimeng {

class RunnerEvaluator : public Evaluator {
public:
  /// Test hook: the fault to inject for a config ("" for none).
  using FaultHook = std::function<std::string(const GemmConfig &)>;

  /// This core's peak is the process's PeakGauge for the target's isa
  /// (measured on first use, best of several fma_peak probes).
  static llvm::Expected<std::unique_ptr<RunnerEvaluator>>
  create(const KernelProblem &problem, const Target &target,
         EmitterOptions emitter, IsolatedValidationOptions runner,
         int timedRuns = 7);

  Evaluation evaluate(const GemmConfig &config) override;
  /// The configs' kernels (from their evaluations) in one qimeng-runner
  /// process, side by side (compareIsolated); nullopt when one was not
  /// evaluated ok or the comparison failed (a crash, a runner error).
  std::optional<std::vector<SideBySide>>
  compare(const std::vector<GemmConfig> &configs, int rounds) override;
  /// The reward scale: this core's peak times the target's cores.
  double peakGflops() const override {
    return corePeakGflops() * std::max(1, target_.cores);
  }
  /// One core's measured FMA peak.
  double corePeakGflops() const { return gauge_->gflops(); }

  /// The emitted kernel of a config that evaluated ok, else nullptr.
  const EmittedKernel *kernelFor(const GemmConfig &config) const;

  void setFaultHook(FaultHook hook) { faultHook_ = std::move(hook); }

private:
  RunnerEvaluator() = default;
  KernelProblem problem_;
  Target target_;
  EmitterOptions emitter_;
  IsolatedValidationOptions runner_;
  int timedRuns_ = 7;
  PeakGauge *gauge_ = nullptr; ///< the process's, PeakGauge::forHost
  FaultHook faultHook_;
  std::map<std::string, EmittedKernel> kernels_;
};

} // namespace qimeng

#endif // QIMENG_TUNE_RUNNEREVALUATOR_H
