//===- ConvKernelTest.cpp - Emitted convolution kernels, end to end -------===//
//
// Emit (sconv2d) -> assemble -> load -> validate against fp64 and OpenBLAS
// im2col + sgemm, for both layouts, odd shapes (C = 1 and 3, H and W not
// multiples of anything, stride 2, dilation 2, strided input views, batch),
// both isas; broken kernels are caught, in process and in qimeng-runner.
//
//===----------------------------------------------------------------------===//
#include "ErrorHelpers.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/Partition.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Kernel/WorkspaceHeader.h"
#include "qimeng/Runtime/ConvValidator.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Runtime/JitKernel.h"
#include <cstring>
#include <gtest/gtest.h>

using namespace qimeng;

namespace {

const Target &host() {
  static const Target target = Target::detectHost();
  return target;
}

/// The host without AMX, for the tests of the AVX-512 dot convolutions.
const Target &dotHost() {
  static const Target target = Target::detectHost().withoutAmx();
  return target;
}

#define QM_SKIP_UNLESS_VECTOR_HOST()                                           \
  do {                                                                         \
    if (host().bestIsa() == VectorIsa::None)                                   \
      GTEST_SKIP() << "host " << host().cpu                                    \
                   << " has no vector isa the emitters support";               \
  } while (0)

/// The model's config for the convolution's GEMM view, blocking shrunk so
/// that kc, mc and nc boundaries fall inside small shapes.
GemmConfig smallConfig(const ConvDesc &d) {
  auto config = chooseGemmConfig(d.gemmView(), host());
  EXPECT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  GemmConfig c = config ? *config : GemmConfig{};
  // The table's first block two vectors wide (small enough that these
  // shapes have several slivers each way), k-major A.
  const int twoVectors = 2 * Target::vectorBits(c.isa) / 32;
  for (const MicroKernelShape &s : microKernelTable(c.isa))
    if (s.nr == twoVectors) {
      c.mr = s.mr;
      c.nr = s.nr;
      c.order = s.order;
      break;
    }
  c.aLayout = ALayout::KMajor;
  c.packB = BPacking::Panels;
  c.kc = std::min<int64_t>(c.kc, 24);
  c.mc = 2 * c.mr;
  c.nc = 2 * c.nr;
  return clampToProblem(c, d.gemmView());
}

::testing::AssertionResult validates(const ConvDesc &d, const GemmConfig &c,
                                     llvm::StringRef fault = "",
                                     ValidationReport *out = nullptr) {
  auto loaded =
      buildConvKernel(d, c, host(), EmitterOptions::defaults(), fault);
  if (!loaded)
    return ::testing::AssertionFailure()
           << d.str() << " with " << c.str()
           << ": build failed: " << llvm::toString(loaded.takeError());
  GemmKernelFn fn = loaded->jit->gemm();
  auto report = validateConv(
      d,
      [fn](const float *i, const float *f, float *o, void *ws) {
        fn(i, f, o, ws);
      },
      loaded->emitted.workspaceBytes);
  if (!report)
    return ::testing::AssertionFailure()
           << d.str()
           << ": validator error: " << llvm::toString(report.takeError());
  if (out)
    *out = *report;
  if (!report->passed)
    return ::testing::AssertionFailure()
           << d.str() << " with " << c.str() << ": " << report->failure;
  return ::testing::AssertionSuccess();
}

/// `c`'s kernel for `d` (broken by `fault`, if any) validated in
/// qimeng-runner with the default options, over `parts` of a parallel call.
llvm::Expected<ValidationReport>
validateInRunner(const ConvDesc &d, const GemmConfig &c,
                 const std::vector<GemmRange> &parts = {},
                 llvm::StringRef fault = "") {
  auto emitted = emitConvKernel(d, c, EmitterOptions::defaults(), fault);
  if (!emitted)
    return emitted.takeError();
  return validateIsolated(d, host(), *emitted,
                          IsolatedValidationOptions::defaults(), parts);
}

/// `c` on two threads: the GEMM view in two parts, validated in
/// qimeng-runner.
void expectTwoPartsValidate(const ConvDesc &d, GemmConfig c) {
  c.threads = 2;
  std::vector<GemmRange> parts = partitionGemm(d.gemmView(), c, 2, 0);
  ASSERT_EQ(parts.size(), 2u);
  QM_ASSERT_EXPECTED(report, validateInRunner(d, c, parts));
  EXPECT_TRUE(report.passed) << report.failure;
}

/// qimeng-runner fails `kernel`, made for another form of `d`, on `d`, and
/// says `why`.
void expectRunnerCatches(const ConvDesc &d, const EmittedKernel &kernel,
                         llvm::StringRef why) {
  QM_ASSERT_EXPECTED(report,
                     validateIsolated(d, host(), kernel,
                                      IsolatedValidationOptions::defaults()));
  EXPECT_FALSE(report.passed);
  EXPECT_NE(report.failure.find(why.str()), std::string::npos)
      << report.failure;
}

ConvDesc nhwc(int64_t n, int64_t h, int64_t w, int64_t c, int64_t f, int64_t k,
              int64_t s = 1, int64_t dil = 1) {
  return ConvDesc::dense(ConvLayout::NhwcHwcf, n, h, w, c, f, k, k, s, s, dil,
                         dil);
}

ConvDesc nchw(int64_t n, int64_t h, int64_t w, int64_t c, int64_t f, int64_t k,
              int64_t s = 1, int64_t dil = 1) {
  return ConvDesc::dense(ConvLayout::NchwFchw, n, h, w, c, f, k, k, s, s, dil,
                         dil);
}

TEST(ConvDescTest, GemmViewAndOutputShape) {
  ConvDesc d = nhwc(2, 58, 58, 64, 32, 3);
  EXPECT_EQ(d.oh(), 56);
  EXPECT_EQ(d.ow(), 56);
  EXPECT_EQ(d.gemmView(), GemmDesc::packed(2 * 56 * 56, 32, 9 * 64));
  EXPECT_DOUBLE_EQ(d.flops(), 2.0 * 2 * 56 * 56 * 32 * 9 * 64);
  ConvDesc s = nchw(1, 229, 229, 3, 64, 7, 2);
  EXPECT_EQ(s.oh(), 112);
  EXPECT_EQ(s.gemmView(), GemmDesc::packed(64, 112 * 112, 3 * 49));
  ConvDesc dil = nhwc(1, 9, 10, 3, 4, 3, 1, 2);
  EXPECT_EQ(dil.oh(), 5);
  EXPECT_EQ(dil.ow(), 6);
  EXPECT_EQ(d.str(),
            "sconv2d_nhwc_hwcf_n2_h58_w58_c64_f32_k3x3_s1x1_d1x1_is215296x"
            "3712x64");
  QM_ASSERT_FAILS_WITH(nhwc(1, 4, 4, 3, 4, 5).verify(),
                       "a 5x5 filter with dilation 1x1 spans 5x5, more than "
                       "the 4x4 input");
  ConvDesc overlap = nhwc(1, 4, 4, 3, 4, 3);
  overlap.inputStrides[2] = 2;
  QM_ASSERT_FAILS_WITH(overlap.verify(), "overlap");
}

TEST(ConvDescTest, RuntimeStrides) {
  ConvDesc d = nhwc(2, 9, 8, 3, 4, 3);
  d.runtimeStrides = true;
  // The key names the form, not the representative strides.
  EXPECT_EQ(d.str(), "sconv2d_nhwc_hwcf_n2_h9_w8_c3_f4_k3x3_s1x1_d1x1_isrt");
  QM_ASSERT_OK(d.verify());
  // The padded view: rows and images further apart, pixels still C apart.
  ConvDesc view = d.withPaddedInputStrides();
  EXPECT_EQ(view.inputStrides[2], 3);
  EXPECT_GT(view.inputStrides[1], 8 * 3);
  EXPECT_GT(view.inputStrides[0], 9 * view.inputStrides[1]);
  QM_ASSERT_OK(view.verify());
  ConvDesc c = nchw(2, 9, 8, 3, 4, 3).withPaddedInputStrides();
  EXPECT_TRUE(c.inputIsDense()) << "immediates: nothing to pad";
  c.runtimeStrides = true;
  ConvDesc cv = c.withPaddedInputStrides();
  EXPECT_GT(cv.inputStrides[2], 8);
  EXPECT_GT(cv.inputStrides[1], 9 * cv.inputStrides[2]);
  EXPECT_GT(cv.inputStrides[0], 3 * cv.inputStrides[1]);
  QM_ASSERT_OK(cv.verify());
  // An nhwc kernel holds the pixel stride C as an immediate.
  ConvDesc wide = d;
  wide.inputStrides[2] = 5;
  wide.inputStrides[1] = 8 * 5;
  wide.inputStrides[0] = 9 * 8 * 5;
  QM_ASSERT_FAILS_WITH(wide.verify(), "w stride");
  // A step the kernel reads at run time ends the contiguous run: a filter
  // as wide as the input no longer joins its rows.
  ConvDesc full = nchw(1, 5, 3, 2, 4, 3);
  ASSERT_EQ(full.contiguousRun(), 3 * 3);
  full.runtimeStrides = true;
  EXPECT_EQ(full.contiguousRun(), 3);
  ConvDesc pixels = nhwc(1, 5, 3, 4, 4, 3); // KH*KW*C in a row when dense
  ASSERT_EQ(pixels.contiguousRun(), 3 * 3 * 4);
  pixels.runtimeStrides = true;
  EXPECT_EQ(pixels.contiguousRun(), 3 * 4);
}

TEST(ConvDescTest, ContiguousRun) {
  EXPECT_EQ(nhwc(1, 58, 58, 64, 64, 3).contiguousRun(), 3 * 64);
  EXPECT_EQ(nhwc(1, 230, 230, 3, 64, 7, 2).contiguousRun(), 7 * 3);
  EXPECT_EQ(nhwc(1, 56, 56, 256, 64, 1).contiguousRun(), 256);
  EXPECT_EQ(nhwc(1, 9, 10, 3, 4, 3, 1, 2).contiguousRun(), 3)
      << "dilated: only the channels are contiguous";
  ConvDesc view = nhwc(1, 7, 6, 3, 8, 3);
  view.inputStrides[2] = 5; // pixels 5 floats apart
  view.inputStrides[1] = 6 * 5;
  view.inputStrides[0] = 7 * 6 * 5;
  EXPECT_EQ(view.contiguousRun(), 3);
  EXPECT_EQ(nchw(1, 8, 8, 3, 7, 3).contiguousRun(), 3);
  // A filter as wide as the input: its rows follow one another.
  EXPECT_EQ(nchw(1, 5, 3, 2, 4, 3).contiguousRun(), 3 * 3);
  // The largest divisor of the run within a limit: 384 = 3 * 128.
  ConvDesc res3 = nhwc(1, 30, 30, 128, 128, 3);
  EXPECT_EQ(res3.largestRunDivisorAtMost(192), 192);
  EXPECT_EQ(res3.largestRunDivisorAtMost(191), 128);
  EXPECT_EQ(res3.largestRunDivisorAtMost(1000), 384);
  EXPECT_EQ(nhwc(1, 230, 230, 3, 64, 7, 2).largestRunDivisorAtMost(20), 7);
  EXPECT_EQ(res3.largestRunDivisorAtMost(0), 1);
}

/// nchw: the pixels are the GEMM's columns, so the block pads them to its
/// nr: the model takes the block that covers a twentieth more of M x N
/// than its own would, and keeps its own otherwise.
TEST(ConvModelTest, NchwBlocksCoverThePixels) {
  auto target = Target::parse("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,"
                              "+fma,+avx512f:l1d=48K,l2=1M,l3=32M,cores=2");
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  auto covered = [](const GemmDesc &g, int64_t mr, int64_t nr) {
    return double(g.m) / double((g.m + mr - 1) / mr * mr) * double(g.n) /
           double((g.n + nr - 1) / nr * nr);
  };
  // res4 (256 filters, 196 pixels): a block of 32 columns (224, not 256).
  ConvDesc res4 = nchw(1, 16, 16, 256, 256, 3);
  QM_ASSERT_EXPECTED(c4, chooseKernelConfig(res4, *target));
  EXPECT_EQ(c4.nr, 32) << c4.str();
  EXPECT_GT(covered(res4.gemmView(), c4.mr, c4.nr), 0.84) << c4.str();
  // res2 (3136 pixels: whole slivers of 64): the model's 6 x 64 stays.
  ConvDesc res2 = nchw(1, 58, 58, 64, 64, 3);
  QM_ASSERT_EXPECTED(c2, chooseKernelConfig(res2, *target));
  EXPECT_EQ(c2.mr, 6);
  EXPECT_EQ(c2.nr, 64);
  // Threads split the pixels, each gathering its own, unless they are
  // fewer than the filters (res5: 49 pixels, 512 filters; in bf16 too).
  EXPECT_EQ(c2.split, SplitAxis::N);
  for (GemmPrecision p : {GemmPrecision::F32, GemmPrecision::Bf16}) {
    ConvDesc res5 = nchw(1, 9, 9, 512, 512, 3);
    res5.precision = p;
    auto withBf16 = Target::parse("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,"
                                  "+fma,+avx512f,+avx512bw,+avx512bf16:"
                                  "l1d=48K,l2=1M,l3=32M,cores=2");
    ASSERT_TRUE(static_cast<bool>(withBf16));
    QM_ASSERT_EXPECTED(c5, chooseKernelConfig(res5, *withBf16));
    EXPECT_EQ(c5.split, SplitAxis::M) << res5.str();
  }
  for (ConvDesc d : {res4, res2, nchw(1, 9, 9, 512, 512, 3)}) {
    QM_ASSERT_EXPECTED(c, chooseKernelConfig(d, *target));
    // (Of the blocks for convolutions: not one for a GEMM's single sliver.)
    for (const MicroKernelShape &s : microKernelTable(c.isa))
      if (!s.oneSliverOnly) {
        EXPECT_LE(covered(d.gemmView(), s.mr, s.nr),
                  covered(d.gemmView(), c.mr, c.nr) * 1.05 + 1e-9)
            << d.str() << " " << c.str() << " vs " << s.mr << "x" << s.nr;
      }
    EXPECT_EQ(c.mc % c.mr, 0);
    EXPECT_EQ(c.nc % c.nr, 0);
  }
}

TEST(ConvModelTest, PanelsAreWholePiecesOfTheRun) {
  auto target = Target::parse("x86_64-unknown-linux-gnu:znver5:+avx,"
                              "+avx2,+fma,+avx512f:l1d=48K,l2=2M,l3=260M,"
                              "cores=2");
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  // res2: read in place, one 7x64 sliver across all 64 filters (the
  // tallest of the widest blocks, bmem), and one panel of all of K (576 x
  // 64 floats of filter, 144K: under L2/4).
  QM_ASSERT_EXPECTED(res2,
                     chooseKernelConfig(nhwc(1, 58, 58, 64, 64, 3), *target));
  EXPECT_EQ(res2.aLayout, ALayout::Direct);
  EXPECT_EQ(res2.kc, 576);
  EXPECT_EQ(res2.mr, 7);
  EXPECT_EQ(res2.nr, 64);
  EXPECT_EQ(res2.order, KStepOrder::BMem);
  EXPECT_EQ(res2.split, SplitAxis::M);
  // Every nhwc_hwcf filter is packed by the tiles (packb=fused).
  EXPECT_EQ(res2.packB, BPacking::Fused);
  // res3: 128 filters, 7x64 (the widest block whose nr divides F); K =
  // 1152 x 64 floats is 288K: one panel.
  QM_ASSERT_EXPECTED(res3,
                     chooseKernelConfig(nhwc(1, 30, 30, 128, 128, 3), *target));
  EXPECT_EQ(res3.aLayout, ALayout::Direct);
  EXPECT_EQ(res3.mr, 7);
  EXPECT_EQ(res3.nr, 64);
  EXPECT_EQ(res3.kc, 1152);
  EXPECT_EQ(res3.packB, BPacking::Fused);
  // res4: K = 2304 is too deep for one panel; the run (768) is over the
  // model's kc for the 7x64 block (384: its B sliver in twice L1d), so its
  // largest divisor within.
  QM_ASSERT_EXPECTED(res4,
                     chooseKernelConfig(nhwc(1, 16, 16, 256, 256, 3), *target));
  EXPECT_EQ(res4.aLayout, ALayout::Direct);
  EXPECT_EQ(res4.nr, 64);
  EXPECT_EQ(res4.kc, 384);
  // 32 filters: no block wider than the table's first (12x32); 14 rows
  // (half of the 28 output columns) keep every sliver in one output row,
  // and 7 rows for 7 columns.
  QM_ASSERT_EXPECTED(f32,
                     chooseKernelConfig(nhwc(1, 30, 30, 128, 32, 3), *target));
  EXPECT_EQ(f32.mr, 14);
  EXPECT_EQ(f32.nr, 32);
  QM_ASSERT_EXPECTED(f32w7,
                     chooseKernelConfig(nhwc(1, 9, 9, 128, 32, 3), *target));
  EXPECT_EQ(f32w7.mr, 7);
  EXPECT_EQ(f32w7.nr, 32);
  // res5: 49 rows in seven 7-row slivers, all of M in one block.
  QM_ASSERT_EXPECTED(res5,
                     chooseKernelConfig(nhwc(1, 9, 9, 512, 512, 3), *target));
  EXPECT_EQ(res5.aLayout, ALayout::Direct);
  EXPECT_EQ(res5.mr, 7);
  EXPECT_EQ(res5.nr, 64);
  EXPECT_EQ(res5.mc, 49);
  // 49 pixels, 512 filters, A read in place: threads split the filters.
  EXPECT_EQ(res5.split, SplitAxis::N);
  // The stem: a run of 21 has no divisor near the model's kc; read in
  // place with kc all of K (147), the K loop walking the 7 runs, in 7x64
  // slivers (64 filters).
  QM_ASSERT_EXPECTED(
      stem, chooseKernelConfig(nhwc(1, 230, 230, 3, 64, 7, 2), *target));
  EXPECT_EQ(stem.aLayout, ALayout::Direct);
  EXPECT_EQ(stem.kc, 147);
  EXPECT_EQ(stem.nr, 64);
  // nhwc_fhwc's filter is B transposed: packed by PACK B.
  ConvDesc fhwc = nhwc(1, 30, 30, 128, 128, 3);
  fhwc.layout = ConvLayout::NhwcFhwc;
  QM_ASSERT_EXPECTED(t, chooseKernelConfig(fhwc, *target));
  EXPECT_EQ(t.packB, BPacking::Panels);
  // A dilated filter: runs of C = 5 floats, too short for the K loop to
  // walk; packed in rows, kc a multiple of 5.
  QM_ASSERT_EXPECTED(
      dil, chooseKernelConfig(nhwc(1, 40, 40, 5, 32, 3, 1, 2), *target));
  EXPECT_EQ(dil.aLayout, ALayout::Rows);
  EXPECT_EQ(dil.kc % 5, 0);
}

TEST(ConvModelTest, IntelCoresTakeNoBlocksOfFmasFromMemory) {
  // The same layers on an Intel AVX-512 core (Target::
  // fmaFromMemoryBlocksPay): 6x64 with its four B vectors in registers
  // where it covers the rows about as well, the same panels.
  auto intel = Target::parse("x86_64-unknown-linux-gnu:sapphirerapids:+avx,"
                             "+avx2,+fma,+avx512f:l1d=48K,l2=2M,l3=260M,"
                             "cores=2");
  ASSERT_TRUE(static_cast<bool>(intel)) << llvm::toString(intel.takeError());
  EXPECT_FALSE(intel->fmaFromMemoryBlocksPay());
  for (ConvDesc d :
       {nhwc(1, 58, 58, 64, 64, 3), nhwc(1, 30, 30, 128, 128, 3),
        nhwc(1, 16, 16, 256, 256, 3), nhwc(1, 230, 230, 3, 64, 7, 2)}) {
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(c, chooseKernelConfig(d, *intel));
    EXPECT_EQ(c.mr, 6) << c.str();
    EXPECT_EQ(c.nr, 64) << c.str();
    EXPECT_NE(c.order, KStepOrder::BMem) << c.str();
    EXPECT_EQ(c.aLayout, ALayout::Direct) << c.str();
  }
  QM_ASSERT_EXPECTED(res2,
                     chooseKernelConfig(nhwc(1, 58, 58, 64, 64, 3), *intel));
  EXPECT_EQ(res2.kc, 576);
  EXPECT_EQ(res2.packB, BPacking::Fused);
  // res5's 49 pixels: 6 rows would pad them to 54, 7 cover them exactly
  // (a tenth more of the rows computed): 7x64 there.
  QM_ASSERT_EXPECTED(res5,
                     chooseKernelConfig(nhwc(1, 9, 9, 512, 512, 3), *intel));
  EXPECT_EQ(res5.mr, 7);
  EXPECT_EQ(res5.order, KStepOrder::BMem);
}

TEST(ConvKernelTest, ModelConfigsValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // The model's own configs (direct with kc = KW*C, rows in pieces; 7x64
  // bmem, or 6x64 on Intel's cores, with the filter packed by the tiles
  // for 64 filters, slivers
  // across output rows, and for 128 filters over 256 channels, K in 24
  // panels with the next one prefetched), with the blocks shrunk so that
  // mc boundaries fall inside the shapes.
  for (ConvDesc d : {nhwc(1, 18, 18, 16, 32, 3), nhwc(1, 16, 30, 16, 40, 3),
                     nhwc(1, 37, 35, 3, 32, 7, 2), nhwc(2, 9, 11, 8, 16, 3),
                     nhwc(1, 16, 17, 16, 64, 3), nhwc(1, 7, 9, 256, 128, 3)}) {
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(c, chooseKernelConfig(d, host()));
    c.mc = std::min<int64_t>(c.mc, 3 * c.mr);
    EXPECT_TRUE(validates(d, c)) << c.str();
    if (d.f >= 64 && host().bestIsa() == VectorIsa::Avx512) {
      const bool bmem = host().fmaFromMemoryBlocksPay();
      EXPECT_EQ(c.mr, bmem ? 7 : 6) << c.str();
      EXPECT_EQ(c.nr, 64) << c.str();
      EXPECT_EQ(c.order == KStepOrder::BMem, bmem) << c.str();
      EXPECT_EQ(c.packB, BPacking::Fused) << c.str();
    }
  }
}

/// nchw_fchw's model configs: the filter (the GEMM view's A) read where it
/// lies, B gathered a piece at a time; strides, a batch, a bias and relu,
/// run-time strides on a padded view; blocks shrunk so that mc and nc
/// boundaries fall inside the shapes.
TEST(ConvKernelTest, NchwModelConfigsValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  ConvDesc epilogue = nchw(1, 12, 20, 16, 24, 3);
  epilogue.bias = epilogue.activation.relu = true;
  ConvDesc runtime = nchw(2, 10, 19, 8, 16, 3);
  runtime.runtimeStrides = true;
  for (ConvDesc d : {nchw(1, 16, 16, 32, 40, 3), nchw(2, 13, 21, 8, 24, 3, 2),
                     nchw(1, 9, 9, 64, 72, 3), epilogue, runtime}) {
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(c, chooseKernelConfig(d, host()));
    EXPECT_EQ(c.aLayout, ALayout::Direct) << c.str();
    EXPECT_TRUE(validates(d, c)) << c.str();
    c.mc = std::min<int64_t>(c.mc, 2 * c.mr);
    c.nc = std::min<int64_t>(c.nc, 2 * c.nr);
    EXPECT_TRUE(validates(d, c)) << c.str();
    if (d.runtimeStrides) {
      QM_ASSERT_EXPECTED(report, validateInRunner(d, c));
      EXPECT_TRUE(report.passed) << report.failure;
    }
  }
}

TEST(ConvKernelTest, EpiloguesValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // Overwrite (the output NaN before the call), a bias per channel (the
  // GEMM's columns for nhwc, its rows for nchw) and relu (or leaky relu
  // with the bias), alone and together, in every layout, the model's configs
  // and the small ones (row and column edges, several kc blocks).
  for (ConvDesc base :
       {nhwc(1, 9, 9, 4, 8, 3, 2), nhwc(1, 16, 17, 16, 64, 3),
        nchw(1, 10, 10, 8, 8, 3), nchw(2, 13, 12, 3, 6, 3, 2, 2),
        ConvDesc::dense(ConvLayout::NhwcFhwc, 1, 9, 9, 4, 8, 3, 3, 1, 1, 2, 2)})
    for (int e = 1; e < 8; ++e) {
      ConvDesc d = base;
      d.overwrite = e & 1;
      d.bias = e & 2;
      d.activation.relu = e & 4;
      if (d.activation.relu && d.overwrite)
        d.activation.bound = 1.5f; // relu6's form, a clamp to [0, 1.5]
      if (d.activation.relu && d.bias)
        d.activation.floor = -0.5f; // hardtanh's form, a clamp to [-0.5, 1.5]
      if (!d.activation.relu && d.bias)
        d.activation.leakySlope = d.overwrite ? 0.1f : 2.5f; // leaky relu
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(c, chooseKernelConfig(d, host()));
      EXPECT_TRUE(validates(d, c)) << c.str();
      EXPECT_TRUE(validates(d, smallConfig(d)));
    }
}

TEST(ConvKernelTest, SmoothActivationsValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // Every smooth activation (silu: YOLOv5's blocks; hardsigmoid:
  // MobileNetV3's squeeze-and-excitation) after a bias per channel, in
  // every layout: the five layers' model configs take the first five,
  // their small configs the other four and the first again, so that each
  // runs on a convolution.
  int i = 0;
  for (ConvDesc base :
       {nhwc(1, 9, 9, 4, 8, 3, 2), nhwc(1, 16, 17, 16, 64, 3),
        nchw(1, 10, 10, 8, 8, 3), nchw(2, 13, 12, 3, 6, 3, 2, 2),
        ConvDesc::dense(ConvLayout::NhwcFhwc, 1, 9, 9, 4, 8, 3, 3, 1, 1, 2,
                        2)}) {
    ConvDesc d = base;
    d.overwrite = true;
    d.bias = true;
    const auto &all = Activation::kSmoothActivations;
    const int count = int(std::size(all));
    d.activation.smooth = all[i % count];
    QM_ASSERT_EXPECTED(c, chooseKernelConfig(d, host()));
    EXPECT_TRUE(validates(d, c)) << d.str() << " " << c.str();
    d.activation.smooth = all[(i + 5) % count];
    EXPECT_TRUE(validates(d, smallConfig(d))) << d.str();
    ++i;
  }
}

/// Builds `built`'s kernel (`config`, or the small one) and validates it
/// as each claimed descriptor: it must pass exactly where the claim says
/// so.
void expectVerdicts(const ConvDesc &built,
                    llvm::ArrayRef<std::pair<ConvDesc, bool>> claims,
                    std::optional<GemmConfig> config = std::nullopt) {
  auto loaded = buildConvKernel(built, config.value_or(smallConfig(built)),
                                host(), EmitterOptions::defaults(), "");
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  GemmKernelFn fn = loaded->jit->gemm();
  for (const auto &[claimed, passes] : claims) {
    auto report = validateConv(
        claimed,
        [fn](const float *i, const float *f, float *o, void *ws) {
          fn(i, f, o, ws);
        },
        loaded->emitted.workspaceBytes);
    ASSERT_TRUE(static_cast<bool>(report))
        << llvm::toString(report.takeError());
    EXPECT_EQ(report->passed, passes) << claimed.str() << report->failure;
  }
}

TEST(ConvKernelTest, WrongNanRuleIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // relu that keeps a NaN checked as torch's clamp, which makes it the
  // floor: validation's NaN in the input's first element shows it in the
  // first pixel; the kernel passes as itself.
  for (ConvDesc built : {nhwc(1, 9, 9, 4, 8, 3), nchw(1, 10, 10, 8, 8, 3)}) {
    built.bias = built.activation.relu = true;
    ConvDesc claimed = built;
    claimed.activation.nanToFloor = true;
    expectVerdicts(built, {{built, true}, {claimed, false}});
  }
}

TEST(ConvKernelTest, MissingEpilogueIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A kernel without the epilogue (or without overwrite), checked as one
  // with it: the bias, the negative sums and the NaN in the output show.
  for (ConvDesc plain : {nhwc(1, 9, 9, 4, 8, 3), nchw(1, 10, 10, 8, 8, 3)}) {
    std::vector<std::pair<ConvDesc, bool>> claims;
    for (int e = 1; e < 8; e <<= 1) {
      ConvDesc claimed = plain;
      claimed.overwrite = e & 1;
      claimed.bias = e & 2;
      claimed.activation.relu = e & 4;
      claims.push_back({claimed, false});
    }
    expectVerdicts(plain, claims);
  }
}

TEST(ConvKernelTest, OddShapesValidateInBothLayouts) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  for (ConvDesc d :
       {nhwc(1, 8, 8, 3, 16, 3), nhwc(1, 11, 9, 1, 5, 3, 2),
        nhwc(2, 9, 10, 3, 20, 3, 1, 2), nhwc(1, 7, 13, 16, 40, 1),
        nhwc(1, 17, 15, 3, 33, 7, 2), nhwc(3, 6, 5, 5, 7, 2),
        nchw(1, 8, 8, 3, 7, 3), nchw(3, 20, 19, 2, 5, 3),
        nchw(2, 13, 12, 3, 6, 3, 2, 2), nchw(1, 10, 10, 1, 9, 1),
        nchw(1, 16, 37, 4, 17, 5, 1),
        ConvDesc::dense(ConvLayout::NhwcFhwc, 1, 9, 7, 5, 21, 3, 3),
        ConvDesc::dense(ConvLayout::NhwcFhwc, 2, 12, 11, 16, 40, 3, 2, 2, 1, 1,
                        2)}) {
    SCOPED_TRACE(d.str());
    EXPECT_TRUE(validates(d, smallConfig(d)));
  }
}

