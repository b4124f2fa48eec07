//===- GemmKernelTest.cpp - Emitted SGEMM kernels, end to end -------------===//
//
// Emit (Python) -> assemble (LLVM MC) -> load (ORC) -> run on the host and
// validate against fp64 and OpenBLAS. Every test needs a host the emitters
// support and skips otherwise. Each shape gets its own kernel: nothing is
// reused across shapes, so every kernel is one the validator has checked.
//
//===----------------------------------------------------------------------===//
#include "ErrorHelpers.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Kernel/WorkspaceHeader.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Runtime/JitKernel.h"
#include "qimeng/Runtime/RunnerService.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

using namespace qimeng;

namespace {

const Target &host() {
  static const Target target = Target::detectHost();
  return target;
}

/// The host without AMX: where the model gives bf16 and 8-bit GEMMs to
/// AVX-512's dot instructions (dotgemm.py), for the tests of those.
const Target &dotHost() {
  static const Target target = Target::detectHost().withoutAmx();
  return target;
}

bool hostRunsAvx2() {
  return host().bestIsa() != VectorIsa::None && host().hasFeature("avx2") &&
         host().hasFeature("fma");
}

bool hostRunsAvx512() { return host().bestIsa() == VectorIsa::Avx512; }

#define QM_SKIP_UNLESS_VECTOR_HOST()                                           \
  do {                                                                         \
    if (host().bestIsa() == VectorIsa::None)                                   \
      GTEST_SKIP() << "host " << host().cpu                                    \
                   << " has no vector isa the emitters support";               \
  } while (0)

/// The AVX2 6x16 block with blocking small enough that kc, mc and nc
/// boundaries all fall inside the shapes below.
GemmConfig smallAvx2Config() {
  GemmConfig c;
  c.isa = VectorIsa::Avx2;
  c.mr = 6;
  c.nr = 16;
  c.kUnroll = 4;
  c.kc = 16;
  c.mc = 12;
  c.nc = 32;
  return c;
}

/// The AVX-512 12x32 block, blocking likewise small.
GemmConfig smallAvx512Config() {
  GemmConfig c;
  c.isa = VectorIsa::Avx512;
  c.mr = 12;
  c.nr = 32;
  c.kUnroll = 4;
  c.kc = 16;
  c.mc = 24;
  c.nc = 64;
  return c;
}

std::string describe(const GemmDesc &d, const GemmConfig &c,
                     llvm::StringRef fault = "") {
  std::string s = d.str() + " with " + c.str();
  if (!fault.empty())
    s += " fault " + fault.str();
  return s;
}

/// Builds the kernel for `desc` and `config` on the host and validates it.
/// `report` receives the validator's report when it ran.
::testing::AssertionResult buildAndValidate(const GemmDesc &desc,
                                            const GemmConfig &config,
                                            const ValidationOptions &options,
                                            ValidationReport &report,
                                            llvm::StringRef fault = "") {
  auto loaded =
      buildGemmKernel(desc, config, host(), EmitterOptions::defaults(), fault);
  if (!loaded)
    return ::testing::AssertionFailure()
           << describe(desc, config, fault)
           << ": build failed: " << llvm::toString(loaded.takeError());
  GemmKernelFn fn = loaded->jit->gemm();
  auto result = validateGemm(
      desc,
      [fn, &desc](const float *a, const float *b, float *c, void *ws) {
        writeLeadingDims(ws, desc);
        fn(a, b, c, ws);
      },
      loaded->emitted.workspaceBytes, options);
  if (!result)
    return ::testing::AssertionFailure()
           << describe(desc, config, fault)
           << ": validator error: " << llvm::toString(result.takeError());
  report = *result;
  return ::testing::AssertionSuccess();
}

/// Succeeds when the kernel builds and validates.
::testing::AssertionResult
kernelValidates(const GemmDesc &desc, const GemmConfig &config,
                const ValidationOptions &options = {}) {
  ValidationReport report;
  ::testing::AssertionResult built =
      buildAndValidate(desc, config, options, report);
  if (!built)
    return built;
  if (!report.passed)
    return ::testing::AssertionFailure()
           << describe(desc, config) << ": " << report.failure;
  const bool f16 = desc.precision == GemmPrecision::F16;
  const double bound = desc.halfOutput ? f16 ? f16OutputErrorBound(desc.k)
                                             : bf16OutputErrorBound(desc.k)
                       : f16 ? gemmErrorBound(4 * desc.k)
                                       : gemmErrorBound(desc.k);
  if (!(report.maxRelError <= bound))
    return ::testing::AssertionFailure()
           << describe(desc, config) << ": passed with max relative error "
           << report.maxRelError << " above the bound " << bound;
  return ::testing::AssertionSuccess();
}

struct Shape {
  int64_t m, n, k;
};

/// Each shape with all four transposes, once packed and once with every
/// leading dimension wider than its operand.
void checkShapes(const std::vector<Shape> &shapes, const GemmConfig &config) {
  for (const Shape &s : shapes)
    for (int t = 0; t < 4; ++t)
      for (bool padded : {false, true}) {
        GemmDesc d = GemmDesc::packed(s.m, s.n, s.k, t & 1, t & 2);
        if (padded) {
          d.lda += 3;
          d.ldb += 2;
          d.ldc += 5;
        }
        EXPECT_TRUE(kernelValidates(d, config));
      }
}

/// The small AVX2 and (where the host runs it) AVX-512 configs, each with
/// B packed, B in place (with A in rows when `inPlaceRows`) and B packed
/// by the tiles.
std::vector<GemmConfig> bPackingVariants(bool inPlaceRows) {
  std::vector<GemmConfig> configs;
  for (GemmConfig base : {smallAvx2Config(), smallAvx512Config()}) {
    if (base.isa == VectorIsa::Avx512 && !hostRunsAvx512())
      continue;
    configs.push_back(base);
    GemmConfig inPlace = base;
    inPlace.packB = BPacking::InPlace;
    if (inPlaceRows)
      inPlace.aLayout = ALayout::Rows;
    configs.push_back(inPlace);
    GemmConfig fused = base;
    fused.packB = BPacking::Fused;
    configs.push_back(fused);
  }
  return configs;
}

/// `c` as the emitter takes it for `d`: B packed where its slivers do not
/// lie in place, A k-major when transposed (rows copy A as stored), A
/// copied in rows where it cannot be read in place (lda at run time),
/// clamped to the problem.
GemmConfig fitTo(GemmConfig c, const GemmDesc &d) {
  if (c.packB == BPacking::InPlace
          ? !readsBInPlace(d, c.nr, c.isa)
          : c.packB != BPacking::Panels && !d.bSliversInPlace(c.nr))
    c.packB = BPacking::Panels;
  if (d.transA)
    c.aLayout = ALayout::KMajor;
  if (c.aLayout == ALayout::Direct && !readsAInPlace(d, c.mr, c.isa, c.packB))
    c.aLayout = ALayout::Rows;
  return clampToProblem(c, d);
}

//===----------------------------------------------------------------------===//
// (a), (b) Named edge shapes
//===----------------------------------------------------------------------===//

TEST(GemmKernelTest, Avx2EdgeShapes) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx2())
    GTEST_SKIP() << "host has no avx2 and fma";
  // 1, MR-1 x NR-1 with K = 1, MR x NR, MR+1 x NR+1, and a shape crossing
  // many kc, mc and nc boundaries with edges in every dimension.
  checkShapes({{1, 1, 1}, {5, 15, 1}, {6, 16, 4}, {7, 17, 5}, {257, 129, 67}},
              smallAvx2Config());
}

TEST(GemmKernelTest, Avx2EdgeShapesOtherBlocks) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx2())
    GTEST_SKIP() << "host has no avx2 and fma";
  for (const MicroKernelShape &s : microKernelTable(VectorIsa::Avx2)) {
    GemmConfig c = smallAvx2Config();
    c.mr = s.mr;
    c.nr = s.nr;
    c.mc = 2 * s.mr;
    c.nc = 2 * s.nr;
    SCOPED_TRACE(c.str());
    for (int t = 0; t < 4; ++t) {
      GemmDesc d =
          GemmDesc::packed(2 * s.mr + 1, 2 * s.nr + 1, 17, t & 1, t & 2);
      d.lda += 1;
      d.ldb += 2;
      d.ldc += 3;
      EXPECT_TRUE(kernelValidates(d, c));
    }
  }
}

TEST(GemmKernelTest, Avx512EdgeShapes) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx512())
    GTEST_SKIP() << "host has no avx512f";
  checkShapes({{1, 1, 1},
               {5, 15, 1},
               {6, 16, 4},
               {7, 17, 5},
               {11, 31, 1}, // MR-1, NR-1 of the 12x32 block
               {13, 33, 5}, // MR+1, NR+1
               {257, 129, 67}},
              smallAvx512Config());
}

//===----------------------------------------------------------------------===//
// A read in place (alayout=direct)
//===----------------------------------------------------------------------===//

TEST(GemmKernelTest, AInPlaceValidates) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // The slivers read where A lies, rows lda apart (padded lda too), the
  // last one short of rows copied to scratch: M short of a block by every
  // count, K over several kc blocks, B packed, in place and packed by the
  // tiles, B transposed, C overwritten, and a bias + relu epilogue.
  for (GemmConfig config : bPackingVariants(/*inPlaceRows=*/false)) {
    config.aLayout = ALayout::Direct;
    for (Shape s : {Shape{1, 1, 1}, Shape{7, 17, 5}, Shape{13, 33, 37},
                    Shape{50, 64, 40}, Shape{23, 64, 16}, Shape{257, 129, 67}})
      for (int variant = 0; variant < 4; ++variant) {
        GemmDesc d = GemmDesc::packed(s.m, s.n, s.k, false, variant == 1);
        d.lda += variant == 2 ? 7 : 0;
        d.overwrite = variant == 3;
        if (variant == 3) {
          d.bias = GemmBias::Columns;
          d.activation.relu = true;
        }
        GemmConfig c = fitTo(config, d);
        ASSERT_EQ(c.aLayout, ALayout::Direct);
        EXPECT_TRUE(kernelValidates(d, c));
      }
  }
}

TEST(GemmKernelTest, AInPlaceRefusesWhatItCannotAddress) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // Twelve rows with a run-time lda and B read in place (its run-time row
  // step takes the register 3 lda would): three base registers reach
  // nine. With B in panels they reach 17: the same block validates, run
  // at two paddings.
  GemmConfig c = smallAvx512Config();
  c.aLayout = ALayout::Direct;
  c.packB = BPacking::InPlace;
  GemmDesc runtimeLd = GemmDesc::packed(13, 32, 37);
  runtimeLd.runtimeLd = true;
  auto built = buildGemmKernel(runtimeLd, clampToProblem(c, runtimeLd), host(),
                               EmitterOptions::defaults(), "");
  ASSERT_FALSE(static_cast<bool>(built));
  EXPECT_NE(llvm::toString(built.takeError()).find("needs mr <= 9"),
            std::string::npos);
  c.packB = BPacking::Panels;
  const GemmConfig panels = clampToProblem(c, runtimeLd);
  EXPECT_EQ(panels.mr, 12);
  EXPECT_TRUE(kernelValidates(runtimeLd.withPaddedLeadingDims(3), panels));
  EXPECT_TRUE(kernelValidates(runtimeLd.withPaddedLeadingDims(16), panels));
}

//===----------------------------------------------------------------------===//
// Overwrite (C = A * B, C never read)
//===----------------------------------------------------------------------===//

TEST(GemmKernelTest, OverwriteNeverReadsC) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // The validator fills C with NaN for an overwriting descriptor: any read
  // of C before its first store shows. K spans several kc blocks (the
  // later ones accumulate); edges in both directions; B packed, in place
  // and packed by the tiles; A in k-major slivers and in rows.
  for (const GemmConfig &config : bPackingVariants(/*inPlaceRows=*/true))
    for (Shape s : {Shape{1, 1, 1}, Shape{7, 17, 5}, Shape{13, 33, 37},
                    Shape{50, 64, 40}}) {
      GemmDesc d = GemmDesc::packed(s.m, s.n, s.k);
      d.ldc += 3;
      d.overwrite = true;
      EXPECT_TRUE(kernelValidates(d, fitTo(config, d)));
    }
}

TEST(GemmKernelTest, AccumulatingKernelFailsAsOverwrite) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A kernel that reads C, checked as one that must not: the NaN in C
  // reaches the result.
  GemmDesc accumulate = GemmDesc::packed(13, 33, 37);
  GemmConfig c = clampToProblem(smallAvx2Config(), accumulate);
  auto loaded =
      buildGemmKernel(accumulate, c, host(), EmitterOptions::defaults(), "");
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  GemmKernelFn fn = loaded->jit->gemm();
  GemmDesc overwrite = accumulate;
  overwrite.overwrite = true;
  auto report = validateGemm(
      overwrite,
      [fn](const float *a, const float *b, float *cp, void *ws) {
        fn(a, b, cp, ws);
      },
      loaded->emitted.workspaceBytes, ValidationOptions{});
  ASSERT_TRUE(static_cast<bool>(report)) << llvm::toString(report.takeError());
  EXPECT_FALSE(report->passed);
  EXPECT_NE(report->failure.find("nan"), std::string::npos) << report->failure;
}

//===----------------------------------------------------------------------===//
// Run-time leading dimensions (read from the workspace header)
//===----------------------------------------------------------------------===//

TEST(GemmKernelTest, RuntimeLeadingDimsValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // One kernel per shape, transposes and config, run with leading
  // dimensions it was not generated for (odd paddings): B packed, in place
  // and packed by the tiles, A in rows, overwrite.
  for (const GemmConfig &config : bPackingVariants(/*inPlaceRows=*/true))
    for (Shape s : {Shape{1, 1, 1}, Shape{7, 17, 5}, Shape{50, 64, 40}})
      for (int t = 0; t < 4; ++t)
        for (bool overwrite : {false, true}) {
          GemmDesc d = GemmDesc::packed(s.m, s.n, s.k, t & 1, t & 2);
          d.runtimeLd = true;
          d.overwrite = overwrite;
          GemmConfig c = fitTo(config, d);
          EXPECT_TRUE(kernelValidates(d.withPaddedLeadingDims(3), c));
          EXPECT_TRUE(kernelValidates(d.withPaddedLeadingDims(16), c));
        }
}

