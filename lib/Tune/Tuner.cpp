//===- Tuner.cpp
//------------------------------------------------------------===//
#include "qimeng/Tune/Tuner.h"
#include "qimeng/Tune/RunnerEvaluator.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <ctime>
#include <optional>

using namespace qimeng;

llvm::Expected<TuningKey> qimeng::tuningKey(const KernelProblem &problem,
                                            const Target &target,
                                            const EmitterOptions &emitter,
                                            int threads) {
  auto version = emitterGeneratorVersion(emitter);
  if (!version)
    return version.takeError();
  return TuningKey::forProblem(problem, target, *version, threads);
}

static std::string utcTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

llvm::Expected<TuneResult> qimeng::tuneKernel(const TuneRequest &request) {
  auto key = tuningKey(request.problem, request.target, request.emitter,
                       request.base.threads);
  if (!key)
    return key.takeError();
  auto evaluator =
      RunnerEvaluator::create(request.problem, request.target, request.emitter,
                              request.runner, request.timedRuns);
  if (!evaluator)
    return evaluator.takeError();
  SearchSpace space =
      SearchSpace::forProblem(request.problem, request.target, request.base);
  ModelPriorProposer builtin;
  std::optional<LlmProposer> llm;
  if (request.llm)
    llm.emplace(*request.llm, builtin);
  Proposer &proposer = llm ? static_cast<Proposer &>(*llm) : builtin;
  SearchOptions options;
  options.seed = request.seed;
  int budget = request.budget.trials;
  std::string shape = request.problem.shape();
  // The progress lines name the element types too ("sbgemm" for bf16,
  // "u8s8gemm", ...).
  const GemmPrecision precision = request.problem.gemm().precision;
  std::string op = request.problem.conv() ? convOpName(precision).str()
                                          : gemmOpName(precision).str();
  if (request.progress) {
    options.onTrial = [&](const Trial &t, const SearchHistory &h) {
      const Trial *best = h.best();
      std::string line = llvm::formatv(
          "tuning {6} {0}: trial {1}/{2} {3}: {4}; best {5}", shape,
          t.index + 1, budget, t.description,
          t.result.ok ? llvm::formatv("{0:F1} GFLOPS", t.result.gflops).str()
                      : "failed (" + t.result.failure + ")",
          best ? llvm::formatv("{0:F1} GFLOPS", best->result.gflops).str()
               : std::string("none yet"),
          op);
      request.progress(line);
    };
  }
  SearchHistory history =
      runMcts(space, **evaluator, proposer, request.budget, options);
  const Trial *best = history.best();
  // One measurement per trial is noisy: the model's config and the fastest
  // few are timed again side by side (remeasureFinalists).
  double bestGflops = best ? best->result.gflops : 0;
  if (best && request.finalists > 0 &&
      (request.finalistRounds > 0 || request.sideBySideRounds > 0)) {
    // The config the search space gives the base (clamped to the problem).
    auto baseline = space.configFor(space.modelAssignment());
    if (!baseline)
      llvm::consumeError(baseline.takeError());
    FinalistResult final = remeasureFinalists(
        history, **evaluator, request.finalists, request.finalistRounds,
        baseline ? &*baseline : nullptr, request.sideBySideRounds);
    if (request.progress) {
      for (const std::string &d : final.dropped)
        request.progress(llvm::formatv("tuning {0} {1}: finalist dropped, "
                                       "{2}",
                                       op, shape, d)
                             .str());
    }
    if (final.trialIndex < 0)
      return llvm::createStringError(
          llvm::formatv("tuning {0} {1}: every finalist failed when "
                        "measured again; first: {2}",
                        op, shape,
                        final.dropped.empty() ? std::string("none")
                                              : final.dropped.front())
              .str());
    best = &history.trials[final.trialIndex];
    bestGflops = final.medianGflops;
    if (request.progress && final.sideBySide) {
      request.progress(
          llvm::formatv("tuning {0} {1}: {2} finalists side by side ({3} "
                        "rounds, the model's config first): {4} wins at "
                        "{5:F1} GFLOPS, {6:F3}x the first",
                        op, shape, final.finalists, request.sideBySideRounds,
                        best->description, bestGflops, final.speedup)
              .str());
    } else if (request.progress) {
      std::string samples;
      for (double g : final.samples)
        samples += llvm::formatv("{0}{1:F1}", samples.empty() ? "" : ", ", g);
      request.progress(
          llvm::formatv("tuning {0} {1}: {2} finalists measured again ({3} "
                        "runs): {4} wins with a median of {5:F1} GFLOPS ({6})",
                        op, shape, final.finalists, final.reevaluations,
                        best->description, bestGflops, samples)
              .str());
    }
  }
  if (!best)
    return llvm::createStringError(
        llvm::formatv("tuning {3} {0}: none of {1} candidates validated; "
                      "first failure: {2}",
                      shape, history.trials.size(),
                      history.trials.empty()
                          ? std::string("no trials")
                          : history.trials.front().result.failure,
                      op)
            .str());
  const EmittedKernel *kernel = (*evaluator)->kernelFor(best->config);
  if (!kernel)
    return llvm::createStringError("tuner lost the winning kernel's text");

  TuneResult result;
  result.kernel = *kernel;
  result.history = std::move(history);
  TuningRecord &r = result.record;
  r.key = *key;
  r.config = best->config;
  r.symbol = kernel->symbol;
  r.kernelText = kernel->text;
  r.kernelSha256 = sha256Hex(kernel->text);
  r.workspaceBytes = kernel->workspaceBytes;
  r.medianGflops = bestGflops;
  r.spread = best->result.spread;
  r.peakGflops =
      (*evaluator)->corePeakGflops() * std::max(1, best->config.threads);
  r.fractionOfPeak = r.peakGflops > 0 ? r.medianGflops / r.peakGflops : 0;
  r.maxRelError = best->result.maxRelError;
  r.validated = true;
  r.trials = static_cast<int>(result.history.trials.size());
  r.source = llm ? "llm-assisted" : "builtin";
  if (llm)
    result.llmRounds = llm->rounds();
  r.timestamp = utcTimestamp();
  return result;
}
