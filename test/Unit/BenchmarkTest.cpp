//===- BenchmarkTest.cpp - Timing helpers (behaviour, not speed) ----------===//
#include "qimeng/Runtime/Benchmark.h"
#include "ErrorHelpers.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Runtime/PeakGauge.h"
#include <algorithm>
#include <chrono>
#include <gtest/gtest.h>

using namespace qimeng;

TEST(BenchmarkTest, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3}), 3);
  EXPECT_EQ(median({5, 1, 3}), 3);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(BenchmarkTest, MedianPairedSpeedup) {
  // Round 2 is a slow spell for both: its ratio is still 2.
  EXPECT_EQ(medianPairedSpeedup({1, 5, 1}, {2, 10, 2}), 2);
  EXPECT_EQ(medianPairedSpeedup({1, 1, 1}, {3, 1, 2}), 2);
  // Only the common rounds count; a zero time is skipped.
  EXPECT_EQ(medianPairedSpeedup({2, 0, 4}, {4, 7, 4, 9}), 1.5);
  EXPECT_EQ(medianPairedSpeedup({}, {1}), 0);
}

TEST(BenchmarkTest, InterleavedRunsEveryCandidateEveryRound) {
  int calls[2] = {0, 0};
  std::vector<TimedCandidate> cands = {{"a", [&] { ++calls[0]; }},
                                       {"b", [&] { ++calls[1]; }}};
  InterleavedTiming t = timeInterleaved(cands, 7, 0.001);
  ASSERT_EQ(t.secondsPerCall.size(), 2u);
  EXPECT_EQ(t.secondsPerCall[0].size(), 7u);
  EXPECT_EQ(t.secondsPerCall[1].size(), 7u);
  // Two warm-up calls each, then per round one untimed call and the same
  // count of timed calls for both.
  EXPECT_EQ(calls[0], 2 + 7 * (1 + t.callsPerRound));
  EXPECT_EQ(calls[1], calls[0]);
}

