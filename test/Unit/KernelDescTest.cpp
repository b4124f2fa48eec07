//===- KernelDescTest.cpp - GemmDesc, GemmConfig and the blocking model ---===//
#include "qimeng/Kernel/KernelDesc.h"
#include "ErrorHelpers.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/Partition.h"
#include "qimeng/Kernel/PrepackedB.h"
#include "qimeng/Kernel/Target.h"
#include <gtest/gtest.h>

using namespace qimeng;

namespace {

constexpr const char *kZnver3 = "x86_64-unknown-linux-gnu:znver3:+avx,+avx2,"
                                "+fma:l1d=32K,l2=512K,l3=32M,cores=8";
constexpr const char *kSkylakeAvx512 =
    "x86_64-unknown-linux-gnu:skylake-avx512:+avx,+avx2,+fma,+avx512f:"
    "l1d=32K,l2=1M,l3=16M,cores=4";

Target parseTarget(llvm::StringRef spec) {
  auto target = Target::parse(spec);
  if (!target) {
    ADD_FAILURE() << llvm::toString(target.takeError());
    return Target();
  }
  return *target;
}

//===----------------------------------------------------------------------===//
// GemmDesc
//===----------------------------------------------------------------------===//

TEST(GemmDescTest, PackedLeadingDimsNN) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  EXPECT_EQ(d.m, 7);
  EXPECT_EQ(d.n, 5);
  EXPECT_EQ(d.k, 3);
  EXPECT_FALSE(d.transA);
  EXPECT_FALSE(d.transB);
  EXPECT_EQ(d.lda, 3);
  EXPECT_EQ(d.ldb, 5);
  EXPECT_EQ(d.ldc, 5);
  QM_ASSERT_OK(d.verify());
}

TEST(GemmDescTest, PackedLeadingDimsTN) {
  GemmDesc d = GemmDesc::packed(7, 5, 3, /*transA=*/true, /*transB=*/false);
  EXPECT_TRUE(d.transA);
  EXPECT_FALSE(d.transB);
  EXPECT_EQ(d.lda, 7); // A stored K x M
  EXPECT_EQ(d.ldb, 5);
  EXPECT_EQ(d.ldc, 5);
  QM_ASSERT_OK(d.verify());
}

TEST(GemmDescTest, PackedLeadingDimsNT) {
  GemmDesc d = GemmDesc::packed(7, 5, 3, /*transA=*/false, /*transB=*/true);
  EXPECT_EQ(d.lda, 3);
  EXPECT_EQ(d.ldb, 3); // B stored N x K
  EXPECT_EQ(d.ldc, 5);
  QM_ASSERT_OK(d.verify());
}

TEST(GemmDescTest, PackedLeadingDimsTT) {
  GemmDesc d = GemmDesc::packed(7, 5, 3, /*transA=*/true, /*transB=*/true);
  EXPECT_EQ(d.lda, 7);
  EXPECT_EQ(d.ldb, 3);
  EXPECT_EQ(d.ldc, 5);
  QM_ASSERT_OK(d.verify());
}

TEST(GemmDescTest, StoredShapes) {
  GemmDesc nn = GemmDesc::packed(7, 5, 3);
  EXPECT_EQ(nn.aRows(), 7);
  EXPECT_EQ(nn.aCols(), 3);
  EXPECT_EQ(nn.bRows(), 3);
  EXPECT_EQ(nn.bCols(), 5);
  GemmDesc tt = GemmDesc::packed(7, 5, 3, true, true);
  EXPECT_EQ(tt.aRows(), 3);
  EXPECT_EQ(tt.aCols(), 7);
  EXPECT_EQ(tt.bRows(), 5);
  EXPECT_EQ(tt.bCols(), 3);
  EXPECT_DOUBLE_EQ(nn.flops(), 2.0 * 7 * 5 * 3);
}

TEST(GemmDescTest, SpansPacked) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  EXPECT_EQ(d.aSpan(), 7 * 3);
  EXPECT_EQ(d.bSpan(), 3 * 5);
  EXPECT_EQ(d.cSpan(), 7 * 5);
}

TEST(GemmDescTest, SpansDoNotPadTheLastRow) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.lda = 4;
  d.ldb = 8;
  d.ldc = 9;
  EXPECT_EQ(d.aSpan(), 6 * 4 + 3);
  EXPECT_EQ(d.bSpan(), 2 * 8 + 5);
  EXPECT_EQ(d.cSpan(), 6 * 9 + 5);

  GemmDesc t = GemmDesc::packed(7, 5, 3, true, true);
  t.lda = 10; // A stored 3 x 7
  t.ldb = 4;  // B stored 5 x 3
  EXPECT_EQ(t.aSpan(), 2 * 10 + 7);
  EXPECT_EQ(t.bSpan(), 4 * 4 + 3);
}

TEST(GemmDescTest, StrFormat) {
  EXPECT_EQ(GemmDesc::packed(7, 5, 3).str(),
            "sgemm_m7_n5_k3_lda3_ldb5_ldc5_nn");
  EXPECT_EQ(GemmDesc::packed(7, 5, 3, true, false).str(),
            "sgemm_m7_n5_k3_lda7_ldb5_ldc5_tn");
  EXPECT_EQ(GemmDesc::packed(7, 5, 3, false, true).str(),
            "sgemm_m7_n5_k3_lda3_ldb3_ldc5_nt");
  GemmDesc d = GemmDesc::packed(7, 5, 3, true, true);
  d.ldc = 12;
  EXPECT_EQ(d.str(), "sgemm_m7_n5_k3_lda7_ldb3_ldc12_tt");
  // relu's bound by its binary32 bits (6.0f is 0x40c00000).
  GemmDesc r = GemmDesc::packed(7, 5, 3);
  r.activation.relu = true;
  r.activation.bound = 6.0f;
  EXPECT_EQ(r.str(), "sgemm_m7_n5_k3_lda3_ldb5_ldc5_nn_relu_max40c00000");
  // hardtanh's floor -1 (0xbf800000) before its bound 1 (0x3f800000).
  r.activation.floor = -1.0f;
  r.activation.bound = 1.0f;
  EXPECT_EQ(r.str(),
            "sgemm_m7_n5_k3_lda3_ldb5_ldc5_nn_relu_minbf800000_max3f800000");
  // torch-mlir's clamp: a NaN becomes the floor.
  r.activation.nanToFloor = true;
  EXPECT_EQ(r.str(), "sgemm_m7_n5_k3_lda3_ldb5_ldc5_nn_relu_nf_minbf800000_"
                     "max3f800000");
  // Leaky relu by its slope's bits (0.01f is 0x3c23d70a).
  GemmDesc leaky = GemmDesc::packed(7, 5, 3);
  leaky.activation.leakySlope = 0.01f;
  EXPECT_EQ(leaky.str(), "sgemm_m7_n5_k3_lda3_ldb5_ldc5_nn_leaky3c23d70a");
  EXPECT_TRUE(leaky.hasEpilogue());
  EXPECT_FALSE(leaky == GemmDesc::packed(7, 5, 3));
}

TEST(GemmDescTest, VerifyChecksLeakyRelu) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.activation.leakySlope = 0.2f;
  EXPECT_FALSE(static_cast<bool>(d.verify()));
  d.activation.leakySlope = 3.0f; // the smaller of x and 3x
  EXPECT_FALSE(static_cast<bool>(d.verify()));
  for (float slope : {0.0f, -0.5f, 1.0f, INFINITY, NAN}) {
    d.activation.leakySlope = slope;
    QM_ASSERT_FAILS_WITH(d.verify(), "above 0 and not 1");
  }
  d.activation.leakySlope = 0.2f;
  d.activation.relu = true;
  QM_ASSERT_FAILS_WITH(d.verify(), "exclude each other");
  d.activation.relu = false;
  // The bf16 and f16 kernels take it too; the 8-bit ones no epilogue.
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::F16}) {
    d.precision = p;
    EXPECT_FALSE(static_cast<bool>(d.verify())) << precisionName(p).str();
  }
  d.precision = GemmPrecision::S8S8;
  QM_ASSERT_FAILS_WITH(d.verify(), "8-bit operands take no epilogue");
  // The reference: x > 0 ? x : slope * x, NaN kept.
  Activation a;
  a.leakySlope = 0.25f;
  EXPECT_EQ(a.apply(2.0), 2.0);
  EXPECT_EQ(a.apply(-2.0), -0.5);
  EXPECT_TRUE(std::isnan(a.apply(double(NAN))));
  EXPECT_EQ(a.apply(-INFINITY), -INFINITY);
}

