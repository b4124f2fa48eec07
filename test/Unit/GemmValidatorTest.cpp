//===- GemmValidatorTest.cpp - The validator catches broken kernels -------===//
//
// Reference kernels written here in C++ (a correct naive one and one broken
// variant per failure the validator must catch) run through validateGemm.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Runtime/GemmValidator.h"
#include "ErrorHelpers.h"
#include "qimeng/Kernel/WorkspaceHeader.h"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace qimeng;

namespace {

using KernelFn =
    std::function<void(const float *, const float *, float *, void *)>;

/// What each broken variant gets wrong.
enum class Bug {
  None,
  WriteGap,         ///< writes C(0, n): the gap of row 0 (or C(1,0) if none)
  WriteGuardAfter,  ///< writes one float past C's last element
  WriteGuardBefore, ///< writes one float before C(0,0)
  DropLastK,        ///< sums k - 1 terms
  OverwriteC,       ///< C = A B instead of C += A B
  WriteNaN,         ///< leaves NaN in one element
  ModifyA,          ///< writes into A
  ModifyB,          ///< writes into B
  TransBOffByOne,   ///< reads B(k,j) one element off when transB
};

float loadA(const GemmDesc &d, const float *a, int64_t i, int64_t p) {
  return d.transA ? a[p * d.lda + i] : a[i * d.lda + p];
}

float loadB(const GemmDesc &d, const float *b, int64_t p, int64_t j,
            bool offByOne) {
  if (!d.transB)
    return b[p * d.ldb + j];
  // Off by one along K, wrapping so it stays inside the buffer.
  int64_t q = offByOne ? (p + 1) % d.k : p;
  return b[j * d.ldb + q];
}

/// A naive float-accumulating kernel over `d`, with `bug` injected.
KernelFn naiveKernel(const GemmDesc &d, Bug bug = Bug::None) {
  return [d, bug](const float *a, const float *b, float *c, void *) {
    int64_t kEnd = bug == Bug::DropLastK ? d.k - 1 : d.k;
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        float acc = bug == Bug::OverwriteC ? 0.0f : c[i * d.ldc + j];
        for (int64_t p = 0; p < kEnd; ++p)
          acc +=
              loadA(d, a, i, p) * loadB(d, b, p, j, bug == Bug::TransBOffByOne);
        c[i * d.ldc + j] = acc;
      }
    switch (bug) {
    case Bug::WriteGap:
      c[d.n] = 1.0f;
      break;
    case Bug::WriteGuardAfter:
      c[d.cSpan()] = 1.0f;
      break;
    case Bug::WriteGuardBefore:
      c[-1] = 1.0f;
      break;
    case Bug::WriteNaN:
      c[2 * d.ldc + 3] = std::numeric_limits<float>::quiet_NaN();
      break;
    case Bug::ModifyA:
      const_cast<float *>(a)[1] += 1.0f;
      break;
    case Bug::ModifyB:
      const_cast<float *>(b)[d.ldb] = 0.5f;
      break;
    default:
      break;
    }
  };
}

GemmDesc padded(int64_t m, int64_t n, int64_t k, bool transA, bool transB,
                int64_t pad) {
  GemmDesc d = GemmDesc::packed(m, n, k, transA, transB);
  d.lda += pad;
  d.ldb += pad + 1;
  d.ldc += pad + 2;
  return d;
}

/// Runs `kernel` and returns the report, failing the test on an Error.
ValidationReport validate(const GemmDesc &d, const KernelFn &kernel,
                          const ValidationOptions &options = {}) {
  auto report = validateGemm(d, kernel, 0, options);
  if (!report) {
    ADD_FAILURE() << llvm::toString(report.takeError());
    return {};
  }
  return *report;
}

/// The failure message of a broken variant, which must fail.
std::string failureOf(const GemmDesc &d, Bug bug) {
  ValidationReport report = validate(d, naiveKernel(d, bug));
  EXPECT_FALSE(report.passed) << d.str();
  EXPECT_FALSE(report.failure.empty());
  return report.failure;
}

} // namespace

TEST(GemmValidatorTest, CorrectKernelPassesPackedShapes) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                         {7, 5, 3},
                         {17, 33, 65},
                         {64, 64, 64}}) {
    GemmDesc d = GemmDesc::packed(m, n, k);
    ValidationReport report = validate(d, naiveKernel(d));
    EXPECT_TRUE(report.passed) << d.str() << ": " << report.failure;
    EXPECT_TRUE(report.failure.empty());
    EXPECT_LE(report.maxRelError, gemmErrorBound(k));
    EXPECT_LE(report.openBlasMaxRelError, gemmErrorBound(k));
  }
}

