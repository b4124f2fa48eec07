//===- BenchmarkTest.cpp - Timing helpers (behaviour, not speed) ----------===//
#include "qimeng/Runtime/Benchmark.h"
#include "ErrorHelpers.h"
#include "qimeng/Runtime/IsolatedValidation.h"
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
