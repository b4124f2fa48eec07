//===- CrossValidationTest.cpp - Kernels for other architectures -------===//
//
// The host side of cross validation: NEON and RVV kernels from the
// emitters, assembled with LLVM MC for their triples, run and checked in
// the cross runner under qemu-user. Skipped, with the reason, where the
// cross runner or qemu is missing.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Runtime/CrossValidation.h"
#include "ErrorHelpers.h"
#include "TestTargets.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <csignal>
#include <gtest/gtest.h>
#include <thread>
#include <unistd.h>

using namespace qimeng;

namespace {

/// Why emulated runs cannot happen here, or "".
std::string missingTools(const Target &target) {
  auto emulation = target.emulation();
  if (!emulation) {
    llvm::consumeError(emulation.takeError());
    return "no emulator";
  }
  if (!llvm::sys::findProgramByName(emulation->program))
    return emulation->program + " not installed (scripts/setup.sh)";
  std::string runner = CrossValidationOptions::defaults().runnerDir +
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

class CrossValidationTest : public ::testing::TestWithParam<CrossCase> {};

TEST_P(CrossValidationTest, ModelKernelsPassUnderEmulation) {
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
    QM_ASSERT_EXPECTED(run, validateGemmCross(desc, target, kernel));
    EXPECT_TRUE(run.report.passed) << desc.str() << ": " << run.report.failure;
    EXPECT_LE(run.report.maxRelError, gemmErrorBound(k));
    // The aarch64 runner's second opinion where arm64 OpenBLAS is
    // installed: it ran, on random floats it rounds too, within the bound.
    if (k > 1 && target.archName() == "aarch64" &&
        llvm::sys::fs::exists(
            "/usr/lib/aarch64-linux-gnu/openblas-pthread/libopenblas.a")) {
      EXPECT_GT(run.report.openBlasMaxRelError, 0) << desc.str();
      EXPECT_LE(run.report.openBlasMaxRelError, gemmErrorBound(k));
    }
  }
}

TEST_P(CrossValidationTest, BrokenKernelsAreCaught) {
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
    QM_ASSERT_EXPECTED(run, validateGemmCross(desc, target, kernel));
    EXPECT_FALSE(run.report.passed) << fault;
    EXPECT_NE(run.report.failure.find(expected), std::string::npos)
        << fault << ": " << run.report.failure;
  }
}

TEST_P(CrossValidationTest, AKernelWithoutTheEpilogueFailsItsCheck) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  GemmDesc plain = runtimeLdGemm(19, 23, 13);
  GemmDesc withBias = plain;
  withBias.bias = GemmBias::Rows;
  withBias.activation.relu = true;
  QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(plain), target));
  ASSERT_TRUE(isaAppliesEpilogues(target.bestIsa()));
  QM_ASSERT_EXPECTED(
      kernel,
      emitGemmKernel(plain, config, EmitterOptions::defaults(), "", &target));
  QM_ASSERT_EXPECTED(run, validateGemmCross(withBias, target, kernel));
  EXPECT_FALSE(run.report.passed);
  QM_ASSERT_EXPECTED(fused,
                     emitGemmKernel(withBias, config,
                                    EmitterOptions::defaults(), "", &target));
  QM_ASSERT_EXPECTED(good, validateGemmCross(withBias, target, fused));
  EXPECT_TRUE(good.report.passed) << good.report.failure;
}

TEST_P(CrossValidationTest, AWrongNanRuleFailsItsCheck) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  // relu that keeps a NaN (FMAX) and torch's clamp that makes it the floor
  // (FMAXNM) agree on every number: the check's NaN in A's last row tells
  // them apart, each way; each passes as itself.
  GemmDesc keeps = runtimeLdGemm(19, 23, 13);
  keeps.activation.relu = true;
  keeps.activation.bound = 6.0f;
  GemmDesc floors = keeps;
  floors.activation.nanToFloor = true;
  QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(keeps), target));
  for (auto [built, claimed] : {std::pair(keeps, floors), {floors, keeps}}) {
    QM_ASSERT_EXPECTED(
        kernel,
        emitGemmKernel(built, config, EmitterOptions::defaults(), "", &target));
    QM_ASSERT_EXPECTED(right, validateGemmCross(built, target, kernel));
    EXPECT_TRUE(right.report.passed) << right.report.failure;
    QM_ASSERT_EXPECTED(wrong, validateGemmCross(claimed, target, kernel));
    EXPECT_FALSE(wrong.report.passed) << claimed.str();
    EXPECT_NE(wrong.report.failure.find("a NaN input's result"),
              std::string::npos)
        << wrong.report.failure;
  }
}