TEST(GemmDescTest, SmoothActivations) {
  // By name in the key, floating-point only, alone; the reference in forms
  // without cancellation; the validators' allowance for the kernels' formulas.
  using Smooth = Activation::Smooth;
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.activation.smooth = Smooth::GeluErf;
  EXPECT_EQ(d.str(), "sgemm_m7_n5_k3_lda3_ldb5_ldc5_nn_gelu_erf");
  EXPECT_TRUE(d.hasEpilogue());
  EXPECT_FALSE(d.activation.exact());
  EXPECT_FALSE(static_cast<bool>(d.verify()));
  d.activation.relu = true;
  QM_ASSERT_FAILS_WITH(d.verify(), "exclude each other");
  d.activation.relu = false;
  d.precision = GemmPrecision::Bf16;
  EXPECT_FALSE(static_cast<bool>(d.verify()));
  d.precision = GemmPrecision::S8S8;
  QM_ASSERT_FAILS_WITH(d.verify(), "8-bit operands take no epilogue");
  for (Smooth s : Activation::kSmoothActivations)
    EXPECT_EQ(Activation::smoothNamed(Activation::smoothName(s)), s);
  EXPECT_FALSE(Activation::smoothNamed("gelu"));
  Activation a;
  a.smooth = Smooth::Sigmoid;
  EXPECT_DOUBLE_EQ(a.apply(0.0), 0.5);
  EXPECT_EQ(a.apply(-1000.0), 0.0);
  a.smooth = Smooth::Silu;
  EXPECT_NEAR(a.apply(2.0), 2.0 / (1.0 + std::exp(-2.0)), 1e-15);
  EXPECT_EQ(a.apply(-INFINITY), 0.0);
  a.smooth = Smooth::GeluErf;
  EXPECT_NEAR(a.apply(1.0), 0.8413447460685429, 1e-15);
  // -10: 0.5 x erfc(10 / sqrt(2)), which 1 + erf would round to 0.
  EXPECT_NEAR(a.apply(-10.0), -7.619853024160526e-23, 1e-36);
  a.smooth = Smooth::GeluTanh;
  EXPECT_NEAR(a.apply(1.0), 0.8411919906082768, 1e-15);
  EXPECT_TRUE(std::isnan(a.apply(double(NAN))));
  // The allowance: a few ulps of the result, |x| 1.5e-7 more for gelu_erf.
  EXPECT_NEAR(a.allowance(1.0, 0.84), 0.84 * (6 + 4 * 1.6670) * 0x1p-23, 1e-9);
  a.smooth = Smooth::GeluErf;
  EXPECT_GT(a.allowance(-3.0, -0.004), 4.5e-7);
  EXPECT_EQ(Activation{}.allowance(1.0, 1.0), 0.0);
  // hardswish: x relu6(x + 3) / 6; -inf * 0 is NaN, as the frontends'.
  a.smooth = Smooth::HardSwish;
  EXPECT_EQ(a.apply(1.0), 4.0 / 6.0);
  EXPECT_EQ(a.apply(-1.5), -1.5 * 1.5 / 6.0);
  EXPECT_EQ(a.apply(-4.0), -0.0);
  EXPECT_EQ(a.apply(10.0), 10.0);
  EXPECT_TRUE(std::isnan(a.apply(-INFINITY)));
  EXPECT_EQ(a.apply(INFINITY), INFINITY);
  EXPECT_EQ(a.errorGain(), 1.5);
  EXPECT_NEAR(a.allowance(-2.0, -1.0 / 3.0), (2.0 + 1.0) * 0x1p-23, 1e-15);
  a.smooth = Smooth::Tanh;
  EXPECT_EQ(a.apply(0.5), std::tanh(0.5));
  EXPECT_EQ(a.apply(-INFINITY), -1.0);
  EXPECT_EQ(a.errorGain(), 1.0);
  a.smooth = Smooth::Mish;
  EXPECT_EQ(a.apply(1.0), std::tanh(std::log1p(std::exp(1.0))));
  EXPECT_EQ(a.apply(INFINITY), INFINITY);
  EXPECT_EQ(a.apply(-INFINITY), 0.0);
  EXPECT_EQ(a.errorGain(), 1.13);
  // Where e^x is clamped its ratio is e^-87.34, 2^-126 rounded up.
  EXPECT_EQ(a.allowance(-100.0, 0.0), 100.0 * 0x1p-125);
  a.smooth = Smooth::Softplus;
  EXPECT_DOUBLE_EQ(a.apply(0.0), std::log(2.0));
  EXPECT_EQ(a.apply(100.0), 100.0);
  EXPECT_EQ(a.apply(INFINITY), INFINITY);
  EXPECT_EQ(a.apply(-INFINITY), 0.0);
  EXPECT_EQ(a.errorGain(), 1.0);
  // hardsigmoid: relu6(x + 3) / 6, NaN kept.
  a.smooth = Smooth::HardSigmoid;
  EXPECT_EQ(a.apply(0.0), 0.5);
  EXPECT_EQ(a.apply(1.5), 0.75);
  EXPECT_EQ(a.apply(-3.5), 0.0);
  EXPECT_EQ(a.apply(3.5), 1.0);
  EXPECT_EQ(a.apply(-INFINITY), 0.0);
  EXPECT_EQ(a.apply(INFINITY), 1.0);
  EXPECT_TRUE(std::isnan(a.apply(double(NAN))));
  EXPECT_EQ(a.errorGain(), 1.0);
  EXPECT_NEAR(a.allowance(-2.0, 1.0 / 6.0), (2.0 + 0.5) * 0x1p-23, 1e-15);
}

TEST(GemmDescTest, VerifyChecksReluBound) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.activation.bound = 6.0f;
  QM_ASSERT_FAILS_WITH(d.verify(), "needs relu");
  d.activation.relu = true;
  EXPECT_FALSE(static_cast<bool>(d.verify()));
  d.activation.bound = -1.0f;
  QM_ASSERT_FAILS_WITH(d.verify(), "above relu's floor 0");
  // A floor below the bound: hardtanh.
  d.activation.floor = -2.0f;
  EXPECT_FALSE(static_cast<bool>(d.verify()));
  d.activation.floor = -1.0f;
  QM_ASSERT_FAILS_WITH(d.verify(), "above relu's floor -1");
  d.activation.floor = 0.0f;
  QM_ASSERT_FAILS_WITH(d.verify(), "not 0");
  d.activation.floor = -2.0f;
  d.activation.relu = false;
  QM_ASSERT_FAILS_WITH(d.verify(), "needs relu");
  GemmDesc n = GemmDesc::packed(7, 5, 3);
  n.activation.nanToFloor = true;
  QM_ASSERT_FAILS_WITH(n.verify(), "needs relu");
}

TEST(GemmDescTest, Equality) {
  GemmDesc a = GemmDesc::packed(7, 5, 3);
  GemmDesc b = GemmDesc::packed(7, 5, 3);
  EXPECT_TRUE(a == b);
  b.ldc = 6;
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a == GemmDesc::packed(7, 5, 3, true, false));
}

TEST(GemmDescTest, VerifyRejectsZeroSizes) {
  QM_ASSERT_FAILS_WITH(GemmDesc::packed(0, 5, 3).verify(),
                       "invalid gemm shape 0x5x3: sizes must be >= 1");
  QM_ASSERT_FAILS_WITH(GemmDesc::packed(7, 0, 3).verify(),
                       "invalid gemm shape 7x0x3");
  QM_ASSERT_FAILS_WITH(GemmDesc::packed(7, 5, 0).verify(),
                       "invalid gemm shape 7x5x0");
  QM_ASSERT_FAILS_WITH(GemmDesc().verify(), "sizes must be >= 1");
}

TEST(GemmDescTest, VerifyRejectsNegativeSizes) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.k = -1;
  QM_ASSERT_FAILS_WITH(d.verify(), "sizes must be >= 1");
}

TEST(GemmDescTest, VerifyLdaTooSmall) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.lda = 2;
  QM_ASSERT_FAILS_WITH(d.verify(),
                       "lda 2 is smaller than the 3 columns of A as stored");
}

TEST(GemmDescTest, VerifyLdaTooSmallTransposed) {
  // Transposed A is stored K x M: lda must cover M, not K.
  GemmDesc d = GemmDesc::packed(7, 5, 3, /*transA=*/true);
  d.lda = 6;
  QM_ASSERT_FAILS_WITH(d.verify(),
                       "lda 6 is smaller than the 7 columns of A as stored");
  d.lda = 3; // wide enough for K, not for M
  QM_ASSERT_FAILS_WITH(d.verify(), "lda 3 is smaller than the 7 columns");
}

TEST(GemmDescTest, VerifyLdbTooSmall) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.ldb = 4;
  QM_ASSERT_FAILS_WITH(d.verify(),
                       "ldb 4 is smaller than the 5 columns of B as stored");
  GemmDesc t = GemmDesc::packed(7, 5, 3, false, /*transB=*/true);
  t.ldb = 2;
  QM_ASSERT_FAILS_WITH(t.verify(),
                       "ldb 2 is smaller than the 3 columns of B as stored");
}

TEST(GemmDescTest, VerifyLdcTooSmall) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.ldc = 4;
  QM_ASSERT_FAILS_WITH(d.verify(), "ldc 4 is smaller than the 5 columns of C");
}

TEST(GemmDescTest, VerifyAcceptsWideLeadingDims) {
  GemmDesc d = GemmDesc::packed(7, 5, 3, true, true);
  d.lda = 100;
  d.ldb = 100;
  d.ldc = 100;
  QM_ASSERT_OK(d.verify());
}

//===----------------------------------------------------------------------===//
// GemmConfig
//===----------------------------------------------------------------------===//

TEST(GemmConfigTest, DefaultStr) {
  EXPECT_EQ(GemmConfig().str(),
            "isa=avx2,mr=6,nr=16,ku=4,kc=256,mc=72,nc=4080,pfa=0,pfb=0,order="
            "bcast,threads=1,packb=1,loop=jr-ir,split=auto,alayout=kmajor");
}

