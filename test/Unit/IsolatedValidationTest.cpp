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
#include <gtest/gtest.h>

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