TEST(ConvKernelTest, StridedInputViewsValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A subview of a padded buffer: the input's rows and images are further
  // apart than its extents; the gaps hold signalling NaNs.
  ConvDesc a = nhwc(2, 7, 6, 3, 8, 3);
  a.inputStrides[0] = 9 * 8 * 5 + 3;
  a.inputStrides[1] = 8 * 5;
  a.inputStrides[2] = 5;
  ConvDesc b = nchw(2, 9, 8, 3, 6, 3, 2);
  b.inputStrides[0] = 3 * 11 * 10 + 7;
  b.inputStrides[1] = 11 * 10;
  b.inputStrides[2] = 10;
  for (const ConvDesc &d : {a, b}) {
    SCOPED_TRACE(d.str());
    ASSERT_FALSE(d.inputIsDense());
    EXPECT_TRUE(validates(d, smallConfig(d)));
  }
}

TEST(ConvKernelTest, RuntimeStridesValidateOnEveryView) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  auto options = IsolatedValidationOptions::defaults();
  for (ConvDesc d : {nhwc(2, 9, 8, 3, 20, 3), nchw(2, 9, 8, 3, 6, 3, 2),
                     ConvDesc::dense(ConvLayout::NhwcFhwc, 2, 11, 12, 16, 40, 3,
                                     3, 1, 1, 2, 2)}) {
    d.runtimeStrides = true;
    SCOPED_TRACE(d.str());
    // In process, on the dense input and on a view of a larger one.
    for (const ConvDesc &view : {d, d.withPaddedInputStrides()}) {
      SCOPED_TRACE(view.str());
      EXPECT_TRUE(validates(view, smallConfig(d)));
    }
    QM_ASSERT_EXPECTED(
        kernel, emitConvKernel(d, smallConfig(d), EmitterOptions::defaults()));
    EXPECT_TRUE(kernel.runtimeInputStrides);
    EXPECT_NE(kernel.symbol.find("_isrt_"), std::string::npos) << kernel.symbol;
    // qimeng-runner checks both views, each part's header written.
    QM_ASSERT_EXPECTED(report, validateIsolated(d, host(), kernel, options));
    EXPECT_TRUE(report.passed) << report.failure;
    // The model's config, with its own blocking and A layout.
    auto model = chooseKernelConfig(KernelProblem(d), host());
    ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
    EXPECT_TRUE(validates(d.withPaddedInputStrides(), *model));
  }
}