TEST(GemmConfigTest, StrParseRoundTrip) {
  GemmConfig c;
  c.isa = VectorIsa::Avx512;
  c.mr = 12;
  c.nr = 32;
  c.kUnroll = 8;
  c.kc = 17;
  c.mc = 36;
  c.nc = 96;
  c.prefetchA = 256;
  c.prefetchB = 512;
  std::string text = c.str();
  EXPECT_EQ(
      text,
      "isa=avx512,mr=12,nr=32,ku=8,kc=17,mc=36,nc=96,pfa=256,pfb=512,order="
      "bcast,threads=1,packb=1,loop=jr-ir,split=auto,alayout=kmajor");
  QM_ASSERT_EXPECTED(back, GemmConfig::parse(text, GemmConfig()));
  EXPECT_TRUE(back == c);
  EXPECT_EQ(back.str(), text);
}

TEST(GemmConfigTest, PackbValues) {
  for (BPacking p : {BPacking::InPlace, BPacking::Panels, BPacking::Fused}) {
    GemmConfig c;
    c.packB = p;
    QM_ASSERT_EXPECTED(back, GemmConfig::parse(c.str(), GemmConfig()));
    EXPECT_EQ(back.packB, p) << c.str();
  }
  QM_ASSERT_EXPECTED(fused, GemmConfig::parse("packb=fused", GemmConfig()));
  EXPECT_NE(fused.str().find(",packb=fused,"), std::string::npos);
  QM_ASSERT_FAILS_WITH(GemmConfig::parse("packb=2", GemmConfig()).takeError(),
                       "unknown kernel config packb '2'; expected 0, 1 or "
                       "fused");
}

TEST(GemmConfigTest, ParsePartialKeepsBase) {
  GemmConfig base;
  base.isa = VectorIsa::Avx512;
  base.mr = 12;
  base.nr = 32;
  base.prefetchB = 128;
  QM_ASSERT_EXPECTED(c, GemmConfig::parse("kc=64, mc=24", base));
  EXPECT_EQ(c.isa, VectorIsa::Avx512);
  EXPECT_EQ(c.mr, 12);
  EXPECT_EQ(c.nr, 32);
  EXPECT_EQ(c.kUnroll, base.kUnroll);
  EXPECT_EQ(c.kc, 64);
  EXPECT_EQ(c.mc, 24);
  EXPECT_EQ(c.nc, base.nc);
  EXPECT_EQ(c.prefetchA, base.prefetchA);
  EXPECT_EQ(c.prefetchB, 128);
}

TEST(GemmConfigTest, ParseEmptyIsBase) {
  GemmConfig base;
  base.kc = 33;
  QM_ASSERT_EXPECTED(c, GemmConfig::parse("", base));
  EXPECT_TRUE(c == base);
}

TEST(GemmConfigTest, ParseUnknownKey) {
  QM_ASSERT_FAILS_WITH(GemmConfig::parse("mr=6,kq=3", GemmConfig()).takeError(),
                       "unknown kernel config key 'kq'");
}

TEST(GemmConfigTest, ParseBadNumber) {
  QM_ASSERT_FAILS_WITH(GemmConfig::parse("kc=abc", GemmConfig()).takeError(),
                       "kernel config 'kc' needs a non-negative integer, got "
                       "'abc'");
  QM_ASSERT_FAILS_WITH(GemmConfig::parse("mr=-1", GemmConfig()).takeError(),
                       "'mr' needs a non-negative integer, got '-1'");
  QM_ASSERT_FAILS_WITH(GemmConfig::parse("nr=16x", GemmConfig()).takeError(),
                       "got '16x'");
}

TEST(GemmConfigTest, ParseItemWithoutValue) {
  QM_ASSERT_FAILS_WITH(GemmConfig::parse("mr", GemmConfig()).takeError(),
                       "'mr' is not key=value");
}

TEST(GemmConfigTest, ParseBadIsa) {
  QM_ASSERT_FAILS_WITH(GemmConfig::parse("isa=sse9", GemmConfig()).takeError(),
                       "sse9");
}

//===----------------------------------------------------------------------===//
// Blocking model
//===----------------------------------------------------------------------===//

/// The L1d share of the table row `c` was made from (1 for the blocks
/// that in-place B narrows to fewer rows than any row has).
double l1dShare(const GemmConfig &c) {
  for (const MicroKernelShape &s : microKernelTable(c.isa))
    if (s.mr == c.mr && s.nr == c.nr && s.order == c.order)
      return s.bSliverL1dShare;
  return 1.0;
}

TEST(BlockingModelTest, MicroKernelTables) {
  auto avx2 = microKernelTable(VectorIsa::Avx2);
  ASSERT_FALSE(avx2.empty());
  EXPECT_EQ(avx2.front().mr, 6);
  EXPECT_EQ(avx2.front().nr, 16);
  auto avx512 = microKernelTable(VectorIsa::Avx512);
  ASSERT_FALSE(avx512.empty());
  EXPECT_EQ(avx512.front().mr, 6);
  EXPECT_EQ(avx512.front().nr, 64);
  EXPECT_EQ(avx512.front().bSliverL1dShare, 2.0);
  EXPECT_TRUE(microKernelTable(VectorIsa::None).empty());
  // Every row fits the register file with its order and the lane width;
  // a row names an order other than bcast only where bcast does not fit,
  // or embedded broadcasts (measured faster: 12x16).
  for (VectorIsa isa : {VectorIsa::Avx2, VectorIsa::Avx512}) {
    int lanes = Target::vectorBits(isa) / 32;
    for (const MicroKernelShape &s : microKernelTable(isa)) {
      EXPECT_EQ(s.isa, isa);
      EXPECT_EQ(s.nr % lanes, 0) << s.mr << "x" << s.nr;
      GemmConfig c;
      c.mr = s.mr;
      c.nr = s.nr;
      c.order = s.order;
      EXPECT_LE(c.vectorRegistersNeeded(lanes), Target::vectorRegisters(isa))
          << s.mr << "x" << s.nr;
      c.order = KStepOrder::Broadcast;
      if (s.order != KStepOrder::Embedded) {
        EXPECT_EQ(s.order == KStepOrder::Broadcast,
                  c.vectorRegistersNeeded(lanes) <=
                      Target::vectorRegisters(isa))
            << s.mr << "x" << s.nr;
      }
    }
  }
  // 7x64 fits AVX-512 with bmem: 28 accumulators, 3 B vectors, A.
  EXPECT_TRUE(llvm::any_of(avx512, [](const MicroKernelShape &s) {
    return s.mr == 7 && s.nr == 64 && s.order == KStepOrder::BMem;
  }));
}

TEST(BlockingModelTest, Znver3GivesAvx2) {
  Target target = parseTarget(kZnver3);
  QM_ASSERT_EXPECTED(
      c, chooseGemmConfig(GemmDesc::packed(1024, 1024, 1024), target));
  EXPECT_EQ(c.isa, VectorIsa::Avx2);
  EXPECT_EQ(c.mr, 6);
  EXPECT_EQ(c.nr, 16);
  EXPECT_EQ(c.mc % c.mr, 0) << c.str();
  EXPECT_EQ(c.nc % c.nr, 0) << c.str();
  EXPECT_LE(c.kc * c.nr * 4, target.caches.l1d) << c.str();
  EXPECT_GE(c.kc, 1);
}

TEST(BlockingModelTest, Avx512TargetGivesAvx512) {
  Target target = parseTarget(kSkylakeAvx512);
  QM_ASSERT_EXPECTED(
      c, chooseGemmConfig(GemmDesc::packed(1024, 1024, 1024), target));
  EXPECT_EQ(c.isa, VectorIsa::Avx512);
  EXPECT_EQ(c.mr, 6);
  EXPECT_EQ(c.nr, 64);
  EXPECT_EQ(c.mc % c.mr, 0) << c.str();
  EXPECT_EQ(c.nc % c.nr, 0) << c.str();
  // Its B sliver fills twice L1d (the row's share): kc 256 for 32 KiB.
  EXPECT_EQ(c.kc, 256) << c.str();
}

TEST(BlockingModelTest, EightByFortyEightFillsTwiceL1dToo) {
  // 128 rows: 8x48 pads none of them where 6x64 pads four, and its sliver
  // fills twice L1d as 6x64's does (kc 336 for 32 KiB, not 80).
  Target target = parseTarget(kSkylakeAvx512);
  QM_ASSERT_EXPECTED(
      c, chooseGemmConfig(GemmDesc::packed(128, 3072, 768), target));
  EXPECT_EQ(c.mr, 8) << c.str();
  EXPECT_EQ(c.nr, 48) << c.str();
  EXPECT_EQ(c.kc, 336) << c.str();
  EXPECT_EQ(l1dShare(c), 2.0) << c.str();
}

