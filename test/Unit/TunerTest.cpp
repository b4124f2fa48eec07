//===- TunerTest.cpp - Tuning through qimeng-runner with bad candidates ---===//
//
// Candidates that segfault, hang, compute wrong results or write past C are
// rejected with their reasons; tuning completes with a validated winner and
// leaves no child process behind.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Tune/Tuner.h"
#include "ErrorHelpers.h"
#include "ScriptedChat.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Tune/RunnerEvaluator.h"
#include <cerrno>
#include <gtest/gtest.h>
#include <sys/wait.h>

using namespace qimeng;

namespace {

Target hostOrSkip() { return Target::detectHost(); }

/// A bf16 convolution's candidates are checked against the VDPBF16PS peak,
/// (or the tiles' with AMX), as a bf16 GEMM's are (the process's gauge for
/// that precision), not the FMA's, which they exceed: every candidate of a
/// bf16 conv was once rejected as a measurement error.
TEST(TunerTest, LowPrecisionConvolutionsGaugeTheirInstructions) {
  Target host = hostOrSkip();
  if (!host.hasFeature("avx512bf16") || !host.hasFeature("avx512bw"))
    GTEST_SKIP() << "host " << host.cpu << " lacks AVX512-BF16";
  ConvDesc conv = ConvDesc::dense(ConvLayout::NchwFchw, 1, 10, 20, 8, 16, 3, 3);
  conv.precision = GemmPrecision::Bf16;
  GemmDesc gemm = GemmDesc::packed(32, 32, 32);
  gemm.precision = GemmPrecision::Bf16;
  const auto runner = IsolatedValidationOptions::defaults();
  QM_ASSERT_EXPECTED(forConv,
                     RunnerEvaluator::create(conv, host,
                                             EmitterOptions::defaults(), runner,
                                             /*timedRuns=*/3));
  QM_ASSERT_EXPECTED(forGemm,
                     RunnerEvaluator::create(gemm, host,
                                             EmitterOptions::defaults(), runner,
                                             /*timedRuns=*/3));
  QM_ASSERT_EXPECTED(
      forF32, RunnerEvaluator::create(GemmDesc::packed(32, 32, 32), host,
                                      EmitterOptions::defaults(), runner, 3));
  // VDPBF16PS's peak (Zen 5: twice the FMA's flops), or the tiles' where
  // the host has AMX; not the FMA's.
  EXPECT_EQ(forConv->corePeakGflops(), forGemm->corePeakGflops());
  EXPECT_GT(forConv->corePeakGflops(), 1.5 * forF32->corePeakGflops());
  // And a candidate of the model's measures as a success.
  QM_ASSERT_EXPECTED(model, chooseKernelConfig(conv, host));
  Evaluation ev = forConv->evaluate(model);
  EXPECT_TRUE(ev.ok) << ev.failure;
}

TEST(TunerTest, BadCandidatesAreRejectedAndTuningCompletes) {
  Target host = hostOrSkip();
  if (host.bestIsa() == VectorIsa::None)
    GTEST_SKIP() << "host has no avx2/fma or avx512f";
  GemmDesc desc = GemmDesc::packed(29, 37, 23);
  GemmConfig base = *chooseGemmConfig(desc, host);
  IsolatedValidationOptions runner = IsolatedValidationOptions::defaults();
  runner.timeoutSeconds = 3;
  QM_ASSERT_EXPECTED(
      evaluator, RunnerEvaluator::create(desc, host, EmitterOptions::defaults(),
                                         runner, /*timedRuns=*/3));
  EXPECT_GT(evaluator->peakGflops(), 0);
  // Every second candidate after the first is broken, in four ways.
  int calls = 0;
  const char *faults[] = {"segfault", "hang", "drop-k", "write-past-edge"};
  evaluator->setFaultHook([&](const GemmConfig &) -> std::string {
    int i = calls++;
    if (i == 0 || i % 2 == 1)
      return "";
    return faults[(i / 2 - 1) % 4];
  });
  SearchSpace space = SearchSpace::forGemm(desc, host, base);
  ModelPriorProposer proposer;
  SearchBudget budget;
  budget.trials = 9;
  SearchOptions options;
  SearchHistory history = runMcts(space, *evaluator, proposer, budget, options);
  ASSERT_EQ(history.trials.size(), 9u);
  int failed = 0;
  bool sawCrash = false, sawHang = false, sawWrong = false, sawPast = false;
  for (const Trial &t : history.trials) {
    if (t.result.ok)
      continue;
    ++failed;
    EXPECT_EQ(t.reward, 0);
    const std::string &f = t.result.failure;
    sawCrash |= f.find("crashed") != std::string::npos;
    sawHang |= f.find("did not finish") != std::string::npos;
    sawWrong |= f.find("C(") != std::string::npos;
    sawPast |= f.find("guard") != std::string::npos ||
               f.find("gap") != std::string::npos ||
               f.find("C(") != std::string::npos;
  }
  EXPECT_EQ(failed, 4);
  EXPECT_TRUE(sawCrash && sawHang && sawWrong && sawPast);
  const Trial *best = history.best();
  ASSERT_NE(best, nullptr);
  EXPECT_TRUE(best->result.ok);
  EXPECT_NE(evaluator->kernelFor(best->config), nullptr);
  // No runner left behind: this process has no children at all.
  errno = 0;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

/// A request for `problem` from the model's config: `trials` trials of 3
/// timed runs each, the build's emitters and runner.
TuneRequest smallRequest(const KernelProblem &problem, const Target &host,
                         int trials) {
  TuneRequest request;
  request.problem = problem;
  request.target = host;
  auto base = chooseKernelConfig(problem, host);
  EXPECT_TRUE(static_cast<bool>(base)) << llvm::toString(base.takeError());
  if (base)
    request.base = *base;
  request.budget.trials = trials;
  request.timedRuns = 3;
  request.emitter = EmitterOptions::defaults();
  request.runner = IsolatedValidationOptions::defaults();
  return request;
}

TEST(TunerTest, TuneGemmMakesAStorableRecord) {
  Target host = hostOrSkip();
  if (host.bestIsa() == VectorIsa::None)
    GTEST_SKIP() << "host has no avx2/fma or avx512f";
  TuneRequest request = smallRequest(GemmDesc::packed(24, 40, 16), host, 3);
  std::vector<std::string> lines;
  request.progress = [&](const std::string &l) { lines.push_back(l); };
  QM_ASSERT_EXPECTED(result, tuneKernel(request));
  // One line per trial, then the finalists timed side by side in one
  // runner process: the model's config (the first trial) and the others.
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines.front().find("trial 1/3"), std::string::npos);
  EXPECT_NE(lines.back().find("3 finalists side by side (15 rounds, the "
                              "model's config first)"),
            std::string::npos)
      << lines.back();
  EXPECT_NE(lines.back().find(" wins at "), std::string::npos);
  EXPECT_TRUE(result.record.validated);
  EXPECT_EQ(result.record.trials, 3);
  EXPECT_GT(result.record.medianGflops, 0);
  EXPECT_EQ(result.record.kernelText, result.kernel.text);
  EXPECT_EQ(result.record.key.desc, request.problem.gemm());
  // The record survives its own JSON.
  QM_ASSERT_EXPECTED(back, recordFromJson(recordToJson(result.record)));
  EXPECT_EQ(back.config, result.record.config);

  // Without side-by-side rounds: each finalist measured again, the best
  // median wins.
  request.sideBySideRounds = 0;
  lines.clear();
  QM_ASSERT_EXPECTED(again, tuneKernel(request));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines.back().find("3 finalists measured again (6 runs)"),
            std::string::npos)
      << lines.back();
  EXPECT_NE(lines.back().find("wins with a median of"), std::string::npos);
  EXPECT_TRUE(again.record.validated);
}