TEST_P(CrossValidationTest, SmoothActivationsPassAndAWrongOneIsCaught) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  ASSERT_TRUE(isaAppliesSmoothActivations(target.bestIsa()));
  using Smooth = Activation::Smooth;
  // The model's block, a bias per column, each activation: validated
  // within its allowance (and its NaN rule: a NaN input stays NaN).
  for (Smooth s : Activation::kSmoothActivations) {
    GemmDesc desc = runtimeLdGemm(19, 23, 13);
    desc.bias = GemmBias::Columns;
    desc.activation.smooth = s;
    QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(desc), target));
    QM_ASSERT_EXPECTED(
        kernel,
        emitGemmKernel(desc, config, EmitterOptions::defaults(), "", &target));
    QM_ASSERT_EXPECTED(run, validateGemmCross(desc, target, kernel));
    EXPECT_TRUE(run.report.passed)
        << Activation::smoothName(s) << ": " << run.report.failure;
    // gelu_tanh's kernel is not gelu_erf's (at most 5e-4 apart).
    if (s == Smooth::GeluTanh) {
      GemmDesc claimed = desc;
      claimed.activation.smooth = Smooth::GeluErf;
      QM_ASSERT_EXPECTED(wrong, validateGemmCross(claimed, target, kernel));
      EXPECT_FALSE(wrong.report.passed);
    }
  }
}

TEST_P(CrossValidationTest, TransposedAPasses) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  // A stored K x M (a backward pass's A^T * B), with and without B^T.
  for (bool transB : {false, true}) {
    GemmDesc desc = GemmDesc::packed(21, 30, 17, /*transA=*/true, transB);
    desc.runtimeLd = true;
    QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(desc), target));
    QM_ASSERT_EXPECTED(
        kernel,
        emitGemmKernel(desc, config, EmitterOptions::defaults(), "", &target));
    QM_ASSERT_EXPECTED(run, validateGemmCross(desc, target, kernel));
    EXPECT_TRUE(run.report.passed) << desc.str() << ": " << run.report.failure;
  }
}

/// The parallel form on two and three threads: the kernel computes the
/// parts partitionGemm gives (N split, and M split), one call each, and
/// together they are C; the single-call kernel run as the same parts adds
/// A*B once a part, which the check catches.
TEST_P(CrossValidationTest, ParallelKernelsComputeTheirParts) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  GemmDesc desc = runtimeLdGemm(45, 100, 60);
  QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(desc), target));
  QM_ASSERT_EXPECTED(
      single,
      emitGemmKernel(desc, config, EmitterOptions::defaults(), "", &target));
  for (SplitAxis split : {SplitAxis::N, SplitAxis::M}) {
    GemmConfig parallel = config;
    parallel.split = split;
    parallel.threads = split == SplitAxis::N ? 2 : 3;
    std::vector<GemmRange> parts =
        partitionGemm(desc, parallel, parallel.threads, 0);
    ASSERT_EQ(parts.size(), size_t(parallel.threads));
    QM_ASSERT_EXPECTED(kernel,
                       emitGemmKernel(desc, parallel,
                                      EmitterOptions::defaults(), "", &target));
    EXPECT_NE(kernel.symbol.find("_par_"), std::string::npos) << kernel.symbol;
    QM_ASSERT_EXPECTED(run, validateGemmCross(desc, target, kernel, parts));
    EXPECT_TRUE(run.report.passed)
        << kernel.symbol << ": " << run.report.failure;
    QM_ASSERT_EXPECTED(wrong, validateGemmCross(desc, target, single, parts));
    EXPECT_FALSE(wrong.report.passed);
  }
}