TEST(BlockingModelTest, NoAvx2IsAnError) {
  Target target = parseTarget("x86_64-unknown-linux-gnu:x86-64:+sse2");
  QM_ASSERT_FAILS_WITH(
      chooseGemmConfig(GemmDesc::packed(64, 64, 64), target).takeError(),
      "no vector isa the emitters support");
  // avx2 without fma is not enough either.
  Target noFma =
      parseTarget("x86_64-unknown-linux-gnu:haswell:+avx,+avx2,-fma");
  QM_ASSERT_FAILS_WITH(
      chooseGemmConfig(GemmDesc::packed(64, 64, 64), noFma).takeError(),
      "need avx2 and fma");
}

TEST(BlockingModelTest, NonX86IsAnError) {
  Target target = parseTarget("aarch64-unknown-linux-gnu:generic:+neon");
  QM_ASSERT_FAILS_WITH(
      chooseGemmConfig(GemmDesc::packed(64, 64, 64), target).takeError(),
      "aarch64-unknown-linux-gnu");
}

TEST(BlockingModelTest, InvalidDescIsAnError) {
  Target target = parseTarget(kZnver3);
  GemmDesc d = GemmDesc::packed(8, 8, 8);
  d.ldc = 4;
  QM_ASSERT_FAILS_WITH(chooseGemmConfig(d, target).takeError(),
                       "ldc 4 is smaller");
}

TEST(BlockingModelTest, ClampedToTinyProblem) {
  for (const char *spec : {kZnver3, kSkylakeAvx512}) {
    SCOPED_TRACE(spec);
    Target target = parseTarget(spec);
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(GemmDesc::packed(1, 1, 1), target));
    EXPECT_EQ(c.kc, 1);
    EXPECT_EQ(c.mc, c.mr);
    EXPECT_EQ(c.nc, c.nr);
  }
}

TEST(BlockingModelTest, ClampToProblem) {
  GemmConfig c; // 6x16, kc 256, mc 72, nc 4080
  GemmConfig small = clampToProblem(c, GemmDesc::packed(7, 17, 5));
  EXPECT_EQ(small.kc, 5);
  EXPECT_EQ(small.mc, 12);
  EXPECT_EQ(small.nc, 32);
  EXPECT_EQ(small.mr, c.mr);
  EXPECT_EQ(small.nr, c.nr);
  EXPECT_EQ(small.kUnroll, c.kUnroll);
  // A problem larger than the blocks leaves them alone.
  GemmConfig large = clampToProblem(c, GemmDesc::packed(1000, 5000, 1000));
  EXPECT_TRUE(large == c) << large.str();
}

TEST(BlockingModelTest, InvariantsAcrossShapesAndTargets) {
  const char *specs[] = {
      kZnver3,
      kSkylakeAvx512,
      "x86_64-unknown-linux-gnu:haswell:+avx,+avx2,+fma:l1d=16K,l2=256K,"
      "l3=2M,cores=1",
      "x86_64-unknown-linux-gnu:sapphirerapids:+avx,+avx2,+fma,+avx512f:"
      "l1d=48K,l2=2M,l3=105M,cores=56",
      "x86_64-unknown-linux-gnu:znver4:+avx,+avx2,+fma,+avx512f:l1d=32K,"
      "l2=1M,l3=32M,cores=16",
  };
  const int64_t sizes[] = {1,  2,  5,  6,   7,   13,   16,
                           17, 31, 64, 100, 257, 1000, 4097};
  for (const char *spec : specs) {
    Target target = parseTarget(spec);
    for (int64_t m : sizes)
      for (int64_t n : sizes)
        for (int64_t k : {int64_t(1), int64_t(3), int64_t(64), int64_t(300),
                          int64_t(5000)}) {
          GemmDesc d = GemmDesc::packed(m, n, k);
          auto c = chooseGemmConfig(d, target);
          ASSERT_TRUE(static_cast<bool>(c)) << spec << " " << d.str() << ": "
                                            << llvm::toString(c.takeError());
          SCOPED_TRACE(std::string(spec) + " " + d.str() + " " + c->str());
          EXPECT_EQ(c->isa, target.bestIsa());
          EXPECT_GE(c->kc, 1);
          EXPECT_LE(c->kc, k);
          EXPECT_GE(c->mc, c->mr);
          EXPECT_GE(c->nc, c->nr);
          EXPECT_EQ(c->mc % c->mr, 0);
          EXPECT_EQ(c->nc % c->nr, 0);
          EXPECT_LE(c->mc, (m + c->mr - 1) / c->mr * c->mr);
          EXPECT_LE(c->nc, (n + c->nr - 1) / c->nr * c->nr);
          // A B sliver takes at most its block's share of L1d, except
          // for one column sliver over all of K (N its block's nr, or
          // below one vector), which stays in L2.
          const int lanes = Target::vectorBits(c->isa) / 32;
          if ((c->nr == n || (n < c->nr && c->nr == lanes)) && c->kc > 16)
            EXPECT_LE(c->kc * c->nr * 4, target.caches.l2);
          else
            EXPECT_LE(c->kc * c->nr * 4,
                      l1dShare(*c) * double(target.caches.l1d));
        }
  }
}

TEST(BlockingModelTest, FewRowsOnAvx2TakeFewPassesAndWholeLines) {
  Target target = parseTarget("x86_64-unknown-linux-gnu:znver1:+avx,+avx2,"
                              "+fma:l1d=32K,l2=512K,l3=8M,cores=2");
  // N a multiple of 24: 4x24, the wider block, where it takes no more row
  // slivers than 6x16 (M = 4 and 8), kc 8 since its 96 bytes a row are
  // not whole cache lines; 6x16 where 4x24 would take more passes over B
  // (M = 6, 16).
  for (auto [m, mr, nr, kc] :
       {std::tuple{4, 4, 24, 8}, std::tuple{8, 4, 24, 8},
        std::tuple{6, 6, 16, 32}, std::tuple{16, 6, 16, 32}}) {
    QM_ASSERT_EXPECTED(
        c, chooseGemmConfig(GemmDesc::packed(m, 3072, 768), target));
    EXPECT_EQ(c.packB, BPacking::InPlace) << m;
    EXPECT_EQ(c.mr, mr) << m;
    EXPECT_EQ(c.nr, nr) << m;
    EXPECT_EQ(c.kc, kc) << m;
    EXPECT_EQ(c.nc, 3072) << m;
  }
  // Past half of L2 for C's rows (16 x 8192 floats), the column block
  // stops there.
  QM_ASSERT_EXPECTED(
      wide, chooseGemmConfig(GemmDesc::packed(16, 16384, 512), target));
  EXPECT_EQ(wide.nc, 4096);
}

TEST(BlockingModelTest, FewRowsOfAPrepackedBTakeTheFewRowsBlock) {
  // Constant weights (B prepacked) under one to sixteen rows: the block the
  // few-rows rule takes for B in place, over the caller's panels (packb=1),
  // of exactly M rows up to its own; never B in place or the tiles'
  // packing; the general blocking's kc. (Three to eight rows against B in
  // place take one sliver of two vectors for B's sweep, which a prepacked
  // B has no need of.)
  Target target = parseTarget(kSkylakeAvx512);
  for (int64_t m : {1, 2, 16}) {
    GemmDesc d = GemmDesc::packed(m, 4096, 4096);
    QM_ASSERT_EXPECTED(inPlace, chooseGemmConfig(d, target));
    d.bPrepacked = true;
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(d, target));
    EXPECT_EQ(c.packB, BPacking::Panels) << c.str();
    EXPECT_EQ(c.nr, inPlace.nr) << c.str();
    EXPECT_EQ(c.mr, inPlace.mr) << c.str();
    EXPECT_GT(c.kc, inPlace.kc) << c.str();
  }
  // Past sixteen rows, the general rules.
  GemmDesc many = GemmDesc::packed(128, 768, 768);
  QM_ASSERT_EXPECTED(general, chooseGemmConfig(many, target));
  many.bPrepacked = true;
  QM_ASSERT_EXPECTED(prepacked, chooseGemmConfig(many, target));
  EXPECT_EQ(prepacked.mr, general.mr);
  EXPECT_EQ(prepacked.nr, general.nr);
  EXPECT_EQ(prepacked.packB, BPacking::Panels);
}