TEST(GemmKernelTest, ImmediateKernelFailsAsRuntimeLd) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A kernel with the dense strides as immediates, run on padded operands
  // whose strides the header carries: it reads the wrong elements.
  GemmDesc dense = GemmDesc::packed(13, 33, 37);
  GemmConfig c = clampToProblem(smallAvx2Config(), dense);
  auto loaded =
      buildGemmKernel(dense, c, host(), EmitterOptions::defaults(), "");
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  GemmKernelFn fn = loaded->jit->gemm();
  GemmDesc runtime = dense;
  runtime.runtimeLd = true;
  GemmDesc padded = runtime.withPaddedLeadingDims();
  auto report = validateGemm(
      padded,
      [fn, &padded](const float *a, const float *b, float *cp, void *ws) {
        writeLeadingDims(ws, padded);
        fn(a, b, cp, ws);
      },
      loaded->emitted.workspaceBytes, ValidationOptions{});
  ASSERT_TRUE(static_cast<bool>(report)) << llvm::toString(report.takeError());
  EXPECT_FALSE(report->passed);
}

//===----------------------------------------------------------------------===//
// Run-time sizes (M, N or K from the workspace header)
//===----------------------------------------------------------------------===//

/// Sizes a run-time-size kernel is called for.
struct CallSizes {
  int64_t m, n, k;
};

/// Validates the kernel built for `desc` (its representative sizes) at
/// the sizes `at`, run as the compiled module runs it (runGemmParts writes
/// the range and K).
::testing::AssertionResult validatesAt(const LoadedKernel &kernel,
                                       GemmDesc desc, CallSizes at) {
  desc.m = at.m;
  desc.n = at.n;
  desc.k = at.k;
  if (desc.runtimeLd)
    desc = desc.withPaddedLeadingDims(at.m % 7 + 1);
  GemmKernelFn fn = kernel.jit->gemm();
  uint64_t wsBytes = kernel.emitted.workspaceBytes;
  auto report = validateGemm(
      desc,
      [&](const float *a, const float *b, float *c, void *ws) {
        runGemmParts(fn, desc, {}, wsBytes, a, b, c, ws);
      },
      wsBytes, ValidationOptions{});
  if (!report)
    return ::testing::AssertionFailure() << llvm::toString(report.takeError());
  if (!report->passed)
    return ::testing::AssertionFailure()
           << desc.str() << " at M = " << at.m << ", N = " << at.n
           << ", K = " << at.k << ": " << report->failure;
  return ::testing::AssertionSuccess();
}

/// Builds the kernel for `d` from `base` (clamped) and expects it to
/// validate at each of `sizes`.
void expectValidatesAt(const GemmDesc &d, const GemmConfig &base,
                       std::initializer_list<CallSizes> sizes) {
  GemmConfig c = clampToProblem(base, d);
  auto loaded = buildGemmKernel(d, c, host(), EmitterOptions::defaults(), "");
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  for (CallSizes at : sizes)
    EXPECT_TRUE(validatesAt(*loaded, d, at)) << describe(d, c);
}

TEST(GemmKernelTest, RuntimeMValidates) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // One kernel per representative M, run for fewer, as many and more rows
  // (several mc blocks), with every transpose (a transposed A's leading
  // dimension is M: run-time) and overwrite.
  GemmConfig base = hostRunsAvx512() ? smallAvx512Config() : smallAvx2Config();
  for (int64_t rep : {24, 50})
    for (int t = 0; t < 4; ++t)
      for (bool overwrite : {false, true}) {
        GemmDesc d = GemmDesc::packed(rep, 70, 37, t & 1, t & 2);
        d.dynamicM = true;
        d.runtimeLd = d.transA;
        d.overwrite = overwrite;
        expectValidatesAt(
            d, base,
            {{1, 70, 37}, {5, 70, 37}, {rep, 70, 37}, {2 * rep + 7, 70, 37}});
      }
}

TEST(GemmKernelTest, RuntimeNValidates) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // One kernel per representative N, run for fewer, as many and more
  // columns (several nc blocks), every transpose, with and without a
  // run-time M too (then the rows change with the columns).
  GemmConfig base = hostRunsAvx512() ? smallAvx512Config() : smallAvx2Config();
  for (int64_t rep : {32, 70})
    for (int t = 0; t < 4; ++t)
      for (bool dynamicM : {false, true}) {
        GemmDesc d = GemmDesc::packed(29, rep, 37, t & 1, t & 2);
        d.dynamicN = true;
        d.dynamicM = dynamicM;
        d.runtimeLd = true;
        d.overwrite = t == 3;
        auto m = [&](int64_t n) { return dynamicM ? n % 40 + 1 : 29; };
        expectValidatesAt(d, base,
                          {{m(1), 1, 37},
                           {m(9), 9, 37},
                           {m(rep), rep, 37},
                           {m(2 * rep + 5), 2 * rep + 5, 37}});
      }
  // B read in place (AVX-512): the last sliver's loads masked to the
  // call's columns, whole slivers before it, one sliver short of a vector.
  if (!hostRunsAvx512())
    return;
  GemmConfig inPlace = base;
  inPlace.packB = BPacking::InPlace;
  for (bool dynamicM : {false, true}) {
    GemmDesc d = GemmDesc::packed(29, 70, 37);
    d.dynamicN = true;
    d.dynamicM = dynamicM;
    d.runtimeLd = true;
    expectValidatesAt(
        d, inPlace,
        {{29, 1, 37}, {29, 9, 37}, {dynamicM ? 3 : 29, 70, 37}, {29, 145, 37}});
  }
}

TEST(GemmKernelTest, RuntimeKValidates) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // One kernel per representative K, run for one, fewer and more k than a
  // kc block and the K unroll hold, every transpose, with a run-time N too.
  GemmConfig base = hostRunsAvx512() ? smallAvx512Config() : smallAvx2Config();
  for (int64_t rep : {16, 45})
    for (int t = 0; t < 4; ++t)
      for (bool dynamicN : {false, true}) {
        GemmDesc d = GemmDesc::packed(29, 40, rep, t & 1, t & 2);
        d.dynamicK = true;
        d.dynamicN = dynamicN;
        d.runtimeLd = true;
        auto n = [&](int64_t k) { return dynamicN ? k % 50 + 1 : 40; };
        expectValidatesAt(d, base,
                          {{29, n(1), 1},
                           {29, n(7), 7},
                           {29, n(rep), rep},
                           {29, n(2 * rep + 3), 2 * rep + 3}});
      }
}

TEST(GemmKernelTest, RuntimeKOverwritesAndAppliesEpilogues) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A run-time K into a zero-filled or bias-initialised C (attention's
  // probabilities times V, a linear layer over a dynamic depth): the
  // kernel overwrites C (NaN before the call: read, it shows) and applies
  // its epilogue in the block that ends K, the first one included, and at
  // K = 0 stores epilogue(0) (or epilogue(C) when it accumulates). One,
  // several kc blocks and none; every transpose; A packed or in place.
  GemmConfig base = hostRunsAvx512() ? smallAvx512Config() : smallAvx2Config();
  GemmConfig direct = base;
  direct.aLayout = ALayout::Direct;
  for (const GemmConfig &config : {base, direct})
    for (int t = 0; t < 4; ++t)
      for (int form = 0; form < 3; ++form) {
        // 0: overwrite, 1: overwrite + bias + relu6, 2: C += then relu.
        GemmDesc d = GemmDesc::packed(29, 40, 45, t & 1, t & 2);
        d.dynamicK = true;
        d.runtimeLd = true;
        d.overwrite = form < 2;
        d.bias = form == 1 ? GemmBias::Columns : GemmBias::None;
        d.activation.relu = form > 0;
        if (form == 1)
          d.activation.bound = 6.0f;
        expectValidatesAt(d, fitTo(config, d),
                          {{29, 40, 0},
                           {29, 40, 1},
                           {29, 40, 7},
                           {29, 40, 45},
                           {29, 40, 95}});
      }
}

TEST(GemmKernelTest, FixedSizeKernelFailsAsRuntimeSizes) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A kernel for 13 x 48 x 20 called as one that reads M (50 rows), N (90
  // columns) or K (50 terms) from its header: it computes its own sizes
  // and leaves the rest of C as it was, or sums only 20 terms. (Called for
  // fewer rows or columns it would write past C, which the guards catch in
  // the isolated runner; in this process it would corrupt the heap.)
  GemmDesc fixed = GemmDesc::packed(13, 48, 20);
  fixed.runtimeLd = true;
  GemmConfig c = clampToProblem(smallAvx2Config(), fixed);
  auto loaded =
      buildGemmKernel(fixed, c, host(), EmitterOptions::defaults(), "");
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  for (int size = 0; size < 3; ++size) {
    GemmDesc dynamic = fixed;
    CallSizes at{13, 48, 20};
    if (size == 0)
      dynamic.dynamicM = true, at.m = 50;
    else if (size == 1)
      dynamic.dynamicN = true, at.n = 90;
    else
      dynamic.dynamicK = true, at.k = 50;
    EXPECT_FALSE(validatesAt(*loaded, dynamic, at)) << dynamic.str();
  }
}

//===----------------------------------------------------------------------===//
// Epilogues (bias per column, relu) where the last kc block stores C
//===----------------------------------------------------------------------===//

TEST(GemmKernelTest, EpiloguesValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A bias (along the columns or the rows), relu and both, accumulating
  // and overwriting, K in one kc block and in several, edges both ways, B
  // packed, in place and packed by the tiles, run-time leading dimensions;
  // relu bounded (a clamp to [0, 1.5], relu6's form) where C is
  // overwritten.
  for (const GemmConfig &config : bPackingVariants(/*inPlaceRows=*/false))
    for (Shape s : {Shape{7, 17, 5}, Shape{50, 64, 40}, Shape{13, 33, 16}})
      for (int epilogue = 1; epilogue < 6; ++epilogue)
        for (bool overwrite : {false, true}) {
          // 1: bias along the columns, 2: relu, 4: bias along the rows.
          if ((epilogue & 5) == 5)
            continue;
          GemmDesc d = GemmDesc::packed(s.m, s.n, s.k);
          d.bias = epilogue & 1   ? GemmBias::Columns
                   : epilogue & 4 ? GemmBias::Rows
                                  : GemmBias::None;
          d.activation.relu = epilogue & 2;
          d.overwrite = overwrite;
          if (d.activation.relu && overwrite)
            d.activation.bound = 1.5f;
          // A floor other than 0 (hardtanh's clamp, or alone); torch's
          // clamp, whose floor takes a NaN (the same on numbers).
          if (d.activation.relu && s.m == 50)
            d.activation.floor = -1.25f;
          d.activation.nanToFloor = d.activation.relu && s.m == 50 && overwrite;
          // Leaky relu instead where a bias alone was: a slope below 1
          // (the larger of x and s x) and above (the smaller).
          if (epilogue != 2 && !d.activation.relu && s.m != 7)
            d.activation.leakySlope = overwrite ? 0.125f : 3.0f;
          d.runtimeLd = s.m == 13;
          EXPECT_TRUE(kernelValidates(
              d.runtimeLd ? d.withPaddedLeadingDims(3) : d, fitTo(config, d)));
        }
}

/// Builds `built`'s kernel (the small AVX2 block) and validates it as each
/// of `claims`, another epilogue: every check must fail.
void expectFailsAs(const GemmDesc &built, llvm::ArrayRef<GemmDesc> claims,
                   std::optional<GemmConfig> config = std::nullopt) {
  GemmConfig c = clampToProblem(config.value_or(smallAvx2Config()), built);
  auto loaded =
      buildGemmKernel(built, c, host(), EmitterOptions::defaults(), "");
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  GemmKernelFn fn = loaded->jit->gemm();
  for (const GemmDesc &claimed : claims) {
    auto report = validateGemm(
        claimed,
        [fn](const float *a, const float *b, float *cp, void *ws) {
          fn(a, b, cp, ws);
        },
        loaded->emitted.workspaceBytes, ValidationOptions{});
    ASSERT_TRUE(static_cast<bool>(report))
        << llvm::toString(report.takeError());
    EXPECT_FALSE(report->passed) << claimed.str();
  }
}

TEST(GemmKernelTest, MissingEpilogueIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A kernel without relu (and one without the bias), checked as one with
  // them: negative sums (relu) and the bias show.
  GemmDesc plain = GemmDesc::packed(13, 33, 37);
  GemmDesc withBias = plain, withRelu = plain;
  withBias.bias = GemmBias::Columns;
  withRelu.activation.relu = true;
  expectFailsAs(plain, {withBias, withRelu});
}

TEST(GemmKernelTest, MissingReluBoundIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A relu kernel checked as relu bounded by 1 (the sums above 1 show),
  // and as relu with the floor -1 (the negative sums show).
  GemmDesc relu = GemmDesc::packed(13, 33, 37);
  relu.activation.relu = true;
  GemmDesc bounded = relu, floored = relu;
  bounded.activation.bound = 1.0f;
  floored.activation.floor = -1.0f;
  expectFailsAs(relu, {bounded, floored});
}

TEST(GemmKernelTest, WrongNanRuleIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // relu that keeps a NaN and torch's clamp that makes it the floor agree
  // on every number: validation's NaN in A's last row tells them apart,
  // each way (and leaky relu, which keeps it, from the clamp).
  GemmDesc keeps = GemmDesc::packed(13, 33, 37);
  keeps.activation.relu = true;
  keeps.activation.floor = -1.0f;
  GemmDesc floors = keeps;
  floors.activation.nanToFloor = true;
  expectFailsAs(keeps, {floors});
  expectFailsAs(floors, {keeps});
}