TEST(TunerTest, TuneConvMakesARecordKeyedByTheConvolution) {
  Target host = hostOrSkip();
  if (host.bestIsa() == VectorIsa::None)
    GTEST_SKIP() << "host has no avx2/fma or avx512f";
  ConvDesc conv =
      ConvDesc::dense(ConvLayout::NchwFchw, 2, 11, 10, 3, 8, 3, 3, 2, 1);
  TuneRequest request = smallRequest(conv, host, 3);
  std::vector<std::string> lines;
  request.progress = [&](const std::string &l) { lines.push_back(l); };
  QM_ASSERT_EXPECTED(result, tuneKernel(request));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("tuning sconv2d sconv2d_nchw_fchw_n2_h11_w10"),
            std::string::npos)
      << lines.front();
  EXPECT_TRUE(result.record.validated);
  EXPECT_NE(result.record.symbol.find("qm_sconv2d_nchw_fchw"),
            std::string::npos);
  EXPECT_EQ(result.record.key.op, "sconv2d");
  ASSERT_TRUE(result.record.key.conv.has_value());
  EXPECT_EQ(*result.record.key.conv, conv);
  EXPECT_EQ(result.record.trials, 3);
  // nchw_fchw gathers B: no candidate reads it in place.
  for (const Trial &t : result.history.trials)
    EXPECT_EQ(t.config.packB, BPacking::Panels) << t.description;
  QM_ASSERT_EXPECTED(back, recordFromJson(recordToJson(result.record)));
  EXPECT_EQ(back.key, result.record.key);

  // An nhwc convolution: the model reads A in place and splits threads
  // along the pixels; with one thread every candidate is still tried.
  ConvDesc nhwc =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 10, 12, 16, 24, 3, 3);
  request.problem = nhwc;
  request.base = *chooseKernelConfig(nhwc, host);
  EXPECT_EQ(request.base.aLayout, ALayout::Direct);
  EXPECT_EQ(request.base.split, SplitAxis::M);
  QM_ASSERT_EXPECTED(direct, tuneKernel(request));
  EXPECT_EQ(direct.record.trials, 3);
  EXPECT_TRUE(direct.record.validated);
}

