//===- BenchKernel.cpp ----------------------------------------------------===//
#include "BenchKernel.h"
#include "qimeng/Tune/Tuner.h"
#include "qimeng/Tune/TuningDatabase.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace qimeng;

llvm::Expected<BenchKernel>
qimeng::benchKernel(const KernelProblem &problem, const GemmConfig &config,
                    const Target &host, const EmitterOptions &emitter,
                    const IsolatedValidationOptions &runner,
                    const BenchKernelOptions &options) {
  BenchKernel k;
  k.config = config;
  if (options.tuned) {
    auto db = TuningDatabase::open(resolveCacheDir(options.cacheDir));
    if (!db)
      return db.takeError();
    auto key = tuningKey(problem, host, emitter, config.threads);
    if (!key)
      return key.takeError();
    std::vector<std::string> warnings;
    std::optional<TuningRecord> record = db->lookup(*key, warnings);
    for (const std::string &w : warnings)
      llvm::WithColor::warning(llvm::errs(), options.progressPrefix)
          << w << "\n";
    if (!record) {
      TuneRequest request;
      request.problem = problem;
      request.target = host;
      request.base = config;
      request.budget.trials = options.tuneBudget;
      request.emitter = emitter;
      request.runner = runner;
      std::string prefix = options.progressPrefix;
      request.progress = [prefix](const std::string &line) {
        llvm::errs() << prefix << ": " << line << "\n";
      };
      auto tuned = tuneKernel(request);
      if (!tuned)
        return tuned.takeError();
      if (auto err = db->store(tuned->record))
        return std::move(err);
      record = tuned->record;
    }
    k.config = record->config;
    k.tunedTrials = record->trials;
    auto emitted = parseEmitterOutput(record->kernelText);
    if (!emitted)
      return emitted.takeError();
    k.emitted = std::move(*emitted);
  } else {
    auto emitted = emitKernel(problem, config, emitter);
    if (!emitted)
      return emitted.takeError();
    k.emitted = std::move(*emitted);
  }
  if (k.config.threads > 1)
    k.parts = partitionGemm(problem.gemm(), k.config, k.config.threads);
  return k;
}
