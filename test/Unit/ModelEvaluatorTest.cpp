//===- ModelEvaluatorTest.cpp - The static model of cross targets ---------===//
//
// llvm-mca's prediction of the marked inner loop, and the model-driven
// ranking with its winner validated under qemu. Skipped, with the reason,
// where llvm-mca 22, qemu or the cross runner is missing.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Tune/ModelEvaluator.h"
#include "ErrorHelpers.h"
#include "TestTargets.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include <gtest/gtest.h>

using namespace qimeng;

namespace {

bool haveMca() {
  return llvm::sys::fs::can_execute(ModelOptions::defaults().llvmMca);
}

GemmDesc runtimeLdGemm(int64_t m, int64_t n, int64_t k) {
  GemmDesc d = GemmDesc::packed(m, n, k, false, false);
  d.runtimeLd = true;
  return d;
}

EmittedKernel emit(const GemmDesc &desc, GemmConfig config,
                   const Target &target) {
  auto kernel =
      emitGemmKernel(desc, config, EmitterOptions::defaults(), "", &target);
  EXPECT_TRUE(static_cast<bool>(kernel));
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return EmittedKernel();
  }
  return *kernel;
}

/// NEON's 7 x 12 block, K unrolled 4 times.
GemmConfig neon7x12() {
  GemmConfig c;
  c.isa = VectorIsa::Neon;
  c.mr = 7;
  c.nr = 12;
  c.kUnroll = 4;
  return c;
}

TEST(ModelEvaluatorTest, InnerLoopIsMarkedWithItsFlops) {
  Target n1 = targetOf("aarch64-linux-gnu:neoverse-n1:+neon");
  GemmConfig c = neon7x12();
  EmittedKernel k = emit(runtimeLdGemm(64, 64, 64), c, n1);
  EXPECT_EQ(k.innerLoopFlops, 2u * 7 * 12 * 4);
  QM_ASSERT_EXPECTED(loop, k.innerLoop());
  // One iteration: 7 x 3 x 4 fmla, no label, no back branch.
  size_t fmla = 0;
  for (size_t at = loop.find("fmla"); at != std::string::npos;
       at = loop.find("fmla", at + 1))
    ++fmla;
  EXPECT_EQ(fmla, 84u);
  // The K loop's back branch (cbnz on the counter) stays out.
  ASSERT_NE(k.text.find("cbnz"), std::string::npos);
  EXPECT_EQ(loop.find("cbnz"), std::string::npos);
  EXPECT_EQ(loop.find("b.ne"), std::string::npos);
  // K below the unroll: no full K loop, nothing to model.
  EmittedKernel small = emit(runtimeLdGemm(8, 12, 3), c, n1);
  EXPECT_EQ(small.innerLoopFlops, 0u);
  QM_ASSERT_FAILS_WITH(small.innerLoop().takeError(), "marks no inner loop");
}

TEST(ModelEvaluatorTest, DefaultBlocksReachNinetyPercentOfTheModelledPeak) {
  if (!haveMca())
    GTEST_SKIP() << "no llvm-mca 22 at " << ModelOptions::defaults().llvmMca;
  // Neoverse-V1: two 256-bit SVE FMA pipes, 32 flops a cycle.
  for (auto [spec, peak] :
       {std::pair<const char *, double>{"aarch64-linux-gnu:neoverse-n1:+neon",
                                        16},
        {"riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v", 16},
        {"aarch64-linux-gnu:neoverse-v1:+neon,+sve", 32}}) {
    Target target = targetOf(spec);
    GemmDesc desc = runtimeLdGemm(256, 256, 256);
    QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(desc), target));
    EmittedKernel k = emit(desc, config, target);
    QM_ASSERT_EXPECTED(p, predictInnerLoop(k, target));
    EXPECT_EQ(p.peakFlopsPerCycle, peak) << spec;
    EXPECT_GE(p.fractionOfPeak(), 0.9) << spec << " " << config.str();
    EXPECT_LE(p.fractionOfPeak(), 1.0) << spec;
  }
}