TEST(GemmValidatorTest, CorrectKernelPassesPaddedAndTransposed) {
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (int64_t pad : {0, 3}) {
        for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                               {7, 5, 3},
                               {17, 33, 65}}) {
          GemmDesc d = padded(m, n, k, transA, transB, pad);
          ValidationReport report = validate(d, naiveKernel(d));
          EXPECT_TRUE(report.passed) << d.str() << ": " << report.failure;
        }
      }
}

TEST(GemmValidatorTest, SmallIntegersAreExact) {
  ValidationOptions options;
  options.distributions = {Distribution::SmallIntegers};
  for (bool transB : {false, true}) {
    GemmDesc d = padded(17, 33, 65, false, transB, 2);
    ValidationReport report = validate(d, naiveKernel(d), options);
    EXPECT_TRUE(report.passed) << report.failure;
    EXPECT_EQ(report.maxRelError, 0.0);
    EXPECT_EQ(report.openBlasMaxRelError, 0.0);
  }
}

TEST(GemmValidatorTest, UniformAndMixedHaveNonzeroError) {
  GemmDesc d = GemmDesc::packed(16, 16, 256);
  for (Distribution dist : {Distribution::Uniform, Distribution::Mixed}) {
    ValidationOptions options;
    options.distributions = {dist};
    ValidationReport report = validate(d, naiveKernel(d), options);
    EXPECT_TRUE(report.passed) << report.failure;
    EXPECT_GT(report.maxRelError, 0.0) << distributionName(dist).str();
    EXPECT_LE(report.maxRelError, gemmErrorBound(d.k));
  }
}

TEST(GemmValidatorTest, LongReductionPassesUniform) {
  // A plain float running sum over k = 4096 must be within the bound.
  ValidationOptions options;
  options.distributions = {Distribution::Uniform, Distribution::Mixed};
  GemmDesc d = GemmDesc::packed(8, 8, 4096);
  ValidationReport report = validate(d, naiveKernel(d), options);
  EXPECT_TRUE(report.passed) << report.failure;
  EXPECT_GT(report.maxRelError, 0.0);
}

TEST(GemmValidatorTest, WriteIntoCGapFails) {
  GemmDesc d = padded(7, 5, 3, false, false, 2);
  std::string failure = failureOf(d, Bug::WriteGap);
  EXPECT_EQ(failure, "small-integers: C gap (row 0, column 5) overwritten");
}

TEST(GemmValidatorTest, WritePastCFails) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  EXPECT_EQ(failureOf(d, Bug::WriteGuardAfter),
            "small-integers: guard after C overwritten at element 0");
  EXPECT_EQ(failureOf(d, Bug::WriteGuardBefore),
            "small-integers: guard before C overwritten at element 0");
}

TEST(GemmValidatorTest, DroppedKTermFails) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  std::string failure = failureOf(d, Bug::DropLastK);
  EXPECT_NE(failure.find("small-integers: C("), std::string::npos) << failure;
  EXPECT_NE(failure.find("(exact, bit for bit)"), std::string::npos) << failure;
}

TEST(GemmValidatorTest, OverwritingCFails) {
  GemmDesc d = GemmDesc::packed(17, 33, 65);
  std::string failure = failureOf(d, Bug::OverwriteC);
  EXPECT_NE(failure.find("small-integers: C("), std::string::npos) << failure;
  EXPECT_NE(failure.find("expected"), std::string::npos) << failure;
}

TEST(GemmValidatorTest, OverwritingCFailsWithFloats) {
  // Past the exact distribution, the message names the bound.
  ValidationOptions options;
  options.distributions = {Distribution::Uniform};
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  ValidationReport report =
      validate(d, naiveKernel(d, Bug::OverwriteC), options);
  EXPECT_FALSE(report.passed);
  EXPECT_EQ(report.failure.find("uniform: C(0,0) = "), 0u) << report.failure;
  EXPECT_NE(report.failure.find("(fp64), relative error"), std::string::npos)
      << report.failure;
  EXPECT_NE(report.failure.find("> bound"), std::string::npos)
      << report.failure;
}

TEST(GemmValidatorTest, NaNInCFails) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  std::string failure = failureOf(d, Bug::WriteNaN);
  EXPECT_EQ(failure.find("small-integers: C(2,3) = nan, expected "), 0u)
      << failure;
}