TEST(GemmKernelTest, WrongLeakySlopeIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // A leaky relu kernel of slope 1/8 checked as slope 1/4, as relu and
  // with no activation: the negative sums show each time.
  GemmDesc leaky = GemmDesc::packed(13, 33, 37);
  leaky.activation.leakySlope = 0.125f;
  GemmDesc steeper = leaky, relu = leaky, none = leaky;
  steeper.activation.leakySlope = 0.25f;
  relu.activation = Activation{};
  relu.activation.relu = true;
  none.activation = Activation{};
  expectFailsAs(leaky, {steeper, relu, none});
}

TEST(GemmKernelTest, SmoothActivationsValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // Every smooth activation after the sums (and a bias along the columns
  // or the rows), accumulating and overwriting, edges both ways, B packed,
  // in place and packed by the tiles, run-time leading dimensions; then
  // the model's config where it takes all of M in one block beside the
  // epilogue's registers (30 rows: 28 at most with the activation).
  const auto &all = Activation::kSmoothActivations;
  for (const GemmConfig &config : bPackingVariants(/*inPlaceRows=*/false))
    for (Shape s : {Shape{7, 17, 5}, Shape{50, 64, 40}, Shape{13, 33, 16}})
      for (int i = 0; i < int(std::size(all)); ++i) {
        GemmDesc d = GemmDesc::packed(s.m, s.n, s.k);
        d.activation.smooth = all[i];
        d.bias = i == 1   ? GemmBias::Rows
                 : i == 2 ? GemmBias::None
                          : GemmBias::Columns;
        d.overwrite = i % 2;
        d.runtimeLd = s.m == 13;
        SCOPED_TRACE(d.str());
        EXPECT_TRUE(kernelValidates(
            d.runtimeLd ? d.withPaddedLeadingDims(3) : d, fitTo(config, d)));
      }
  for (Activation::Smooth smooth : all) {
    GemmDesc d = GemmDesc::packed(30, 16, 64);
    d.activation.smooth = smooth;
    d.bias = GemmBias::Columns;
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(d, host()));
    if (c.isa == VectorIsa::Avx512) {
      EXPECT_LE(c.mr * (c.nr / 16), 28) << c.str();
    }
    EXPECT_TRUE(kernelValidates(d, c)) << c.str();
    // Few rows against B^T: the matrix-vector form on AVX-512 (its ymm
    // sums through the same formulas), and its run-time N; the panel
    // kernel with B^T packed too.
    GemmDesc few = GemmDesc::packed(4, 70, 96, false, true);
    few.activation.smooth = smooth;
    few.bias = GemmBias::Columns;
    QM_ASSERT_EXPECTED(fc, chooseGemmConfig(few, host()));
    if (hostRunsAvx512() && host().hasFeature("avx512bw") &&
        host().hasFeature("avx512vl") && host().hasFeature("bmi2")) {
      EXPECT_TRUE(isMatrixVectorForm(few, fc)) << fc.str();
    }
    EXPECT_TRUE(kernelValidates(few, fc)) << fc.str();
    GemmConfig panels = fc;
    panels.packB = BPacking::Panels;
    EXPECT_TRUE(kernelValidates(few, panels)) << panels.str();
    GemmDesc dynN = GemmDesc::packed(1, 64, 96, false, true);
    dynN.activation.smooth = smooth;
    dynN.dynamicN = true;
    dynN.runtimeLd = true;
    dynN.overwrite = true;
    QM_ASSERT_EXPECTED(dc, chooseGemmConfig(dynN, host()));
    expectValidatesAt(dynN, dc, {{1, 1, 96}, {1, 37, 96}, {1, 131, 96}});
  }
}

TEST(GemmKernelTest, WrongSmoothActivationIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // Each smooth activation's kernel checked as another near it (gelu_tanh
  // as gelu_erf: at most 5e-4 apart), and silu as no activation: the
  // validator's allowance for their approximations is far below that.
  using Smooth = Activation::Smooth;
  GemmDesc tanh = GemmDesc::packed(13, 33, 37);
  tanh.activation.smooth = Smooth::GeluTanh;
  GemmDesc erf = tanh, silu = tanh, none = tanh, sigmoid = tanh;
  erf.activation.smooth = Smooth::GeluErf;
  silu.activation.smooth = Smooth::Silu;
  sigmoid.activation.smooth = Smooth::Sigmoid;
  none.activation = Activation{};
  expectFailsAs(tanh, {erf, silu});
  expectFailsAs(erf, {tanh});
  expectFailsAs(silu, {sigmoid, none, erf});
}

TEST(GemmKernelTest, HostDefaultConfig) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // The analytical config for the host, unmodified.
  for (Shape s : {Shape{1, 1, 1}, Shape{100, 200, 300}, Shape{300, 33, 7}}) {
    GemmDesc d = GemmDesc::packed(s.m, s.n, s.k);
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(d, host()));
    EXPECT_EQ(c.isa, host().bestIsa());
    EXPECT_TRUE(kernelValidates(d, c));
  }
}

//===----------------------------------------------------------------------===//
// (c) Random shapes and configs
//===----------------------------------------------------------------------===//

TEST(GemmKernelTest, RandomShapesAndConfigs) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  // The host's best ISA, and AVX2 as well where an AVX-512 host runs it.
  std::vector<MicroKernelShape> shapes(
      microKernelTable(host().bestIsa()).begin(),
      microKernelTable(host().bestIsa()).end());
  if (host().bestIsa() == VectorIsa::Avx512 && hostRunsAvx2())
    for (const MicroKernelShape &s : microKernelTable(VectorIsa::Avx2))
      shapes.push_back(s);
  ASSERT_FALSE(shapes.empty());

  ValidationOptions options;
  options.distributions = {Distribution::SmallIntegers, Distribution::Uniform};

  // Our own mapping from the stream, the same with every standard library.
  std::mt19937_64 rng(0x9e3779b97f4a7c15ull);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return lo + int64_t(rng() % uint64_t(hi - lo + 1));
  };
  auto size = [&]() { return pick(1, 100) <= 90 ? pick(1, 96) : pick(1, 300); };
  const int unrolls[] = {1, 2, 4, 8};
  const int prefetches[] = {0, 256};

  constexpr int kCases = 200;
  int failures = 0;
  for (int i = 0; i < kCases && failures < 10; ++i) {
    GemmDesc d = GemmDesc::packed(size(), size(), size(), pick(0, 1) == 1,
                                  pick(0, 1) == 1);
    d.lda += pick(0, 5);
    d.ldb += pick(0, 5);
    d.ldc += pick(0, 5);
    const MicroKernelShape &s =
        shapes[size_t(pick(0, int64_t(shapes.size()) - 1))];
    GemmConfig c;
    c.isa = s.isa;
    c.mr = s.mr;
    c.nr = s.nr;
    c.order = s.order;
    c.kUnroll = unrolls[pick(0, 3)];
    c.kc = pick(1, 64);
    c.mc = s.mr * pick(1, 4);
    c.nc = s.nr * pick(1, 4);
    c.prefetchA = prefetches[pick(0, 1)];
    c.prefetchB = prefetches[pick(0, 1)];
    c.loop = pick(0, 1) == 1 ? MacroLoopOrder::IrJr : MacroLoopOrder::JrIr;
    // A k-major, in rows or in place (the last two need A as stored).
    c.aLayout = d.transA ? ALayout::KMajor : ALayout(pick(0, 2));
    ::testing::AssertionResult ok = kernelValidates(d, c, options);
    if (!ok)
      ++failures;
    EXPECT_TRUE(ok) << "case " << i;
  }
  EXPECT_EQ(failures, 0) << "stopped after " << failures << " failures";
}

//===----------------------------------------------------------------------===//
// (d) Broken kernels are caught
//===----------------------------------------------------------------------===//

TEST(GemmKernelTest, DropKIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx2())
    GTEST_SKIP() << "host has no avx2 and fma";
  GemmDesc d = GemmDesc::packed(8, 24, 5);
  ValidationReport report;
  ASSERT_TRUE(buildAndValidate(d, smallAvx2Config(), {}, report, "drop-k"));
  EXPECT_FALSE(report.passed);
  ::testing::Test::RecordProperty("failure", report.failure);
  EXPECT_NE(report.failure.find("C("), std::string::npos) << report.failure;
  EXPECT_NE(report.failure.find("expected"), std::string::npos)
      << report.failure;
  // The same request without the fault is a correct kernel.
  EXPECT_TRUE(kernelValidates(d, smallAvx2Config()));
}

TEST(GemmKernelTest, WritePastEdgeWithGapIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx2())
    GTEST_SKIP() << "host has no avx2 and fma";
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.ldc = 9;
  ValidationReport report;
  ASSERT_TRUE(
      buildAndValidate(d, smallAvx2Config(), {}, report, "write-past-edge"));
  EXPECT_FALSE(report.passed);
  ::testing::Test::RecordProperty("failure", report.failure);
  llvm::StringRef failure(report.failure);
  EXPECT_TRUE(failure.contains("gap") || failure.contains("guard"))
      << report.failure;
  EXPECT_TRUE(failure.contains("C")) << report.failure;
  EXPECT_TRUE(kernelValidates(d, smallAvx2Config()));
}

TEST(GemmKernelTest, WritePastEdgePackedIsCaught) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx2())
    GTEST_SKIP() << "host has no avx2 and fma";
  // With ldc = n there is no gap: the extra column of each row lands on the
  // first element of the next row, and the last row's on C's guard.
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  ValidationReport report;
  ASSERT_TRUE(
      buildAndValidate(d, smallAvx2Config(), {}, report, "write-past-edge"));
  EXPECT_FALSE(report.passed);
  ::testing::Test::RecordProperty("failure", report.failure);
  llvm::StringRef failure(report.failure);
  EXPECT_TRUE(failure.contains("guard after C") || failure.contains("C("))
      << report.failure;
  EXPECT_TRUE(kernelValidates(d, smallAvx2Config()));
}

TEST(GemmKernelTest, FaultsAreCaughtOnAvx512) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx512())
    GTEST_SKIP() << "host has no avx512f";
  ValidationReport report;
  ASSERT_TRUE(buildAndValidate(GemmDesc::packed(13, 40, 5), smallAvx512Config(),
                               {}, report, "drop-k"));
  EXPECT_FALSE(report.passed);
  ::testing::Test::RecordProperty("drop_k_failure", report.failure);
  EXPECT_NE(report.failure.find("C("), std::string::npos) << report.failure;
  GemmDesc d = GemmDesc::packed(13, 5, 3);
  d.ldc = 9;
  ASSERT_TRUE(
      buildAndValidate(d, smallAvx512Config(), {}, report, "write-past-edge"));
  EXPECT_FALSE(report.passed);
  ::testing::Test::RecordProperty("write_past_edge_failure", report.failure);
  llvm::StringRef failure(report.failure);
  EXPECT_TRUE(failure.contains("gap") || failure.contains("guard"))
      << report.failure;
}

/// The dot-product kernels' small blocking (dotgemm.py): an 8-row block of
/// two vectors, kc a few k groups, so that every kind of edge falls inside
/// the shapes below.
GemmConfig smallDotConfig(int64_t kc) {
  GemmConfig c;
  c.isa = VectorIsa::Avx512;
  c.mr = 8;
  c.nr = 32;
  c.kUnroll = 2;
  c.kc = kc;
  c.mc = 16;
  c.nc = 64;
  return c;
}

/// Validates `precision`'s kernels with the small blocking and the model's:
/// edges of every kind (a K that is not whole k groups, a kc that leaves a
/// short last block, rows and columns past the block; 300 columns, a
/// panel wider than BZHI's 8-bit count), padded run-time leading
/// dimensions, overwrite, transposes (a transposed operand is packed as
/// the other one as stored).
/// `d` validates with the model's config and with a small one (kc `kc`,
/// several blocks).
void expectDotConfigsValidate(const GemmDesc &d, int64_t kc) {
  auto model = chooseKernelConfig(KernelProblem(d), host());
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  for (const GemmConfig &config :
       {clampToProblem(smallDotConfig(kc), d), *model})
    EXPECT_TRUE(kernelValidates(d, config)) << describe(d, config);
}

void expectDotKernelsValidate(GemmPrecision precision, int64_t kc) {
  struct Case {
    int64_t m, n, k;
    bool overwrite, transA = false, transB = false;
  };
  for (Case c :
       {Case{1, 1, 1, false}, Case{37, 45, 29, false}, Case{17, 100, 66, true},
        Case{64, 64, 64, false}, Case{24, 300, 43, false},
        Case{37, 45, 77, false, false, true}, Case{30, 50, 41, true, true},
        Case{19, 33, 25, false, true, true}}) {
    GemmDesc d = GemmDesc::packed(c.m, c.n, c.k, c.transA, c.transB);
    d.precision = precision;
    d.overwrite = c.overwrite;
    d.runtimeLd = true;
    d = d.withPaddedLeadingDims();
    expectDotConfigsValidate(d, kc);
  }
}

/// Broken `precision` kernels fail validation and the same request without
/// the fault passes: a k group dropped, B's rows interleaved the wrong way
/// round (A(i,k) meets B(k+1,j)), stores past N (16 rows, so that they
/// stay within C's gaps and its guard after it: the validator runs the
/// kernel in this process).
void expectDotFaultsAreCaught(GemmPrecision precision, int64_t kc) {
  GemmDesc d = GemmDesc::packed(16, 40, 9);
  d.precision = precision;
  d.ldc = 43;
  for (const char *fault : {"drop-k", "swap-pairs", "write-past-edge"}) {
    ValidationReport report;
    ASSERT_TRUE(buildAndValidate(d, smallDotConfig(kc), {}, report, fault));
    EXPECT_FALSE(report.passed) << fault;
    ::testing::Test::RecordProperty(
        (precisionName(precision) + "_" + fault + "_failure").str(),
        report.failure);
  }
  ValidationReport report;
  ASSERT_TRUE(buildAndValidate(d, smallDotConfig(kc), {}, report));
  EXPECT_TRUE(report.passed) << report.failure;
}

bool hostRunsBf16() {
  return host().hasFeature("avx512bf16") && host().hasFeature("avx512bw");
}