TEST(BenchmarkTest, RoundsElsewhereAreInterleavedToo) {
  // A candidate in another process runs whole rounds; the local one and it
  // alternate, and both see the same call count per round.
  std::vector<std::string> order;
  std::vector<int> remoteCalls;
  std::vector<TimedCandidate> cands = {
      {"local", [&] { order.push_back("local"); }, nullptr},
      {"remote", nullptr, [&](int calls) -> llvm::Expected<double> {
         order.push_back("remote");
         remoteCalls.push_back(calls);
         return 0.5;
       }}};
  InterleavedTiming t = timeInterleaved(cands, 3, 0.001);
  // Calibration: the remote round of 1 call took 0.5 s, the slowest.
  EXPECT_EQ(t.callsPerRound, 1);
  EXPECT_EQ(remoteCalls, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(t.secondsPerCall[1], (std::vector<double>{0.5, 0.5, 0.5}));
  EXPECT_EQ(t.secondsPerCall[0].size(), 3u);
  EXPECT_EQ(t.failures, (std::vector<std::string>{"", ""}));
  // local: 2 calibration calls, then 2 calls a round; remote: one a round.
  std::vector<std::string> expected = {"local", "local", "remote"};
  for (int r = 0; r < 3; ++r)
    expected.insert(expected.end(), {"local", "local", "remote"});
  EXPECT_EQ(order, expected);
}

TEST(BenchmarkTest, AFailedRoundStopsOnlyThatCandidate) {
  int rounds = 0, local = 0;
  std::vector<TimedCandidate> cands = {
      {"local", [&] { ++local; }, nullptr},
      {"crashes", nullptr, [&](int) -> llvm::Expected<double> {
         if (++rounds == 3)
           return llvm::createStringError("the child exited with status 1");
         return 1e-3;
       }}};
  InterleavedTiming t = timeInterleaved(cands, 5, 1e-6);
  EXPECT_EQ(t.secondsPerCall[1].size(), 1u); // calibration, round 1, then out
  EXPECT_EQ(t.failures[1], "the child exited with status 1");
  EXPECT_EQ(rounds, 3);
  EXPECT_EQ(t.secondsPerCall[0].size(), 5u);
  EXPECT_EQ(t.failures[0], "");
}

TEST(BenchmarkTest, GompSpinCountMatchesTheSpinTime) {
  // 25 ns an iteration: 200 ms is 8 million of them.
  EXPECT_EQ(gompSpinCount(0.2, 25e-9), 8000000);
  EXPECT_EQ(gompSpinCount(0.2, 0), 1);
  EXPECT_EQ(gompSpinCount(1e-9, 1e-6), 1);
  double s = measureSpinIterationSeconds();
  EXPECT_GT(s, 0);
  EXPECT_LT(s, 1e-5); // a pause is nanoseconds, not tens of microseconds
}

TEST(BenchmarkTest, CorePlacesTakeOneCpuACore) {
  // Two cores without SMT (this host's vCPUs), as Linux lists them.
  auto own = [](int cpu) { return std::to_string(cpu); };
  EXPECT_EQ(corePlaces({0, 1}, own), "{0},{1}");
  // Two cores of two threads, siblings numbered n and n + 2: one place a
  // core, whichever of its threads the process may use.
  auto smt = [](int cpu) {
    return std::to_string(cpu % 2) + "," + std::to_string(cpu % 2 + 2);
  };
  EXPECT_EQ(corePlaces({0, 1, 2, 3}, smt), "{0},{1}");
  EXPECT_EQ(corePlaces({2, 3}, smt), "{2},{3}");
  EXPECT_EQ(corePlaces({0, 2}, smt), "{0}");
  // Siblings as a range, and unknown ones (each CPU a core of its own).
  EXPECT_EQ(
      corePlaces({4, 5, 6, 7}, [](int cpu) { return cpu < 6 ? "4-5" : "6-7"; }),
      "{4},{6}");
  EXPECT_EQ(corePlaces({0, 1}, [](int) { return std::string(); }), "{0},{1}");
  EXPECT_EQ(corePlaces({}, own), "");
  // This host: a place for each of its cores, at least one.
  std::string host = hostCorePlaces();
  EXPECT_EQ(host.front(), '{') << host;
  EXPECT_EQ(host.back(), '}') << host;
}

TEST(BenchmarkTest, SettlingWaitsBeforeEachRound) {
  int calls[2] = {0, 0};
  std::vector<TimedCandidate> cands = {{"a", [&] { ++calls[0]; }},
                                       {"b", [&] { ++calls[1]; }}};
  auto t0 = std::chrono::steady_clock::now();
  InterleavedTiming t = timeInterleaved(cands, 3, 0.001, 0.01);
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_EQ(calls[0], 2 + 3 * (1 + t.callsPerRound));
  EXPECT_EQ(calls[1], calls[0]);
  EXPECT_GE(elapsed, 6 * 0.01) << "one pause before each candidate's round";
}

TEST(BenchmarkTest, PeakProbeRunsAndIsPositive) {
  Target host = Target::detectHost();
  if (host.bestIsa() == VectorIsa::None)
    GTEST_SKIP() << "host has no avx2/fma or avx512f";
  QM_ASSERT_EXPECTED(
      probe, emitFmaPeakProbe(host.bestIsa(), EmitterOptions::defaults()));
  QM_ASSERT_EXPECTED(
      peak, measurePeakIsolated(probe, IsolatedValidationOptions::defaults()));
  EXPECT_GT(peak, 1.0);
}

//===----------------------------------------------------------------------===//
// PeakGauge and the plausibility rule, with scripted probes
//===----------------------------------------------------------------------===//

/// A probe that answers from a script, then repeats its last answer.
static PeakGauge::Probe scripted(std::vector<double> answers, int *calls) {
  return [answers, calls]() -> llvm::Expected<double> {
    size_t i = std::min<size_t>(size_t((*calls)++), answers.size() - 1);
    return answers[i];
  };
}

TEST(PeakGaugeTest, ThePeakIsTheBestProbe) {
  int calls = 0;
  // The first probe ran in a slow moment; the best one counts.
  PeakGauge gauge(scripted({110.6, 158.0, 156.0}, &calls));
  EXPECT_EQ(gauge.gflops(), 0);
  QM_ASSERT_OK(gauge.probe(3));
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(gauge.gflops(), 158.0);
  EXPECT_NEAR(gauge.spread(), (158.0 - 110.6) / 158.0, 1e-12);
  EXPECT_EQ(gauge.describe(), "best of 3 probe(s), 30.0% apart");
}

TEST(PeakGaugeTest, AFailedProbeKeepsTheEarlierOnes) {
  int calls = 0;
  PeakGauge gauge([&calls]() -> llvm::Expected<double> {
    if (calls++ == 0)
      return 150.0;
    return llvm::createStringError("runner crashed");
  });
  QM_ASSERT_FAILS_WITH(gauge.probe(3), "runner crashed");
  EXPECT_EQ(gauge.gflops(), 150.0);
  EXPECT_EQ(gauge.probes().size(), 1u);
  PeakGauge zero([]() -> llvm::Expected<double> { return 0.0; });
  QM_ASSERT_FAILS_WITH(zero.probe(1), "peak probe gave 0.00 GFLOPS");
}

TEST(PeakGaugeTest, ARateWithinThePeakIsKept) {
  int probes = 0, remeasures = 0;
  PeakGauge gauge(scripted({100}, &probes));
  QM_ASSERT_OK(gauge.probe(1));
  auto remeasure = [&]() -> llvm::Expected<double> {
    ++remeasures;
    return 1.0;
  };
  RateCheck c = checkPlausibleRate(104, 1, gauge, remeasure);
  EXPECT_TRUE(c.plausible);
  EXPECT_EQ(c.gflops, 104);
  EXPECT_FALSE(c.remeasured);
  // Two threads: twice the core's peak.
  EXPECT_TRUE(checkPlausibleRate(205, 2, gauge, remeasure).plausible);
  EXPECT_EQ(remeasures, 0);
  EXPECT_EQ(probes, 1);
}

TEST(PeakGaugeTest, ACandidateAboveANoisyPeakIsMeasuredAgain) {
  // The case the gauge exists for: the probe ran in a noisy moment (110.6),
  // the candidate really gives 125.4 and the core 156-159.
  int probes = 0, remeasures = 0;
  PeakGauge gauge(scripted({110.6, 157.0, 159.0}, &probes));
  QM_ASSERT_OK(gauge.probe(1));
  RateCheck c =
      checkPlausibleRate(125.4, 1, gauge, [&]() -> llvm::Expected<double> {
        ++remeasures;
        return 124.9;
      });
  EXPECT_TRUE(c.plausible) << c.failure;
  EXPECT_TRUE(c.remeasured);
  EXPECT_EQ(c.gflops, 124.9);
  EXPECT_EQ(remeasures, 1);
  EXPECT_EQ(probes, 3); // two more probes
  EXPECT_EQ(gauge.gflops(), 159.0);
}

TEST(PeakGaugeTest, ARateAboveThePeakTwiceIsRejected) {
  int probes = 0;
  PeakGauge gauge(scripted({100, 101, 99}, &probes));
  QM_ASSERT_OK(gauge.probe(1));
  RateCheck c = checkPlausibleRate(
      180, 1, gauge, []() -> llvm::Expected<double> { return 175.0; });
  EXPECT_FALSE(c.plausible);
  EXPECT_TRUE(c.remeasured);
  EXPECT_EQ(c.failure, "measured 180.0 and then 175.0 GFLOPS, above the peak "
                       "of 101.0 for 1 thread(s) (best of 3 probe(s), 2.0% "
                       "apart): a measurement error");
  // A measurement that fails the second time is not plausible either.
  RateCheck failed =
      checkPlausibleRate(180, 1, gauge, []() -> llvm::Expected<double> {
        return llvm::createStringError("wrong result at C[3]");
      });
  EXPECT_FALSE(failed.plausible);
  EXPECT_NE(failed.failure.find("measuring it again failed: wrong result at "
                                "C[3]"),
            std::string::npos)
      << failed.failure;
}