TEST(ConvKernelTest, RunnerCatchesStridesNotReadAtRunTime) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A kernel with the dense strides as immediates, offered as one that
  // reads them: right on the dense input, wrong on the view, which the
  // runner checks too.
  ConvDesc d = nchw(2, 9, 8, 3, 6, 3);
  QM_ASSERT_EXPECTED(
      immediate, emitConvKernel(d, smallConfig(d), EmitterOptions::defaults()));
  ASSERT_FALSE(immediate.runtimeInputStrides);
  ConvDesc runtime = d;
  runtime.runtimeStrides = true;
  expectRunnerCatches(runtime, immediate, "input strides");
}

TEST(ConvKernelTest, ChannelSliceOutputsValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // The output a channel slice of a wider one (a concatenation written in
  // place): pixels 8 more than F apart, the gaps holding the sentinel.
  for (ConvDesc d : {nhwc(2, 9, 8, 3, 20, 3),
                     ConvDesc::dense(ConvLayout::NhwcFhwc, 1, 11, 12, 16, 6, 3,
                                     3, 1, 1, 2, 2)}) {
    d.outputPixelStride = d.f + 8;
    d.overwrite = true;
    SCOPED_TRACE(d.str());
    EXPECT_NE(d.str().find("_ldo"), std::string::npos);
    EXPECT_EQ(d.outputSpan(), (d.n * d.oh() * d.ow() - 1) * (d.f + 8) + d.f);
    EXPECT_TRUE(validates(d, smallConfig(d)));
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, host()));
    EXPECT_TRUE(validates(d, model));
    // In parts on two threads, in qimeng-runner.
    expectTwoPartsValidate(d, smallConfig(d));
    // The dense output's kernel writes the slice's gaps: caught.
    ConvDesc dense = d;
    dense.outputPixelStride = 0;
    QM_ASSERT_EXPECTED(denseKernel, emitConvKernel(dense, smallConfig(d),
                                                   EmitterOptions::defaults()));
    expectRunnerCatches(d, denseKernel, "between pixels");
  }
  // Only f32 nhwc outputs, at least F apart.
  ConvDesc nchwSlice = nchw(1, 9, 8, 3, 6, 3);
  nchwSlice.outputPixelStride = 9;
  EXPECT_TRUE(static_cast<bool>(llvm::errorToBool(nchwSlice.verify())));
  ConvDesc overlapping = nhwc(1, 9, 8, 3, 6, 3);
  overlapping.outputPixelStride = 5;
  EXPECT_TRUE(static_cast<bool>(llvm::errorToBool(overlapping.verify())));
}