TEST(BlockingModelTest, FewRowsAgainstANarrowCachedBTakeOneSliverOfAllRows) {
  // The one-vector block (12x16 on AVX-512) under few rows, B read in
  // place: where B fits half of L2, one sliver of all of M rows and all
  // of K in one block (two of half of them where more than 13 rows of A
  // lie on one L1 set: lda a multiple of 4 KiB); where it streams from
  // memory, the few-rows rule's kc (two slivers of 8 rows at 16 rows and
  // lda 16 KiB).
  Target target = parseTarget("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,"
                              "+fma,+avx512f:l1d=48K,l2=1M,l3=32M,cores=2");
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{16, 16, 4096},
                         {13, 16, 4096},
                         {14, 16, 4096},
                         {15, 16, 3072},
                         {16, 80, 768},
                         {3, 16, 2048}}) {
    GemmDesc d = GemmDesc::packed(m, n, k);
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(d, target));
    EXPECT_EQ(c.packB, BPacking::InPlace) << c.str();
    EXPECT_EQ(c.nr, 16) << c.str();
    EXPECT_EQ(c.mr, m > 13 && k * 4 % 4096 == 0 ? (m + 1) / 2 : m) << c.str();
    EXPECT_EQ(c.kc, k) << c.str();
  }
  GemmDesc streamed = GemmDesc::packed(16, 3088, 4096);
  QM_ASSERT_EXPECTED(s, chooseGemmConfig(streamed, target));
  EXPECT_EQ(s.packB, BPacking::InPlace) << s.str();
  EXPECT_EQ(s.nr, 16) << s.str();
  EXPECT_EQ(s.mr, 8) << s.str(); // 16 rows on one L1 set: two slivers of 8
  EXPECT_LT(s.kc, 4096) << s.str();
  // The sliver's one line a row of B prefetched eight slivers ahead (16
  // with two rows, whose sweeps walk 8 rows); a 64-wide sliver not. The
  // one-line sliver is not swept past four rows, B in L3 or not.
  EXPECT_EQ(s.prefetchB, 512) << s.str();
  EXPECT_FALSE(s.sweepB) << s.str();
  // One to four rows against a B beyond L3 on one thread: swept over a
  // shallow kc (2 up to two rows, 4 up to four, as deep as the K unroll),
  // each row prefetched 2048 bytes ahead. Up to eight rows on two threads
  // (two parts), B in L3 or not: kc 128, each row prefetched 128 bytes
  // ahead; past eight rows the one-thread blocking.
  struct Few {
    int64_t m, n;
    int threads;
    bool sweep;
    int64_t kc;
    int prefetchB;
  };
  for (Few f :
       {Few{2, 1040, 1, false, 8, 1024}, Few{2, 3088, 1, true, 2, 2048},
        Few{1, 3088, 1, true, 2, 2048}, Few{4, 3088, 1, true, 4, 2048},
        Few{8, 3088, 1, false, 32, 512}, Few{2, 3088, 2, false, 128, 128},
        Few{4, 1040, 2, false, 128, 128}, Few{8, 3088, 2, false, 128, 128},
        Few{12, 3088, 2, false, 32, 512}}) {
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(GemmDesc::packed(f.m, f.n, 4096),
                                           target, f.threads));
    EXPECT_EQ(c.nr, 16) << c.str();
    EXPECT_EQ(c.sweepB, f.sweep) << c.str();
    EXPECT_EQ(c.kc, f.kc) << c.str();
    EXPECT_EQ(c.kUnroll, f.sweep ? c.kc : 4) << c.str();
    EXPECT_EQ(c.prefetchB, f.prefetchB) << c.str();
    EXPECT_EQ(
        partitionedThreads(GemmDesc::packed(f.m, f.n, 4096), c, f.threads),
        f.threads);
  }
  QM_ASSERT_EXPECTED(wide,
                     chooseGemmConfig(GemmDesc::packed(8, 4096, 4096), target));
  EXPECT_EQ(wide.packB, BPacking::InPlace) << wide.str();
  EXPECT_EQ(wide.prefetchB, 0) << wide.str();
  // A run-time N reads B in place too (the last sliver's lanes set from
  // the call's columns at each tile), swept as a static N is (the walk a
  // row of the next panel at a time); three to eight rows in one sliver
  // of two vectors at kc 16, 16 rows 6x64's at kc 32. In L3 B is read in
  // place unswept. AVX2 has no lane masks for B's loads: packed.
  for (int64_t m : {1, 4, 8, 16}) {
    GemmDesc runtimeN = GemmDesc::packed(m, 4096, 4096);
    runtimeN.dynamicN = true;
    runtimeN.runtimeLd = true;
    QM_ASSERT_EXPECTED(model, chooseGemmConfig(runtimeN, target));
    EXPECT_EQ(model.packB, BPacking::InPlace) << model.str();
    EXPECT_EQ(model.sweepB, m > 1) << model.str();
    EXPECT_EQ(model.loop, MacroLoopOrder::IrJr) << model.str();
    if (m > 2) {
      EXPECT_EQ(model.kc, m <= 8 ? 16 : 32) << model.str();
      EXPECT_EQ(model.nr, m <= 8 ? 32 : 64) << model.str();
    }
    GemmDesc inL3 = GemmDesc::packed(m, 768, 4096);
    inL3.dynamicN = true;
    inL3.runtimeLd = true;
    QM_ASSERT_EXPECTED(cached, chooseGemmConfig(inL3, target));
    EXPECT_EQ(cached.packB, BPacking::InPlace) << cached.str();
    QM_ASSERT_EXPECTED(
        packed,
        chooseGemmConfig(runtimeN, parseTarget("x86_64-unknown-linux-gnu:"
                                               "znver3:+avx,+avx2,+fma:l1d="
                                               "32K,l2=512K,l3=32M,cores=2")));
    EXPECT_EQ(packed.packB, BPacking::Panels) << packed.str();
  }
}

TEST(BlockingModelTest, RowsAgainstAWiderBTransposedTakeTheProductTransposed) {
  // f32 rows against B^T at least four times wider, 16 to 256 of them,
  // on AVX-512: C^T = B^T * A^T, its blocking the swapped problem's: B^T's
  // rows read in place as its A; one vector of C's rows the one-vector
  // block; more, 12x32 (with a run-time lda too: 17 rows reached with B
  // in panels) at kc up to 1024 with every row of C (up to 256) in one
  // column block.
  Target target = parseTarget("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,"
                              "+fma,+bmi2,+avx512f,+avx512bw,+avx512vl:"
                              "l1d=48K,l2=1M,l3=32M,cores=2");
  GemmDesc rows32 = GemmDesc::packed(32, 4096, 4096, false, true);
  QM_ASSERT_EXPECTED(c, chooseGemmConfig(rows32, target));
  EXPECT_EQ(c.product, Product::Transposed) << c.str();
  EXPECT_EQ(c.mr, 12) << c.str();
  EXPECT_EQ(c.nr, 32) << c.str();
  EXPECT_EQ(c.kc, 1024) << c.str();
  EXPECT_EQ(c.nc, 32) << c.str();
  EXPECT_EQ(c.aLayout, ALayout::Direct) << c.str();
  EXPECT_EQ(c.str().find("product=transposed") + 18, c.str().size());
  QM_ASSERT_EXPECTED(parsed, GemmConfig::parse(c.str(), GemmConfig{}));
  EXPECT_EQ(parsed, c);
  QM_ASSERT_EXPECTED(
      rows256,
      chooseGemmConfig(GemmDesc::packed(256, 3072, 768, false, true), target));
  EXPECT_EQ(rows256.product, Product::Transposed) << rows256.str();
  EXPECT_EQ(rows256.nc, 256) << rows256.str();
  EXPECT_EQ(rows256.kc, 768) << rows256.str();
  QM_ASSERT_EXPECTED(
      rows16,
      chooseGemmConfig(GemmDesc::packed(16, 4096, 4096, false, true), target));
  EXPECT_EQ(rows16.product, Product::Transposed) << rows16.str();
  EXPECT_EQ(rows16.nr, 16) << rows16.str();
  GemmDesc runtimeLd = rows32;
  runtimeLd.runtimeLd = true;
  QM_ASSERT_EXPECTED(rt, chooseGemmConfig(runtimeLd, target));
  EXPECT_EQ(rt.product, Product::Transposed) << rt.str();
  EXPECT_EQ(rt.mr, 12) << rt.str();
  EXPECT_EQ(rt.nr, 32) << rt.str();
  EXPECT_EQ(rt.aLayout, ALayout::Direct) << rt.str();
  // The swapped problem: M and N, the operands and their transposes, the
  // run-time sizes and the bias's axis.
  GemmDesc biased = GemmDesc::packed(32, 100, 40, false, true);
  biased.ldb = 41;
  biased.bias = GemmBias::Columns;
  GemmDesc t = biased.transposedProduct();
  EXPECT_EQ(t.m, 100);
  EXPECT_EQ(t.n, 32);
  EXPECT_EQ(t.lda, 41);
  EXPECT_EQ(t.ldb, 40);
  EXPECT_FALSE(t.transA);
  EXPECT_TRUE(t.transB);
  EXPECT_EQ(t.bias, GemmBias::Rows);
  EXPECT_EQ(t.ldc, biased.ldc);
  auto product = [&](const GemmDesc &d, const Target &on) {
    auto config = chooseGemmConfig(d, on);
    return config ? config->product : Product::Direct;
  };
  // From 8 rows where B^T is larger than L3 (64 MiB against 32).
  EXPECT_EQ(product(GemmDesc::packed(8, 4096, 4096, false, true), target),
            Product::Transposed);
  EXPECT_EQ(product(GemmDesc::packed(7, 4096, 4096, false, true), target),
            Product::Direct);
  EXPECT_EQ(product(GemmDesc::packed(12, 3072, 768, false, true), target),
            Product::Direct);
  // Not: 15 rows in L3 (the matrix-vector form), 257 rows, a B^T less than
  // four times wider, B as stored, A transposed, B prepacked, a run-time
  // N, AVX2.
  EXPECT_EQ(product(GemmDesc::packed(15, 2048, 2048, false, true), target),
            Product::Direct);
  EXPECT_EQ(product(GemmDesc::packed(257, 4096, 4096, false, true), target),
            Product::Direct);
  EXPECT_EQ(product(GemmDesc::packed(32, 127, 4096, false, true), target),
            Product::Direct);
  EXPECT_EQ(product(GemmDesc::packed(32, 4096, 4096), target), Product::Direct);
  EXPECT_EQ(product(GemmDesc::packed(32, 4096, 4096, true, true), target),
            Product::Direct);
  GemmDesc prepacked = rows32;
  prepacked.bPrepacked = true;
  EXPECT_EQ(product(prepacked, target), Product::Direct);
  GemmDesc dynamicN = runtimeLd;
  dynamicN.dynamicN = true;
  EXPECT_EQ(product(dynamicN, target), Product::Direct);
  // A run-time M (its representative's rows) takes it; its m-buckets
  // gain 15 rows, the last of the matrix-vector form (16 transposed).
  GemmDesc dynamicM = runtimeLd;
  dynamicM.dynamicM = true;
  EXPECT_EQ(product(dynamicM, target), Product::Transposed);
  dynamicM.m = 256;
  EXPECT_EQ(
      formRowBounds(dynamicM, target),
      (llvm::SmallVector<int64_t, 2>{kF32TransposedProductStreamedRows - 1,
                                     kF32TransposedProductRows - 1}));
  dynamicM.n = 63;
  EXPECT_TRUE(formRowBounds(dynamicM, target).empty());
  EXPECT_EQ(product(rows32, parseTarget("x86_64-unknown-linux-gnu:znver3:+avx,"
                                        "+avx2,+fma:l1d=32K,l2=512K,l3=32M,"
                                        "cores=2")),
            Product::Direct);
  GemmConfig wide = c;
  wide.mr = 17;
  EXPECT_FALSE(transposedProductFits(wide));
  EXPECT_TRUE(transposedProductFits(c));
}

