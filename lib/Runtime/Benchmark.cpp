//===- Benchmark.cpp - Side-by-side timing --------------------------------===//
#include "qimeng/Runtime/Benchmark.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sched.h>
#include <set>
#include <thread>

using namespace qimeng;

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double qimeng::median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

InterleavedTiming
qimeng::timeInterleaved(const std::vector<TimedCandidate> &cands, int rounds,
                        double roundSeconds, double settleSeconds) {
  InterleavedTiming t;
  t.secondsPerCall.resize(cands.size());
  t.failures.resize(cands.size());
  // One round of candidate i: seconds per call, or nothing when it failed
  // (its failure recorded).
  auto roundOf = [&](size_t i, int calls) -> std::optional<double> {
    const TimedCandidate &c = cands[i];
    if (!t.failures[i].empty())
      return std::nullopt;
    if (c.round) {
      auto seconds = c.round(calls);
      if (!seconds) {
        t.failures[i] = llvm::toString(seconds.takeError());
        return std::nullopt;
      }
      return *seconds;
    }
    // One untimed call brings this candidate's data (which the others'
    // rounds evicted) and its thread team back.
    c.run();
    double t0 = now();
    for (int k = 0; k < calls; ++k)
      c.run();
    return (now() - t0) / calls;
  };
  // Warm-up and calibration: the slowest candidate sets the call count.
  double slowest = 0;
  for (size_t i = 0; i < cands.size(); ++i)
    if (std::optional<double> s = roundOf(i, 1))
      slowest = std::max(slowest, *s);
  t.callsPerRound =
      std::max(1, static_cast<int>(roundSeconds / std::max(slowest, 1e-9)));
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < cands.size(); ++i) {
      // Let every thread team of the others go idle first.
      if (settleSeconds > 0)
        std::this_thread::sleep_for(
            std::chrono::duration<double>(settleSeconds));
      if (std::optional<double> s = roundOf(i, t.callsPerRound))
        t.secondsPerCall[i].push_back(*s);
    }
  }
  return t;
}

double qimeng::medianPairedSpeedup(const std::vector<double> &oursSeconds,
                                   const std::vector<double> &otherSeconds) {
  std::vector<double> ratios;
  for (size_t r = 0; r < std::min(oursSeconds.size(), otherSeconds.size()); ++r)
    if (oursSeconds[r] > 0)
      ratios.push_back(otherSeconds[r] / oursSeconds[r]);
  return median(std::move(ratios));
}

double qimeng::gemmMinimumBytes(int64_t m, int64_t n, int64_t k) {
  return 4.0 * (double(m) * k + double(k) * n + 2.0 * double(m) * n);
}

double qimeng::measureReadBandwidthGBps(int threads, size_t bytes) {
  threads = std::max(1, threads);
  // Integer sums: associative, so the compiler vectorizes them and the
  // loop is bound by memory, not by an add's latency.
  size_t count = bytes / sizeof(uint64_t);
  std::vector<uint64_t> data(count, 1); // touches every page once
  std::vector<uint64_t> sums(threads, 0);
  // Each thread reads its slice as one sequential stream, or as four at
  // once (its four quarters side by side, as a matrix-vector product reads
  // several rows of B): on Zen 5 one stream gave 24.3 GB/s where OpenBLAS's
  // sgemv streamed 32, four streams 31-32 (docs/Benchmarks.md, section 35).
  // The probe is the better of the two.
  const size_t chunk = count / threads;
  auto sweep = [&](size_t streams) {
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
      team.emplace_back([&, t] {
        const uint64_t *p = data.data() + t * chunk;
        uint64_t sum = 0;
        if (streams == 1) {
          for (size_t i = 0; i < chunk; ++i)
            sum += p[i];
        } else {
          const size_t part = chunk / 4;
          uint64_t s1 = 0, s2 = 0, s3 = 0;
          for (size_t i = 0; i < part; ++i) {
            sum += p[i];
            s1 += p[part + i];
            s2 += p[2 * part + i];
            s3 += p[3 * part + i];
          }
          sum += s1 + s2 + s3;
        }
        sums[t] += sum;
      });
    for (std::thread &th : team)
      th.join();
  };
  double best = 0;
  for (size_t streams : {size_t(1), size_t(4)}) {
    const size_t read = streams == 1 ? chunk : chunk / 4 * 4;
    sweep(streams); // warm-up
    std::vector<double> rates;
    for (int r = 0; r < 5; ++r) {
      double t0 = now();
      sweep(streams);
      rates.push_back(double(read * threads) * sizeof(uint64_t) / (now() - t0) *
                      1e-9);
    }
    best = std::max(best, median(rates));
  }
  return best;
}

double qimeng::measureSpinIterationSeconds() {
  // libgomp's spin loop: load the flag, and `pause` while it is unchanged.
  volatile int flag = 0;
  const long iterations = 200000;
  std::vector<double> samples;
  for (int r = 0; r < 5; ++r) {
    double t0 = now();
    for (long i = 0; i < iterations && flag == 0; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
    }
    samples.push_back((now() - t0) / iterations);
  }
  return median(samples);
}

long qimeng::gompSpinCount(double seconds, double iterationSeconds) {
  if (!(iterationSeconds > 0))
    return 1;
  return std::max(1L, static_cast<long>(seconds / iterationSeconds));
}

/// The CPUs of a Linux CPU list ("0-3,8"); none where it does not parse.
static std::set<int> parseCpuList(llvm::StringRef list) {
  std::set<int> cpus;
  llvm::SmallVector<llvm::StringRef> ranges;
  list.trim().split(ranges, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef range : ranges) {
    auto [first, last] = range.trim().split('-');
    int lo = 0, hi = 0;
    if (first.getAsInteger(10, lo))
      return {};
    if (last.empty())
      hi = lo;
    else if (last.getAsInteger(10, hi) || hi < lo)
      return {};
    for (int c = lo; c <= hi; ++c)
      cpus.insert(c);
  }
  return cpus;
}

std::string
qimeng::corePlaces(const std::vector<int> &cpus,
                   const std::function<std::string(int)> &siblingsOf) {
  std::set<int> allowed(cpus.begin(), cpus.end());
  std::set<int> representatives;
  for (int cpu : allowed) {
    std::set<int> core = parseCpuList(siblingsOf(cpu));
    core.insert(cpu);
    // The core's lowest CPU this process may use stands for it.
    for (int sibling : core)
      if (allowed.count(sibling)) {
        representatives.insert(sibling);
        break;
      }
  }
  std::string places;
  for (int cpu : representatives)
    places += (places.empty() ? "{" : ",{") + std::to_string(cpu) + "}";
  return places;
}

std::string qimeng::hostCorePlaces() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mask))
        cpus.push_back(c);
  return corePlaces(cpus, [](int cpu) {
    std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                     "/topology/thread_siblings_list");
    std::string list;
    std::getline(in, list);
    return list;
  });
}
