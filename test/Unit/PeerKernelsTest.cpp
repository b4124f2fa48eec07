//===- PeerKernelsTest.cpp - Which kernels each baseline should run -------===//
#include "qimeng/Runtime/PeerKernels.h"
#include <gtest/gtest.h>

using namespace qimeng;

static Target cpu(const char *spec) {
  auto t = Target::parse(spec);
  EXPECT_TRUE(bool(t)) << (t ? "" : llvm::toString(t.takeError()));
  return t ? *t : Target();
}

static const char *kAvx512 = "+avx,+avx2,+fma,+avx512f,+avx512bw,+avx512dq,"
                             "+avx512vl";

TEST(PeerKernelsTest, OpenBlasCoreFromFeatures) {
  // Emerald Rapids: AVX-512 with BF16, which OpenBLAS 0.3.21 calls Prescott.
  std::string emr = std::string("x86_64-unknown-linux-gnu:emeraldrapids:") +
                    kAvx512 + ",+avx512bf16,+amx-tile";
  EXPECT_EQ(bestOpenBlasCore(cpu(emr.c_str())), "Cooperlake");
  std::string skx =
      std::string("x86_64-unknown-linux-gnu:skylake-avx512:") + kAvx512;
  EXPECT_EQ(bestOpenBlasCore(cpu(skx.c_str())), "SkylakeX");
  // avx512f alone (Knights Landing) lacks the SkylakeX kernels' bw/dq/vl.
  EXPECT_EQ(bestOpenBlasCore(cpu("x86_64-unknown-linux-gnu:knl:+avx,+avx2,"
                                 "+fma,+avx512f")),
            "Haswell");
  EXPECT_EQ(
      bestOpenBlasCore(cpu("x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma")),
      "Zen");
  EXPECT_EQ(bestOpenBlasCore(cpu("x86_64-unknown-linux-gnu:sandybridge:+avx")),
            "Sandybridge");
  EXPECT_EQ(bestOpenBlasCore(cpu("x86_64-unknown-linux-gnu:core2:+sse4.1")),
            "");
  EXPECT_EQ(bestOpenBlasCore(cpu("aarch64-unknown-linux-gnu:neoverse-n1:"
                                 "+neon")),
            "");
}

TEST(PeerKernelsTest, BlisArchFromFeatures) {
  std::string zen4 = std::string("x86_64-unknown-linux-gnu:znver4:") + kAvx512 +
                     ",+avx512bf16";
  // BLIS 0.9 runs zen3 (AVX2) kernels on Zen 4; its skx ones run there.
  EXPECT_EQ(bestBlisArch(cpu(zen4.c_str())), "skx");
  EXPECT_EQ(bestBlisArch(cpu("x86_64-unknown-linux-gnu:znver3:+avx,+avx2,"
                             "+fma")),
            "zen3");
  EXPECT_EQ(bestBlisArch(cpu("x86_64-unknown-linux-gnu:haswell:+avx,+avx2,"
                             "+fma")),
            "haswell");
  EXPECT_EQ(bestBlisArch(cpu("x86_64-unknown-linux-gnu:core2:+sse4.1")), "");
}

TEST(PeerKernelsTest, RanksOrderTheKernels) {
  EXPECT_EQ(openBlasCoreRank("Prescott"), 0);
  EXPECT_LT(openBlasCoreRank("Sandybridge"), openBlasCoreRank("Haswell"));
  EXPECT_EQ(openBlasCoreRank("Haswell"), openBlasCoreRank("Zen"));
  EXPECT_LT(openBlasCoreRank("Zen"), openBlasCoreRank("SkylakeX"));
  EXPECT_LT(openBlasCoreRank("SkylakeX"), openBlasCoreRank("Cooperlake"));
  EXPECT_LT(openBlasCoreRank("Cooperlake"), openBlasCoreRank("SapphireRapids"));
  // openblas_get_corename() spells them in lower case.
  EXPECT_EQ(openBlasCoreRank("cooperlake"), openBlasCoreRank("Cooperlake"));
  EXPECT_EQ(blisArchRank("generic"), 0);
  EXPECT_LT(blisArchRank("sandybridge"), blisArchRank("zen3"));
  EXPECT_EQ(blisArchRank("zen3"), blisArchRank("haswell"));
  EXPECT_LT(blisArchRank("zen3"), blisArchRank("skx"));
}

TEST(PeerKernelsTest, ForceOnlyWhatIsBetter) {
  EXPECT_EQ(kernelsToForce("Prescott", "Cooperlake", openBlasCoreRank),
            "Cooperlake");
  EXPECT_EQ(kernelsToForce("Haswell", "SkylakeX", openBlasCoreRank),
            "SkylakeX");
  // The library's own choice is as good, or better: keep it.
  EXPECT_EQ(kernelsToForce("Cooperlake", "Cooperlake", openBlasCoreRank), "");
  EXPECT_EQ(kernelsToForce("Cooperlake", "SkylakeX", openBlasCoreRank), "");
  EXPECT_EQ(kernelsToForce("SapphireRapids", "Cooperlake", openBlasCoreRank),
            "");
  EXPECT_EQ(kernelsToForce("Zen", "Haswell", openBlasCoreRank), "");
  EXPECT_EQ(kernelsToForce("zen3", "skx", blisArchRank), "skx");
  EXPECT_EQ(kernelsToForce("haswell", "skx", blisArchRank), "skx");
  EXPECT_EQ(kernelsToForce("skx", "skx", blisArchRank), "");
  // No opinion about the CPU: nothing is forced.
  EXPECT_EQ(kernelsToForce("Prescott", "", openBlasCoreRank), "");
}

TEST(PeerKernelsTest, SelectionSaysWhatRanAndWhy) {
  OpenBlasSelection forced;
  forced.running = forced.requested = forced.best = "Cooperlake";
  forced.detected = "Prescott";
  EXPECT_TRUE(forced.confirmed());
  EXPECT_EQ(forced.describe(),
            "core Cooperlake (forced with OPENBLAS_CORETYPE=Cooperlake: "
            "OpenBLAS picks Prescott on this CPU, whose features allow "
            "Cooperlake)");
  OpenBlasSelection ignored = forced;
  ignored.running = "Prescott";
  EXPECT_FALSE(ignored.confirmed());
  EXPECT_EQ(ignored.describe(),
            "core Prescott (asked for Cooperlake with OPENBLAS_CORETYPE, but "
            "this OpenBLAS ran Prescott; it picks Prescott by itself)");
  OpenBlasSelection own;
  own.running = own.detected = "Prescott";
  own.best = "Cooperlake";
  own.asDetected = true;
  own.machineEnv = "OPENBLAS_CORETYPE=Haswell";
  EXPECT_EQ(own.describe(),
            "core Prescott (its own choice, kept by --baseline-as-detected; "
            "this CPU's features allow Cooperlake); the machine's "
            "OPENBLAS_CORETYPE=Haswell unset for this run");
}

TEST(PeerKernelsTest, FlagsAreFoundBeforeParsing) {
  const char *args[] = {"tool", "--shapes", "64x64x64",
                        "--baseline-as-detected"};
  char **argv = const_cast<char **>(args);
  EXPECT_TRUE(hasFlag(4, argv, "baseline-as-detected"));
  EXPECT_FALSE(hasFlag(4, argv, "json"));
  // The program's name is not a flag.
  EXPECT_FALSE(hasFlag(1, argv, "tool"));
}