TEST(ModelEvaluatorTest, OpenBlasNeonKernelGoesThroughTheSameModel) {
  if (!haveMca())
    GTEST_SKIP() << "no llvm-mca 22 at " << ModelOptions::defaults().llvmMca;
  Target n1 = targetOf("aarch64-linux-gnu:neoverse-n1:+neon");
  auto peer = predictOpenBlasInnerLoop(n1);
  if (!peer) {
    std::string why = llvm::toString(peer.takeError());
    if (why.find("no aarch64 OpenBLAS") != std::string::npos)
      GTEST_SKIP() << why;
    FAIL() << why;
  }
  EXPECT_EQ(peer->symbol, "sgemm_kernel_NEOVERSEN1");
  // A K loop of OpenBLAS's microkernel: dozens of instructions, its FMAs
  // four lanes wide, a fraction of the modelled peak that is possible.
  EXPECT_GT(peer->instructions, 16u);
  EXPECT_GE(peer->prediction.flopsPerIteration, 8 * 16);
  EXPECT_GT(peer->prediction.fractionOfPeak(), 0.3);
  EXPECT_LE(peer->prediction.fractionOfPeak(), 1.001);
  // The Neoverse-V1's (NEON: four 128-bit pipes reach the same peak as
  // two 256-bit SVE ones) through the V1's model.
  Target v1 = targetOf("aarch64-linux-gnu:neoverse-v1:+neon,+sve");
  QM_ASSERT_EXPECTED(v1peer, predictOpenBlasInnerLoop(v1));
  EXPECT_EQ(v1peer.symbol, "sgemm_kernel_NEOVERSEV1");
  EXPECT_EQ(v1peer.prediction.mcaCpu, "neoverse-v1");
  EXPECT_EQ(v1peer.prediction.peakFlopsPerCycle, 32);
  EXPECT_GT(v1peer.prediction.fractionOfPeak(), 0.3);
  EXPECT_LE(v1peer.prediction.fractionOfPeak(), 1.001);
  // No peer for a core OpenBLAS has no kernel for here.
  Target k1 = targetOf("riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v");
  auto none = predictOpenBlasInnerLoop(k1);
  ASSERT_FALSE(static_cast<bool>(none));
  EXPECT_NE(llvm::toString(none.takeError()).find("no OpenBLAS kernel"),
            std::string::npos);
}

TEST(ModelEvaluatorTest, CoresWithoutAModelSayWhich) {
  Target a72 = targetOf("aarch64-linux-gnu:cortex-a72:+neon");
  EmittedKernel k = emit(runtimeLdGemm(64, 64, 64), neon7x12(), a72);
  QM_ASSERT_FAILS_WITH(predictInnerLoop(k, a72).takeError(),
                       "no performance model for CPU 'cortex-a72'");
}

TEST(ModelEvaluatorTest, RankingValidatesTheModelsChoice) {
  Target n1 = targetOf("aarch64-linux-gnu:neoverse-n1:+neon");
  auto emulation = n1.emulation();
  if (!haveMca() || !emulation ||
      !llvm::sys::findProgramByName(emulation->program) ||
      !llvm::sys::fs::can_execute(CrossValidationOptions::defaults().runnerDir +
                                  "/qimeng-cross-runner-aarch64")) {
    if (!emulation)
      llvm::consumeError(emulation.takeError());
    GTEST_SKIP() << "needs llvm-mca 22, qemu-aarch64 and the aarch64 cross "
                    "runner (scripts/setup.sh)";
  }
  GemmDesc desc = runtimeLdGemm(48, 72, 40);
  std::vector<std::string> lines;
  QM_ASSERT_EXPECTED(
      ranking, rankByModel(
                   desc, n1, EmitterOptions::defaults(),
                   CrossValidationOptions::defaults(), ModelOptions::defaults(),
                   [&](const std::string &l) { lines.push_back(l); },
                   /*validateBest=*/2));
  ASSERT_GE(ranking.predicted.size(), 10u);
  for (size_t i = 1; i < ranking.predicted.size(); ++i)
    EXPECT_LE(ranking.predicted[i - 1].predictedCycles,
              ranking.predicted[i].predictedCycles);
  ASSERT_EQ(ranking.validated.size(), 2u);
  EXPECT_TRUE(ranking.failures.empty());
  EXPECT_EQ(ranking.validated[0].kernel.symbol,
            ranking.predicted[0].kernel.symbol);
  EXPECT_FALSE(lines.empty());
}

} // namespace