TEST(GemmValidatorTest, ModifiedInputsFail) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  EXPECT_EQ(failureOf(d, Bug::ModifyA), "small-integers: A changed at (0,1)");
  EXPECT_EQ(failureOf(d, Bug::ModifyB), "small-integers: B changed at (1,0)");
}

TEST(GemmValidatorTest, TransBOffByOneFails) {
  GemmDesc d = GemmDesc::packed(7, 5, 3, false, true);
  std::string failure = failureOf(d, Bug::TransBOffByOne);
  EXPECT_NE(failure.find("small-integers: C("), std::string::npos) << failure;
  // The same bug is harmless without transB.
  GemmDesc nn = GemmDesc::packed(7, 5, 3);
  EXPECT_TRUE(validate(nn, naiveKernel(nn, Bug::TransBOffByOne)).passed);
}

TEST(GemmValidatorTest, GarbageKernelFails) {
  GemmDesc d = padded(9, 11, 13, true, false, 1);
  KernelFn garbage = [d](const float *, const float *, float *c, void *) {
    uint32_t x = 12345;
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        x = x * 1664525u + 1013904223u;
        std::memcpy(&c[i * d.ldc + j], &x, sizeof(x));
      }
  };
  ValidationReport report = validate(d, garbage);
  EXPECT_FALSE(report.passed);
  EXPECT_EQ(report.failure.find("small-integers: C(0,0) = "), 0u)
      << report.failure;
  KernelFn nothing = [](const float *, const float *, float *, void *) {};
  EXPECT_FALSE(validate(d, nothing).passed);
}

/// C and the workspace are 64-byte aligned; A and B end a page (the next
/// one has no access: ReadPastAFaults).
TEST(GemmValidatorTest, BuffersAndWorkspaceAreAligned) {
  GemmDesc d = padded(5, 3, 7, false, true, 1);
  bool sawWorkspace = false;
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  for (size_t bytes : {size_t(0), size_t(1), size_t(1000)}) {
    KernelFn check = [&, d](const float *a, const float *b, float *c,
                            void *ws) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(a + d.aSpan()) % page, 0u);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b + d.bSpan()) % page, 0u);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(c) % 64, 0u);
      ASSERT_NE(ws, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(ws) % 64, 0u);
      std::memset(ws, 0x5a, bytes);
      sawWorkspace = true;
      naiveKernel(d)(a, b, c, ws);
    };
    QM_ASSERT_EXPECTED(report, validateGemm(d, check, bytes));
    EXPECT_TRUE(report.passed) << report.failure;
  }
  EXPECT_TRUE(sawWorkspace);
}

/// A kernel that reads one float past A (a vector load over the last
/// row's end, say) faults in validation, where the runner reports it,
/// rather than passing on whatever follows A and faulting later in a
/// caller whose A ends a page.
TEST(GemmValidatorTest, ReadPastAFaults) {
  GemmDesc d = GemmDesc::packed(4, 4, 4);
  KernelFn overread = [d](const float *a, const float *b, float *c, void *ws) {
    volatile float past = a[d.aSpan()];
    (void)past;
    naiveKernel(d)(a, b, c, ws);
  };
  EXPECT_DEATH((void)validateGemm(d, overread, 0), "");
  KernelFn inside = [d](const float *a, const float *b, float *c, void *ws) {
    volatile float last = a[d.aSpan() - 1];
    (void)last;
    naiveKernel(d)(a, b, c, ws);
  };
  QM_ASSERT_EXPECTED(report, validateGemm(d, inside, 0));
  EXPECT_TRUE(report.passed) << report.failure;
}

TEST(GemmValidatorTest, WritePastWorkspaceFails) {
  GemmDesc d = GemmDesc::packed(3, 3, 3);
  KernelFn overrun = [d](const float *a, const float *b, float *c, void *ws) {
    static_cast<float *>(ws)[4] = 0.0f; // 16 bytes given: one float too far
    naiveKernel(d)(a, b, c, ws);
  };
  QM_ASSERT_EXPECTED(report, validateGemm(d, overrun, 16));
  EXPECT_FALSE(report.passed);
  EXPECT_EQ(report.failure,
            "small-integers: guard after workspace overwritten at element 0");
}