bool hostRunsF16OnAvx512() {
  return host().bestIsa() == VectorIsa::Avx512 &&
         host().hasFeature("avx512bw") && host().hasFeature("avx512vl") &&
         host().hasFeature("f16c");
}

bool hostRunsVnni() {
  return host().hasFeature("avx512vnni") && host().hasFeature("avx512bw");
}

TEST(GemmKernelTest, Bf16KernelsValidate) {
  if (!hostRunsBf16())
    GTEST_SKIP() << "host has no AVX512-BF16";
  expectDotKernelsValidate(GemmPrecision::Bf16, 10);
}

TEST(GemmKernelTest, Bf16FaultsAreCaught) {
  if (!hostRunsBf16())
    GTEST_SKIP() << "host has no AVX512-BF16";
  expectDotFaultsAreCaught(GemmPrecision::Bf16, 10);
}

/// D = bf16(C + A B), rounded once (what an f32 accumulator and
/// arith.truncf become): from the only kc block, where an overwriting
/// kernel never touches C, and from the last of several, which adds what
/// the earlier ones left in C; padded and immediate leading dimensions
/// (ldd too), transposes, the model's config and a small one. D starts
/// NaN: an element the kernel leaves shows.
TEST(GemmKernelTest, Bf16OutputValidates) {
  if (!hostRunsBf16())
    GTEST_SKIP() << "host has no AVX512-BF16";
  struct Case {
    int64_t m, n, k;
    bool overwrite, transB = false, runtimeLd = true;
  };
  for (Case c :
       {Case{1, 1, 1, true}, Case{37, 45, 29, true}, Case{17, 100, 66, false},
        Case{64, 64, 64, true, true}, Case{24, 300, 130, true, false, false},
        Case{19, 33, 25, false, true, false}}) {
    GemmDesc d = GemmDesc::packed(c.m, c.n, c.k, false, c.transB);
    d.precision = GemmPrecision::Bf16;
    d.overwrite = c.overwrite;
    d.halfOutput = true;
    d.runtimeLd = c.runtimeLd;
    d = d.withPaddedLeadingDims();
    expectDotConfigsValidate(d, 10);
  }
}

/// A bias per column, relu, relu6 and leaky relu (a slope below 1 and
/// above) on bf16 kernels, into the f32 C or before the rounding into D;
/// through the validator, whose reference applies the same epilogue (and
/// fills the bias like the operands). 8-bit kernels refuse an epilogue
/// (the descriptor says so).
TEST(GemmKernelTest, Bf16EpilogueValidates) {
  if (!hostRunsBf16())
    GTEST_SKIP() << "host has no AVX512-BF16";
  for (bool out : {false, true})
    for (int e = 0; e < 4; ++e) {
      GemmDesc d = GemmDesc::packed(37, 45, 64);
      d.precision = GemmPrecision::Bf16;
      d.overwrite = e != 2;
      d.bias = e != 1 ? GemmBias::Columns : GemmBias::None;
      if (e == 3)
        d.activation.leakySlope = out ? 3.0f : 0.125f;
      else
        d.activation.relu = true;
      if (e == 1)
        d.activation.bound = 6.0f;
      d.halfOutput = out;
      d.runtimeLd = true;
      d = d.withPaddedLeadingDims();
      expectDotConfigsValidate(d, 10);
    }
  GemmDesc s8 = GemmDesc::packed(8, 8, 8);
  s8.precision = GemmPrecision::S8S8;
  s8.activation.relu = true;
  llvm::Error err = s8.verify();
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("8-bit"), std::string::npos);
}

/// Smooth activations after bf16 and f16 products, on the f32 sums before
/// a 16-bit output's rounding: the small block and the model's (B packed;
/// and A's few rows against B^T, the product transposed or B's rows
/// streamed), each validated within the activation's allowance; a kernel
/// claiming another activation fails. 8-bit products take none.
TEST(GemmKernelTest, HalfPrecisionSmoothActivationsValidate) {
  if (!hostRunsBf16() && !hostRunsF16OnAvx512())
    GTEST_SKIP() << "host has neither AVX512-BF16 nor AVX-512 with F16C";
  using Smooth = Activation::Smooth;
  int shape = 0;
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::F16}) {
    if (p == GemmPrecision::Bf16 ? !hostRunsBf16() : !hostRunsF16OnAvx512())
      continue;
    for (Smooth s : Activation::kSmoothActivations)
      for (bool out : {false, true}) {
        // 37 rows (the packed nest), 5 (B streamed) or 20 against a B^T
        // five times wider (the product transposed).
        const int64_t m = shape % 3 == 0 ? 37 : shape % 3 == 1 ? 5 : 20;
        const bool transB = shape % 3 == 2;
        ++shape;
        GemmDesc d = GemmDesc::packed(m, transB ? 100 : 45, 64, false, transB);
        d.precision = p;
        d.bias = GemmBias::Columns;
        d.activation.smooth = s;
        d.halfOutput = out;
        d.runtimeLd = true;
        d = d.withPaddedLeadingDims();
        SCOPED_TRACE(d.str());
        expectDotConfigsValidate(d, 16);
        // bf16's product transposed (C^T's tiles stored through the
        // spill area and a transpose: the epilogue's third store path).
        if (transB && p == GemmPrecision::Bf16) {
          GemmConfig t = smallDotConfig(16);
          t.product = Product::Transposed;
          EXPECT_TRUE(kernelValidates(d, t)) << describe(d, t);
        }
      }
    GemmDesc tanh = GemmDesc::packed(37, 45, 64);
    tanh.precision = p;
    tanh.activation.smooth = Smooth::GeluTanh;
    GemmDesc erf = tanh;
    erf.activation.smooth = Smooth::GeluErf;
    expectFailsAs(tanh, {erf}, smallDotConfig(16));
  }
  GemmDesc s8 = GemmDesc::packed(8, 8, 8);
  s8.precision = GemmPrecision::S8S8;
  s8.activation.smooth = Smooth::Silu;
  llvm::Error err = s8.verify();
  ASSERT_TRUE(bool(err));
}

/// bf16 and f16 kernels see validation's NaN too (A's last row, kept by
/// the rounding): relu that keeps it and torch's clamp that makes it the
/// floor agree on every number, and each is caught claiming the other,
/// into the f32 C and rounded into D.
TEST(GemmKernelTest, HalfPrecisionWrongNanRuleIsCaught) {
  if (!hostRunsBf16() && !hostRunsF16OnAvx512())
    GTEST_SKIP() << "host has neither AVX512-BF16 nor AVX-512 with F16C";
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::F16}) {
    if (p == GemmPrecision::Bf16 ? !hostRunsBf16() : !hostRunsF16OnAvx512())
      continue;
    for (bool out : {false, true}) {
      GemmDesc keeps = GemmDesc::packed(13, 33, 38);
      keeps.precision = p;
      keeps.halfOutput = out;
      keeps.ldd = out ? keeps.n : 0;
      keeps.activation.relu = true;
      keeps.activation.floor = -1.0f;
      GemmDesc floors = keeps;
      floors.activation.nanToFloor = true;
      SCOPED_TRACE(keeps.str());
      expectFailsAs(keeps, {floors}, smallDotConfig(16));
      expectFailsAs(floors, {keeps}, smallDotConfig(16));
    }
  }
}

/// B as stored against up to streamedRows rows of A, on a target without
/// the type's tiles: the model streams B's rows in place (packb=0), K in
/// blocks of streamedKBlock (three blocks, the last short and ending in a
/// partial group, at the largest K below), groups of up to eight passes
/// (two groups past 48 rows), which validates accumulating and
/// overwriting; past streamedRows B is packed.
static void expectStreamsBRows(GemmPrecision precision, const Target &target) {
  const int64_t blocks = 2 * streamedKBlock(precision) + 53;
  GemmDesc shape = GemmDesc::packed(1, 150, 77);
  shape.precision = precision;
  const int64_t bound = streamedRows(shape, target);
  for (auto [m, k] :
       {std::pair{int64_t(1), int64_t(77)}, std::pair{int64_t(7), blocks},
        std::pair{bound, int64_t(77)}, std::pair{bound + 1, int64_t(77)}}) {
    GemmDesc d = GemmDesc::packed(m, 150, k);
    d.precision = precision;
    d.overwrite = m % 2 == 1;
    d = d.withPaddedLeadingDims();
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), target));
    EXPECT_EQ(model.packB == BPacking::InPlace, m <= bound) << model.str();
    if (model.packB == BPacking::InPlace) {
      EXPECT_EQ(model.kc, std::min(k, streamedKBlock(precision)));
    }
    EXPECT_TRUE(kernelValidates(d, model)) << describe(d, model);
  }
}

/// One row of bf16 A against B^T (a token through a linear layer): the
/// model reads B^T in place, a dot product per column (packb=0), which
/// validates at every K tail (none, a partial chunk, an odd k) and N
/// edge, accumulating or not, with run-time and immediate leading
/// dimensions; the packed form stays available (packb=1); without AMX the
/// form takes up to kBf16MatrixVectorRows rows, and B as stored streams
/// its rows in place up to streamedRows. (Run-time M and
/// parallel parts: python tests/test_dotgemm.py, which writes the range.)
TEST(GemmKernelTest, Bf16GemvValidates) {
  if (!hostRunsBf16())
    GTEST_SKIP() << "host has no AVX512-BF16";
  for (int64_t k : {1, 31, 32, 77, 96}) {
    GemmDesc d = GemmDesc::packed(1, 45, k, false, true);
    d.precision = GemmPrecision::Bf16;
    d.overwrite = k % 2 == 1;
    d.runtimeLd = k != 77;
    d = d.withPaddedLeadingDims();
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), host()));
    EXPECT_EQ(model.packB, BPacking::InPlace) << model.str();
    EXPECT_TRUE(kernelValidates(d, model)) << describe(d, model);
    GemmConfig packed = model;
    packed.packB = BPacking::Panels;
    EXPECT_TRUE(kernelValidates(d, packed)) << describe(d, packed);
  }
  // Not for B as stored where the tiles take it.
  GemmDesc nn = GemmDesc::packed(1, 45, 77);
  nn.precision = GemmPrecision::Bf16;
  QM_ASSERT_EXPECTED(nnModel, chooseKernelConfig(KernelProblem(nn), host()));
  EXPECT_EQ(nnModel.packB,
            host().hasAmx(true) ? BPacking::Panels : BPacking::InPlace);
  // Without the tiles, up to kBf16MatrixVectorRows rows (two a pass; an
  // odd count's last pass one), accumulating and overwriting; past them
  // B^T packed.
  const Target noAmx = host().withoutAmx();
  for (int64_t m : {int64_t(2), int64_t(5), kBf16MatrixVectorRows,
                    kBf16MatrixVectorRows + 1}) {
    GemmDesc d = GemmDesc::packed(m, 45, 77, false, true);
    d.precision = GemmPrecision::Bf16;
    d.overwrite = m % 2 == 1;
    d = d.withPaddedLeadingDims();
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), noAmx));
    EXPECT_EQ(isMatrixVectorForm(d, model), m <= kBf16MatrixVectorRows)
        << model.str();
    EXPECT_TRUE(kernelValidates(d, model)) << describe(d, model);
  }
  // B as stored, without the tiles: B's rows streamed in place up to
  // streamedRows rows (passes of up to 6; an odd K's last k paired with
  // zeros; K in blocks of streamedKBlock, the last one short); past them B
  // packed.
  expectStreamsBRows(GemmPrecision::Bf16, noAmx);
}

/// A run-time N (aten.mv over a dynamic number of rows) in bf16, f16 and
/// the 8-bit types: the matrix-vector form, its columns from the header as
/// f32's, validated at 1, 7, 64 and 131 columns; with an epilogue (bf16
/// into a bf16 D too) and, without the tiles, a few rows.
TEST(GemmKernelTest, LowPrecisionMatrixVectorFormTakesARuntimeN) {
  std::vector<GemmPrecision> precisions;
  if (hostRunsBf16())
    precisions.push_back(GemmPrecision::Bf16);
  if (hostRunsF16OnAvx512())
    precisions.push_back(GemmPrecision::F16);
  if (hostRunsVnni())
    precisions.insert(precisions.end(),
                      {GemmPrecision::S8S8, GemmPrecision::U8S8});
  if (precisions.empty())
    GTEST_SKIP() << "host has no AVX512-BF16, AVX-512 F16C or VNNI";
  const Target noAmx = host().withoutAmx();
  for (GemmPrecision p : precisions)
    for (int variant = 0; variant < 3; ++variant) {
      const bool integer = isIntegerPrecision(p);
      if (variant == 2 && p != GemmPrecision::Bf16)
        continue; // a bf16 D
      GemmDesc d = GemmDesc::packed(variant == 1 && !integer ? 5 : 1, 64, 77,
                                    false, true);
      d.precision = p;
      d.dynamicN = true;
      d.runtimeLd = true;
      d.overwrite = variant != 1 || integer;
      if (!integer && variant == 0) {
        d.bias = GemmBias::Columns;
        d.activation.relu = true;
      }
      if (variant == 2) {
        d.halfOutput = true;
        d.ldd = d.n;
      }
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), noAmx));
      EXPECT_TRUE(isMatrixVectorForm(d, model)) << model.str();
      expectValidatesAt(
          d, model,
          {{d.m, 1, 77}, {d.m, 7, 77}, {d.m, 64, 77}, {d.m, 131, 77}});
    }
}

/// The 8-bit types' B read in place on a target without AMX-INT8: B as
/// stored streamed (expectStreamsBRows: four rows of B interleaved into
/// quads as they are loaded), B^T up to i8MatrixVectorRows rows in the
/// matrix-vector form (one and two rows a pass, a K tail of 63 k); s8 A
/// through B's bytes plus 128 and each row's sum; past the bound B^T
/// packed.
TEST(GemmKernelTest, I8RowsInPlaceValidate) {
  if (!hostRunsVnni())
    GTEST_SKIP() << "host has no AVX512-VNNI";
  const Target noAmx = host().withoutAmx();
  for (GemmPrecision p : {GemmPrecision::U8S8, GemmPrecision::S8S8}) {
    expectStreamsBRows(p, noAmx);
    for (int64_t m : {int64_t(1), int64_t(2), kI8MatrixVectorRows,
                      kI8MatrixVectorRows + 1}) {
      // (K 191: short of kI8LongK.)
      GemmDesc d = GemmDesc::packed(m, 45, 191, false, true);
      d.precision = p;
      d.overwrite = m % 2 == 1;
      d = d.withPaddedLeadingDims();
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), noAmx));
      EXPECT_EQ(isMatrixVectorForm(d, model), m <= kI8MatrixVectorRows)
          << model.str();
      EXPECT_TRUE(kernelValidates(d, model)) << describe(d, model);
    }
  }
}

