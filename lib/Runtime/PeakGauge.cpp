//===- PeakGauge.cpp ------------------------------------------------------===//
#include "qimeng/Runtime/PeakGauge.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

using namespace qimeng;

llvm::Error PeakGauge::probe(int count) {
  for (int i = 0; i < count; ++i) {
    auto g = probe_();
    if (!g)
      return g.takeError();
    if (!(*g > 0))
      return llvm::createStringError(
          llvm::formatv("peak probe gave {0} GFLOPS", *g).str());
    probes_.push_back(*g);
    best_ = std::max(best_, *g);
  }
  return llvm::Error::success();
}

double PeakGauge::spread() const {
  if (probes_.empty() || best_ <= 0)
    return 0;
  double worst = *std::min_element(probes_.begin(), probes_.end());
  return (best_ - worst) / best_;
}

std::string PeakGauge::describe() const {
  return llvm::formatv("best of {0} probe(s), {1:F1}% apart", probes_.size(),
                       100 * spread())
      .str();
}

llvm::Expected<PeakGauge *>
PeakGauge::forHost(VectorIsa isa, const EmitterOptions &emitter,
                   const IsolatedValidationOptions &runner, int initialProbes,
                   GemmPrecision precision) {
  static std::mutex mutex;
  static std::map<std::pair<VectorIsa, GemmPrecision>,
                  std::unique_ptr<PeakGauge>>
      gauges;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = gauges.find({isa, precision});
  if (it != gauges.end())
    return it->second.get();
  auto kernel = emitFmaPeakProbe(isa, emitter, precision);
  if (!kernel)
    return kernel.takeError();
  auto gauge =
      std::make_unique<PeakGauge>([probeKernel = std::move(*kernel), runner]() {
        return measurePeakIsolated(probeKernel, runner);
      });
  if (auto err = gauge->probe(std::max(1, initialProbes)))
    return std::move(err);
  PeakGauge *raw = gauge.get();
  gauges.emplace(std::pair{isa, precision}, std::move(gauge));
  return raw;
}

RateCheck qimeng::checkPlausibleRate(
    double measured, int threads, PeakGauge &gauge,
    const std::function<llvm::Expected<double>()> &remeasure, double tolerance,
    int reprobes) {
  RateCheck check;
  check.gflops = measured;
  threads = std::max(1, threads);
  if (measured <= tolerance * gauge.gflops() * threads) {
    check.plausible = true;
    return check;
  }
  double firstPeak = gauge.gflops() * threads;
  // Perhaps the probes all ran in a slow moment: probe again, and measure
  // the candidate again, before calling it an error.
  if (auto err = gauge.probe(reprobes))
    llvm::consumeError(std::move(err)); // the peak stays as it was
  auto again = remeasure();
  if (!again) {
    check.failure = llvm::formatv("measured {0:F1} GFLOPS is above the peak "
                                  "of {1:F1} for {2} thread(s), and measuring "
                                  "it again failed: {3}",
                                  measured, firstPeak, threads,
                                  llvm::toString(again.takeError()))
                        .str();
    return check;
  }
  check.remeasured = true;
  check.gflops = *again;
  double peak = gauge.gflops() * threads;
  if (*again <= tolerance * peak) {
    check.plausible = true;
    return check;
  }
  check.failure =
      llvm::formatv("measured {0:F1} and then {1:F1} GFLOPS, above the peak "
                    "of {2:F1} for {3} thread(s) ({4}): a measurement error",
                    measured, *again, peak, threads, gauge.describe())
          .str();
  return check;
}