/// The model's kernel for `desc` takes the run-time size `runTime` and
/// passes validation (which checks it at several values of that size);
/// the same kernel dropping a k is caught.
void passesAndCatchesDropK(const GemmDesc &desc, const Target &target,
                           bool EmittedKernel::*runTime) {
  QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(desc), target));
  QM_ASSERT_EXPECTED(
      kernel,
      emitGemmKernel(desc, config, EmitterOptions::defaults(), "", &target));
  EXPECT_TRUE(kernel.*runTime);
  QM_ASSERT_EXPECTED(run, validateGemmCross(desc, target, kernel));
  EXPECT_TRUE(run.report.passed) << run.report.failure;
  QM_ASSERT_EXPECTED(broken,
                     emitGemmKernel(desc, config, EmitterOptions::defaults(),
                                    "drop-k", &target));
  QM_ASSERT_EXPECTED(caught, validateGemmCross(desc, target, broken));
  EXPECT_FALSE(caught.report.passed);
}

TEST_P(CrossValidationTest, RunTimeMAndTransposedBPass) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  // torch's linear layer over a dynamic batch: B stored N x K, M at run
  // time (validated at 1, 8, 24 and 37 rows).
  GemmDesc desc = GemmDesc::packed(24, 37, 70, false, true);
  desc.runtimeLd = true;
  desc.dynamicM = true;
  desc.overwrite = true;
  // With its bias, relu and relu6's bound; then hardtanh's clamp.
  desc.bias = GemmBias::Columns;
  desc.activation.relu = true;
  desc.activation.bound = 6.0f;
  passesAndCatchesDropK(desc, target, &EmittedKernel::runtimeM);
  desc.activation.floor = -1.0f;
  desc.activation.bound = 1.0f;
  passesAndCatchesDropK(desc, target, &EmittedKernel::runtimeM);
  // torch-mlir's clamp: FMAXNM, vfmax.vf as they are.
  desc.activation.nanToFloor = true;
  passesAndCatchesDropK(desc, target, &EmittedKernel::runtimeM);
  // Leaky relu, its slope below 1 (FMAX, vfmax.vv of x and s x) and above
  // (FMIN, vfmin.vv).
  for (float slope : {0.01f, 2.5f}) {
    desc.activation = Activation{};
    desc.activation.leakySlope = slope;
    passesAndCatchesDropK(desc, target, &EmittedKernel::runtimeM);
  }
}

TEST_P(CrossValidationTest, RunTimeKAndMPass) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  // Attention's probabilities times V over a dynamic sequence: M and K at
  // run time (validated at K = 0, 1, 12, 37 and 56, M at 1, 8, 24 and 37),
  // C accumulated; a kernel that drops a k is caught.
  GemmDesc desc = GemmDesc::packed(24, 21, 37, false, false);
  desc.runtimeLd = true;
  desc.dynamicM = true;
  desc.dynamicK = true;
  passesAndCatchesDropK(desc, target, &EmittedKernel::runtimeK);
}

TEST_P(CrossValidationTest, RunTimeMAndNPassWithBTransposed) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  // Attention's scores over a dynamic sequence: Q times K^T (B stored
  // N x K, packed a panel at a time), M and N at run time (validated at
  // N = 1, 13, 40 and 61: every edge kind a call can have), with a column
  // bias; a kernel that drops a k is caught.
  GemmDesc desc = GemmDesc::packed(24, 40, 19, false, true);
  desc.runtimeLd = true;
  desc.dynamicM = true;
  desc.dynamicN = true;
  desc.bias = GemmBias::Columns;
  passesAndCatchesDropK(desc, target, &EmittedKernel::runtimeN);
}

