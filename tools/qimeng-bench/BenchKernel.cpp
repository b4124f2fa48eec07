//===- BenchKernel.cpp ----------------------------------------------------===//
#include "BenchKernel.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Tune/Tuner.h"
#include "qimeng/Tune/TuningDatabase.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
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
  k.parts = kernelParts(problem.gemm(), k.config);
  return k;
}

VariantForm qimeng::takeFormSettings(std::string &settings) {
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(settings).split(items, ',', -1, /*KeepEmpty=*/false);
  VariantForm form;
  std::string rest;
  for (llvm::StringRef item : items) {
    if (item.trim() == "ld=runtime") {
      form.runtimeLd = true;
      continue;
    }
    if (item.trim() == "sizes=runtime") {
      form.runtimeM = form.runtimeN = form.runtimeK = true;
      continue;
    }
    if (bool *size = llvm::StringSwitch<bool *>(item.trim())
                         .Case("m=runtime", &form.runtimeM)
                         .Case("n=runtime", &form.runtimeN)
                         .Case("k=runtime", &form.runtimeK)
                         .Default(nullptr)) {
      *size = true;
      continue;
    }
    if (item.trim() == "b=prepacked") {
      form.bPrepacked = true;
      continue;
    }
    rest += (rest.empty() ? "" : ",") + item.str();
  }
  settings = rest;
  return form;
}

