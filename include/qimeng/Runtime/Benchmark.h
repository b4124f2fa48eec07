//===- Benchmark.h - Side-by-side timing ------------------------*- C++ -*-===//
//
// Timing for benchmarks (never for tests): several candidates timed in one
// process, interleaved round by round so that machine noise hits all of
// them alike, summarised by medians.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_BENCHMARK_H
#define QIMENG_RUNTIME_BENCHMARK_H

#include "llvm/Support/Error.h"
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace qimeng {

/// One thing to time: `run` performs one call in this process; or, for a
/// candidate that runs elsewhere (a process of its own), `round` runs one
/// round there, an untimed call and then `calls` timed ones, and returns the
/// seconds per call.
struct TimedCandidate {
  std::string name;
  std::function<void()> run;
  std::function<llvm::Expected<double>(int calls)> round;
};

struct InterleavedTiming {
  /// Per candidate: seconds per call of each round, in round order.
  std::vector<std::vector<double>> secondsPerCall;
  /// Per candidate: why its rounds stopped ("" while they did not); only a
  /// candidate with a `round` can fail, and its rounds so far are kept.
  std::vector<std::string> failures;
  /// Calls per timed round (the same for every candidate).
  int callsPerRound = 1;
};

/// Warms every candidate up, picks a call count per round so the slowest
/// candidate's round takes about `roundSeconds`, then runs `rounds` rounds,
/// each timing every candidate once in turn. Each candidate's round starts
/// with one untimed call, so that its operands, which the other candidates'
/// rounds evicted from the caches, are back. With `settleSeconds` > 0 that
/// call follows a sleep of that length: multi-threaded libraries keep their
/// thread teams spinning for a while after a call (libomp 200 ms by
/// default), and without the pause a team still spinning would take cores
/// from the next candidate.
InterleavedTiming timeInterleaved(const std::vector<TimedCandidate> &cands,
                                  int rounds, double roundSeconds = 0.05,
                                  double settleSeconds = 0);

/// The settleSeconds the benchmarks use for `threads`: 0.25 s (longer
/// than libomp's 200 ms spin) with more than one thread, else none.
inline double defaultSettleSeconds(int threads) {
  return threads > 1 ? 0.25 : 0.0;
}

/// How long an OpenMP team spins after its work before it sleeps, for every
/// runtime the benchmarks time: libomp's default (KMP_BLOCKTIME, 200 ms),
/// which ours runs on. The settle pause is longer.
inline constexpr double kTeamSpinSeconds = 0.2;

/// Seconds one spin-wait iteration of GNU libgomp takes here (a `pause`
/// instruction and a load; measured, median of several).
double measureSpinIterationSeconds();

/// GOMP_SPINCOUNT for libgomp to spin `seconds` when one iteration takes
/// `iterationSeconds` (at least 1).
long gompSpinCount(double seconds, double iterationSeconds);

/// OMP_PLACES with one place a core, a CPU of each core in `cpus` (the
/// lowest; `siblingsOf(cpu)` gives a CPU's thread_siblings_list as Linux
/// writes it, "0-1" or "0,2", or "" where unknown: then the CPU is a core
/// of its own): "{0},{1}". libomp and libgomp read a list alike, where
/// OMP_PLACES=cores depends on each runtime's reading of the topology
/// (libomp on a virtual machine without cpuid leaf 11 sees two vCPUs as
/// one core's two threads: a single place, its threads unbound).
std::string corePlaces(const std::vector<int> &cpus,
                       const std::function<std::string(int)> &siblingsOf);

/// corePlaces for the CPUs this process may run on (sched_getaffinity),
/// their siblings from /sys/devices/system/cpu.
std::string hostCorePlaces();

/// The median of `values` (empty: 0).
double median(std::vector<double> values);

/// The median over rounds of other[r] / ours[r]: how many times faster
/// `ours` was than `other` within each round (the two ran back to back, so
/// a slow spell of the machine hits both), then the round in the middle
/// (0 when there are no common rounds).
double medianPairedSpeedup(const std::vector<double> &oursSeconds,
                           const std::vector<double> &otherSeconds);

/// Memory read bandwidth in GB/s with `threads` threads, each summing its
/// slice of a buffer far larger than the caches as one sequential stream
/// or as four side by side, the better of the two (each the median of
/// several runs): the yardstick for memory-bound shapes such as
/// 1x4096x4096.
double measureReadBandwidthGBps(int threads, size_t bytes = size_t(512) << 20);

/// The least memory traffic of C += A * B: A and B read once, C read and
/// written once, in bytes.
double gemmMinimumBytes(int64_t m, int64_t n, int64_t k);

} // namespace qimeng

#endif // QIMENG_RUNTIME_BENCHMARK_H