/// f16 on AVX-512 without the tiles (the model's choice where the target
/// has no AMX-BF16): A and B widened to f32 where they are packed, the
/// f32 FMA block; B as stored and transposed, edges, several blocks, the
/// epilogue (relu, or leaky relu into D), an f16 D; the small blocking and the
/// model's for a target without AMX; broken kernels (a k dropped, B cut to
/// bf16's bits, stores past the edge) fail.
TEST(GemmKernelTest, F16DotKernelsValidate) {
  if (!hostRunsF16OnAvx512())
    GTEST_SKIP() << "host lacks AVX512BW, AVX512VL or F16C";
  const Target noAmx = host().withoutAmx();
  ASSERT_FALSE(noAmx.hasAmx(true));
  struct Case {
    int64_t m, n, k;
    bool transB, overwrite, runtimeLd, epilogue = false, output = false;
    std::optional<float> leaky = std::nullopt; // instead of relu
  };
  for (Case c : {Case{37, 45, 29, false, false, true},
                 Case{100, 150, 197, false, true, false},
                 Case{45, 37, 77, true, false, true},
                 Case{64, 96, 64, true, true, false},
                 Case{30, 70, 100, false, true, true, true},
                 Case{50, 40, 150, true, false, true, false, true},
                 Case{30, 70, 100, true, false, true, true, true, 0.25f}}) {
    GemmDesc d = GemmDesc::packed(c.m, c.n, c.k, false, c.transB);
    d.precision = GemmPrecision::F16;
    d.overwrite = c.overwrite;
    d.runtimeLd = c.runtimeLd;
    d.halfOutput = c.output;
    if (c.epilogue) {
      d.bias = GemmBias::Columns;
      d.activation.relu = !c.leaky;
      d.activation.leakySlope = c.leaky;
    }
    d = d.withPaddedLeadingDims();
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), noAmx));
    EXPECT_EQ(model.isa, VectorIsa::Avx512) << model.str();
    EXPECT_EQ(model.packB, BPacking::Panels) << model.str();
    for (const GemmConfig &config : {model, smallDotConfig(24)})
      EXPECT_TRUE(kernelValidates(d, config)) << describe(d, config);
  }
  for (bool transB : {false, true}) {
    GemmDesc d = GemmDesc::packed(40, 45, 70, false, transB);
    d.precision = GemmPrecision::F16;
    d.overwrite = true;
    for (const char *fault : {"drop-k", "drop-low", "write-past-edge"}) {
      ValidationReport report;
      ASSERT_TRUE(buildAndValidate(d, smallDotConfig(24), {}, report, fault));
      EXPECT_FALSE(report.passed) << fault << " " << d.str();
    }
  }
}

/// The f16 forms that read B in place (B^T's rows, or B's rows streamed):
/// the model takes them on AVX-512 for each of `shapes` (M x N x K, B
/// transposed or not), which validate with K % 2 == 1 overwriting and
/// run-time leading dimensions unless N is 64; a run-time M, blocked for
/// 6 rows, validates at 1, 7 and 20; broken kernels fail; a bias and
/// relu validate.
void expectF16BInPlaceValidates(
    bool transB, std::initializer_list<std::array<int64_t, 3>> shapes) {
  for (auto [m, n, k] : shapes) {
    GemmDesc d = GemmDesc::packed(m, n, k, false, transB);
    d.precision = GemmPrecision::F16;
    d.overwrite = k % 2 == 1;
    d.runtimeLd = n != 64;
    d = d.withPaddedLeadingDims();
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), host()));
    EXPECT_EQ(model.isa, VectorIsa::Avx512) << model.str();
    EXPECT_EQ(model.packB, BPacking::InPlace) << model.str();
    EXPECT_TRUE(kernelValidates(d, model)) << describe(d, model);
  }
  GemmDesc dyn = GemmDesc::packed(6, 70, 40, false, transB);
  dyn.precision = GemmPrecision::F16;
  dyn.dynamicM = true;
  dyn.runtimeLd = true;
  QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(dyn), host()));
  EXPECT_EQ(model.packB, BPacking::InPlace) << model.str();
  expectValidatesAt(dyn, model, {{1, 70, 40}, {7, 70, 40}, {20, 70, 40}});
  GemmDesc d = GemmDesc::packed(3, 70, 40, false, transB);
  d.precision = GemmPrecision::F16;
  QM_ASSERT_EXPECTED(inPlace, chooseKernelConfig(KernelProblem(d), host()));
  for (const char *fault : {"drop-k", "write-past-edge", "drop-low"}) {
    ValidationReport report;
    ASSERT_TRUE(buildAndValidate(d, inPlace, {}, report, fault));
    EXPECT_FALSE(report.passed) << fault;
  }
  // The epilogue where C is stored: a bias along the columns, relu.
  for (bool overwrite : {true, false}) {
    GemmDesc e = d;
    e.bias = GemmBias::Columns;
    e.activation.relu = true;
    e.overwrite = overwrite;
    QM_ASSERT_EXPECTED(epilogue, chooseKernelConfig(KernelProblem(e), host()));
    EXPECT_EQ(epilogue.packB, BPacking::InPlace) << epilogue.str();
    EXPECT_TRUE(kernelValidates(e, epilogue)) << describe(e, epilogue);
    // An f16 D (torch's truncf), rounded where the sums are stored, C
    // read unless overwritten: the same form; a wrong sum shows in D.
    e.halfOutput = true;
    e.ldd = e.n + 3;
    QM_ASSERT_EXPECTED(half, chooseKernelConfig(KernelProblem(e), host()));
    EXPECT_EQ(half.packB, BPacking::InPlace) << half.str();
    EXPECT_TRUE(kernelValidates(e, half)) << describe(e, half);
    ValidationReport report;
    ASSERT_TRUE(buildAndValidate(e, half, {}, report, "drop-k"));
    EXPECT_FALSE(report.passed);
    EXPECT_NE(report.failure.find(": D("), std::string::npos) << report.failure;
  }
}

/// Few rows of f16 A against B as stored (a JAX dense layer): B's rows
/// streamed in place (packb=0), passes of up to 6 rows of A widened into
/// the workspace, 64 columns a block; one pass and several, an edge block
/// and whole ones, a K tail.
TEST(GemmKernelTest, F16BRowsStreamedValidate) {
  if (!hostRunsF16OnAvx512())
    GTEST_SKIP() << "host lacks AVX512BW, AVX512VL or F16C";
  expectF16BInPlaceValidates(
      false,
      {{1, 45, 77}, {4, 150, 32}, {6, 64, 5}, {kF16MatrixVectorRows, 200, 50}});
}

/// Few rows of f16 A against B^T (tokens through a linear layer): the
/// matrix-vector form (B^T read in place, f16 widened where it is
/// loaded), with or without AMX, up to kF16MatrixVectorRows rows; every K
/// tail (none, a partial chunk of 16, an odd k), an odd and an even M
/// (rows two at a time).
TEST(GemmKernelTest, F16GemvValidates) {
  if (!hostRunsF16OnAvx512())
    GTEST_SKIP() << "host lacks AVX512BW, AVX512VL or F16C";
  expectF16BInPlaceValidates(true, {{1, 45, 1},
                                    {5, 45, 15},
                                    {kF16MatrixVectorRows, 45, 16},
                                    {2, 64, 77},
                                    {3, 45, 96}});
}

/// The one-vector block (12x16, or 8x16 on an 8-way L1D; broadcasts
/// embedded) as the model takes it on this host: a tall narrow GEMM (N below 16
/// and at 16, edges of rows, A in place with its prefetch) and few rows against
/// a narrow cached B (one sliver of all of M, all of K).
TEST(GemmKernelTest, OneVectorBlocksValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx512())
    GTEST_SKIP() << "host has no avx512f";
  for (Shape s : {Shape{101, 16, 70}, Shape{77, 5, 33}, Shape{16, 16, 300},
                  Shape{13, 80, 77}, Shape{3, 16, 9}}) {
    GemmDesc d = GemmDesc::packed(s.m, s.n, s.k);
    QM_ASSERT_EXPECTED(c, chooseKernelConfig(KernelProblem(d), host()));
    EXPECT_EQ(c.nr, 16) << c.str();
    EXPECT_TRUE(kernelValidates(d, c)) << describe(d, c);
  }
}

/// Emits `c` (two threads) for `p` and validates it, in a process of its
/// own, as the two parts partitionGemm gives; returns the parts.
std::vector<GemmRange> expectTwoPartsValidate(const GemmDesc &p,
                                              const GemmConfig &c) {
  std::vector<GemmRange> parts = partitionGemm(p, c, 2, 0);
  EXPECT_EQ(parts.size(), 2u) << c.str();
  auto emitted = emitGemmKernel(p, c, EmitterOptions::defaults());
  if (!emitted) {
    ADD_FAILURE() << llvm::toString(emitted.takeError());
    return parts;
  }
  auto report = validateGemmIsolated(
      p, host(), *emitted, IsolatedValidationOptions::defaults(), parts);
  if (!report)
    ADD_FAILURE() << llvm::toString(report.takeError());
  else
    EXPECT_TRUE(report->passed) << report->failure;
  return parts;
}

/// Few rows against a B read in place, swept (sweepb: the K loops
/// prefetch its next panel; the model sets it where B is larger than L3,
/// here it is asked for): the model's blocks, one sliver of 7 or 8 rows
/// two vectors wide, two of 8x48 at kc 256, 6x64's slivers with a row
/// edge; the one-line sliver of two rows at kc 2 and of four at kc 4 (the
/// model's rule for one thread); a K tail, an ldb past N; each also as two
/// threads' parts (each part's sweep walks its own columns).
TEST(GemmKernelTest, FewRowsAgainstAStreamedBValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx512())
    GTEST_SKIP() << "host has no avx512f";
  struct Case {
    Shape shape;
    int64_t ldbPast;
    const char *lastPrefetch; // of the lines an iteration prefetches
    const char *settings;     // laid over the model's config
  };
  for (Case t :
       {Case{{8, 512, 100}, 0, "prefetcht1 448(%rdx)", "sweepb=1"},
        Case{{7, 512, 100}, 0, "prefetcht1 448(%rdx)", "sweepb=1"},
        Case{{15, 480, 300}, 0, "prefetcht1 320(%rdx)", "sweepb=1"},
        Case{{2, 1040, 45},
             0,
             "prefetcht1 64(%rdx)",
             "kc=2,ku=2,pfb=2048,loop=ir-jr,sweepb=1"},
        Case{{4, 1040, 45},
             16,
             "prefetcht1 192(%rdx)",
             "kc=4,ku=4,pfb=2048,loop=ir-jr,sweepb=1"},
        Case{{13, 1024, 77}, 16, "prefetcht1 320(%rdx)", "sweepb=1"}}) {
    GemmDesc d = GemmDesc::packed(t.shape.m, t.shape.n, t.shape.k);
    d.ldb = t.shape.n + t.ldbPast;
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), host()));
    QM_ASSERT_EXPECTED(c, GemmConfig::parse(t.settings, model));
    EXPECT_EQ(c.packB, BPacking::InPlace) << c.str();
    QM_ASSERT_EXPECTED(emitted,
                       emitGemmKernel(d, c, EmitterOptions::defaults()));
    EXPECT_NE(emitted.text.find(t.lastPrefetch), std::string::npos) << c.str();
    EXPECT_TRUE(kernelValidates(d, c)) << describe(d, c);
    GemmConfig two = c;
    two.threads = 2;
    expectTwoPartsValidate(d, two);
  }
}

/// More rows in one row block against a B read in place and swept (the
/// model's rule for 17 to 48 rows against a B larger than L3, here asked
/// for on smaller ones): the general blocks, a masked last sliver, a K
/// tail; static sizes, and N, K or all three at run time (the walk then
/// goes a row of the next panel at a time, and with a run-time K waits in
/// an A slot: the header's K slot is K's), validated in qimeng-runner at
/// fewer, as many and more rows, columns and k than the representative's.
TEST(GemmKernelTest, RowsInOneBlockAgainstAStreamedBValidate) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx512())
    GTEST_SKIP() << "host has no avx512f";
  for (Shape s : {Shape{24, 700, 900}, Shape{40, 530, 777}}) {
    for (int runtime : {0, 1, 2, 3}) {
      GemmDesc d = GemmDesc::packed(s.m, s.n, s.k);
      if (runtime) {
        d.dynamicN = runtime != 2;
        d.dynamicK = runtime != 1;
        d.dynamicM = runtime == 3;
        d.runtimeLd = true;
      }
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), host()));
      QM_ASSERT_EXPECTED(
          c,
          GemmConfig::parse("packb=0,sweepb=1,kc=128,alayout=direct", model));
      ASSERT_GE(c.mc, s.m) << c.str();
      QM_ASSERT_EXPECTED(emitted,
                         emitGemmKernel(d, c, EmitterOptions::defaults()));
      EXPECT_NE(emitted.text.find("_sweepb_"), std::string::npos) << c.str();
      EXPECT_NE(emitted.text.find("prefetcht1"), std::string::npos);
      QM_ASSERT_EXPECTED(
          report,
          validateGemmIsolated(d, host(), emitted,
                               IsolatedValidationOptions::defaults(), {}));
      EXPECT_TRUE(report.passed) << describe(d, c) << ": " << report.failure;
    }
  }
}