TEST(ConvKernelTest, ModelConfigsAndVariantsValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  ConvDesc d = nhwc(1, 30, 30, 16, 64, 3);
  auto model = chooseGemmConfig(d.gemmView(), host());
  ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
  EXPECT_TRUE(validates(d, *model));
  GemmConfig inPlace = *model;
  inPlace.packB = BPacking::InPlace; // the filter is K x F: read in place
  EXPECT_TRUE(validates(d, inPlace));
  GemmConfig fused = smallConfig(d);
  fused.packB = BPacking::Fused; // packed by each sliver's first tile
  fused.mc = 2 * fused.mr;       // later row blocks reuse the packed filter
  EXPECT_TRUE(validates(d, fused));
  GemmConfig irjr = smallConfig(d);
  irjr.loop = MacroLoopOrder::IrJr;
  irjr.kUnroll = 1;
  EXPECT_TRUE(validates(d, irjr));
}

TEST(ConvKernelTest, ParallelFusedPackingValidates) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // Each thread packs its own filter slivers, the first time its first row
  // block uses them: split along M (each thread packs all of them) and
  // along N (each its own columns); the model's block (7x64 bmem on
  // AVX-512: 342 rows are not a multiple of 7) along M.
  ConvDesc d = nhwc(1, 20, 21, 16, 64, 3);
  QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, host()));
  for (auto [block, split] : {std::pair{smallConfig(d), SplitAxis::M},
                              std::pair{smallConfig(d), SplitAxis::N},
                              std::pair{model, SplitAxis::M}}) {
    SCOPED_TRACE(splitName(split).str() + " " + block.str());
    GemmConfig c = block;
    c.packB = BPacking::Fused;
    c.threads = 2;
    c.split = split;
    c.mc = 2 * c.mr;
    std::vector<GemmRange> parts = partitionGemm(d.gemmView(), c, 2, 0);
    ASSERT_EQ(parts.size(), 2u);
    QM_ASSERT_EXPECTED(report, validateInRunner(d, c, parts));
    EXPECT_TRUE(report.passed) << report.failure;
  }
}

TEST(ConvKernelTest, BrokenKernelsAreCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  ConvDesc d = nhwc(1, 9, 8, 3, 20, 3);
  for (const char *fault : {"drop-k", "write-past-edge"}) {
    SCOPED_TRACE(fault);
    ValidationReport report;
    EXPECT_FALSE(validates(d, smallConfig(d), fault, &report));
    EXPECT_FALSE(report.passed);
    EXPECT_FALSE(report.failure.empty());
  }
}

TEST(ConvKernelTest, RunnerComparesKernelsSideBySide) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  ConvDesc d = nhwc(1, 12, 11, 16, 32, 3);
  GemmConfig c = smallConfig(d);
  GemmConfig unrolled = c;
  unrolled.kUnroll = 1;
  auto options = IsolatedValidationOptions::defaults();
  std::vector<std::pair<EmittedKernel, std::vector<GemmRange>>> kernels;
  for (const char *fault : {"", "", "drop-k"}) {
    QM_ASSERT_EXPECTED(k, emitConvKernel(d, kernels.empty() ? c : unrolled,
                                         EmitterOptions::defaults(), fault));
    kernels.emplace_back(k, std::vector<GemmRange>{});
  }
  // The second's parallel form on two threads, each with its part of C.
  GemmConfig twoThreads = unrolled;
  twoThreads.threads = 2;
  twoThreads.split = SplitAxis::M;
  QM_ASSERT_EXPECTED(parallel,
                     emitConvKernel(d, twoThreads, EmitterOptions::defaults()));
  kernels.emplace_back(parallel, partitionGemm(d.gemmView(), twoThreads, 2, 0));
  ASSERT_EQ(kernels.back().second.size(), 2u);
  QM_ASSERT_EXPECTED(compared, compareIsolated(d, host(), kernels, 5, options));
  ASSERT_EQ(compared.size(), 4u);
  for (size_t i : {0, 1, 3}) {
    EXPECT_TRUE(compared[i].passed) << i << ": " << compared[i].failure;
    EXPECT_GT(compared[i].gflops, 0) << i;
    EXPECT_GT(compared[i].speedup, 0) << i;
  }
  // Against itself in the same rounds: exactly 1.
  EXPECT_DOUBLE_EQ(compared[0].speedup, 1.0);
  // The wrong kernel is caught before it is timed.
  EXPECT_FALSE(compared[2].passed);
  EXPECT_NE(compared[2].failure.find("O("), std::string::npos)
      << compared[2].failure;
  EXPECT_EQ(compared[2].gflops, 0);
  // A crash fails the whole comparison.
  QM_ASSERT_EXPECTED(
      crash, emitConvKernel(d, c, EmitterOptions::defaults(), "segfault"));
  kernels.emplace_back(crash, std::vector<GemmRange>{});
  auto crashed = compareIsolated(d, host(), kernels, 3, options);
  ASSERT_FALSE(static_cast<bool>(crashed));
  EXPECT_NE(llvm::toString(crashed.takeError()).find("crashed"),
            std::string::npos);
  // So does a hang, the runner's limit a kernel's times the kernels.
  QM_ASSERT_EXPECTED(hang,
                     emitConvKernel(d, c, EmitterOptions::defaults(), "hang"));
  kernels.back() = {hang, std::vector<GemmRange>{}};
  options.timeoutSeconds = 1;
  auto hung = compareIsolated(d, host(), kernels, 3, options);
  ASSERT_FALSE(static_cast<bool>(hung));
  EXPECT_NE(llvm::toString(hung.takeError())
                .find("the validation and timing of 5 kernels did not finish "
                      "within 5 s"),
            std::string::npos);
}

