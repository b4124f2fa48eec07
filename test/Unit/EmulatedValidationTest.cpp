//===- EmulatedValidationTest.cpp - Kernels for other architectures -------===//
//
// The host side of cross validation: NEON and RVV kernels from the
// emitters, assembled with LLVM MC for their triples, run and checked in
// the cross runner under qemu-user. Skipped, with the reason, where the
// cross runner or qemu is missing.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Runtime/EmulatedValidation.h"
#include "ErrorHelpers.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include <gtest/gtest.h>

using namespace qimeng;

namespace {

Target targetOf(llvm::StringRef spec) {
  auto t = Target::parse(spec);
  EXPECT_TRUE(static_cast<bool>(t)) << spec.str();
  if (!t) {
    llvm::consumeError(t.takeError());
    return Target();
  }
  return *t;
}

/// Why emulated runs cannot happen here, or "".
std::string missingTools(const Target &target) {
  auto emulation = target.emulation();
  if (!emulation) {
    llvm::consumeError(emulation.takeError());
    return "no emulator";
  }
  if (!llvm::sys::findProgramByName(emulation->program))
    return emulation->program + " not installed (scripts/setup.sh)";
  std::string runner = EmulatedValidationOptions::defaults().runnerDir +
                       "/qimeng-cross-runner-" + target.archName();
  if (!llvm::sys::fs::can_execute(runner))
    return runner + " not built (no " + target.archName() +
           "-linux-gnu-g++; scripts/setup.sh)";
  return "";
}

GemmDesc runtimeLdGemm(int64_t m, int64_t n, int64_t k) {
  GemmDesc d = GemmDesc::packed(m, n, k, false, false);
  d.runtimeLd = true;
  return d;
}

struct CrossCase {
  const char *target;
  const char *name;
};

class EmulatedValidationTest : public ::testing::TestWithParam<CrossCase> {};

TEST_P(EmulatedValidationTest, ModelKernelsPassUnderEmulation) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                         {19, 23, 13},
                         {64, 64, 64},
                         {37, 100, 7}}) {
    GemmDesc desc = runtimeLdGemm(m, n, k);
    QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(desc), target));
    EXPECT_EQ(config.isa, target.bestIsa());
    QM_ASSERT_EXPECTED(
        kernel,
        emitGemmKernel(desc, config, EmitterOptions::defaults(), "", &target));
    EXPECT_TRUE(kernel.runtimeLeadingDims);
    QM_ASSERT_EXPECTED(run, validateGemmUnderEmulation(desc, target, kernel));
    EXPECT_TRUE(run.report.passed) << desc.str() << ": " << run.report.failure;
    EXPECT_LE(run.report.maxRelError, gemmErrorBound(k));
  }
}

TEST_P(EmulatedValidationTest, BrokenKernelsAreCaught) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  GemmDesc desc = runtimeLdGemm(19, 23, 13);
  QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(desc), target));
  for (auto [fault, expected] :
       {std::pair<const char *, const char *>{"drop-k", "exact, bit for bit"},
        {"write-past-edge", "leading-dimension gap overwritten"},
        {"segfault", "failed: "}}) {
    QM_ASSERT_EXPECTED(kernel,
                       emitGemmKernel(desc, config, EmitterOptions::defaults(),
                                      fault, &target));
    QM_ASSERT_EXPECTED(run, validateGemmUnderEmulation(desc, target, kernel));
    EXPECT_FALSE(run.report.passed) << fault;
    EXPECT_NE(run.report.failure.find(expected), std::string::npos)
        << fault << ": " << run.report.failure;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Targets, EmulatedValidationTest,
    ::testing::Values(
        CrossCase{"aarch64-linux-gnu:neoverse-n1:+neon", "NeonNeoverseN1"},
        CrossCase{"aarch64-linux-gnu:cortex-a76:+neon", "NeonCortexA76"},
        CrossCase{"aarch64-linux-gnu::+neon,+sve", "Sve128"},
        CrossCase{"aarch64-linux-gnu:neoverse-v1:+neon,+sve", "Sve256"},
        CrossCase{"aarch64-linux-gnu:a64fx:+neon,+sve", "Sve512"},
        CrossCase{"riscv64-linux-gnu:generic:+m,+a,+f,+d,+c,+v", "Rvv128"},
        CrossCase{"riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v",
                  "RvvSpacemitX60"},
        CrossCase{"riscv64-linux-gnu:generic:+m,+a,+f,+d,+c,+v:vlen=512",
                  "Rvv512"}),
    [](const ::testing::TestParamInfo<CrossCase> &info) {
      return std::string(info.param.name);
    });

TEST(KernelCodeTest, CodeIsTheTextSectionAndTheSymbolsOffset) {
  Target target = targetOf("aarch64-linux-gnu:neoverse-n1:+neon");
  GemmDesc desc = runtimeLdGemm(4, 4, 4);
  QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(desc), target));
  QM_ASSERT_EXPECTED(
      kernel,
      emitGemmKernel(desc, config, EmitterOptions::defaults(), "", &target));
  QM_ASSERT_EXPECTED(code, kernelCode(kernel, target));
  EXPECT_EQ(code.entry, 0u);
  // AArch64 instructions are 4 bytes; the function ends with ret.
  ASSERT_EQ(code.bytes.size() % 4, 0u);
  EXPECT_EQ(code.bytes.substr(code.bytes.size() - 4),
            std::string("\xc0\x03\x5f\xd6", 4));
}

TEST(KernelCodeTest, ImmediateKernelsAreRefused) {
  Target target = targetOf("aarch64-linux-gnu:neoverse-n1:+neon");
  EmittedKernel kernel;
  kernel.symbol = "qm_test";
  kernel.runtimeLeadingDims = false;
  QM_ASSERT_FAILS_WITH(
      validateGemmUnderEmulation(runtimeLdGemm(4, 4, 4), target, kernel)
          .takeError(),
      "holds its leading dimensions as immediates");
}

} // namespace
