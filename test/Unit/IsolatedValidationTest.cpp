//===- IsolatedValidationTest.cpp - Kernels judged in qimeng-runner -------===//
//
// A good kernel passes; a wrong one, one that writes past C, one that
// crashes and one that hangs are each rejected with their reason, and the
// test process (standing in for the compiler) survives all of them.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Runtime/IsolatedValidation.h"
#include "ErrorHelpers.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Runtime/RunnerService.h"
#include <gtest/gtest.h>
#include <tuple>

using namespace qimeng;

namespace {

class IsolatedValidationTest : public ::testing::Test {
protected:
  void SetUp() override {
    host = Target::detectHost();
    if (host.bestIsa() == VectorIsa::None)
      GTEST_SKIP() << "host has no avx2/fma or avx512f";
  }

  EmittedKernel emit(const GemmDesc &desc, llvm::StringRef fault = "") {
    auto config = chooseGemmConfig(desc, host);
    EXPECT_TRUE(static_cast<bool>(config));
    auto emitted =
        emitGemmKernel(desc, *config, EmitterOptions::defaults(), fault);
    EXPECT_TRUE(static_cast<bool>(emitted))
        << llvm::toString(emitted.takeError());
    return std::move(*emitted);
  }

  Target host;
};

TEST_F(IsolatedValidationTest, GoodKernelPasses) {
  GemmDesc desc = GemmDesc::packed(37, 45, 29);
  QM_ASSERT_EXPECTED(
      report, validateGemmIsolated(desc, host, emit(desc),
                                   IsolatedValidationOptions::defaults()));
  EXPECT_TRUE(report.passed) << report.failure;
  EXPECT_LT(report.maxRelError, gemmErrorBound(29));
}

TEST_F(IsolatedValidationTest, WrongResultIsRejected) {
  GemmDesc desc = GemmDesc::packed(13, 33, 8);
  QM_ASSERT_EXPECTED(
      report, validateGemmIsolated(desc, host, emit(desc, "drop-k"),
                                   IsolatedValidationOptions::defaults()));
  EXPECT_FALSE(report.passed);
  EXPECT_NE(report.failure.find("C("), std::string::npos) << report.failure;
}

TEST_F(IsolatedValidationTest, WritePastCIsRejected) {
  GemmDesc desc = GemmDesc::packed(7, 5, 3);
  desc.ldc = 9;
  QM_ASSERT_EXPECTED(
      report, validateGemmIsolated(desc, host, emit(desc, "write-past-edge"),
                                   IsolatedValidationOptions::defaults()));
  EXPECT_FALSE(report.passed);
  EXPECT_TRUE(report.failure.find("gap") != std::string::npos ||
              report.failure.find("guard") != std::string::npos)
      << report.failure;
}

TEST_F(IsolatedValidationTest, CrashIsRejected) {
  GemmDesc desc = GemmDesc::packed(8, 8, 8);
  QM_ASSERT_EXPECTED(
      report, validateGemmIsolated(desc, host, emit(desc, "segfault"),
                                   IsolatedValidationOptions::defaults()));
  EXPECT_FALSE(report.passed);
  EXPECT_NE(report.failure.find("crashed"), std::string::npos)
      << report.failure;
}

TEST_F(IsolatedValidationTest, HangIsRejectedAfterTheTimeout) {
  GemmDesc desc = GemmDesc::packed(8, 8, 8);
  IsolatedValidationOptions options = IsolatedValidationOptions::defaults();
  options.timeoutSeconds = 2;
  QM_ASSERT_EXPECTED(
      report, validateGemmIsolated(desc, host, emit(desc, "hang"), options));
  EXPECT_FALSE(report.passed);
  EXPECT_NE(report.failure.find("did not finish within 2 s"), std::string::npos)
      << report.failure;
}

TEST_F(IsolatedValidationTest, MissingRunnerIsAnError) {
  GemmDesc desc = GemmDesc::packed(8, 8, 8);
  IsolatedValidationOptions options;
  options.runnerPath = "/nonexistent/qimeng-runner";
  QM_ASSERT_FAILS_WITH(
      validateGemmIsolated(desc, host, emit(desc), options).takeError(),
      "qimeng-runner");
}

TEST(ValidationRequestTest, MalformedRequestsAreErrors) {
  QM_ASSERT_FAILS_WITH(serveValidationRequest("not json").takeError(),
                       "not a JSON object");
  QM_ASSERT_FAILS_WITH(serveValidationRequest("{\"version\":2}").takeError(),
                       "unsupported validation request version 2");
  QM_ASSERT_FAILS_WITH(
      serveValidationRequest("{\"version\":1,\"m\":\"7\"}").takeError(),
      "field 'm' must be an integer");
  QM_ASSERT_FAILS_WITH(
      serveValidationRequest(
          "{\"version\":1,\"m\":7,\"n\":5,\"k\":3,\"lda\":3,\"ldb\":5,"
          "\"ldc\":5,\"trans_a\":false,\"trans_b\":false,\"target\":\"x\","
          "\"kernel\":\"garbage\"}")
          .takeError(),
      "lacks its header");
}

} // namespace