TEST_P(CrossValidationTest, ConvolutionsPassAndBrokenOnesAreCaught) {
  Target target = targetOf(GetParam().target);
  if (std::string why = missingTools(target); !why.empty())
    GTEST_SKIP() << why;
  // TOSA's form (FHWC, stride and dilation 2) and StableHLO's (HWCF) on a
  // padded input view, through the model's config and the validator.
  ConvDesc fhwc =
      ConvDesc::dense(ConvLayout::NhwcFhwc, 1, 11, 11, 5, 7, 3, 3, 2, 2, 2, 2);
  ConvDesc hwcf =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 2, 8, 8, 3, 6, 3, 3, 1, 1);
  hwcf.inputStrides[2] = 4;
  hwcf.inputStrides[1] = 8 * 4 + 1;
  hwcf.inputStrides[0] = 8 * 33 + 2;
  hwcf.overwrite = true;
  // torch's (NCHW, a batch of 2) on a padded view: B gathered per panel.
  ConvDesc nchw =
      ConvDesc::dense(ConvLayout::NchwFchw, 2, 10, 9, 4, 11, 3, 3, 1, 1);
  nchw.inputStrides[2] = 9 + 2;
  nchw.inputStrides[1] = 10 * 11 + 3;
  nchw.inputStrides[0] = 4 * 113 + 5;
  for (const ConvDesc &desc : {fhwc, hwcf, nchw}) {
    KernelProblem problem(desc);
    QM_ASSERT_EXPECTED(config, chooseKernelConfig(problem, target));
    QM_ASSERT_EXPECTED(
        kernel,
        emitKernel(problem, config, EmitterOptions::defaults(), "", &target));
    EXPECT_FALSE(kernel.runtimeLeadingDims);
    QM_ASSERT_EXPECTED(run, validateConvCross(desc, target, kernel));
    EXPECT_TRUE(run.report.passed) << desc.str() << ": " << run.report.failure;
    QM_ASSERT_EXPECTED(broken,
                       emitKernel(problem, config, EmitterOptions::defaults(),
                                  "drop-k", &target));
    QM_ASSERT_EXPECTED(caught, validateConvCross(desc, target, broken));
    EXPECT_FALSE(caught.report.passed) << desc.str();
    EXPECT_NE(caught.report.failure.find("exact, bit for bit"),
              std::string::npos)
        << caught.report.failure;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Targets, CrossValidationTest,
    ::testing::Values(
        CrossCase{"aarch64-linux-gnu:neoverse-n1:+neon", "NeonNeoverseN1"},
        CrossCase{"aarch64-linux-gnu:cortex-a76:+neon", "NeonCortexA76"},
        CrossCase{"aarch64-linux-gnu::+neon,+sve", "Sve128"},
        CrossCase{"aarch64-linux-gnu:neoverse-v1:+neon,+sve", "Sve256"},
        CrossCase{"aarch64-linux-gnu:a64fx:+neon,+sve", "Sve512"},
        CrossCase{"aarch64-linux-gnu::+neon,+sve:vlen=scalable", "SveScalable"},
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
      validateGemmCross(runtimeLdGemm(4, 4, 4), target, kernel).takeError(),
      "holds its leading dimensions as immediates");
}

} // namespace