TEST(BlockingModelTest, FewRowsStreamBAndFewColumnsKeepCInRegisters) {
  Target target = parseTarget("x86_64-unknown-linux-gnu:znver4:+avx,+avx2,"
                              "+fma,+avx512f:l1d=32K,l2=1M,l3=32M,cores=16");
  // One row: B read in place, a block of exactly that row, 8 rows of B a
  // sweep.
  QM_ASSERT_EXPECTED(gemv,
                     chooseGemmConfig(GemmDesc::packed(1, 4096, 4096), target));
  EXPECT_EQ(gemv.packB, BPacking::InPlace);
  EXPECT_EQ(gemv.mr, 1);
  EXPECT_EQ(gemv.nr, 64);
  EXPECT_EQ(gemv.kc, 8);
  QM_ASSERT_EXPECTED(rows2,
                     chooseGemmConfig(GemmDesc::packed(2, 4096, 4096), target));
  EXPECT_EQ(rows2.mr, 2);
  EXPECT_EQ(rows2.kc, 8);
  // More rows: each B vector feeds more FMAs; 32 rows of B a sweep, each
  // row sliver sweeping them end to end (ir-jr).
  QM_ASSERT_EXPECTED(
      rows16, chooseGemmConfig(GemmDesc::packed(16, 4096, 4096), target));
  EXPECT_EQ(rows16.packB, BPacking::InPlace);
  EXPECT_EQ(rows16.mr, 6);
  EXPECT_EQ(rows16.kc, 32);
  EXPECT_EQ(rows16.loop, MacroLoopOrder::IrJr);
  // The few-rows blocks by M and N (B in place, ir-jr): seven or eight
  // rows one sliver of two vectors (the 12x32 block of exactly those
  // rows) at kc 16 rather than 6x64's two, and three to six rows likewise
  // where B is larger than L3; thirteen to sixteen rows whose N is a
  // multiple of 48 two slivers of 8x48 at kc 256; six and twelve rows
  // against a B in L3 6x64 at kc 32; an N that takes no 32-wide slivers
  // the widest that fit. B larger than L3 (64 MiB) has its next panel
  // swept into L2 (a 64-wide sliver would take 16 lines a K loop
  // iteration, more than the emitter's 8: none is left there); B in L3 (9
  // MiB) not, nor the one-line sliver past four rows.
  struct Block {
    int64_t m, n, k;
    int mr, nr;
    int64_t kc;
    bool sweep;
  };
  for (Block b : {Block{7, 4096, 4096, 7, 32, 16, true},
                  Block{8, 4096, 4096, 8, 32, 16, true},
                  Block{16, 3072, 768, 8, 48, 256, false},
                  Block{13, 1536, 1536, 8, 48, 256, false},
                  Block{3, 4096, 4096, 3, 32, 16, true},
                  Block{6, 4096, 4096, 6, 32, 16, true},
                  Block{6, 3072, 768, 6, 64, 32, false},
                  Block{12, 3072, 768, 6, 64, 32, false},
                  Block{8, 3088, 4096, 8, 16, 32, false}}) {
    QM_ASSERT_EXPECTED(
        c, chooseGemmConfig(GemmDesc::packed(b.m, b.n, b.k), target));
    EXPECT_EQ(c.packB, BPacking::InPlace) << c.str();
    EXPECT_EQ(c.loop, MacroLoopOrder::IrJr) << c.str();
    EXPECT_EQ(c.mr, b.mr) << c.str();
    EXPECT_EQ(c.nr, b.nr) << c.str();
    EXPECT_EQ(c.kc, b.kc) << c.str();
    EXPECT_EQ(c.sweepB, b.sweep) << c.str();
    EXPECT_EQ(c.str().find("sweepb=1") != std::string::npos, b.sweep);
    QM_ASSERT_EXPECTED(parsed, GemmConfig::parse(c.str(), GemmConfig{}));
    EXPECT_EQ(parsed, c);
  }
  // A run-time ldb sweeps where A is read in place (the walk in IC's
  // register): eight rows in one sliver (a run-time lda reaches nine rows
  // against B in place), sixteen in slivers of six.
  GemmDesc runtimeLd = GemmDesc::packed(8, 4096, 4096);
  runtimeLd.runtimeLd = true;
  QM_ASSERT_EXPECTED(rt, chooseGemmConfig(runtimeLd, target));
  EXPECT_TRUE(rt.sweepB) << rt.str();
  EXPECT_EQ(rt.aLayout, ALayout::Direct) << rt.str();
  EXPECT_EQ(rt.mr, 8) << rt.str();
  GemmDesc runtime16 = GemmDesc::packed(16, 4096, 4096);
  runtime16.runtimeLd = true;
  QM_ASSERT_EXPECTED(rt16, chooseGemmConfig(runtime16, target));
  EXPECT_TRUE(rt16.sweepB) << rt16.str();
  EXPECT_EQ(rt16.aLayout, ALayout::Direct) << rt16.str();
  EXPECT_LE(rt16.mr, 6) << rt16.str();
  // A run-time M sweeps as its representative rows do (a run-time N or K
  // too), and its m-buckets gain 8 rows, the last of the swept sliver of
  // two vectors, where B's rows are larger than L3 (not where B is in L3,
  // nor with a run-time K).
  GemmDesc dynamicM = GemmDesc::packed(16, 4096, 4096);
  dynamicM.dynamicM = true;
  QM_ASSERT_EXPECTED(dm, chooseGemmConfig(dynamicM, target));
  EXPECT_TRUE(dm.sweepB) << dm.str();
  dynamicM.m = 256;
  EXPECT_EQ(formRowBounds(dynamicM, target),
            (llvm::SmallVector<int64_t, 2>{kF32TwoVectorSliverRows}));
  dynamicM.m = kF32TwoVectorSliverRows;
  QM_ASSERT_EXPECTED(bucket, chooseGemmConfig(dynamicM, target));
  EXPECT_EQ(bucket.mr, kF32TwoVectorSliverRows) << bucket.str();
  EXPECT_EQ(bucket.nr, 32) << bucket.str();
  EXPECT_TRUE(bucket.sweepB) << bucket.str();
  GemmDesc cached = GemmDesc::packed(256, 3072, 768);
  cached.dynamicM = true;
  EXPECT_TRUE(formRowBounds(cached, target).empty());
  GemmDesc dynamicK = dynamicM;
  dynamicK.dynamicK = dynamicK.runtimeLd = true;
  EXPECT_TRUE(formRowBounds(dynamicK, target).empty());
  QM_ASSERT_EXPECTED(dk, chooseGemmConfig(dynamicK, target));
  EXPECT_TRUE(dk.sweepB) << dk.str();
  // B's rows read whole: one column block over all of N while C's rows
  // fit half of L2.
  EXPECT_EQ(gemv.nc, 4096);
  EXPECT_EQ(rows16.nc, 4096);
  // One column sliver: that block; A read in place: the B sliver in a
  // quarter of L2 (1024 rows of 64 floats), mc the general one (half of
  // L2 for the model's kc).
  QM_ASSERT_EXPECTED(
      tall, chooseGemmConfig(GemmDesc::packed(4096, 64, 4096), target));
  EXPECT_EQ(tall.mr, 6);
  EXPECT_EQ(tall.nr, 64);
  EXPECT_EQ(tall.kc, 1024);
  EXPECT_EQ(tall.mc, 510);
  EXPECT_EQ(tall.aLayout, ALayout::Direct);
  // Leading dimensions at run time: A in place too (six rows).
  GemmDesc tallRuntime = GemmDesc::packed(4096, 64, 4096);
  tallRuntime.runtimeLd = true;
  QM_ASSERT_EXPECTED(runtime, chooseGemmConfig(tallRuntime, target));
  EXPECT_EQ(runtime.aLayout, ALayout::Direct);
  EXPECT_EQ(runtime.kc, 1024);
  // A transposed is neither read nor copied in rows: packed k-major, and
  // then each packed block is used once: all of K while the B sliver fits
  // L2, four row blocks a packed block.
  QM_ASSERT_EXPECTED(
      transA,
      chooseGemmConfig(GemmDesc::packed(4096, 64, 4096, true, false), target));
  EXPECT_EQ(transA.aLayout, ALayout::KMajor);
  EXPECT_EQ(transA.kc, 4096);
  EXPECT_EQ(transA.mc, 24);
  QM_ASSERT_EXPECTED(
      deep,
      chooseGemmConfig(GemmDesc::packed(4096, 64, 9000, true, false), target));
  EXPECT_EQ(deep.kc, 4096); // 1 MiB of L2 / (64 floats)
  // A square problem keeps the table's preferred block and its kc.
  QM_ASSERT_EXPECTED(square,
                     chooseGemmConfig(GemmDesc::packed(512, 512, 512), target));
  EXPECT_EQ(square.mr, 6);
  EXPECT_EQ(square.nr, 64);
  EXPECT_EQ(square.kc, 256);
}