/// Few rows of f32 A against B^T on AVX-512 (a token or a small batch
/// through a torch linear layer whose weights are an argument): the
/// matrix-vector form, B^T's rows read in place (dotgemm.py), up to
/// kF32MatrixVectorRows rows; every K tail (none, a partial chunk of 16,
/// one k), odd and even M (rows two at a time), columns past N in a group
/// of 8, run-time leading dimensions, overwrite; the epilogue (a bias
/// along the columns with relu bounded, or leaky relu); a run-time M; two
/// threads' parts along either axis; broken kernels (a k dropped, stores
/// past the edge) fail. Beyond those rows, on AVX2 and with a bias along
/// the rows, B^T is packed.
TEST(GemmKernelTest, F32MatrixVectorFormValidates) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx512() || !host().hasFeature("avx512bw") ||
      !host().hasFeature("avx512vl") || !host().hasFeature("bmi2"))
    GTEST_SKIP() << "host lacks AVX-512 (F, BW, VL) or BMI2";
  for (Shape s : {Shape{1, 45, 1}, Shape{2, 64, 77}, Shape{5, 45, 16},
                  Shape{kF32MatrixVectorRows, 33, 96}}) {
    GemmDesc d = GemmDesc::packed(s.m, s.n, s.k, false, true);
    d.overwrite = s.k % 2 == 1;
    d.runtimeLd = s.n != 64;
    d = d.withPaddedLeadingDims();
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), host()));
    EXPECT_TRUE(isMatrixVectorForm(d, model)) << model.str();
    EXPECT_TRUE(kernelValidates(d, model)) << describe(d, model);
  }
  GemmDesc d = GemmDesc::packed(3, 70, 40, false, true);
  QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), host()));
  for (int epilogue : {0, 1}) {
    GemmDesc e = d;
    e.bias = GemmBias::Columns;
    e.overwrite = epilogue == 1;
    if (epilogue == 0) {
      e.activation.relu = true;
      e.activation.bound = 6.0f;
    } else {
      e.activation.leakySlope = 0.125f;
    }
    EXPECT_TRUE(kernelValidates(e, model)) << describe(e, model);
  }
  GemmDesc dyn = d;
  dyn.dynamicM = true;
  dyn.runtimeLd = true;
  QM_ASSERT_EXPECTED(dynModel, chooseKernelConfig(KernelProblem(dyn), host()));
  EXPECT_TRUE(isMatrixVectorForm(dyn, dynModel)) << dynModel.str();
  expectValidatesAt(dyn, dynModel, {{1, 70, 40}, {7, 70, 40}, {20, 70, 40}});
  // A run-time N (aten.mv over a dynamic number of rows): the columns from
  // the header, B^T's rows past them never read; with an epilogue.
  GemmDesc dynN = GemmDesc::packed(1, 64, 40, false, true);
  dynN.dynamicN = true;
  dynN.runtimeLd = true;
  dynN.overwrite = true;
  dynN.bias = GemmBias::Columns;
  dynN.activation.relu = true;
  QM_ASSERT_EXPECTED(dynNModel,
                     chooseKernelConfig(KernelProblem(dynN), host()));
  EXPECT_TRUE(isMatrixVectorForm(dynN, dynNModel)) << dynNModel.str();
  expectValidatesAt(dynN, dynNModel,
                    {{1, 1, 40}, {1, 7, 40}, {1, 64, 40}, {1, 131, 40}});
  for (SplitAxis split : {SplitAxis::N, SplitAxis::M}) {
    GemmDesc p =
        GemmDesc::packed(split == SplitAxis::N ? 1 : 15, 200, 40, false, true);
    QM_ASSERT_EXPECTED(c, chooseKernelConfig(KernelProblem(p), host()));
    c.threads = 2;
    c.split = split;
    expectTwoPartsValidate(p, c);
  }
  for (const char *fault : {"drop-k", "write-past-edge"}) {
    ValidationReport report;
    ASSERT_TRUE(buildAndValidate(d, model, {}, report, fault));
    EXPECT_FALSE(report.passed) << fault;
  }
  auto packsB = [](const GemmDesc &g, const Target &t) {
    auto c = chooseKernelConfig(KernelProblem(g), t);
    return c && c->packB == BPacking::Panels && !isMatrixVectorForm(g, *c);
  };
  EXPECT_TRUE(packsB(
      GemmDesc::packed(kF32MatrixVectorRows + 1, 70, 40, false, true), host()));
  GemmDesc rowBias = d;
  rowBias.bias = GemmBias::Rows;
  EXPECT_TRUE(packsB(rowBias, host()));
}

TEST(GemmKernelTest, F32TransposedProductValidates) {
  // Rows against a B^T at least four times wider: the model computes C^T
  // = B^T * A^T (Product::Transposed), B^T's rows the kernel's A in place,
  // its tiles transposed into C. Edges both ways (C's rows short of a
  // vector, its columns of a 12-row block), one and several kc blocks,
  // padded and run-time leading dimensions, overwrite, each epilogue, two
  // threads' parts along either axis, and the faults caught.
  QM_SKIP_UNLESS_VECTOR_HOST();
  if (!hostRunsAvx512())
    GTEST_SKIP() << "host lacks AVX-512";
  for (Shape s : {Shape{16, 64, 16}, Shape{20, 100, 33}, Shape{32, 130, 70},
                  Shape{45, 200, 1100}}) {
    GemmDesc d = GemmDesc::packed(s.m, s.n, s.k, false, true);
    d.overwrite = s.k % 2 == 0;
    d.runtimeLd = s.m == 45;
    d = d.withPaddedLeadingDims();
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), host()));
    EXPECT_EQ(model.product, Product::Transposed) << model.str();
    EXPECT_TRUE(kernelValidates(d, model)) << describe(d, model);
  }
  GemmDesc d = GemmDesc::packed(20, 100, 40, false, true);
  QM_ASSERT_EXPECTED(model, chooseKernelConfig(KernelProblem(d), host()));
  ASSERT_EQ(model.product, Product::Transposed) << model.str();
  for (int epilogue : {0, 1, 2}) {
    GemmDesc e = d;
    e.bias = epilogue == 1 ? GemmBias::Rows : GemmBias::Columns;
    e.overwrite = epilogue == 1;
    if (epilogue == 0) {
      e.activation.relu = true;
      e.activation.bound = 6.0f;
    } else if (epilogue == 1) {
      e.activation.leakySlope = 0.125f;
    } else {
      e.activation.relu = true;
    }
    EXPECT_TRUE(kernelValidates(e, model)) << describe(e, model);
  }
  for (SplitAxis split : {SplitAxis::N, SplitAxis::M}) {
    GemmDesc p = GemmDesc::packed(64, 300, 40, false, true);
    QM_ASSERT_EXPECTED(c, chooseKernelConfig(KernelProblem(p), host()));
    ASSERT_EQ(c.product, Product::Transposed) << c.str();
    c.threads = 2;
    c.split = split;
    std::vector<GemmRange> parts = expectTwoPartsValidate(p, c);
    ASSERT_EQ(parts.size(), 2u);
    // C's rows split at multiples of nr (32), its columns of mr (12).
    EXPECT_EQ(split == SplitAxis::M ? parts[0].mEnd : parts[0].nEnd % c.mr,
              split == SplitAxis::M ? c.nr : 0);
  }
  // The faults, in a process of their own: a store one row of C too many
  // at a tile's last column lands ldc floats past C, beyond the
  // validator's guards.
  for (const char *fault : {"drop-k", "write-past-edge"}) {
    QM_ASSERT_EXPECTED(
        broken, emitGemmKernel(d, model, EmitterOptions::defaults(), fault));
    QM_ASSERT_EXPECTED(caught,
                       validateIsolated(d, host(), broken,
                                        IsolatedValidationOptions::defaults()));
    EXPECT_FALSE(caught.passed) << fault;
  }
  // A run-time M: C's rows from the header, at, below and above the
  // representative's.
  GemmDesc dyn = GemmDesc::packed(20, 100, 40, false, true);
  dyn.dynamicM = true;
  for (bool runtimeLd : {false, true}) {
    dyn.runtimeLd = runtimeLd;
    QM_ASSERT_EXPECTED(dynModel,
                       chooseKernelConfig(KernelProblem(dyn), host()));
    EXPECT_EQ(dynModel.product, Product::Transposed) << dynModel.str();
    expectValidatesAt(
        dyn, dynModel,
        {{1, 100, 40}, {17, 100, 40}, {20, 100, 40}, {77, 100, 40}});
  }
  // B as stored, B prepacked, a run-time N, fewer than 16 rows or a B^T
  // less than four times wider: the product as it is.
  auto direct = [](const GemmDesc &g) {
    auto c = chooseKernelConfig(KernelProblem(g), host());
    return c && c->product == Product::Direct;
  };
  EXPECT_TRUE(direct(GemmDesc::packed(32, 4096, 64)));
  GemmDesc prepacked = GemmDesc::packed(32, 4096, 64, false, true);
  prepacked.bPrepacked = true;
  EXPECT_TRUE(direct(prepacked));
  GemmDesc dynamicN = GemmDesc::packed(32, 4096, 64, false, true);
  dynamicN.dynamicN = true;
  dynamicN.runtimeLd = true;
  EXPECT_TRUE(direct(dynamicN));
  EXPECT_TRUE(direct(GemmDesc::packed(15, 4096, 64, false, true)));
  EXPECT_TRUE(direct(GemmDesc::packed(32, 127, 64, false, true)));
}

TEST(GemmKernelTest, Bf16OutputFaultsAreCaught) {
  if (!hostRunsBf16())
    GTEST_SKIP() << "host has no AVX512-BF16";
  GemmDesc d = GemmDesc::packed(16, 40, 29);
  d.precision = GemmPrecision::Bf16;
  d.overwrite = true;
  d.halfOutput = true;
  d.ldd = 45;
  for (const char *fault : {"drop-k", "swap-pairs", "write-past-edge"}) {
    ValidationReport report;
    ASSERT_TRUE(buildAndValidate(d, smallDotConfig(10), {}, report, fault));
    EXPECT_FALSE(report.passed) << fault;
    // Wrong sums show in D (stores past the edge already in C's blocks).
    if (llvm::StringRef(fault) != "write-past-edge") {
      EXPECT_NE(report.failure.find(": D("), std::string::npos)
          << report.failure;
    }
  }
  ValidationReport report;
  ASSERT_TRUE(buildAndValidate(d, smallDotConfig(10), {}, report));
  EXPECT_TRUE(report.passed) << report.failure;
}

/// u8 x s8 and s8 x s8 -> s32 (VPDPBUSD), exact over the types' ranges and
/// extremes; an s8 A goes through the plus-128 packing and its correction.
TEST(GemmKernelTest, Int8KernelsValidate) {
  if (!hostRunsVnni())
    GTEST_SKIP() << "host has no AVX512-VNNI";
  expectDotKernelsValidate(GemmPrecision::U8S8, 12);
  expectDotKernelsValidate(GemmPrecision::S8S8, 12);
}

TEST(GemmKernelTest, Int8FaultsAreCaught) {
  if (!hostRunsVnni())
    GTEST_SKIP() << "host has no AVX512-VNNI";
  expectDotFaultsAreCaught(GemmPrecision::S8S8, 12);
}

/// A run-time K (attention's probabilities times V over a dynamic
/// sequence) in bf16, f16 and 8-bit: one kernel per representative K, on
/// the dot kernels' small blocking (several kc blocks) and with the
/// model's config (AMX's tiles where the host has them), run for one k, a
/// partial pair and quad, the representative and more, B as stored and
/// transposed (A too but for f16), with a run-time N.
TEST(GemmKernelTest, LowPrecisionRuntimeKValidates) {
  int ran = 0;
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::S8S8,
                          GemmPrecision::U8S8, GemmPrecision::F16}) {
    if (p == GemmPrecision::Bf16  ? !hostRunsBf16()
        : p == GemmPrecision::F16 ? !hostRunsF16OnAvx512()
                                  : !hostRunsVnni())
      continue;
    ++ran;
    for (int t = 0; t < 3; ++t)
      for (bool dynamicN : {false, true}) {
        if (p == GemmPrecision::F16 && (t & 1))
          continue; // f16's A as stored
        GemmDesc d = GemmDesc::packed(29, 40, 45, t & 1, t & 2);
        d.precision = p;
        d.dynamicK = true;
        d.dynamicN = dynamicN;
        d.runtimeLd = true;
        auto model = chooseKernelConfig(KernelProblem(d), host());
        ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
        auto n = [&](int64_t k) { return dynamicN ? k % 50 + 1 : 40; };
        for (const GemmConfig &base : {smallDotConfig(12), *model})
          expectValidatesAt(
              d, base,
              {{29, n(1), 1}, {29, n(3), 3}, {29, n(45), 45}, {29, n(95), 95}});
      }
  }
  if (ran == 0)
    GTEST_SKIP() << "host has none of AVX512-BF16, AVX512-VNNI and F16C";
}