namespace {

/// An sshd on loopback standing in for a board: its own host and user keys
/// in a temporary directory; the "board" runs the cross runner under qemu.
class LoopbackBoard {
public:
  LoopbackBoard() {
    if (geteuid() != 0) {
      why = "starting an sshd on loopback needs root";
      return;
    }
    auto sshd = llvm::sys::findProgramByName("sshd", {"/usr/sbin"});
    auto keygen = llvm::sys::findProgramByName("ssh-keygen");
    if (!sshd || !keygen || !llvm::sys::findProgramByName("ssh")) {
      why = "needs openssh-server and openssh-client (scripts/setup.sh)";
      return;
    }
    if (llvm::sys::fs::createUniqueDirectory("qimeng-board", dir)) {
      why = "cannot create a directory";
      return;
    }
    for (const char *key : {"hostkey", "userkey"}) {
      std::string path = (dir + "/" + key).str();
      auto made = runSubprocess(
          *keygen, {*keygen, "-q", "-t", "ed25519", "-N", "", "-f", path}, "");
      if (!made || !made->succeeded()) {
        if (!made)
          llvm::consumeError(made.takeError());
        why = "ssh-keygen failed";
        return;
      }
    }
    port = 20000 + int(getpid() % 20000);
    std::string config = (dir + "/sshd_config").str();
    {
      std::error_code ec;
      llvm::raw_fd_ostream out(config, ec);
      out << "Port " << port << "\nListenAddress 127.0.0.1\nHostKey " << dir
          << "/hostkey\nAuthorizedKeysFile " << dir
          << "/userkey.pub\nPasswordAuthentication no\n"
             "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
          << "PidFile " << dir << "/sshd.pid\n";
    }
    llvm::sys::fs::create_directories("/run/sshd");
    std::string err;
    process = llvm::sys::ExecuteNoWait(*sshd, {*sshd, "-D", "-e", "-f", config},
                                       std::nullopt, {}, 0, &err);
    if (process.Pid == llvm::sys::ProcessInfo::InvalidPid) {
      why = "cannot start sshd: " + err;
      return;
    }
    // Wait until it accepts a login.
    for (int i = 0; i < 50; ++i) {
      auto probe = runSubprocess("ssh", sshCommand("true"), "");
      if (probe && probe->succeeded())
        return;
      if (!probe)
        llvm::consumeError(probe.takeError());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    why = "sshd on port " + std::to_string(port) + " never accepted a login";
  }
  ~LoopbackBoard() {
    if (process.Pid != llvm::sys::ProcessInfo::InvalidPid) {
      ::kill(process.Pid, SIGTERM);
      llvm::sys::Wait(process, std::nullopt);
    }
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }

  std::vector<std::string> sshOptions() const {
    return {"-p", std::to_string(port),
            "-i", (dir + "/userkey").str(),
            "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR"};
  }
  std::vector<std::string> sshCommand(const std::string &command) const {
    std::vector<std::string> args = {"ssh", "-o", "BatchMode=yes"};
    for (const std::string &o : sshOptions())
      args.push_back(o);
    args.push_back("root@127.0.0.1");
    args.push_back(command);
    return args;
  }

  std::string why; ///< empty when the board is up
  llvm::SmallString<128> dir;
  int port = 0;
  llvm::sys::ProcessInfo process;
};

TEST(RemoteBoardTest, TheRunnerRunsOverSshAndItsTimingsComeBack) {
  Target n1 = targetOf("aarch64-linux-gnu:neoverse-n1:+neon");
  if (std::string why = missingTools(n1); !why.empty())
    GTEST_SKIP() << why;
  LoopbackBoard board;
  if (!board.why.empty())
    GTEST_SKIP() << board.why;
  CrossValidationOptions options = CrossValidationOptions::defaults();
  options.remoteHost = "root@127.0.0.1";
  options.sshOptions = board.sshOptions();
  // The board is this machine: its "native" runner is the emulated one.
  options.remoteRunner = "qemu-aarch64 -cpu neoverse-n1 " + options.runnerDir +
                         "/qimeng-cross-runner-aarch64";
  options.timedRuns = 3;
  EXPECT_EQ(crossBackendName(n1, options), "ssh root@127.0.0.1");
  GemmDesc desc = runtimeLdGemm(19, 23, 13);
  QM_ASSERT_EXPECTED(config, chooseKernelConfig(KernelProblem(desc), n1));
  QM_ASSERT_EXPECTED(
      good, emitGemmKernel(desc, config, EmitterOptions::defaults(), "", &n1));
  QM_ASSERT_EXPECTED(run, validateGemmCross(desc, n1, good, {}, options));
  EXPECT_TRUE(run.report.passed) << run.report.failure;
  EXPECT_GT(run.medianNs, 0);
  QM_ASSERT_EXPECTED(
      broken,
      emitGemmKernel(desc, config, EmitterOptions::defaults(), "drop-k", &n1));
  QM_ASSERT_EXPECTED(bad, validateGemmCross(desc, n1, broken, {}, options));
  EXPECT_FALSE(bad.report.passed);
  EXPECT_NE(bad.report.failure.find("exact, bit for bit"), std::string::npos)
      << bad.report.failure;
  QM_ASSERT_EXPECTED(crash,
                     emitGemmKernel(desc, config, EmitterOptions::defaults(),
                                    "segfault", &n1));
  QM_ASSERT_EXPECTED(crashed, validateGemmCross(desc, n1, crash, {}, options));
  EXPECT_FALSE(crashed.report.passed);
  EXPECT_NE(crashed.report.failure.find("the kernel's run on ssh "
                                        "root@127.0.0.1 failed"),
            std::string::npos)
      << crashed.report.failure;
}

} // namespace
