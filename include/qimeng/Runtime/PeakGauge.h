//===- PeakGauge.h - A measured FMA peak that does not lie ------*- C++ -*-===//
//
// The tuner rejects a candidate faster than this core's measured FMA peak
// as a measurement error, and the benchmarks print percentages of it. A
// probe can only be slowed by the machine (a neighbour on the core, a
// frequency dip), never sped up, so the peak is the best of several probes,
// measured once per process and reused; and a candidate above it makes the
// gauge probe again and the candidate be measured again before it is
// rejected. On a shared 2-vCPU machine one probe taken in a noisy moment
// read 110.6 GFLOPS where the core gives 156-159, and threw away a real
// 125.4 GFLOPS kernel.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_PEAKGAUGE_H
#define QIMENG_RUNTIME_PEAKGAUGE_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <string>
#include <vector>

namespace qimeng {

class PeakGauge {
public:
  /// One probe of one core's peak, in GFLOPS.
  using Probe = std::function<llvm::Expected<double>()>;

  explicit PeakGauge(Probe probe) : probe_(std::move(probe)) {}

  /// Runs `count` more probes. The first error stops it and is returned;
  /// the probes before it still count.
  llvm::Error probe(int count);
  /// One core's peak: the best probe so far (0 before any).
  double gflops() const { return best_; }
  /// Every probe so far, in order.
  const std::vector<double> &probes() const { return probes_; }
  /// (best - worst) / best over the probes: how quiet the machine was.
  double spread() const;
  /// "best of 3 probes, 2.1% apart".
  std::string describe() const;

  /// The process's gauge for this host's `isa` and the kernels'
  /// `precision` (bf16: VDPBF16PS chains, twice the FMA's flops): the
  /// emitter's fma_peak probe run in qimeng-runner, probed `initialProbes`
  /// times on first use, then the same gauge (and the probes that raised it
  /// since) for the rest of the process.
  static llvm::Expected<PeakGauge *>
  forHost(VectorIsa isa, const EmitterOptions &emitter,
          const IsolatedValidationOptions &runner, int initialProbes = 3,
          GemmPrecision precision = GemmPrecision::F32);

private:
  Probe probe_;
  std::vector<double> probes_;
  double best_ = 0;
};

/// What checkPlausibleRate decided.
struct RateCheck {
  bool plausible = false;
  double gflops = 0; ///< the rate to use: the one measured last
  bool remeasured = false;
  std::string failure; ///< why not plausible
};

/// Is `measured` GFLOPS, of a kernel on `threads` cores, a rate the machine
/// can give? At most `tolerance` times the gauge's peak times `threads`, it
/// is. Above that, the gauge probes `reprobes` more times (which may raise
/// its peak) and the kernel is measured once more with `remeasure`: the
/// rate is plausible when the new measurement is within the new bound, and
/// is then the new measurement; else a failure names both measurements and
/// the peak.
RateCheck
checkPlausibleRate(double measured, int threads, PeakGauge &gauge,
                   const std::function<llvm::Expected<double>()> &remeasure,
                   double tolerance = 1.05, int reprobes = 2);

} // namespace qimeng

#endif // QIMENG_RUNTIME_PEAKGAUGE_H