/// A read in place (dotgemm.py a_layout direct), the model's choice with
/// immediate leading dimensions and whole K steps (an s8 A through B plus
/// 128 and each row's sum): its
/// own configs, slivers read where A lies (rows lda apart) and the last
/// one short of rows copied, several kc blocks; faults caught in
/// qimeng-runner's process. A K that is not whole groups within one block
/// is read in place too (kc all of K, its last group under a mask). A that
/// cannot be read in place is packed.
TEST(GemmKernelTest, DotAInPlaceValidates) {
  if (!hostRunsBf16() || !hostRunsVnni())
    GTEST_SKIP() << "host lacks AVX512-BF16 or AVX512-VNNI";
  for (GemmPrecision p :
       {GemmPrecision::Bf16, GemmPrecision::U8S8, GemmPrecision::S8S8}) {
    for (auto [m, n, k] : {std::tuple{37, 45, 64}, std::tuple{70, 100, 96},
                           std::tuple{64, 64, 64}, std::tuple{29, 200, 40}}) {
      GemmDesc d = GemmDesc::packed(m, n, k).withPaddedLeadingDims();
      d.precision = p;
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseGemmConfig(d, dotHost()));
      EXPECT_EQ(model.aLayout, ALayout::Direct) << model.str();
      ValidationReport report;
      ASSERT_TRUE(buildAndValidate(d, model, {}, report));
      EXPECT_TRUE(report.passed) << report.failure;
      GemmConfig small = model;
      small.kc = 16;
      small.kUnroll = 2;
      small.mc = 2 * small.mr;
      ASSERT_TRUE(buildAndValidate(d, small, {}, report));
      EXPECT_TRUE(report.passed) << report.failure;
      QM_ASSERT_EXPECTED(
          broken,
          emitGemmKernel(d, small, EmitterOptions::defaults(), "drop-k"));
      QM_ASSERT_EXPECTED(
          caught, validateIsolated(d, host(), broken,
                                   IsolatedValidationOptions::defaults()));
      EXPECT_FALSE(caught.passed);
    }
    // K = 63 (bf16: 31 pairs and one k; bytes: 15 quads and three): in
    // place, one block of all of K.
    GemmDesc odd = GemmDesc::packed(37, 45, 63).withPaddedLeadingDims();
    odd.precision = p;
    QM_ASSERT_EXPECTED(oddConfig, chooseGemmConfig(odd, dotHost()));
    EXPECT_EQ(oddConfig.aLayout, ALayout::Direct) << oddConfig.str();
    EXPECT_EQ(oddConfig.kc, 63) << oddConfig.str();
    ValidationReport report;
    ASSERT_TRUE(buildAndValidate(odd, oddConfig, {}, report));
    EXPECT_TRUE(report.passed) << report.failure;
    QM_ASSERT_EXPECTED(
        broken,
        emitGemmKernel(odd, oddConfig, EmitterOptions::defaults(), "drop-k"));
    QM_ASSERT_EXPECTED(caught,
                       validateIsolated(odd, host(), broken,
                                        IsolatedValidationOptions::defaults()));
    EXPECT_FALSE(caught.passed);
    // Not in place: A transposed.
    GemmDesc t = GemmDesc::packed(37, 45, 64, /*transA=*/true);
    t.precision = p;
    QM_ASSERT_EXPECTED(packed, chooseGemmConfig(t, dotHost()));
    EXPECT_EQ(packed.aLayout, ALayout::KMajor);
    // Run-time leading dimensions (the default function-boundary layout):
    // the rows from base registers, up to 16 a block; one kernel run at
    // two paddings, a dropped k caught.
    for (auto [m, n, k, mr, nr] :
         {std::tuple{37, 45, 64, 0, 0}, std::tuple{70, 100, 96, 12, 32},
          std::tuple{40, 100, 63, 16, 16}}) {
      GemmDesc rt = GemmDesc::packed(m, n, k);
      rt.precision = p;
      rt.runtimeLd = true;
      SCOPED_TRACE(rt.str());
      QM_ASSERT_EXPECTED(rtConfig, chooseGemmConfig(rt, dotHost()));
      EXPECT_EQ(rtConfig.aLayout, ALayout::Direct) << rtConfig.str();
      if (mr) {
        rtConfig.mr = mr;
        rtConfig.nr = nr;
        rtConfig.mc = 2 * mr;
        rtConfig.nc = 2 * nr;
      }
      EXPECT_TRUE(kernelValidates(rt.withPaddedLeadingDims(3), rtConfig))
          << describe(rt, rtConfig);
      EXPECT_TRUE(kernelValidates(rt.withPaddedLeadingDims(16), rtConfig))
          << describe(rt, rtConfig);
      QM_ASSERT_EXPECTED(
          broken,
          emitGemmKernel(rt, rtConfig, EmitterOptions::defaults(), "drop-k"));
      QM_ASSERT_EXPECTED(
          caught, validateIsolated(rt.withPaddedLeadingDims(3), host(), broken,
                                   IsolatedValidationOptions::defaults()));
      EXPECT_FALSE(caught.passed);
    }
  }
}

/// bf16 rows against a B^T wider than L2 on the dot instructions: the
/// model computes C^T = B^T * A^T (dotgemm.py's product transposed), B^T's
/// rows the kernel's A in place, A's rows packed as its B, its tiles
/// transposed into C. C's rows 24 (12 x 32), 40 (8 x 48) and 64 with
/// columns at an edge of the 12-row block, the epilogue into a bf16 D, two
/// threads' parts, a fault caught; not at 16 rows (the matrix-vector
/// form) nor for s8.
TEST(GemmKernelTest, DotTransposedProductValidates) {
  if (!hostRunsBf16())
    GTEST_SKIP() << "host lacks AVX512-BF16";
  for (auto [m, n, k] : {std::tuple{24, 2400, 512}, std::tuple{40, 2400, 520},
                         std::tuple{64, 2100, 576}}) {
    GemmDesc d = GemmDesc::packed(m, n, k, false, true);
    d.precision = GemmPrecision::Bf16;
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseGemmConfig(d, dotHost()));
    EXPECT_EQ(model.product, Product::Transposed) << model.str();
    EXPECT_EQ(model.nr, m == 40 ? 48 : 32) << model.str();
    EXPECT_TRUE(kernelValidates(d, model)) << describe(d, model);
  }
  GemmDesc d = GemmDesc::packed(24, 2400, 512, false, true);
  d.precision = GemmPrecision::Bf16;
  QM_ASSERT_EXPECTED(model, chooseGemmConfig(d, dotHost()));
  GemmDesc e = d;
  e.bias = GemmBias::Columns;
  e.activation.relu = true;
  e.activation.bound = 6.0f;
  e.halfOutput = true;
  e.overwrite = true;
  e.ldd = e.n;
  EXPECT_TRUE(kernelValidates(e, model)) << describe(e, model);
  GemmConfig two = model;
  two.threads = 2;
  expectTwoPartsValidate(d, two);
  QM_ASSERT_EXPECTED(
      broken, emitGemmKernel(d, model, EmitterOptions::defaults(), "drop-k"));
  QM_ASSERT_EXPECTED(caught,
                     validateIsolated(d, host(), broken,
                                      IsolatedValidationOptions::defaults()));
  EXPECT_FALSE(caught.passed);
  // Run-time leading dimensions: B^T's rows from base registers, run at
  // two paddings.
  GemmDesc rt = GemmDesc::packed(40, 2400, 520, false, true);
  rt.precision = GemmPrecision::Bf16;
  rt.runtimeLd = true;
  QM_ASSERT_EXPECTED(rtModel, chooseGemmConfig(rt, dotHost()));
  EXPECT_EQ(rtModel.product, Product::Transposed) << rtModel.str();
  EXPECT_TRUE(kernelValidates(rt.withPaddedLeadingDims(3), rtModel))
      << describe(rt, rtModel);
  EXPECT_TRUE(kernelValidates(rt.withPaddedLeadingDims(16), rtModel))
      << describe(rt, rtModel);
  for (auto [m, p] : {std::pair{16, GemmPrecision::Bf16},
                      std::pair{24, GemmPrecision::S8S8}}) {
    GemmDesc o = GemmDesc::packed(m, 4096, 4096, false, true);
    o.precision = p;
    QM_ASSERT_EXPECTED(c, chooseGemmConfig(o, dotHost()));
    EXPECT_EQ(c.product, Product::Direct) << o.str() << " " << c.str();
  }
}

TEST(GemmKernelTest, DotFewColumnsReadAInPlace) {
  // At most 32 columns and more than 16 rows: one sliver of one or two
  // vectors by 12 rows, A read in place even with its rows a multiple of
  // 4 KiB apart (bf16 at K = 2048, 8-bit at K = 4096), validated.
  if (!hostRunsBf16() || !hostRunsVnni())
    GTEST_SKIP() << "host lacks AVX512-BF16 or AVX512-VNNI";
  for (GemmPrecision p :
       {GemmPrecision::Bf16, GemmPrecision::U8S8, GemmPrecision::S8S8}) {
    const int64_t setK = p == GemmPrecision::Bf16 ? 2048 : 4096;
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{40, 16, setK},
                           {50, 24, setK},
                           {37, 32, 64}}) {
      GemmDesc d = GemmDesc::packed(m, n, k);
      d.precision = p;
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseGemmConfig(d, dotHost()));
      EXPECT_EQ(model.mr, 12) << model.str();
      EXPECT_EQ(model.nr, n <= 16 ? 16 : 32) << model.str();
      EXPECT_EQ(model.aLayout, ALayout::Direct) << model.str();
      ValidationReport report;
      ASSERT_TRUE(buildAndValidate(d, model, {}, report));
      EXPECT_TRUE(report.passed) << report.failure;
    }
    // 33 columns: the blocks of the table.
    GemmDesc wide = GemmDesc::packed(40, 33, 64);
    wide.precision = p;
    QM_ASSERT_EXPECTED(wideConfig, chooseGemmConfig(wide, dotHost()));
    EXPECT_GE(wideConfig.nr, 48) << wideConfig.str();
  }
}

//===----------------------------------------------------------------------===//
// (e) Accumulate semantics, checked directly
//===----------------------------------------------------------------------===//

TEST(GemmKernelTest, TwoCallsAccumulateTwice) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  for (int t = 0; t < 4; ++t) {
    GemmDesc d = GemmDesc::packed(9, 10, 11, t & 1, t & 2);
    d.lda += t;
    d.ldc += 1;
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(config, chooseGemmConfig(d, host()));
    QM_ASSERT_EXPECTED(
        loaded, buildGemmKernel(d, config, host(), EmitterOptions::defaults()));

    // Small integers: every partial sum is exact, so C must be exactly
    // C0 + 2 A B whatever order the kernel adds in.
    std::vector<float> a(size_t(d.aSpan())), b(size_t(d.bSpan())),
        c(size_t(d.cSpan()));
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = float(int(i * 7 % 9) - 4);
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = float(int(i * 5 % 7) - 3);
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = float(int(i % 11) - 5);
    const std::vector<float> c0 = c;

    QM_ASSERT_EXPECTED(
        workspace, GuardedBuffer::allocate(
                       int64_t((loaded.emitted.workspaceBytes + 3) / 4), 0));
    GemmKernelFn fn = loaded.jit->gemm();
    fn(a.data(), b.data(), c.data(), workspace.data());
    fn(a.data(), b.data(), c.data(), workspace.data());

    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < d.k; ++p) {
          double av =
              d.transA ? a[size_t(p * d.lda + i)] : a[size_t(i * d.lda + p)];
          double bv =
              d.transB ? b[size_t(j * d.ldb + p)] : b[size_t(p * d.ldb + j)];
          sum += av * bv;
        }
        double want = c0[size_t(i * d.ldc + j)] + 2 * sum;
        EXPECT_EQ(double(c[size_t(i * d.ldc + j)]), want)
            << "C(" << i << "," << j << ")";
      }
    // The gap of C between rows is untouched.
    for (int64_t i = 0; i + 1 < d.m; ++i)
      for (int64_t j = d.n; j < d.ldc; ++j)
        EXPECT_EQ(c[size_t(i * d.ldc + j)], c0[size_t(i * d.ldc + j)])
            << "gap (" << i << "," << j << ")";
  }
}

} // namespace

/// B prepacked by the caller (GemmDesc::bPrepacked, the kernel's
/// qm.b_prepacked): qimeng-runner packs B into the layout the kernel's
/// header gives and validates it as the module runs it. bf16, u8 and s8
/// (A packed: column sums from the prepacked panels; A in place: B plus
/// 128), B as stored or transposed, one kc block and several, the model's
/// config (never the matrix-vector form) and a small one; a kernel that
/// drops k is caught.
TEST(GemmKernelTest, PrepackedBValidates) {
  if (!hostRunsBf16() || !hostRunsVnni())
    GTEST_SKIP() << "host lacks AVX512-BF16 or AVX512-VNNI";
  const auto options = IsolatedValidationOptions::defaults();
  for (GemmPrecision p :
       {GemmPrecision::Bf16, GemmPrecision::U8S8, GemmPrecision::S8S8})
    for (auto [m, n, k, transB] :
         {std::tuple{37, 45, 64, false}, std::tuple{1, 45, 77, true},
          std::tuple{70, 100, 301, true}, std::tuple{13, 200, 40, false}}) {
      GemmDesc d = GemmDesc::packed(m, n, k, false, transB);
      d.precision = p;
      d.bPrepacked = true;
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseGemmConfig(d, host()));
      EXPECT_EQ(model.packB, BPacking::Panels) << model.str();
      GemmConfig small = smallDotConfig(16);
      for (const GemmConfig &c : {model, small}) {
        QM_ASSERT_EXPECTED(emitted,
                           emitGemmKernel(d, c, EmitterOptions::defaults()));
        ASSERT_TRUE(emitted.prepackedB.has_value()) << c.str();
        QM_ASSERT_EXPECTED(report,
                           validateIsolated(d, host(), emitted, options));
        EXPECT_TRUE(report.passed) << c.str() << ": " << report.failure;
      }
      QM_ASSERT_EXPECTED(
          broken,
          emitGemmKernel(d, small, EmitterOptions::defaults(), "drop-k"));
      QM_ASSERT_EXPECTED(caught, validateIsolated(d, host(), broken, options));
      EXPECT_FALSE(caught.passed);
    }
  // Run-time sizes take B as stored.
  GemmDesc dynamic = GemmDesc::packed(8, 8, 8);
  dynamic.bPrepacked = dynamic.dynamicK = dynamic.runtimeLd = true;
  EXPECT_TRUE(bool(llvm::errorToBool(dynamic.verify())));
}