TEST(BlockingModelTest, RowsInOneBlockSweepAStreamedBInPlace) {
  Target target = parseTarget("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,"
                              "+fma,+avx512f:l1d=48K,l2=1M,l3=32M,cores=2");
  // Seventeen to 48 rows in one row block against a B larger than L3 (64
  // MiB): B in place, swept, the general blocks (a masked last sliver
  // where 48 does not divide N); static or run-time sizes alike.
  for (int64_t m : {17, 24, 32, 48}) {
    GemmDesc d = GemmDesc::packed(m, 4096, 4096);
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(d, target));
    EXPECT_EQ(c.packB, BPacking::InPlace) << c.str();
    EXPECT_TRUE(c.sweepB) << c.str();
    EXPECT_GE(c.mc, m) << c.str();
    GemmDesc runtime = d;
    runtime.dynamicM = runtime.dynamicN = runtime.dynamicK = true;
    runtime.runtimeLd = true;
    QM_ASSERT_EXPECTED(r, chooseGemmConfig(runtime, target));
    EXPECT_EQ(r.packB, BPacking::InPlace) << r.str();
    EXPECT_TRUE(r.sweepB) << r.str();
    EXPECT_EQ(r.aLayout, ALayout::Direct) << r.str();
  }
  // Not past 48 rows, nor against a B in L3 (9 MiB), nor B^T, nor where
  // two threads split the problem.
  for (GemmDesc d :
       {GemmDesc::packed(64, 4096, 4096), GemmDesc::packed(24, 3072, 768),
        GemmDesc::packed(24, 4096, 4096, false, true)}) {
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(d, target));
    EXPECT_FALSE(c.packB == BPacking::InPlace && c.sweepB) << c.str();
  }
  QM_ASSERT_EXPECTED(two,
                     chooseGemmConfig(GemmDesc::packed(24, 4096, 4096), target,
                                      /*threads=*/2));
  EXPECT_FALSE(two.sweepB) << two.str();
}

TEST(BlockingModelTest, AInPlaceBlocksBForL2AndPadsLeast) {
  Target target = parseTarget("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,"
                              "+fma,+avx512f:l1d=48K,l2=1M,l3=32M,cores=2");
  // A in place: B's panel fills half of L2 (kc 384: 341 -> 320 columns),
  // several row blocks, so PACK B runs once per panel.
  QM_ASSERT_EXPECTED(
      square, chooseGemmConfig(GemmDesc::packed(1024, 1024, 1024), target));
  EXPECT_EQ(square.aLayout, ALayout::Direct);
  EXPECT_EQ(square.mr, 6);
  EXPECT_EQ(square.nr, 64);
  EXPECT_EQ(square.kc, 384);
  EXPECT_EQ(square.nc, 320);
  EXPECT_EQ(square.packB, BPacking::Panels);
  // 128 rows: 8x48 pads no row where 6x64 pads 4 (3%); one row block, so
  // its tiles pack B as they first read it.
  QM_ASSERT_EXPECTED(
      mlp, chooseGemmConfig(GemmDesc::packed(128, 3072, 768), target));
  EXPECT_EQ(mlp.mr, 8);
  EXPECT_EQ(mlp.nr, 48);
  EXPECT_EQ(mlp.mc, 128);
  EXPECT_EQ(mlp.packB, BPacking::Fused);
  // With run-time leading dimensions the same (eight rows reached from
  // three base registers).
  GemmDesc runtime = GemmDesc::packed(128, 3072, 768);
  runtime.runtimeLd = true;
  QM_ASSERT_EXPECTED(runtimeMlp, chooseGemmConfig(runtime, target));
  EXPECT_EQ(runtimeMlp.aLayout, ALayout::Direct);
  EXPECT_EQ(runtimeMlp.mr, 8);
  EXPECT_EQ(runtimeMlp.packB, BPacking::Fused);
  // A transposed: copied k-major; the B rules are the same, the panel's
  // width the cache's (L3's share).
  QM_ASSERT_EXPECTED(
      kmajor,
      chooseGemmConfig(GemmDesc::packed(128, 3072, 768, true, false), target));
  EXPECT_EQ(kmajor.aLayout, ALayout::KMajor);
  EXPECT_EQ(kmajor.packB, BPacking::Fused);
  // A 0.2% padding difference keeps the table's preferred block; a run-time
  // K keeps B in a PACK B pass (K's header slot is the fused packing's).
  GemmDesc dynamicK = GemmDesc::packed(128, 3072, 768);
  dynamicK.runtimeLd = dynamicK.dynamicK = true;
  QM_ASSERT_EXPECTED(deep, chooseGemmConfig(dynamicK, target));
  EXPECT_EQ(deep.packB, BPacking::Panels);
  QM_ASSERT_EXPECTED(
      tall, chooseGemmConfig(GemmDesc::packed(2048, 2048, 2048), target));
  EXPECT_EQ(tall.mr, 6);
}

TEST(BlockingModelTest, ARowsAndBPanelShareThreeQuartersOfL2) {
  // Zen 1, 512 KiB L2: B's panel takes half of it (kc 256, nc 256) and the
  // rows of A a row block reads again for every sliver the rest of three
  // quarters: mc 126 (252 overfilled L2).
  Target zen1 = parseTarget("x86_64-unknown-linux-gnu:znver1:+avx,+avx2,"
                            "+fma:l1d=32K,l2=512K,l3=8M,cores=2");
  QM_ASSERT_EXPECTED(
      big, chooseGemmConfig(GemmDesc::packed(2048, 2048, 2048), zen1));
  EXPECT_EQ(big.kc, 256);
  EXPECT_EQ(big.nc, 256);
  EXPECT_EQ(big.mc, 126);
  EXPECT_LE((big.mc + big.nc) * big.kc * 4, 512 * 1024 * 3 / 4);
  // All of M in one row block stays one block.
  QM_ASSERT_EXPECTED(one,
                     chooseGemmConfig(GemmDesc::packed(196, 256, 2304), zen1));
  EXPECT_EQ(one.mc, 198);
  // A 2 MiB L2 (AVX-512): 512^3 fits as it was (one row block, B packed
  // by its tiles); from 1024^3 on, mc 678 -> 384 beside 640 columns.
  Target xeon = parseTarget("x86_64-unknown-linux-gnu:emeraldrapids:+avx,"
                            "+avx2,+fma,+avx512f,+avx512bw:l1d=48K,l2=2M,"
                            "l3=105M,cores=2");
  QM_ASSERT_EXPECTED(mid,
                     chooseGemmConfig(GemmDesc::packed(512, 512, 512), xeon));
  EXPECT_EQ(mid.mc, 516);
  EXPECT_EQ(mid.packB, BPacking::Fused);
  QM_ASSERT_EXPECTED(
      large, chooseGemmConfig(GemmDesc::packed(1024, 1024, 1024), xeon));
  EXPECT_EQ(large.kc, 384);
  EXPECT_EQ(large.nc, 640);
  EXPECT_EQ(large.mc, 384);
}

TEST(BlockingModelTest, FusedPackingAcrossKBlocksWhereItPays) {
  // One row block and K in several kc blocks: the tiles pack B as they
  // read it, except on Zen 1, where the next panel's prefetch in their K
  // loops costs 2.2x (Target::fusedPackingAcrossKBlocksPays): a PACK B
  // pass there. K within one kc block: fused everywhere.
  const char *caches = ":l1d=32K,l2=512K,l3=8M,cores=2";
  Target zen1 = parseTarget(std::string("x86_64-unknown-linux-gnu:znver1:"
                                        "+avx,+avx2,+fma") +
                            caches);
  Target zen3 = parseTarget(std::string("x86_64-unknown-linux-gnu:znver3:"
                                        "+avx,+avx2,+fma") +
                            caches);
  EXPECT_FALSE(zen1.fusedPackingAcrossKBlocksPays());
  EXPECT_TRUE(zen3.fusedPackingAcrossKBlocksPays());
  const GemmDesc deep = GemmDesc::packed(196, 256, 2304);
  QM_ASSERT_EXPECTED(onZen1, chooseGemmConfig(deep, zen1));
  QM_ASSERT_EXPECTED(onZen3, chooseGemmConfig(deep, zen3));
  EXPECT_LT(onZen1.kc, deep.k);
  EXPECT_EQ(onZen1.packB, BPacking::Panels);
  EXPECT_EQ(onZen3.packB, BPacking::Fused);
  QM_ASSERT_EXPECTED(shallow,
                     chooseGemmConfig(GemmDesc::packed(196, 256, 192), zen1));
  EXPECT_EQ(shallow.kc, 192);
  EXPECT_EQ(shallow.packB, BPacking::Fused);
}