TEST(GemmValidatorTest, GuardSentinelIsNaN) {
  float f;
  std::memcpy(&f, &kGuardSentinelBits, sizeof(f));
  EXPECT_TRUE(std::isnan(f));
  QM_ASSERT_EXPECTED(buf, GuardedBuffer::allocate(10, 3));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % 64, 0u);
  buf.fillSentinel();
  EXPECT_FALSE(buf.firstDamagedGuard().has_value());
  buf.data()[10] = 0.0f;
  ASSERT_TRUE(buf.firstDamagedGuard().has_value());
  EXPECT_EQ(*buf.firstDamagedGuard(), 10);
  buf.data()[-2] = 0.0f;
  EXPECT_EQ(*buf.firstDamagedGuard(), -2);
  QM_ASSERT_EXPECTED(empty, GuardedBuffer::allocate(0, 0));
  EXPECT_NE(empty.data(), nullptr);
  QM_ASSERT_FAILS_WITH(GuardedBuffer::allocate(-1, 0).takeError(),
                       "invalid buffer");
}

TEST(GemmValidatorTest, InvalidDescIsAnError) {
  KernelFn kernel = [](const float *, const float *, float *, void *) {};
  GemmDesc zeroM = GemmDesc::packed(0, 4, 4);
  QM_ASSERT_FAILS_WITH(validateGemm(zeroM, kernel, 0).takeError(),
                       "invalid gemm shape");
  GemmDesc narrowLda = GemmDesc::packed(4, 4, 8);
  narrowLda.lda = 7;
  QM_ASSERT_FAILS_WITH(validateGemm(narrowLda, kernel, 0).takeError(), "lda 7");
  ValidationOptions none;
  none.distributions.clear();
  QM_ASSERT_FAILS_WITH(
      validateGemm(GemmDesc::packed(2, 2, 2), kernel, 0, none).takeError(),
      "no input distributions");
}

TEST(GemmValidatorTest, ErrorBoundGrowsWithK) {
  double previous = 0;
  for (int64_t k : {1, 2, 16, 64, 1024, 4096, 65536}) {
    double bound = gemmErrorBound(k);
    EXPECT_GT(bound, previous) << k;
    // At least the classic gamma_{k+1} with u = 2^-24, and still small.
    EXPECT_GE(bound, double(k + 1) * std::ldexp(1.0, -24)) << k;
    previous = bound;
  }
  EXPECT_LT(gemmErrorBound(4096), 1e-3);
}

TEST(GemmValidatorTest, OpenBlasComparisonIsOptional) {
  GemmDesc d = GemmDesc::packed(17, 33, 65, true, true);
  ValidationOptions options;
  options.compareOpenBlas = false;
  ValidationReport report = validate(d, naiveKernel(d), options);
  EXPECT_TRUE(report.passed) << report.failure;
  EXPECT_EQ(report.openBlasMaxRelError, 0.0);
  options.compareOpenBlas = true;
  report = validate(d, naiveKernel(d), options);
  EXPECT_TRUE(report.passed) << report.failure;
  EXPECT_GT(report.openBlasMaxRelError, 0.0);
}

TEST(GemmValidatorTest, SameSeedSameInputs) {
  // The inputs are a function of the seed: two runs see the same A.
  GemmDesc d = GemmDesc::packed(3, 4, 5);
  std::vector<float> first, second;
  auto record = [&](std::vector<float> &out) {
    return KernelFn(
        [&out, d](const float *a, const float *b, float *c, void *ws) {
          out.assign(a, a + d.aSpan());
          naiveKernel(d)(a, b, c, ws);
        });
  };
  ValidationOptions options;
  options.distributions = {Distribution::Mixed};
  EXPECT_TRUE(validate(d, record(first), options).passed);
  EXPECT_TRUE(validate(d, record(second), options).passed);
  EXPECT_EQ(first, second);
  options.seed = 7;
  EXPECT_TRUE(validate(d, record(second), options).passed);
  EXPECT_NE(first, second);
}