TEST(ConvKernelTest, RunnerValidatesAndTimesAndCatchesACrash) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  ConvDesc d = nchw(1, 12, 11, 3, 8, 3);
  GemmConfig c = smallConfig(d);
  auto options = IsolatedValidationOptions::defaults();
  QM_ASSERT_EXPECTED(good, emitConvKernel(d, c, EmitterOptions::defaults()));
  QM_ASSERT_EXPECTED(measured, measureIsolated(d, host(), good, 3, options));
  EXPECT_TRUE(measured.validation.passed) << measured.validation.failure;
  EXPECT_GT(measured.gflops, 0);
  QM_ASSERT_EXPECTED(
      wrong, emitConvKernel(d, c, EmitterOptions::defaults(), "drop-k"));
  QM_ASSERT_EXPECTED(rejected, validateIsolated(d, host(), wrong, options));
  EXPECT_FALSE(rejected.passed);
  EXPECT_NE(rejected.failure.find("O("), std::string::npos) << rejected.failure;
  QM_ASSERT_EXPECTED(
      crash, emitConvKernel(d, c, EmitterOptions::defaults(), "segfault"));
  QM_ASSERT_EXPECTED(crashed, validateIsolated(d, host(), crash, options));
  EXPECT_FALSE(crashed.passed);
  EXPECT_NE(crashed.failure.find("crashed"), std::string::npos)
      << crashed.failure;
}

/// bf16 and 8-bit convolutions (dotconv.py) where the host has the
/// instructions: the model's configs and small blocks (several kc blocks
/// of one tap, edges in both directions), both nhwc layouts, strides and
/// dilations, strided and run-time-strided inputs, the epilogue (bf16),
/// two threads; every distribution of the validator, exact for 8 bits.
#define QM_SKIP_UNLESS_DOT_HOST()                                              \
  do {                                                                         \
    if (!host().hasFeature("avx512bf16") ||                                    \
        !host().hasFeature("avx512vnni") || !host().hasFeature("avx512bw"))    \
      GTEST_SKIP() << "host " << host().cpu                                    \
                   << " lacks AVX512-BF16 or AVX512-VNNI";                     \
  } while (0)

ConvDesc withPrecision(ConvDesc d, GemmPrecision p) {
  d.precision = p;
  return d;
}

/// The dot kernels' config with small blocks: kc two groups' divisor of
/// the run, mc two slivers, nc one; A read in place (the model's choice
/// for bf16 and u8) in whole K steps, or packed.
GemmConfig smallDotConfig(const ConvDesc &d, ALayout layout = ALayout::Direct) {
  auto model = chooseKernelConfig(d, dotHost());
  EXPECT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
  GemmConfig c = model ? *model : GemmConfig{};
  const int64_t run = d.contiguousRun(), group = d.gemmView().kGroup();
  for (int64_t kc = 2 * group; kc >= group; kc -= group)
    if (run % kc == 0) {
      c.kc = kc;
      break;
    }
  c.mc = 2 * c.mr;
  c.nc = c.nr;
  c = clampToProblem(c, d.gemmView());
  c.aLayout = layout;
  if (c.aLayout == ALayout::Direct)
    for (int ku : {4, 2, 1})
      if (c.kc % (group * ku) == 0 && d.gemmView().k % (group * ku) == 0) {
        c.kUnroll = ku;
        break;
      }
  return c;
}

TEST(ConvKernelTest, DotConvolutionsValidate) {
  QM_SKIP_UNLESS_DOT_HOST();
  for (GemmPrecision p :
       {GemmPrecision::Bf16, GemmPrecision::U8S8, GemmPrecision::S8S8}) {
    const int64_t c4 = p == GemmPrecision::Bf16 ? 6 : 8; // whole groups
    ConvDesc fhwc = ConvDesc::dense(ConvLayout::NhwcFhwc, 1, 9, 10, c4, 20, 3,
                                    2, 1, 2, 2, 1);
    ConvDesc view = nhwc(2, 8, 9, c4, 24, 3, 2);
    view.inputStrides[2] = c4 + 4;
    view.inputStrides[1] = 9 * (c4 + 4) + 3;
    view.inputStrides[0] = 8 * view.inputStrides[1] + 1;
    ConvDesc runtime = nhwc(2, 8, 9, c4, 24, 3);
    runtime.runtimeStrides = true;
    for (ConvDesc base : {nhwc(1, 10, 11, c4, 40, 3), nhwc(2, 9, 9, 32, 64, 3),
                          nhwc(1, 12, 12, 64, 48, 1), fhwc, view, runtime}) {
      ConvDesc d = withPrecision(base, p);
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, dotHost()));
      // kc divides the run, or (read in place, runs shorter than 32
      // groups) is a block of several runs.
      EXPECT_TRUE(d.contiguousRun() % model.kc == 0 ||
                  model.kc % d.contiguousRun() == 0)
          << model.str();
      EXPECT_EQ(model.aLayout, ALayout::Direct) << model.str();
      EXPECT_TRUE(validates(d, model));
      EXPECT_TRUE(validates(d, smallDotConfig(d)));
      EXPECT_TRUE(validates(d, smallDotConfig(d, ALayout::KMajor)));
      if (d.runtimeStrides) {
        QM_ASSERT_EXPECTED(report, validateInRunner(d, model));
        EXPECT_TRUE(report.passed) << report.failure;
      }
    }
    // Overwrite, and for bf16 a bias per channel with relu and its bound.
    ConvDesc d = withPrecision(nhwc(1, 13, 13, 16, 40, 3, 2), p);
    d.overwrite = true;
    if (p == GemmPrecision::Bf16) {
      d.bias = true;
      d.activation.relu = true;
      d.activation.bound = 1.5f;
    }
    SCOPED_TRACE(d.str());
    EXPECT_TRUE(validates(d, smallDotConfig(d)));
    // Two threads, each its own pixels.
    expectTwoPartsValidate(d, smallDotConfig(d));
    // bf16 with leaky relu (torch's leaky_relu after a convolution), a
    // slope below 1 and above.
    if (p == GemmPrecision::Bf16)
      for (float slope : {0.1f, 2.5f}) {
        ConvDesc leaky = d;
        leaky.activation = Activation{};
        leaky.activation.leakySlope = slope;
        leaky.overwrite = slope < 1.0f;
        SCOPED_TRACE(leaky.str());
        EXPECT_TRUE(validates(leaky, smallDotConfig(leaky)));
        QM_ASSERT_EXPECTED(model, chooseKernelConfig(leaky, dotHost()));
        EXPECT_TRUE(validates(leaky, model));
      }
    // bf16 with a smooth activation after the bias (a YOLOv5 block's
    // silu, gelu): nhwc and nchw (a bias per row of the GEMM).
    if (p == GemmPrecision::Bf16)
      for (ConvDesc base :
           {nhwc(1, 13, 13, 16, 40, 3, 2), nchw(1, 10, 10, 8, 8, 3)})
        for (auto s : {Activation::Smooth::Silu, Activation::Smooth::GeluErf,
                       Activation::Smooth::HardSwish, Activation::Smooth::Tanh,
                       Activation::Smooth::Mish, Activation::Smooth::Softplus,
                       Activation::Smooth::HardSigmoid}) {
          ConvDesc smooth = withPrecision(base, p);
          smooth.overwrite = true;
          smooth.bias = true;
          smooth.activation.smooth = s;
          SCOPED_TRACE(smooth.str());
          EXPECT_TRUE(validates(smooth, smallDotConfig(smooth)));
          QM_ASSERT_EXPECTED(model, chooseKernelConfig(smooth, dotHost()));
          EXPECT_TRUE(validates(smooth, model));
        }
  }
}

TEST(ConvKernelTest, Bf16WrongNanRuleIsCaught) {
  QM_SKIP_UNLESS_DOT_HOST();
  // bf16 convolutions see validation's NaN too (the input's first element,
  // kept by the rounding): relu that keeps it, checked as torch's clamp.
  for (ConvDesc base : {nhwc(1, 9, 9, 4, 8, 3), nchw(1, 10, 10, 8, 8, 3)}) {
    ConvDesc built = withPrecision(base, GemmPrecision::Bf16);
    built.bias = built.activation.relu = true;
    ConvDesc claimed = built;
    claimed.activation.nanToFloor = true;
    SCOPED_TRACE(built.str());
    expectVerdicts(built, {{built, true}, {claimed, false}},
                   smallDotConfig(built));
  }
}