/// f32 (sgemm.py) with B prepacked: all of K's rows per NR-wide sliver,
/// which qimeng-runner packs from the kernel's qm.b_prepacked; B as stored
/// and transposed, column edges (a last sliver padded with zero columns),
/// several kc blocks, A in place and packed, the model's config (which
/// reads the panels: never B in place or packed by the tiles), the small
/// AVX2 block and an AVX-512 one; a kernel that drops k is caught.
TEST(GemmKernelTest, F32PrepackedBValidates) {
  QM_SKIP_UNLESS_VECTOR_HOST();
  const auto options = IsolatedValidationOptions::defaults();
  for (auto [m, n, k, transB] :
       {std::tuple{37, 45, 64, false}, std::tuple{1, 64, 77, false},
        std::tuple{70, 100, 301, true}, std::tuple{128, 96, 512, false}}) {
    GemmDesc d = GemmDesc::packed(m, n, k, false, transB);
    d.bPrepacked = true;
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseGemmConfig(d, host()));
    EXPECT_EQ(model.packB, BPacking::Panels) << model.str();
    std::vector<GemmConfig> configs{model,
                                    clampToProblem(smallAvx2Config(), d)};
    if (hostRunsAvx512()) {
      GemmConfig wide = smallAvx2Config();
      wide.isa = VectorIsa::Avx512;
      wide.nr = 32;
      wide.nc = 64;
      configs.push_back(clampToProblem(wide, d));
    }
    for (const GemmConfig &c : configs) {
      QM_ASSERT_EXPECTED(emitted,
                         emitGemmKernel(d, c, EmitterOptions::defaults()));
      ASSERT_TRUE(emitted.prepackedB.has_value()) << c.str();
      EXPECT_EQ(emitted.prepackedB->elementBytes, 4);
      QM_ASSERT_EXPECTED(report, validateIsolated(d, host(), emitted, options));
      EXPECT_TRUE(report.passed) << c.str() << ": " << report.failure;
    }
    QM_ASSERT_EXPECTED(
        broken,
        emitGemmKernel(d, configs[1], EmitterOptions::defaults(), "drop-k"));
    QM_ASSERT_EXPECTED(caught, validateIsolated(d, host(), broken, options));
    EXPECT_FALSE(caught.passed);
  }
}

/// An AMX block (amx.py) of `mr` x `nr`, kc `steps` tile steps.
GemmConfig amxConfig(const GemmDesc &d, int mr, int nr, int64_t steps) {
  GemmConfig c;
  c.isa = VectorIsa::Amx;
  c.mr = mr;
  c.nr = nr;
  c.kUnroll = 1;
  c.kc = steps * amxTileK(amxPackedElementBytes(d));
  c.mc = 2 * mr;
  c.nc = 2 * nr;
  return clampToProblem(c, d);
}

/// bf16, u8 x s8 and s8 x s8 GEMMs on AMX tiles where the host has them
/// (the model's choice for A as stored, B as stored or transposed): one-tile
/// and two-tile
/// blocks with kc of one and two tile steps, so that edges of every kind
/// fall inside the shapes (a K that is not whole tile steps, rows and
/// columns past the blocks, 300 columns: a panel wider than BZHI's 8-bit
/// count), padded run-time and immediate leading dimensions, overwrite.
/// Broken kernels (a k dropped, a group interleaved backwards, an edge
/// block stored whole) fail in qimeng-runner's process.
TEST(GemmKernelTest, AmxKernelsValidate) {
  int ran = 0;
  const auto options = IsolatedValidationOptions::defaults();
  for (GemmPrecision p :
       {GemmPrecision::Bf16, GemmPrecision::U8S8, GemmPrecision::S8S8}) {
    if (!host().hasAmx(p == GemmPrecision::Bf16))
      continue;
    ++ran;
    struct Case {
      int64_t m, n, k;
      bool overwrite, runtimeLd, transB = false;
    };
    // B transposed (torch's linear weights) too.
    for (Case c :
         {Case{1, 1, 1, false, true}, Case{37, 45, 29, false, true},
          Case{17, 100, 166, true, true}, Case{64, 64, 64, false, false},
          Case{24, 300, 43, false, true}, Case{70, 70, 200, true, false},
          Case{45, 37, 77, false, true, true},
          Case{67, 100, 150, true, false, true},
          // K whole tile steps: A read in place (rows past M copied), kc all
          // of K for N <= 64.
          Case{70, 40, 128, true, true}, Case{100, 150, 192, false, false},
          Case{50, 60, 256, false, true, true},
          // A few rows against B^T: the product transposed (packb=0).
          Case{16, 100, 128, true, true, true},
          Case{30, 70, 192, false, false, true}}) {
      GemmDesc d = GemmDesc::packed(c.m, c.n, c.k, false, c.transB);
      d.precision = p;
      d.overwrite = c.overwrite;
      d.runtimeLd = c.runtimeLd;
      d = d.withPaddedLeadingDims();
      SCOPED_TRACE(d.str());
      QM_ASSERT_EXPECTED(model, chooseGemmConfig(d, host()));
      EXPECT_EQ(model.isa, VectorIsa::Amx) << model.str();
      EXPECT_EQ(model.aLayout == ALayout::Direct, c.k % 64 == 0) << model.str();
      EXPECT_EQ(model.packB == BPacking::InPlace,
                c.transB && c.m > 1 && c.m <= 32 && c.k % 64 == 0)
          << model.str();
      // The model's block, and in turn one tile, a tall and a wide block
      // (A packed).
      const GemmConfig small = (c.m + c.n) % 3 == 0   ? amxConfig(d, 16, 16, 1)
                               : (c.m + c.n) % 3 == 1 ? amxConfig(d, 32, 16, 2)
                                                      : amxConfig(d, 16, 32, 1);
      for (const GemmConfig &config : {model, small})
        EXPECT_TRUE(kernelValidates(d, config)) << describe(d, config);
    }
    // B prepacked (constant weights): the tiles read the caller's panels
    // (qm.b_prepacked, rows NR dwords apart), K past whole tile steps, B as
    // stored or transposed, A packed and in place.
    for (auto [k, transB] : {std::pair{301, false}, std::pair{128, true}}) {
      GemmDesc pre = GemmDesc::packed(70, 100, k, false, transB);
      pre.precision = p;
      pre.bPrepacked = true;
      SCOPED_TRACE(pre.str());
      QM_ASSERT_EXPECTED(model, chooseGemmConfig(pre, host()));
      EXPECT_EQ(model.isa, VectorIsa::Amx) << model.str();
      for (const GemmConfig &config : {model, amxConfig(pre, 16, 32, 2)}) {
        QM_ASSERT_EXPECTED(
            emitted, emitGemmKernel(pre, config, EmitterOptions::defaults()));
        ASSERT_TRUE(emitted.prepackedB.has_value()) << config.str();
        QM_ASSERT_EXPECTED(report,
                           validateIsolated(pre, host(), emitted, options));
        EXPECT_TRUE(report.passed) << config.str() << ": " << report.failure;
      }
    }
    // Whole blocks of rows, so that the stores past N stay within C's gaps
    // (the validator runs in qimeng-runner, but a store past C's guard
    // would corrupt its heap); overwriting, so that a tile stored past N
    // writes zeros there (accumulating, it would store back what it read:
    // B's columns past N are packed as zeros).
    GemmDesc d = GemmDesc::packed(32, 40, 70);
    d.precision = p;
    d.ldc = 43;
    d.overwrite = true;
    for (const char *fault : {"drop-k", "swap-pairs", "write-past-edge"}) {
      QM_ASSERT_EXPECTED(broken,
                         emitGemmKernel(d, amxConfig(d, 16, 16, 1),
                                        EmitterOptions::defaults(), fault));
      QM_ASSERT_EXPECTED(caught, validateIsolated(d, host(), broken, options));
      EXPECT_FALSE(caught.passed) << fault;
    }
  }
  if (ran == 0)
    GTEST_SKIP() << "host has no AMX (amx-tile with amx-bf16 or amx-int8, "
                    "granted by Linux)";
}

/// f16 x f16 -> f32 on the bf16 tiles (amx.py's split: each f16 packed as
/// two bf16 parts): the model's kernel (A packed: f16 is never read in
/// place) and one-tile, tall and wide blocks over edges of every kind,
/// run-time and immediate leading dimensions, overwrite, a bias and relu,
/// B as stored or transposed, a run-time M; broken kernels (a k dropped, the
/// low parts dropped, an edge block stored whole) fail. A transposed or B
/// prepacked is refused by the descriptor, on any host.
TEST(GemmKernelTest, AmxF16KernelsValidate) {
  for (auto [transA, prepacked] : {std::pair{true, false}, {false, true}}) {
    GemmDesc refused = GemmDesc::packed(32, 32, 64, transA, false);
    refused.precision = GemmPrecision::F16;
    refused.bPrepacked = prepacked;
    EXPECT_TRUE(llvm::errorToBool(refused.verify())) << refused.str();
  }
  if (!host().hasAmx(true))
    GTEST_SKIP() << "host has no AMX-BF16 (granted by Linux)";
  const auto options = IsolatedValidationOptions::defaults();
  struct Case {
    int64_t m, n, k;
    bool overwrite, runtimeLd, epilogue = false, transB = false;
  };
  for (Case c : {Case{1, 1, 1, false, true}, Case{37, 45, 29, false, true},
                 Case{17, 100, 166, true, true}, Case{64, 64, 64, false, false},
                 Case{24, 300, 43, false, true}, Case{70, 70, 200, true, false},
                 Case{50, 40, 96, true, true, true},
                 Case{45, 37, 77, false, true, false, true},
                 Case{16, 100, 128, true, false, true, true}}) {
    GemmDesc d = GemmDesc::packed(c.m, c.n, c.k, false, c.transB);
    d.precision = GemmPrecision::F16;
    d.overwrite = c.overwrite;
    d.runtimeLd = c.runtimeLd;
    if (c.epilogue) {
      d.bias = GemmBias::Columns;
      d.activation.relu = true;
    }
    d = d.withPaddedLeadingDims();
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(model, chooseGemmConfig(d, host()));
    // (One row reads B in place on AVX-512; the tiles' small block below.)
    EXPECT_EQ(model.isa,
              dotReadsBInPlace(d) ? VectorIsa::Avx512 : VectorIsa::Amx)
        << model.str();
    EXPECT_EQ(model.aLayout, ALayout::KMajor) << model.str();
    const GemmConfig small = (c.m + c.n) % 3 == 0   ? amxConfig(d, 16, 16, 1)
                             : (c.m + c.n) % 3 == 1 ? amxConfig(d, 32, 16, 2)
                                                    : amxConfig(d, 16, 32, 1);
    for (const GemmConfig &config : {model, small})
      EXPECT_TRUE(kernelValidates(d, config)) << describe(d, config);
  }
  // An f16 output D = f16(C + A*B) (VCVTPS2PH, rounded once; torch's
  // truncf), overwriting or accumulating into C's partial sums, several kc
  // blocks, B transposed, the epilogue before the rounding; the
  // validator's sums past 65504 go to infinity as f16's do.
  for (auto [overwrite, transB, epilogue] : {std::tuple{true, false, false},
                                             {false, true, false},
                                             {true, true, true}}) {
    GemmDesc out = GemmDesc::packed(45, 37, 300, false, transB);
    out.precision = GemmPrecision::F16;
    out.overwrite = overwrite;
    out.halfOutput = true;
    out.runtimeLd = true;
    if (epilogue) {
      out.bias = GemmBias::Columns;
      out.activation.relu = true;
    }
    out = out.withPaddedLeadingDims();
    SCOPED_TRACE(out.str());
    QM_ASSERT_EXPECTED(model, chooseGemmConfig(out, host()));
    for (const GemmConfig &config : {model, amxConfig(out, 16, 32, 2)})
      EXPECT_TRUE(kernelValidates(out, config)) << describe(out, config);
  }
  // A run-time M (a dynamic batch): fewer, as many and more rows than the
  // kernel was blocked for, B as stored and transposed.
  for (bool transB : {false, true}) {
    GemmDesc dyn = GemmDesc::packed(40, 45, 70, false, transB);
    dyn.precision = GemmPrecision::F16;
    dyn.dynamicM = true;
    dyn.runtimeLd = true;
    SCOPED_TRACE(dyn.str());
    QM_ASSERT_EXPECTED(model, chooseGemmConfig(dyn, host()));
    EXPECT_EQ(model.isa, VectorIsa::Amx) << model.str();
    expectValidatesAt(dyn, model,
                      {{1, 45, 70}, {13, 45, 70}, {40, 45, 70}, {85, 45, 70}});
  }
  GemmDesc d = GemmDesc::packed(32, 40, 70);
  d.precision = GemmPrecision::F16;
  d.ldc = 43;
  d.overwrite = true;
  for (const char *fault : {"drop-k", "drop-low", "write-past-edge"}) {
    QM_ASSERT_EXPECTED(broken,
                       emitGemmKernel(d, amxConfig(d, 16, 16, 1),
                                      EmitterOptions::defaults(), fault));
    QM_ASSERT_EXPECTED(caught, validateIsolated(d, host(), broken, options));
    EXPECT_FALSE(caught.passed) << fault;
  }
}

/// B as stored larger than L2 in shallow, wide panels (the model's for bf16
/// and 8-bit rows, up to 512): a target naming a 64 KiB L2 (the model
/// takes at least 128) makes them of small problems, nc 2016 or 2048 (the
/// last panel short) and kc 32 or 64 with a K tail, which validate with A
/// in place and packed.
TEST(GemmKernelTest, DotShallowWidePanelsValidate) {
  if (!hostRunsBf16() || !hostRunsVnni())
    GTEST_SKIP() << "host lacks AVX512-BF16 or AVX512-VNNI";
  Target small = host().withoutAmx();
  small.caches.l2 = 64 * 1024;
  for (GemmPrecision p :
       {GemmPrecision::Bf16, GemmPrecision::U8S8, GemmPrecision::S8S8}) {
    GemmDesc d = GemmDesc::packed(53, 2100, 301).withPaddedLeadingDims();
    d.precision = p;
    SCOPED_TRACE(d.str());
    QM_ASSERT_EXPECTED(c, chooseKernelConfig(KernelProblem(d), small));
    EXPECT_EQ(c.nc, 2048 / c.nr * c.nr) << c.str();
    EXPECT_LE(c.kc, 64) << c.str();
    EXPECT_TRUE(kernelValidates(d, c)) << describe(d, c);
    GemmConfig packedA = c;
    packedA.aLayout = ALayout::KMajor;
    EXPECT_TRUE(kernelValidates(d, packedA)) << describe(d, packedA);
  }
}
