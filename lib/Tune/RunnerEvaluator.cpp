//===- RunnerEvaluator.cpp ------------------------------------------------===//
#include "qimeng/Tune/RunnerEvaluator.h"
#include "llvm/Support/FormatVariadic.h"

using namespace qimeng;

/// A measured rate may exceed the probe's by noise, not by this much.
static constexpr double kPeakTolerance = 1.05;

llvm::Expected<std::unique_ptr<RunnerEvaluator>>
RunnerEvaluator::create(const KernelProblem &problem, const Target &target,
                        EmitterOptions emitter,
                        IsolatedValidationOptions runner, int timedRuns) {
  if (auto err = problem.verify())
    return std::move(err);
  VectorIsa isa = target.bestIsa();
  if (isa == VectorIsa::None)
    return llvm::createStringError("target " + target.cpu +
                                   " has no vector isa the emitters support");
  auto probe = emitFmaPeakProbe(isa, emitter);
  if (!probe)
    return probe.takeError();
  auto peak = measurePeakIsolated(*probe, runner);
  if (!peak)
    return peak.takeError();
  std::unique_ptr<RunnerEvaluator> e(new RunnerEvaluator());
  e->problem_ = problem;
  e->target_ = target;
  e->emitter_ = std::move(emitter);
  e->runner_ = std::move(runner);
  e->timedRuns_ = std::max(3, timedRuns);
  e->peak_ = *peak;
  return e;
}

Evaluation RunnerEvaluator::evaluate(const GemmConfig &config) {
  Evaluation ev;
  std::string fault = faultHook_ ? faultHook_(config) : "";
  auto emitted = emitKernel(problem_, config, emitter_, fault, &target_);
  if (!emitted) {
    ev.failure = "emitter: " + llvm::toString(emitted.takeError());
    return ev;
  }
  auto measured =
      measureIsolated(problem_, target_, *emitted, timedRuns_, runner_,
                      kernelParts(problem_.gemm(), config));
  if (!measured) {
    ev.failure = "runner: " + llvm::toString(measured.takeError());
    return ev;
  }
  ev.maxRelError = measured->validation.maxRelError;
  if (!measured->validation.passed) {
    ev.failure = measured->validation.failure;
    return ev;
  }
  double peak = peak_ * std::max(1, config.threads);
  if (measured->gflops > kPeakTolerance * peak) {
    ev.failure = llvm::formatv("measured {0:F1} GFLOPS is above the peak of "
                               "{1:F1} for {2} thread(s): a measurement error",
                               measured->gflops, peak, config.threads)
                     .str();
    return ev;
  }
  ev.ok = true;
  ev.gflops = measured->gflops;
  ev.spread = measured->spread;
  kernels_[config.str()] = std::move(*emitted);
  return ev;
}

std::optional<std::vector<SideBySide>>
RunnerEvaluator::compare(const std::vector<GemmConfig> &configs, int rounds) {
  std::vector<std::pair<EmittedKernel, std::vector<GemmRange>>> kernels;
  for (const GemmConfig &config : configs) {
    const EmittedKernel *kernel = kernelFor(config);
    if (!kernel)
      return std::nullopt;
    kernels.emplace_back(*kernel, kernelParts(problem_.gemm(), config));
  }
  auto compared = compareIsolated(problem_, target_, kernels, rounds, runner_);
  if (!compared) {
    llvm::consumeError(compared.takeError());
    return std::nullopt;
  }
  std::vector<SideBySide> out;
  for (const ComparedKernel &k : *compared) {
    SideBySide s;
    s.ok = k.passed;
    s.failure = k.failure;
    s.gflops = k.gflops;
    s.speedup = k.speedup;
    out.push_back(std::move(s));
  }
  return out;
}

const EmittedKernel *
RunnerEvaluator::kernelFor(const GemmConfig &config) const {
  auto it = kernels_.find(config.str());
  return it == kernels_.end() ? nullptr : &it->second;
}