TEST(ConvKernelTest, DotConvolutionFaultsAreCaught) {
  QM_SKIP_UNLESS_DOT_HOST();
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::S8S8}) {
    // In qimeng-runner's process: a kernel that writes past the output
    // may hit memory outside its guards.
    // A read in place and packed.
    ConvDesc d = withPrecision(nhwc(1, 10, 10, 8, 20, 3), p);
    for (const char *fault : {"drop-k", "swap-pairs", "write-past-edge"})
      for (ALayout layout : {ALayout::Direct, ALayout::KMajor}) {
        SCOPED_TRACE(std::string(fault) + " " + d.str());
        GemmConfig c = smallDotConfig(d, layout);
        QM_ASSERT_EXPECTED(report, validateInRunner(d, c, {}, fault));
        EXPECT_FALSE(report.passed) << c.str();
        EXPECT_FALSE(report.failure.empty());
      }
  }
}

/// An nchw convolution of a view: its image's rows 23 apart, 2 elements
/// between channels and 1 between images past the dense strides.
static ConvDesc nchwView() {
  ConvDesc view = nchw(2, 9, 20, 6, 24, 3);
  view.inputStrides[2] = 23;
  view.inputStrides[1] = 9 * 23 + 2;
  view.inputStrides[0] = 6 * view.inputStrides[1] + 1;
  return view;
}

/// nchw_fchw (torch's layout) in bf16 and s8: the filter is the GEMM's A,
/// B gathered from the image (dotconv.py), one GEMM an image. The model's
/// config (the filter in place, K whole groups or one block of all of K)
/// and small blocks (16-pixel slivers in one output row and across
/// rows, K not whole groups, several kc blocks), strides, a view of a
/// padded input, run-time strides, two threads; broken kernels caught.
TEST(ConvKernelTest, NchwDotConvolutionsValidate) {
  QM_SKIP_UNLESS_DOT_HOST();
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::S8S8}) {
    const ConvDesc view = nchwView();
    ConvDesc runtime = nchw(2, 9, 20, 5, 24, 3);
    runtime.runtimeStrides = true;
    for (ConvDesc base :
         {nchw(1, 10, 20, 6, 40, 3), nchw(2, 9, 11, 3, 20, 3, 2),
          nchw(1, 12, 19, 32, 48, 1), view, runtime}) {
      ConvDesc d = withPrecision(base, p);
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, host()));
      // The filter (A) read where it lies: K whole groups, or one block of
      // all of K whose last group is loaded under a mask (3 or 5
      // channels: K 27 or 45).
      const bool wholeGroups = d.gemmView().k % d.gemmView().kGroup() == 0;
      EXPECT_EQ(model.aLayout, ALayout::Direct) << model.str();
      EXPECT_TRUE(model.kc % d.gemmView().kGroup() == 0 ||
                  model.kc == d.gemmView().k)
          << model.str();
      EXPECT_TRUE(validates(d, model));
      GemmConfig small = model;
      small.mr = 8;
      small.nr = 16;
      small.kUnroll = 1;
      small.kc = 4 * d.gemmView().kGroup();
      small.mc = 2 * small.mr;
      small.nc = 3 * small.nr;
      small = clampToProblem(small, d.gemmView());
      small.aLayout = ALayout::KMajor;
      EXPECT_TRUE(validates(d, small));
      if (wholeGroups) {
        small.aLayout = ALayout::Direct;
        EXPECT_TRUE(validates(d, small));
      }
      if (d.runtimeStrides) {
        QM_ASSERT_EXPECTED(report, validateInRunner(d, model));
        EXPECT_TRUE(report.passed) << report.failure;
      }
    }
    // Overwrite (and a bias per channel, along the view's rows, and relu
    // for bf16), two threads, each its own pixels.
    ConvDesc d = withPrecision(nchw(2, 10, 20, 8, 40, 3), p);
    d.overwrite = true;
    d.bias = d.activation.relu = p == GemmPrecision::Bf16;
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, host()));
    EXPECT_EQ(model.split, SplitAxis::N);
    GemmConfig two = model;
    two.threads = 2;
    two.nc = 48;
    std::vector<GemmRange> parts = partitionGemm(d.gemmView(), two, 2, 0);
    ASSERT_EQ(parts.size(), 2u);
    QM_ASSERT_EXPECTED(report, validateInRunner(d, two, parts));
    EXPECT_TRUE(report.passed) << report.failure;
    for (const char *fault : {"drop-k", "swap-pairs", "write-past-edge"}) {
      SCOPED_TRACE(fault);
      QM_ASSERT_EXPECTED(verdict, validateInRunner(d, model, {}, fault));
      EXPECT_FALSE(verdict.passed);
      EXPECT_FALSE(verdict.failure.empty());
    }
  }
}

TEST(ConvDescTest, DotPrecisionsInEveryLayout) {
  ConvDesc d = withPrecision(nhwc(1, 9, 9, 6, 8, 3), GemmPrecision::Bf16);
  EXPECT_TRUE(d.str().rfind("sbconv2d_nhwc_hwcf_", 0) == 0) << d.str();
  EXPECT_EQ(d.gemmView().precision, GemmPrecision::Bf16);
  QM_ASSERT_OK(d.verify());
  ConvDesc s8 = withPrecision(nhwc(1, 9, 9, 6, 8, 3), GemmPrecision::S8S8);
  EXPECT_TRUE(s8.str().rfind("s8s8conv2d_", 0) == 0) << s8.str();
  QM_ASSERT_OK(s8.verify()); // 6 channels: blocks end in partial quads
  EXPECT_EQ(s8.kcStep(), 1);
  // nchw: the filter is the GEMM's A, so s8 inputs only, no bias (a row
  // of C), no prepacked filter; kc whole groups (B gathered a k at a time).
  ConvDesc nchwBf16 =
      withPrecision(nchw(1, 9, 9, 3, 8, 3), GemmPrecision::Bf16);
  QM_ASSERT_OK(nchwBf16.verify());
  EXPECT_EQ(nchwBf16.kcStep(), 2);
  EXPECT_FALSE(nchwBf16.filterMayBePrepacked());
  QM_ASSERT_OK(
      withPrecision(nchw(1, 9, 9, 3, 8, 3), GemmPrecision::S8S8).verify());
  QM_ASSERT_FAILS_WITH(
      withPrecision(nchw(1, 9, 9, 8, 8, 3), GemmPrecision::U8S8).verify(),
      "s8 inputs only");
  nchwBf16.bias = true; // along the GEMM view's rows
  QM_ASSERT_OK(nchwBf16.verify());
  ConvDesc relu8 = withPrecision(nhwc(1, 9, 9, 8, 8, 3), GemmPrecision::U8S8);
  relu8.activation.relu = true;
  QM_ASSERT_FAILS_WITH(relu8.verify(), "no bias or relu");
}

} // namespace

/// The filter packed once by the caller (ConvDesc::bPrepacked): validated
/// in qimeng-runner, which packs it in the layout of the kernel's
/// qm.b_prepacked, in both filter layouts, A in place and packed, one
/// thread and two; a kernel that drops k is caught. f32 convolutions take
/// the filter as stored.
TEST(ConvKernelTest, PrepackedFiltersValidate) {
  QM_SKIP_UNLESS_DOT_HOST();
  const auto options = IsolatedValidationOptions::defaults();
  for (GemmPrecision p :
       {GemmPrecision::Bf16, GemmPrecision::U8S8, GemmPrecision::S8S8}) {
    ConvDesc fhwc = ConvDesc::dense(ConvLayout::NhwcFhwc, 1, 9, 10, 8, 20, 3, 2,
                                    1, 2, 2, 1);
    for (ConvDesc base :
         {nhwc(1, 10, 11, 8, 40, 3), nhwc(2, 9, 9, 32, 64, 3), fhwc}) {
      ConvDesc d = withPrecision(base, p);
      d.bPrepacked = true;
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, host()));
      // The small blocks' kc (2 groups or 1) in whole K steps: a
      // prepacked filter's kc blocks do not pad in the middle.
      auto small = [&](ALayout layout) {
        GemmConfig c = smallDotConfig(d, layout);
        c.kUnroll = c.kc / d.gemmView().kGroup() % 2 == 0 ? 2 : 1;
        return c;
      };
      GemmConfig two = small(ALayout::KMajor);
      two.threads = 2;
      std::vector<GemmRange> parts = partitionGemm(d.gemmView(), two, 2, 0);
      for (auto [c, cParts] :
           {std::pair{model, std::vector<GemmRange>()},
            std::pair{small(ALayout::Direct), std::vector<GemmRange>()},
            std::pair{two, parts}}) {
        QM_ASSERT_EXPECTED(emitted,
                           emitConvKernel(d, c, EmitterOptions::defaults()));
        ASSERT_TRUE(emitted.prepackedB.has_value());
        QM_ASSERT_EXPECTED(
            report, validateIsolated(d, host(), emitted, options, cParts));
        EXPECT_TRUE(report.passed) << c.str() << ": " << report.failure;
      }
      QM_ASSERT_EXPECTED(broken,
                         emitConvKernel(d, small(ALayout::Direct),
                                        EmitterOptions::defaults(), "drop-k"));
      QM_ASSERT_EXPECTED(caught, validateIsolated(d, host(), broken, options));
      EXPECT_FALSE(caught.passed);
    }
  }
  // nchw's filter is the GEMM's A: never a prepacked B.
  ConvDesc nchwBf16 =
      withPrecision(nchw(1, 10, 10, 8, 8, 3), GemmPrecision::Bf16);
  nchwBf16.bPrepacked = true;
  EXPECT_TRUE(bool(llvm::errorToBool(nchwBf16.verify())));
}