TEST(BlockingModelTest, Deterministic) {
  Target target = parseTarget(kZnver3);
  GemmDesc d = GemmDesc::packed(300, 200, 100);
  QM_ASSERT_EXPECTED(a, chooseGemmConfig(d, target));
  QM_ASSERT_EXPECTED(b, chooseGemmConfig(d, target));
  EXPECT_EQ(a.str(), b.str());
}

} // namespace

/// A prepacked B's layout (PrepackedB.h) from a kernel header, and packB
/// writing it: lanes of a group's k, slivers of NR columns, zeros past K
/// and N, plus 128 for bytes.
TEST(PrepackedBTest, ParsesAndPacksTheLayout) {
  QM_ASSERT_EXPECTED(layout,
                     PrepackedB::parse("nr=16 k_groups=4 element_bytes=2 "
                                       "plus128=0"));
  EXPECT_EQ(layout.nr, 16);
  EXPECT_EQ(layout.kGroups, 4);
  EXPECT_EQ(layout.bytes(17), 2 * 4 * 16 * 4); // two slivers
  for (const char *bad :
       {"nr=16 k_groups=4 element_bytes=3 plus128=0", "nr=16 k_groups=4",
        "nr=16 k_groups=4 element_bytes=2 plus128=1",
        "nr=x k_groups=4 "
        "element_bytes=2 "
        "plus128=0",
        "nr=16 k_groups=4 element_bytes=2 plus128=0 extra=1"})
    EXPECT_TRUE(bool(llvm::errorToBool(PrepackedB::parse(bad).takeError())))
        << bad;
  // B 7 x 17 of bf16 (k rows, n columns), element (k, n) = 100 k + n.
  GemmDesc d = GemmDesc::packed(3, 17, 7);
  d.precision = GemmPrecision::Bf16;
  std::vector<uint16_t> b(7 * 17);
  for (int k = 0; k < 7; ++k)
    for (int n = 0; n < 17; ++n)
      b[size_t(k * 17 + n)] = uint16_t(100 * k + n);
  ASSERT_FALSE(bool(llvm::errorToBool(layout.check(d))));
  std::vector<uint16_t> out(size_t(layout.bytes(17) / 2), 0xffff);
  packB(layout, d, b.data(), out.data());
  auto at = [&](int sliver, int group, int col, int t) {
    return out[size_t(((sliver * 4 + group) * 16 + col) * 2 + t)];
  };
  EXPECT_EQ(at(0, 0, 0, 0), 0);
  EXPECT_EQ(at(0, 0, 0, 1), 100); // k 1 beside k 0
  EXPECT_EQ(at(0, 2, 5, 1), 505); // group 2, k 5, column 5
  EXPECT_EQ(at(0, 3, 5, 0), 605); // k 6
  EXPECT_EQ(at(0, 3, 5, 1), 0);   // k 7: past K
  EXPECT_EQ(at(1, 1, 0, 0), 216); // column 16 in the second sliver
  EXPECT_EQ(at(1, 1, 1, 0), 0);   // column 17: past N
  // The same B stored transposed packs the same.
  GemmDesc t = GemmDesc::packed(3, 17, 7, false, true);
  t.precision = GemmPrecision::Bf16;
  std::vector<uint16_t> bt(17 * 7);
  for (int k = 0; k < 7; ++k)
    for (int n = 0; n < 17; ++n)
      bt[size_t(n * 7 + k)] = uint16_t(100 * k + n);
  std::vector<uint16_t> outT(out.size(), 0xffff);
  packB(layout, t, bt.data(), outT.data());
  EXPECT_EQ(out, outT);
  // Bytes plus 128; a K beyond the layout's groups is refused.
  QM_ASSERT_EXPECTED(bytes, PrepackedB::parse("nr=16 k_groups=2 "
                                              "element_bytes=1 plus128=1"));
  GemmDesc s8 = GemmDesc::packed(2, 16, 8);
  s8.precision = GemmPrecision::S8S8;
  std::vector<int8_t> b8(8 * 16, -3);
  std::vector<uint8_t> out8(size_t(bytes.bytes(16)));
  packB(bytes, s8, b8.data(), out8.data());
  EXPECT_EQ(out8[0], uint8_t(125));
  s8.k = 9;
  EXPECT_TRUE(bool(llvm::errorToBool(bytes.check(s8))));
}

TEST(BlockingModelTest, EightBitRowsAgainstBTransposedReadItInPlace) {
  // Without AMX-INT8, 8-bit rows against B^T take the matrix-vector form
  // up to kI8MatrixVectorRows rows, up to kI8MatrixVectorRowsLongK where K
  // is at least kI8LongK; past them B^T is packed; one row always.
  Target target = parseTarget(
      "x86_64-unknown-linux-gnu:znver5:+avx,+avx2,+fma,+bmi2,+avx512f,"
      "+avx512bw,+avx512vl,+avx512bf16,+avx512vnni:l1d=48K,l2=1M,l3=32M,"
      "cores=2");
  struct Case {
    int64_t m, n, k;
    bool inPlace;
  };
  for (Case t : {Case{1, 3072, 768, true}, Case{16, 3072, 768, true},
                 Case{17, 3072, 768, false}, Case{64, 4096, 4096, true},
                 Case{65, 4096, 4096, false}, Case{24, 768, 4095, false}}) {
    GemmDesc d = GemmDesc::packed(t.m, t.n, t.k, false, true);
    d.precision = GemmPrecision::S8S8;
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(d, target));
    SCOPED_TRACE(d.str() + " " + c.str());
    EXPECT_EQ(isMatrixVectorForm(d, c), t.inPlace);
  }
}

TEST(BlockingModelTest, DotKernelsPackBAsStoredInShallowWidePanels) {
  // bf16 and 8-bit rows against a B as stored larger than L2, up to 512
  // rows: B's panel nc = min(N, 2048) columns wide (whole slivers), kc what
  // is left of L2 (1 MiB) in whole K steps; against B^T, past 512 rows, or
  // with B in L2, the panels before. (No AMX: the dot kernels; up to
  // streamedRows rows stream B's rows in place instead, K in blocks of
  // streamedKBlock.)
  Target target = parseTarget(
      "x86_64-unknown-linux-gnu:znver5:+avx,+avx2,+fma,+bmi2,+avx512f,"
      "+f16c,+avx512bw,+avx512vl,+avx512bf16,+avx512vnni:l1d=48K,l2=1M,l3=32M,"
      "cores=2");
  struct Case {
    GemmPrecision precision;
    int64_t m, n, k;
    bool transB;
    bool shallow;
  };
  for (Case t : {Case{GemmPrecision::S8S8, 64, 4096, 4096, false, true},
                 Case{GemmPrecision::S8S8, 49, 3000, 4096, false, true},
                 Case{GemmPrecision::Bf16, 64, 4096, 4096, false, true},
                 Case{GemmPrecision::Bf16, 512, 4096, 4096, false, true},
                 Case{GemmPrecision::Bf16, 513, 4096, 4096, false, false},
                 Case{GemmPrecision::Bf16, 33, 4096, 4096, true, false},
                 Case{GemmPrecision::S8S8, 64, 512, 1024, false, false}}) {
    GemmDesc d = GemmDesc::packed(t.m, t.n, t.k, false, t.transB);
    d.precision = t.precision;
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(d, target));
    SCOPED_TRACE(d.str() + " " + c.str());
    EXPECT_EQ(c.packB, BPacking::Panels);
    const int64_t eb = d.operandElementBytes();
    const int64_t step = d.kGroup() * c.kUnroll;
    const int64_t wide =
        std::min<int64_t>((t.n + c.nr - 1) / c.nr * c.nr, 2048 / c.nr * c.nr);
    EXPECT_EQ(c.nc == wide && c.kc == 1024 * 1024 / (wide * eb) / step * step,
              t.shallow);
  }
  for (GemmPrecision p : {GemmPrecision::S8S8, GemmPrecision::U8S8,
                          GemmPrecision::Bf16, GemmPrecision::F16})
    for (int64_t m : {int64_t(1), int64_t(8), kStreamedRows}) {
      GemmDesc d = GemmDesc::packed(m, 4096, 4096);
      d.precision = p;
      QM_ASSERT_EXPECTED(c, chooseGemmConfig(d, target));
      SCOPED_TRACE(d.str() + " " + c.str());
      EXPECT_EQ(c.packB, BPacking::InPlace);
      EXPECT_EQ(c.kc, p == GemmPrecision::S8S8 || p == GemmPrecision::U8S8
                          ? 512
                          : 1024);
    }
}