TEST(TunerTest, AnLlmProposesMovesAndAnUnreachableOneChangesNothing) {
  Target host = hostOrSkip();
  if (host.bestIsa() == VectorIsa::None)
    GTEST_SKIP() << "host has no avx2/fma or avx512f";
  TuneRequest request = smallRequest(GemmDesc::packed(24, 40, 16), host, 4);
  ChatConfig config = scriptedChatConfig(2);
  ScriptedChat good;
  good.replies.assign(4, "{\"candidates\": [\"ku=2\", \"kc=999\"]}");
  ChatClient client(config, good, [](double) {});
  request.llm = &client;
  QM_ASSERT_EXPECTED(result, tuneKernel(request));
  EXPECT_EQ(result.record.source, "llm-assisted");
  EXPECT_TRUE(result.record.validated);
  ASSERT_FALSE(result.llmRounds.empty());
  EXPECT_EQ(result.llmRounds[0].accepted.size(), 1u);
  ASSERT_EQ(result.llmRounds[0].rejected.size(), 1u);
  EXPECT_EQ(result.llmRounds[0].rejected[0], "kc=999: not a choice of kc");

  ScriptedChat down; // nothing to say: a refused connection each time
  down.whenEmpty = HttpOutcome::Failure::Connect;
  ChatClient unreachable(config, down, [](double) {});
  request.llm = &unreachable;
  QM_ASSERT_EXPECTED(offline, tuneKernel(request));
  EXPECT_TRUE(offline.record.validated);
  EXPECT_EQ(offline.record.trials, 4);
  ASSERT_FALSE(offline.llmRounds.empty());
  EXPECT_NE(offline.llmRounds[0].error.find("gave up after 2 attempts"),
            std::string::npos)
      << offline.llmRounds[0].error;
}

} // namespace