namespace {

TEST(PartitionTest, PartsTileCExactlyAtBlockBoundaries) {
  GemmConfig config;
  config.mr = 6;
  config.nr = 16;
  for (auto [m, n, t] : {std::tuple<int64_t, int64_t, int>{48, 64, 2},
                         {100, 16, 2},
                         {7, 5, 4},
                         {1, 4096, 2},
                         {4096, 64, 2},
                         {1000, 1000, 3}}) {
    GemmDesc desc = GemmDesc::packed(m, n, 8);
    std::vector<GemmRange> parts = partitionGemm(desc, config, t, 0);
    ASSERT_FALSE(parts.empty());
    EXPECT_LE(parts.size(), static_cast<size_t>(t));
    int64_t area = 0;
    for (const GemmRange &p : parts) {
      EXPECT_LT(p.mBegin, p.mEnd);
      EXPECT_LT(p.nBegin, p.nEnd);
      EXPECT_EQ(p.mBegin % config.mr, 0);
      EXPECT_EQ(p.nBegin % config.nr, 0);
      area += (p.mEnd - p.mBegin) * (p.nEnd - p.nBegin);
    }
    EXPECT_EQ(area, m * n) << m << "x" << n << " in " << t;
  }
  // A pinned axis: 256 rows and 256 columns split the way the config says;
  // an axis with fewer blocks than threads gives fewer parts.
  GemmDesc square = GemmDesc::packed(256, 256, 256);
  config.split = SplitAxis::M;
  EXPECT_EQ(partitionGemm(square, config, 2, 0),
            (std::vector<GemmRange>{{0, 132, 0, 256}, {132, 256, 0, 256}}));
  config.split = SplitAxis::N;
  EXPECT_EQ(partitionGemm(square, config, 2, 0),
            (std::vector<GemmRange>{{0, 256, 0, 128}, {0, 256, 128, 256}}));
  EXPECT_EQ(partitionGemm(GemmDesc::packed(256, 16, 8), config, 2, 0).size(),
            1u);
  config.split = SplitAxis::M;
  EXPECT_EQ(partitionGemm(GemmDesc::packed(4, 4096, 8), config, 2, 0).size(),
            1u);
  config.split = SplitAxis::Auto;
  // Too little work for two threads: one part (the default threshold).
  EXPECT_EQ(partitionGemm(GemmDesc::packed(64, 64, 64), config, 2).size(), 1u);
  EXPECT_EQ(partitionGemm(GemmDesc::packed(256, 256, 256), config, 2).size(),
            2u);
  // One thread: one part covering C.
  GemmDesc d = GemmDesc::packed(30, 40, 8);
  EXPECT_EQ(partitionGemm(d, config, 1, 0),
            (std::vector<GemmRange>{{0, 30, 0, 40}}));
}

TEST(PartitionTest, ThreadsAndKernelPartsFollowThePartition) {
  GemmConfig config;
  config.mr = 6;
  config.nr = 16;
  // Too little work for a second thread: the config gets one, and one
  // thread runs as a single call (no parts).
  GemmDesc small = GemmDesc::packed(64, 64, 64);
  EXPECT_EQ(partitionedThreads(small, config, 2), 1);
  config.threads = 1;
  EXPECT_TRUE(kernelParts(small, config).empty());
  // Enough work: two threads, and the kernel's parts are the partition's.
  GemmDesc square = GemmDesc::packed(256, 256, 256);
  EXPECT_EQ(partitionedThreads(square, config, 2), 2);
  EXPECT_EQ(partitionedThreads(square, config, 0), 1);
  config.threads = 2;
  EXPECT_EQ(kernelParts(square, config), partitionGemm(square, config, 2));
  EXPECT_EQ(kernelParts(square, config).size(), 2u);
}

TEST_F(IsolatedValidationTest, ParallelKernelPassesWithItsParts) {
  GemmDesc desc = GemmDesc::packed(61, 83, 37);
  auto config = chooseGemmConfig(desc, host);
  ASSERT_TRUE(static_cast<bool>(config));
  config->threads = 2;
  auto emitted = emitGemmKernel(desc, *config, EmitterOptions::defaults());
  ASSERT_TRUE(static_cast<bool>(emitted));
  EXPECT_NE(emitted->symbol.find("_par_"), std::string::npos);
  std::vector<GemmRange> parts = partitionGemm(desc, *config, 2, 0);
  ASSERT_EQ(parts.size(), 2u);
  QM_ASSERT_EXPECTED(
      good, validateGemmIsolated(desc, host, *emitted,
                                 IsolatedValidationOptions::defaults(), parts));
  EXPECT_TRUE(good.passed) << good.failure;
  // Dropping a part leaves part of C uncomputed: caught.
  QM_ASSERT_EXPECTED(bad,
                     validateGemmIsolated(desc, host, *emitted,
                                          IsolatedValidationOptions::defaults(),
                                          {parts[0]}));
  EXPECT_FALSE(bad.passed);
}

} // namespace