/// f32 convolutions (sconv2d) with the filter prepacked: both nhwc filter
/// layouts, a stride and a dilation, the model's config (A read in place)
/// and the small one (A packed), two threads each its own pixels; a kernel
/// that drops k is caught; nchw's filter is A, never a prepacked B.
TEST(ConvKernelTest, F32PrepackedFiltersValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  const auto options = IsolatedValidationOptions::defaults();
  for (ConvDesc d : {nhwc(1, 10, 11, 8, 40, 3), nhwc(1, 16, 17, 16, 64, 3, 2),
                     ConvDesc::dense(ConvLayout::NhwcFhwc, 1, 9, 10, 4, 20, 3,
                                     2, 1, 2, 2, 1)}) {
    d.bPrepacked = true;
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, host()));
    EXPECT_EQ(model.packB, BPacking::Panels) << model.str();
    GemmConfig two = smallConfig(d);
    two.threads = 2;
    std::vector<GemmRange> parts = partitionGemm(d.gemmView(), two, 2, 0);
    for (auto [c, cParts] :
         {std::pair{model, std::vector<GemmRange>()},
          std::pair{smallConfig(d), std::vector<GemmRange>()},
          std::pair{two, parts}}) {
      QM_ASSERT_EXPECTED(emitted,
                         emitConvKernel(d, c, EmitterOptions::defaults()));
      ASSERT_TRUE(emitted.prepackedB.has_value());
      QM_ASSERT_EXPECTED(report,
                         validateIsolated(d, host(), emitted, options, cParts));
      EXPECT_TRUE(report.passed) << c.str() << ": " << report.failure;
    }
    QM_ASSERT_EXPECTED(broken,
                       emitConvKernel(d, smallConfig(d),
                                      EmitterOptions::defaults(), "drop-k"));
    QM_ASSERT_EXPECTED(caught, validateIsolated(d, host(), broken, options));
    EXPECT_FALSE(caught.passed);
  }
  ConvDesc torch = nchw(1, 10, 10, 8, 8, 3);
  torch.bPrepacked = true;
  EXPECT_TRUE(bool(llvm::errorToBool(torch.verify())));
}

/// Convolutions of 3 channels (an RGB image: ResNet-50's stem) in bf16,
/// u8 and s8: the model's kc divides the run of k (KW*C, or C with
/// run-time strides), which is not whole groups, every block ending in a
/// partial group that the packs complete with zero, or (A read in place,
/// immediate strides) that the K loop loads under a mask; validated with
/// the model's config, stride 2, both filter layouts, a run-time-strides
/// view, and two threads; a kernel that drops k is caught.
TEST(ConvKernelTest, OddChannelsValidate) {
  QM_SKIP_UNLESS_DOT_HOST();
  for (GemmPrecision p :
       {GemmPrecision::Bf16, GemmPrecision::U8S8, GemmPrecision::S8S8}) {
    ConvDesc stem = withPrecision(nhwc(1, 23, 23, 3, 16, 7, 2), p);
    ConvDesc fhwc = withPrecision(
        ConvDesc::dense(ConvLayout::NhwcFhwc, 2, 9, 10, 3, 20, 3, 3), p);
    ConvDesc runtime = withPrecision(nhwc(2, 9, 9, 3, 24, 3), p);
    runtime.runtimeStrides = true;
    const int64_t group = stem.gemmView().kGroup();
    for (const ConvDesc &d : {stem, fhwc, runtime}) {
      SCOPED_TRACE(d.str());
      QM_ASSERT_OK(d.verify());
      EXPECT_EQ(d.kcStep(), 1);
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, dotHost()));
      // Packed, kc divides the run; read in place, a block holds runs.
      if (model.aLayout == ALayout::Direct) {
        EXPECT_EQ(model.kc % d.contiguousRun(), 0) << model.str();
      } else {
        EXPECT_EQ(d.contiguousRun() % model.kc, 0) << model.str();
      }
      EXPECT_NE(d.contiguousRun() % group, 0) << model.str();
      if (!d.runtimeStrides) {
        EXPECT_EQ(model.aLayout, ALayout::Direct) << model.str();
      }
      QM_ASSERT_EXPECTED(report, validateInRunner(d, model));
      EXPECT_TRUE(report.passed) << report.failure;
    }
    SCOPED_TRACE(stem.str());
    GemmConfig two = *chooseKernelConfig(stem, dotHost());
    two.threads = 2;
    std::vector<GemmRange> parts = partitionGemm(stem.gemmView(), two, 2, 0);
    QM_ASSERT_EXPECTED(report, validateInRunner(stem, two, parts));
    EXPECT_TRUE(report.passed) << report.failure;
    QM_ASSERT_EXPECTED(caught, validateInRunner(stem, two, parts, "drop-k"));
    EXPECT_FALSE(caught.passed);
  }
}

/// The AMX convolution tests' shapes (in `p`): hwcf and fhwc filters, a
/// stride (with `strideChannels` channels), a view of a padded input, run-
/// time strides, a 1x1 overwriting its output.
std::vector<ConvDesc> amxConvShapes(GemmPrecision p, int64_t strideChannels) {
  ConvDesc view = nhwc(1, 10, 12, 64, 40, 3);
  view.inputStrides[0] = 12 * 10 * 72;
  view.inputStrides[1] = 12 * 72;
  view.inputStrides[2] = 72;
  ConvDesc fhwc = nhwc(2, 8, 9, 64, 33, 3);
  fhwc.layout = ConvLayout::NhwcFhwc;
  ConvDesc runtime = nhwc(1, 9, 11, 64, 50, 3);
  runtime.runtimeStrides = true;
  ConvDesc overwrite = nhwc(1, 9, 9, 128, 20, 1);
  overwrite.overwrite = true;
  std::vector<ConvDesc> shapes;
  for (const ConvDesc &base :
       {nhwc(1, 10, 12, 64, 40, 3), fhwc,
        nhwc(1, 13, 13, strideChannels, 48, 3, 2, 2), view, runtime, overwrite})
    shapes.push_back(withPrecision(base, p));
  return shapes;
}

/// One-tile blocks of one tile step (16 x 16, kc a step: amxTileK of the
/// packed bytes) validate for `d`, and the model's kernel in qimeng-runner.
void expectOneTileAndRunnerValidate(const ConvDesc &d,
                                    const GemmConfig &model) {
  GemmConfig small = model;
  small.mr = 16;
  small.nr = 16;
  small.kc = amxTileK(amxPackedElementBytes(d.gemmView()));
  small.mc = 32;
  small.nc = 32;
  EXPECT_TRUE(validates(d, clampToProblem(small, d.gemmView())));
  QM_ASSERT_EXPECTED(report, validateInRunner(d, model));
  EXPECT_TRUE(report.passed) << report.failure;
}

/// The model's kernel for `d` on two threads (parts of the pixels) in
/// qimeng-runner's process; each of `faults` caught there.
void expectPartsValidateAndFaultsFail(
    const ConvDesc &d, std::initializer_list<const char *> faults) {
  SCOPED_TRACE(d.str());
  QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, host()));
  GemmConfig two = model;
  two.threads = 2;
  std::vector<GemmRange> parts = partitionGemm(d.gemmView(), two, 2, 0);
  ASSERT_EQ(parts.size(), 2u);
  QM_ASSERT_EXPECTED(parted, validateInRunner(d, two, parts));
  EXPECT_TRUE(parted.passed) << parted.failure;
  for (const char *fault : faults) {
    QM_ASSERT_EXPECTED(caught, validateInRunner(d, model, {}, fault));
    EXPECT_FALSE(caught.passed) << fault;
  }
}

/// nhwc convolutions in bf16, u8 and s8 on AMX tiles (amx.AmxConv) where
/// the host has them: the model's config (kc whole tile steps dividing the
/// run of consecutive k) and one-tile blocks of one tap's channels; hwcf
/// and fhwc filters, a stride and dilation, a view of a padded input, run-
/// time strides, overwrite, two threads (parts of the pixels); broken
/// kernels caught in qimeng-runner. The stem's 3 channels (no tile step
/// divides its run of 21: kc whole runs, each padded to whole tile steps)
/// on the tiles too, hwcf and fhwc; nchw stays on AVX512-BF16/VNNI.
TEST(ConvKernelTest, AmxConvolutionsValidate) {
  int ran = 0;
  for (GemmPrecision p :
       {GemmPrecision::Bf16, GemmPrecision::U8S8, GemmPrecision::S8S8}) {
    if (!host().hasAmx(p == GemmPrecision::Bf16))
      continue;
    ++ran;
    for (const ConvDesc &d : amxConvShapes(p, 64)) {
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, host()));
      EXPECT_EQ(model.isa, VectorIsa::Amx) << model.str();
      EXPECT_EQ(d.contiguousRun() % model.kc, 0) << model.str();
      // A read in place (tiles of pixels across output rows copied).
      EXPECT_EQ(model.aLayout, ALayout::Direct) << model.str();
      EXPECT_TRUE(validates(d, model));
      GemmConfig packed = model;
      packed.aLayout = ALayout::KMajor;
      EXPECT_TRUE(validates(d, packed));
      expectOneTileAndRunnerValidate(d, model);
    }
    expectPartsValidateAndFaultsFail(
        withPrecision(nhwc(1, 10, 12, 64, 40, 3), p), {"drop-k", "swap-pairs"});
    for (ConvLayout layout : {ConvLayout::NhwcHwcf, ConvLayout::NhwcFhwc}) {
      ConvDesc stem = withPrecision(
          ConvDesc::dense(layout, 1, 20, 20, 3, 40, 7, 7, 2, 2), p);
      SCOPED_TRACE(stem.str());
      QM_ASSERT_EXPECTED(stemConfig, chooseKernelConfig(stem, host()));
      EXPECT_EQ(stemConfig.isa, VectorIsa::Amx) << stemConfig.str();
      EXPECT_EQ(stemConfig.kc % stem.contiguousRun(), 0) << stemConfig.str();
      EXPECT_TRUE(validates(stem, stemConfig));
      QM_ASSERT_EXPECTED(caught,
                         validateInRunner(stem, stemConfig, {}, "drop-k"));
      EXPECT_FALSE(caught.passed);
    }
    QM_ASSERT_EXPECTED(
        nchwConfig, chooseKernelConfig(withPrecision(nchw(1, 10, 20, 64, 40, 3),
                                                     GemmPrecision::Bf16),
                                       host()));
    EXPECT_EQ(nchwConfig.isa, VectorIsa::Avx512) << nchwConfig.str();
  }
  if (ran == 0)
    GTEST_SKIP() << "host has no AMX (amx-tile with amx-bf16 or amx-int8, "
                    "granted by Linux)";
}

