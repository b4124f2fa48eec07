//===- RunnerEvaluator.cpp ------------------------------------------------===//
#include "qimeng/Tune/RunnerEvaluator.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "llvm/Support/FormatVariadic.h"

using namespace qimeng;

llvm::Expected<std::unique_ptr<RunnerEvaluator>>
RunnerEvaluator::create(const KernelProblem &problem, const Target &target,
                        EmitterOptions emitter,
                        IsolatedValidationOptions runner, int timedRuns) {
  if (auto err = problem.verify())
    return std::move(err);
  const GemmPrecision precision = problem.gemm().precision;
  // The peak of the instructions the kernels run: FMAs, VDPBF16PS or
  // VPDPBUSD, or AMX's tiles where the target has them (a convolution's
  // GEMM view has its precision).
  VectorIsa isa = matrixIsa(target, precision);
  if (isa == VectorIsa::None)
    return llvm::createStringError("target " + target.cpu +
                                   " has no vector isa the emitters support");
  auto gauge =
      PeakGauge::forHost(isa, emitter, runner, /*initialProbes=*/3, precision);
  if (!gauge)
    return gauge.takeError();
  std::unique_ptr<RunnerEvaluator> e(new RunnerEvaluator());
  e->problem_ = problem;
  e->target_ = target;
  e->emitter_ = std::move(emitter);
  e->runner_ = std::move(runner);
  e->timedRuns_ = std::max(3, timedRuns);
  e->gauge_ = *gauge;
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
  // Faster than the peak: measured again (and the peak probed again)
  // before it is called a measurement error.
  RateCheck rate = checkPlausibleRate(
      measured->gflops, config.threads, *gauge_,
      [&]() -> llvm::Expected<double> {
        auto again =
            measureIsolated(problem_, target_, *emitted, timedRuns_, runner_,
                            kernelParts(problem_.gemm(), config));
        if (!again)
          return again.takeError();
        if (!again->validation.passed)
          return llvm::createStringError(again->validation.failure);
        return again->gflops;
      });
  if (!rate.plausible) {
    ev.failure = rate.failure;
    return ev;
  }
  ev.ok = true;
  ev.gflops = rate.gflops;
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