/// f16BitsOf rounds to nearest, ties to even, through subnormals and into
/// infinity; floatOfF16 inverts it on every f16 that is not a NaN.
TEST(GemmValidatorTest, F16RoundsToNearestEven) {
  using validation::f16BitsOf;
  using validation::floatOfF16;
  EXPECT_EQ(f16BitsOf(1.0f), 0x3c00);
  EXPECT_EQ(f16BitsOf(-2.0f), 0xc000);
  EXPECT_EQ(f16BitsOf(65504.0f), 0x7bff);
  EXPECT_EQ(f16BitsOf(65519.0f), 0x7bff);
  EXPECT_EQ(f16BitsOf(65520.0f), 0x7c00);
  EXPECT_EQ(f16BitsOf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f16BitsOf(std::ldexp(1.0f, -25)), 0x0000);        // tie: even
  EXPECT_EQ(f16BitsOf(std::ldexp(3.0f, -25)), 0x0002);        // tie: even
  EXPECT_EQ(f16BitsOf(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie: even
  EXPECT_EQ(f16BitsOf(1.0f + std::ldexp(3.0f, -11)), 0x3c02); // tie: even
  EXPECT_EQ(f16BitsOf(std::numeric_limits<float>::quiet_NaN()) & 0x7e00,
            0x7e00);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
      continue; // NaN
    ASSERT_EQ(f16BitsOf(floatOfF16(uint16_t(h))), h) << std::hex << h;
  }
}

/// f16 operands: a kernel that widens them and sums in f32 passes; one
/// that keeps only bf16's 8 significant bits of each (a split kernel that
/// loses its low parts) fails on uniform inputs.
TEST(GemmValidatorTest, F16KernelsAreCheckedAtF16Precision) {
  GemmDesc d = padded(23, 17, 40, false, false, 3);
  d.precision = GemmPrecision::F16;
  auto kernel = [d](bool truncate) {
    return [d, truncate](const float *a, const float *b, float *c, void *) {
      const auto *ah = reinterpret_cast<const uint16_t *>(a);
      const auto *bh = reinterpret_cast<const uint16_t *>(b);
      auto value = [truncate](uint16_t h) {
        float f = validation::floatOfF16(h);
        if (!truncate)
          return f;
        uint32_t bits = validation::bitsOf(f) & 0xffff0000u;
        std::memcpy(&f, &bits, sizeof(f));
        return f;
      };
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t j = 0; j < d.n; ++j) {
          float acc = c[i * d.ldc + j];
          for (int64_t p = 0; p < d.k; ++p)
            acc += value(ah[i * d.lda + p]) * value(bh[p * d.ldb + j]);
          c[i * d.ldc + j] = acc;
        }
    };
  };
  EXPECT_TRUE(validate(d, kernel(false)).passed);
  ValidationOptions uniform;
  uniform.distributions = {Distribution::Uniform};
  ValidationReport truncated = validate(d, kernel(true), uniform);
  EXPECT_FALSE(truncated.passed);
  EXPECT_NE(truncated.failure.find("relative error"), std::string::npos)
      << truncated.failure;
}

/// An f16 output D (GemmDesc::halfOutput with f16 operands): a kernel that
/// rounds its f32 sums to f16 passes, on every distribution (the mixed
/// one's sums past 65504 going to infinity as f16's do); one that rounds
/// them to bf16 instead fails.
TEST(GemmValidatorTest, F16OutputIsCheckedAtF16Precision) {
  GemmDesc d = GemmDesc::packed(19, 23, 40);
  d.precision = GemmPrecision::F16;
  d.halfOutput = true;
  d.runtimeLd = true;
  d.overwrite = true;
  d.ldd = d.n + 3;
  auto kernel = [d](bool asBf16) {
    return [d, asBf16](const float *a, const float *b, float *, void *ws) {
      const auto *ah = reinterpret_cast<const uint16_t *>(a);
      const auto *bh = reinterpret_cast<const uint16_t *>(b);
      auto *out = static_cast<uint16_t *>(readHalfOutput(ws));
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t j = 0; j < d.n; ++j) {
          float acc = 0;
          for (int64_t p = 0; p < d.k; ++p)
            acc += validation::floatOfF16(ah[i * d.lda + p]) *
                   validation::floatOfF16(bh[p * d.ldb + j]);
          out[i * d.ldd + j] =
              asBf16 ? validation::f16BitsOf(validation::roundToBf16(acc))
                     : validation::f16BitsOf(acc);
        }
    };
  };
  // (The header, D's pointer in it, is the workspace's first 128 bytes.)
  QM_ASSERT_EXPECTED(right,
                     validateGemm(d, kernel(false), kWorkspaceHeaderBytes));
  EXPECT_TRUE(right.passed) << right.failure;
  ValidationOptions uniform;
  uniform.distributions = {Distribution::Uniform};
  QM_ASSERT_EXPECTED(
      wrong, validateGemm(d, kernel(true), kWorkspaceHeaderBytes, uniform));
  EXPECT_FALSE(wrong.passed);
  EXPECT_NE(wrong.failure.find("rounded once to f16"), std::string::npos)
      << wrong.failure;
}