/// f16 nhwc convolutions on the bf16 tiles (amx.py's split where the
/// input is gathered): the model's config (A packed, kc whole steps of 8 k
/// dividing the run), one-tile blocks, fhwc, a strided view, run-time
/// strides, overwrite and two threads in qimeng-runner's process; broken
/// kernels fail. nchw, a prepacked filter and a run no tile step divides
/// (3 channels) are refused with their reasons.
TEST(ConvKernelTest, AmxF16ConvolutionsValidate) {
  if (!host().hasAmx(true))
    GTEST_SKIP() << "host has no AMX-BF16 (granted by Linux)";
  for (const ConvDesc &d : amxConvShapes(GemmPrecision::F16, 24)) {
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, host()));
    EXPECT_EQ(model.isa, VectorIsa::Amx) << model.str();
    EXPECT_EQ(model.aLayout, ALayout::KMajor) << model.str();
    EXPECT_EQ(d.contiguousRun() % model.kc, 0) << model.str();
    EXPECT_EQ(model.kc % 8, 0) << model.str();
    EXPECT_TRUE(validates(d, model));
    expectOneTileAndRunnerValidate(d, model);
  }
  expectPartsValidateAndFaultsFail(
      withPrecision(nhwc(1, 10, 12, 64, 40, 3), GemmPrecision::F16),
      {"drop-k", "drop-low"});
}

/// f16 convolutions on the dot kernels (dotconv.py with dotgemm.py's f16
/// kernels: each f16 widened to f32 where the input is gathered or the
/// filter packed, f32 FMAs): every f16 convolution of a host without
/// AMX-BF16, and on one with it those the tiles do not take: the
/// 3-channel stem (a run of 21 k, no tile step of 8) and nchw (torch's
/// layout: the image gathered by PACK B). nhwc and fhwc, a dilation, the
/// stem, nchw with a view of a padded image and run-time strides, the
/// epilogue; the model's config and small blocks; broken kernels caught.
TEST(ConvKernelTest, F16DotConvolutionsValidate) {
  if (!dotHost().hasFeature("avx512bw") || !dotHost().hasFeature("avx512vl") ||
      !dotHost().hasFeature("f16c"))
    GTEST_SKIP() << "host lacks AVX512BW, AVX512VL or F16C";
  ConvDesc fhwc = nhwc(1, 9, 11, 24, 40, 3);
  fhwc.layout = ConvLayout::NhwcFhwc;
  const ConvDesc view = nchwView();
  ConvDesc runtime = nchw(1, 9, 20, 5, 24, 3);
  runtime.runtimeStrides = true;
  ConvDesc stem =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 20, 20, 3, 40, 7, 7, 2, 2);
  for (ConvDesc base :
       {nhwc(1, 10, 12, 24, 40, 3), fhwc, nhwc(1, 13, 13, 16, 20, 3, 1, 2),
        stem, nchw(1, 10, 20, 16, 40, 3), view, runtime}) {
    ConvDesc d = withPrecision(base, GemmPrecision::F16);
    d.bias = d.activation.relu = base.c == 24;
    SCOPED_TRACE(d.str());
    for (const Target *t : {&dotHost(), &host()}) {
      auto config = chooseKernelConfig(d, *t);
      ASSERT_TRUE(bool(config)) << llvm::toString(config.takeError());
      // With AMX-BF16 the tiles take the nhwc layers but the stem.
      const bool tiles =
          t->hasAmx(true) && d.isNhwc() && d.contiguousRun() % 8 == 0;
      EXPECT_EQ(config->isa, tiles ? VectorIsa::Amx : VectorIsa::Avx512)
          << config->str();
    }
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, dotHost()));
    EXPECT_EQ(model.isa, VectorIsa::Avx512) << model.str();
    EXPECT_NE(model.aLayout, ALayout::Direct) << model.str();
    EXPECT_TRUE(validates(d, model));
    GemmConfig small = model;
    small.mr = 8;
    small.nr = 16;
    small.kUnroll = 1;
    // (nhwc: a third of the run where 3 divides it, one tap's channels.)
    const int64_t run = d.contiguousRun();
    small.kc = !d.isNhwc() ? 12 : run % 3 ? run : run / 3;
    small.mc = 2 * small.mr;
    small.nc = 3 * small.nr;
    EXPECT_TRUE(validates(d, clampToProblem(small, d.gemmView())));
    if (d.runtimeStrides) {
      QM_ASSERT_EXPECTED(report, validateInRunner(d, model));
      EXPECT_TRUE(report.passed) << report.failure;
    }
  }
  for (ConvDesc base : {nhwc(1, 10, 12, 24, 40, 3), nchw(1, 10, 20, 16, 40, 3)})
    for (const char *fault : {"drop-k", "drop-low", "write-past-edge"}) {
      ConvDesc d = withPrecision(base, GemmPrecision::F16);
      SCOPED_TRACE(d.str() + " " + fault);
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, dotHost()));
      QM_ASSERT_EXPECTED(verdict, validateInRunner(d, model, {}, fault));
      EXPECT_FALSE(verdict.passed);
    }
}

/// bf16 and f16 convolutions whose f32 sums are rounded once into a 16-bit
/// output D (torch-mlir's truncf after a bf16 conv2d; ConvDesc::halfOutput):
/// nhwc (both filter layouts) and nchw over two images (D steps an image
/// with the output), with and without the bias and relu, on the model's
/// config, bf16's small one and two parts in qimeng-runner; a kernel that
/// leaves its sums in the f32 output claimed as one with D fails (the
/// reverse writes through the header's D, which such a claim leaves unset:
/// a crash, for qimeng-runner to contain).
TEST(ConvKernelTest, HalfOutputConvolutionsValidate) {
  QM_SKIP_UNLESS_DOT_HOST();
  ConvDesc fhwc = nhwc(1, 9, 11, 16, 24, 3);
  fhwc.layout = ConvLayout::NhwcFhwc;
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::F16})
    for (ConvDesc base :
         {nhwc(1, 10, 11, 16, 40, 3), fhwc, nchw(2, 10, 12, 8, 24, 3)}) {
      ConvDesc d = withPrecision(base, p);
      d.halfOutput = true;
      d.overwrite = base.layout != ConvLayout::NhwcFhwc;
      d.bias = d.activation.relu = base.layout == ConvLayout::NhwcHwcf;
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, dotHost()));
      EXPECT_EQ(model.isa, VectorIsa::Avx512) << model.str();
      EXPECT_TRUE(validates(d, model));
      if (p == GemmPrecision::Bf16) {
        EXPECT_TRUE(validates(d, smallDotConfig(d)));
      }
      expectTwoPartsValidate(d, model);
      ConvDesc f32Output = d;
      f32Output.halfOutput = false;
      expectVerdicts(f32Output, {{f32Output, true}, {d, false}}, model);
    }
}

/// An nchw kernel puts the header's D back after its images: called twice
/// on one header (as qimeng-runner times it, and as a module's loop may
/// call it), it writes the same D and nothing past it.
TEST(ConvKernelTest, HalfOutputPointerIsPutBackAfterTheImages) {
  QM_SKIP_UNLESS_DOT_HOST();
  ConvDesc d = withPrecision(nchw(2, 10, 12, 8, 24, 3), GemmPrecision::Bf16);
  d.halfOutput = d.overwrite = true;
  QM_ASSERT_EXPECTED(model, chooseKernelConfig(d, dotHost()));
  auto loaded =
      buildConvKernel(d, model, host(), EmitterOptions::defaults(), "");
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  // Every input and filter element 1 (bf16 0x3f80): each output is K = 72.
  const int64_t outputs = d.outputElements();
  QM_ASSERT_EXPECTED(in, GuardedBuffer::allocate(d.inputSpan(), 0));
  QM_ASSERT_EXPECTED(flt, GuardedBuffer::allocate(d.filterElements(), 0));
  QM_ASSERT_EXPECTED(out, GuardedBuffer::allocate(outputs, 0));
  QM_ASSERT_EXPECTED(dOut, GuardedBuffer::allocate(outputs, 0)); // 2x D
  QM_ASSERT_EXPECTED(
      ws, GuardedBuffer::allocate(
              int64_t(loaded->emitted.workspaceBytes / sizeof(float)) + 16, 0));
  std::fill_n(reinterpret_cast<uint16_t *>(in.data()), d.inputSpan(),
              uint16_t(0x3f80));
  std::fill_n(reinterpret_cast<uint16_t *>(flt.data()), d.filterElements(),
              uint16_t(0x3f80));
  auto *bits = reinterpret_cast<uint16_t *>(dOut.data());
  std::fill_n(bits, 2 * outputs, uint16_t(0xffff));
  writeHalfOutput(ws.data(), dOut.data());
  GemmKernelFn fn = loaded->jit->gemm();
  for (int call = 0; call < 2; ++call) {
    fn(in.data(), flt.data(), out.data(), ws.data());
    EXPECT_EQ(readHalfOutput(ws.data()), dOut.data()) << "call " << call;
  }
  const float k = float(d.gemmView().k);
  uint32_t kBits;
  std::memcpy(&kBits, &k, sizeof k);
  for (int64_t i = 0; i < 2 * outputs; ++i)
    ASSERT_EQ(bits[i], i < outputs ? uint16_t(kBits >> 16) : uint16_t(0xffff))
        << "D element " << i;
}
