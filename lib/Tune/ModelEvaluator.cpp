//===- ModelEvaluator.cpp - Tuning without the hardware -------------------===//
#include "qimeng/Tune/ModelEvaluator.h"
#include "qimeng/Config.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include <algorithm>

using namespace qimeng;

ModelOptions ModelOptions::defaults() {
  ModelOptions o;
  o.llvmMca = QIMENG_LLVM_MCA;
  if (auto path = llvm::sys::Process::GetEnv("QIMENG_LLVM_MCA"))
    o.llvmMca = *path;
  return o;
}

/// The number after `label` in llvm-mca's summary ("Total Cycles:   1234").
static std::optional<double> summaryValue(llvm::StringRef report,
                                          llvm::StringRef label) {
  size_t at = report.find(label);
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest =
      report.substr(at + label.size()).ltrim().take_until([](char c) {
        return c == '\n';
      });
  double value = 0;
  if (rest.trim().getAsDouble(value))
    return std::nullopt;
  return value;
}

llvm::Expected<InnerLoopPrediction>
qimeng::predictInnerLoop(const EmittedKernel &kernel, const Target &target,
                         const ModelOptions &options) {
  auto core = target.coreModel();
  if (!core)
    return core.takeError();
  auto loop = kernel.innerLoop();
  if (!loop)
    return loop.takeError();
  if (!llvm::sys::fs::can_execute(options.llvmMca))
    return llvm::createStringError("cannot run the performance model: no "
                                   "llvm-mca at " +
                                   options.llvmMca +
                                   " (package llvm-22; set QIMENG_LLVM_MCA)");
  std::vector<std::string> args = {
      options.llvmMca, "-mtriple=" + target.triple, "-mcpu=" + core->mcaCpu,
      "-iterations=" + std::to_string(options.iterations)};
  if (!target.features.empty())
    args.push_back("-mattr=" + target.featureString());
  SubprocessOptions sp;
  sp.timeoutSeconds = options.timeoutSeconds;
  auto result = runSubprocess(options.llvmMca, args, *loop, sp);
  if (!result)
    return result.takeError();
  if (!result->succeeded())
    return llvm::createStringError(
        "llvm-mca failed on " + kernel.symbol + "'s inner loop: " +
        llvm::StringRef(result->err).trim().take_back(400).str());
  std::optional<double> cycles = summaryValue(result->out, "Total Cycles:");
  std::optional<double> runs = summaryValue(result->out, "Iterations:");
  if (!cycles || !runs || *runs <= 0)
    return llvm::createStringError("llvm-mca's report has no cycle count");
  InnerLoopPrediction p;
  p.mcaCpu = core->mcaCpu;
  p.cyclesPerIteration = *cycles / *runs;
  p.flopsPerIteration = double(kernel.innerLoopFlops);
  p.peakFlopsPerCycle = 2.0 * core->fmaLanesPerCycle;
  return p;
}

std::vector<GemmConfig> qimeng::modelSearchSpace(const Target &target) {
  std::vector<GemmConfig> space;
  GemmConfig c;
  c.isa = target.bestIsa();
  if (c.isa == VectorIsa::Neon) {
    for (int nv = 1; nv <= 6; ++nv)
      for (int mr = 2; mr <= 8; ++mr)
        if (mr * nv + mr + nv <= 32)
          for (int ku : {4, 8}) {
            c.mr = mr;
            c.nr = 4 * nv;
            c.kUnroll = ku;
            space.push_back(c);
          }
  } else if (c.isa == VectorIsa::Rvv) {
    const int vlen = std::max(target.vlen, 128);
    for (int lmul : {1, 2, 4, 8})
      for (int nv = 1; nv <= 4; ++nv)
        for (int mr = 2; mr <= 8; ++mr)
          if ((mr * nv + nv) * lmul <= 32)
            for (int ku : {4, 8}) {
              c.lmul = lmul;
              c.mr = mr;
              c.nr = nv * vlen * lmul / 32;
              c.kUnroll = ku;
              space.push_back(c);
            }
  }
  return space;
}

llvm::Expected<ModelRanking> qimeng::rankByModel(
    const GemmDesc &desc, const Target &target, const EmitterOptions &emitter,
    const CrossValidationOptions &emulation, const ModelOptions &model,
    const std::function<void(const std::string &)> &progress,
    size_t validateBest) {
  std::vector<GemmConfig> space = modelSearchSpace(target);
  if (space.empty())
    return llvm::createStringError(
        "no model search space for " + isaName(target.bestIsa()) +
        " targets; the model ranks neon and rvv kernels");
  if (auto core = target.coreModel(); !core)
    return core.takeError();
  auto describe = [](const GemmConfig &c) {
    return llvm::formatv("mr={0} nr={1} ku={2}{3}", c.mr, c.nr, c.kUnroll,
                         c.isa == VectorIsa::Rvv
                             ? " lmul=" + std::to_string(c.lmul)
                             : std::string())
        .str();
  };
  auto say = [&](const std::string &line) {
    if (progress)
      progress(line);
  };
  ModelRanking ranking;
  size_t index = 0;
  for (const GemmConfig &config : space) {
    ++index;
    std::string head = llvm::formatv("model {0}/{1} {2}: ", index, space.size(),
                                     describe(config))
                           .str();
    auto kernel = emitGemmKernel(desc, config, emitter, "", &target);
    if (!kernel) {
      say(head + "not generated: " + llvm::toString(kernel.takeError()));
      continue;
    }
    auto prediction = predictInnerLoop(*kernel, target, model);
    if (!prediction) {
      say(head + "no prediction: " + llvm::toString(prediction.takeError()));
      continue;
    }
    auto padded = [](int64_t v, int64_t b) { return (v + b - 1) / b * b; };
    double flops = 2.0 * double(padded(desc.m, config.mr)) *
                   double(padded(desc.n, config.nr)) * double(desc.k);
    ModelCandidate c;
    c.config = config;
    c.kernel = std::move(*kernel);
    c.prediction = *prediction;
    c.predictedCycles =
        flops * prediction->cyclesPerIteration / prediction->flopsPerIteration;
    say(head + llvm::formatv("inner loop {0:F1}% of peak, {1:E3} cycles "
                             "(model)",
                             100 * prediction->fractionOfPeak(),
                             c.predictedCycles)
                   .str());
    ranking.predicted.push_back(std::move(c));
  }
  std::stable_sort(ranking.predicted.begin(), ranking.predicted.end(),
                   [](const ModelCandidate &a, const ModelCandidate &b) {
                     return a.predictedCycles < b.predictedCycles;
                   });
  for (const ModelCandidate &c : ranking.predicted) {
    if (ranking.validated.size() >= validateBest)
      break;
    say("validating " + c.kernel.symbol + " on " +
        crossBackendName(target, emulation));
    auto run = validateGemmCross(desc, target, c.kernel, emulation);
    if (!run)
      return run.takeError();
    if (!run->report.passed) {
      ranking.failures.push_back(c.kernel.symbol + ": " + run->report.failure);
      say("  failed: " + run->report.failure);
      continue;
    }
    ranking.validated.push_back(c);
    if (!emulation.remoteHost.empty())
      ranking.validated.back().measuredNs = run->medianNs;
  }
  return ranking;
}