llvm::Expected<VariantComparison> qimeng::compareVariants(
    const KernelProblem &problem, const BenchKernel &ours, bool oursValidated,
    const std::vector<std::string> &variants, unsigned threads, int rounds,
    const Target &host, const EmitterOptions &emitter,
    const IsolatedValidationOptions &runner) {
  const GemmDesc view = problem.gemm();
  VariantComparison comparison;
  std::vector<VariantResult> &results = comparison.variants;
  std::vector<std::pair<EmittedKernel, std::vector<GemmRange>>> kernels = {
      {ours.emitted, ours.parts}};
  std::vector<size_t> compared; // results[compared[i]] is kernels[i + 1]
  for (const std::string &settings : variants) {
    std::string keys = settings;
    VariantForm form = takeFormSettings(keys);
    KernelProblem variantProblem = problem;
    // The run-time forms start from the config the model gives them (the
    // pass's kernel for such an operand), unless ours is a tuned one; that
    // keeps its blocks, A copied in rows where its block is too tall to
    // read A in place with a run-time lda.
    GemmConfig base = ours.config;
    if (problem.conv() && form.runtimeSizes())
      return llvm::createStringError(
          "--variant '" + settings +
          "': run-time sizes are for GEMMs (a convolution's sizes are "
          "immediates)");
    if (problem.conv() && form.runtimeLd) {
      // A convolution's ld=runtime: the kernel that reads the input's
      // strides at run time (ConvDesc::runtimeStrides).
      ConvDesc c = *problem.conv();
      c.runtimeStrides = true;
      variantProblem = KernelProblem(c);
    } else if (form.runtimeLd || form.runtimeSizes()) {
      GemmDesc d = view;
      d.runtimeLd = true;
      d.dynamicM = form.runtimeM;
      d.dynamicN = form.runtimeN;
      d.dynamicK = form.runtimeK;
      variantProblem = KernelProblem(d);
      if (ours.tunedTrials != 0 && base.aLayout == ALayout::Direct &&
          !readsAInPlace(d, base.mr, base.isa, base.packB))
        base.aLayout = ALayout::Rows;
    }
    // B packed once, outside the timing (the runner packs it for a kernel
    // whose header says qm.b_prepacked).
    if (form.bPrepacked)
      variantProblem = variantProblem.withPrepackedB();
    // A form this problem cannot take (a prepacked filter for the 3-channel
    // stem) is that variant's failure, not the run's.
    if (llvm::Error err = variantProblem.verify()) {
      VariantResult r;
      r.settings = settings;
      r.failure = "not built: " + llvm::toString(std::move(err));
      results.push_back(std::move(r));
      continue;
    }
    if ((form.runtimeLd || form.runtimeSizes() || form.bPrepacked) &&
        ours.tunedTrials == 0) {
      auto model = chooseKernelConfig(variantProblem, host, int(threads));
      if (!model)
        return model.takeError();
      base = *model;
    }
    auto parsed = GemmConfig::parse(keys, base);
    if (!parsed)
      return llvm::createStringError("--variant '" + settings + "': " +
                                     llvm::toString(parsed.takeError()));
    GemmConfig config = *parsed;
    // A block the variant changes without naming mc or nc keeps ours' mc
    // and nc, rounded down to whole slivers of it.
    llvm::StringRef named(keys);
    if (!named.contains("mc=") && config.mc % config.mr != 0)
      config.mc =
          std::max<int64_t>(config.mr, config.mc / config.mr * config.mr);
    if (!named.contains("nc=") && config.nc % config.nr != 0)
      config.nc =
          std::max<int64_t>(config.nr, config.nc / config.nr * config.nr);
    config = clampToProblem(config, view);
    // A run-time-size form keeps ours' B packing where a kernel reading
    // its sizes at run time can take it (vectorBPackingFits: an f32 B in
    // place with its last sliver masked, or the matrix-vector form);
    // elsewhere, and on AMX's tiles, it packs B.
    if (form.runtimeSizes() &&
        (config.isa == VectorIsa::Amx ||
         !vectorBPackingFits(variantProblem.gemm(), config)))
      config.packB = BPacking::Panels;
    config.threads = partitionedThreads(view, config, int(threads));
    VariantResult r;
    r.settings = settings;
    r.config = config.str();
    auto emitted = emitKernel(variantProblem, config, emitter);
    if (!emitted) {
      r.failure = "not built: " + llvm::toString(emitted.takeError());
    } else {
      r.symbol = emitted->symbol;
      kernels.push_back({std::move(*emitted), kernelParts(view, config)});
      compared.push_back(results.size());
    }
    results.push_back(std::move(r));
  }
  if (!oursValidated) {
    for (size_t i : compared)
      results[i].failure = "not timed: our kernel failed validation";
    return comparison;
  }
  if (compared.empty())
    return comparison;
  auto timed = compareIsolated(problem, host, kernels, rounds, runner);
  if (!timed) {
    std::string why = llvm::toString(timed.takeError());
    for (size_t i : compared)
      results[i].failure = why;
    return comparison;
  }
  if (!(*timed)[0].passed) {
    for (size_t i : compared)
      results[i].failure = "not timed: our kernel failed validation in the "
                           "comparison: " +
                           (*timed)[0].failure;
    return comparison;
  }
  comparison.oursGflops = (*timed)[0].gflops;
  for (size_t i = 0; i < compared.size(); ++i) {
    const ComparedKernel &k = (*timed)[i + 1];
    VariantResult &r = results[compared[i]];
    r.validated = k.passed;
    if (!k.passed) {
      r.failure = "failed validation: " + k.failure;
      continue;
    }
    r.gflops = k.gflops;
    r.speedup = k.speedup;
  }
  return comparison;
}

nlohmann::json qimeng::variantsJson(const VariantComparison &comparison) {
  nlohmann::json list = nlohmann::json::array();
  for (const VariantResult &v : comparison.variants) {
    nlohmann::json e = {{"settings", v.settings},
                        {"config", v.config},
                        {"kernel", v.symbol},
                        {"validated", v.validated}};
    if (v.failure.empty()) {
      e["gflops"] = v.gflops;
      e["ours_gflops"] = comparison.oursGflops;
      e["speedup_over_ours"] = v.speedup;
    } else {
      e["failure"] = v.failure;
    }
    list.push_back(std::move(e));
  }
  return list;
}

std::string qimeng::formatVariantLines(const VariantComparison &comparison) {
  std::string out;
  if (comparison.oursGflops > 0)
    out += llvm::formatv("  side by side in one qimeng-runner process: ours "
                         "{0:F1} GFLOPS\n",
                         comparison.oursGflops)
               .str();
  for (const VariantResult &v : comparison.variants) {
    out += "  variant '" + v.settings + "': ";
    if (v.failure.empty())
      out += llvm::formatv("{0:F1} GFLOPS, {1:F3}x ours side by side  {2}",
                           v.gflops, v.speedup, v.symbol)
                 .str();
    else
      out += v.failure;
    out += "\n";
  }
  return out;
}
