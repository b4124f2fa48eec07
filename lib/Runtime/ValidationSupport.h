//===- ValidationSupport.h - Pieces the validators share ---------*- C++
//-*-===//
//
// Private to lib/Runtime: the input generator, bit helpers, number
// formatting, the relative error measure and the fp64 GEMM reference that
// GemmValidator.cpp and ConvValidator.cpp both use.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_RUNTIME_VALIDATIONSUPPORT_H
#define QIMENG_LIB_RUNTIME_VALIDATIONSUPPORT_H

#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Runtime/GemmValidator.h"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace qimeng {
namespace validation {

inline uint32_t bitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

inline bool isSentinel(const float *p) {
  uint32_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return bits == kGuardSentinelBits;
}

/// Deterministic values of one distribution. The mapping from the 64-bit
/// stream is our own (not std::uniform_*_distribution), so the inputs are
/// the same with every standard library.
class InputGenerator {
public:
  InputGenerator(Distribution dist, uint64_t seed)
      : dist(dist), rng(seed ^ (0x9e3779b97f4a7c15ull * (uint64_t(dist) + 1))) {
  }

  float next() {
    switch (dist) {
    case Distribution::SmallIntegers:
      return float(int64_t(rng() % 9) - 4);
    case Distribution::Uniform: {
      // Multiples of 2^-23 in [-1, 1): exact in float.
      int64_t v = int64_t(rng() >> 40) - (int64_t(1) << 23);
      return std::ldexp(float(v), -23);
    }
    case Distribution::Mixed: {
      uint64_t r = rng();
      float sign = (r & 1) ? -1.0f : 1.0f;
      int e = int((r >> 1) % 17) - 8;
      // 1 + u with 23 fraction bits: exact in float.
      float mant = 1.0f + std::ldexp(float(rng() >> 41), -23);
      return sign * std::ldexp(mant, e);
    }
    }
    return 0.0f;
  }

private:
  Distribution dist;
  std::mt19937_64 rng;
};

/// relu as the kernels' epilogue and arith.maximumf(x, 0) compute it: NaN
/// stays NaN, anything not above 0 becomes +0.
template <typename T> T reluAsMaximumf(T x) {
  return x > T(0) || std::isnan(x) ? x : T(0);
}

inline std::vector<float> copyRegion(const GuardedBuffer &buf) {
  return std::vector<float>(buf.regionBegin(),
                            buf.regionBegin() + buf.regionSize());
}

inline std::string num(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.9g", v);
  return text;
}

inline std::string shortNum(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.3g", v);
  return text;
}

/// |x - ref| / mag, with 0 / 0 = 0 and anything non-finite infinite.
inline double relativeError(double x, double ref, double mag) {
  if (!std::isfinite(x))
    return std::numeric_limits<double>::infinity();
  double err = std::fabs(x - ref);
  if (err == 0)
    return 0;
  if (mag == 0)
    return std::numeric_limits<double>::infinity();
  return err / mag;
}

/// The offset from data() of the first float of `buf`'s region (guards
/// included) whose bits differ from `pristine` (a copyRegion of it).
inline std::optional<int64_t> firstChanged(const GuardedBuffer &buf,
                                           const std::vector<float> &pristine) {
  const float *now = buf.regionBegin();
  if (std::memcmp(now, pristine.data(), pristine.size() * sizeof(float)) == 0)
    return std::nullopt;
  for (size_t i = 0; i < pristine.size(); ++i)
    if (bitsOf(now[i]) != bitsOf(pristine[i]))
      return int64_t(i) - buf.guard();
  return std::nullopt;
}

/// "guard before/after NAME overwritten at element N" when offset `off`
/// from data() lies in one of `buf`'s guards; nullopt inside the data.
inline std::optional<std::string>
guardDamage(llvm::StringRef name, const GuardedBuffer &buf, int64_t off) {
  if (off < 0)
    return "guard before " + name.str() + " overwritten at element " +
           std::to_string(-off - 1);
  if (off >= buf.size())
    return "guard after " + name.str() + " overwritten at element " +
           std::to_string(off - buf.size());
  return std::nullopt;
}

/// The fp64 reference and magnitude of C += op(A) op(B), m x n row-major:
///   ref(i,j) = c0(i,j) + sum_k A(i,k) B(k,j)
///   mag(i,j) = |c0(i,j)| + sum_k |A(i,k) B(k,j)|
void computeReference(const GemmDesc &d, const float *a, const float *b,
                      const float *c0, std::vector<double> &ref,
                      std::vector<double> &mag);

/// The fp64 reference for `key`: the cache's entry when it has one, else
/// `compute(ref, mag)` into `storage` (and into the cache, when there is
/// one).
template <typename Compute>
const ReferenceCache::Entry &
referenceFor(const ValidationOptions &options, const std::string &key,
             ReferenceCache::Entry &storage, Compute compute) {
  if (options.referenceCache)
    if (const ReferenceCache::Entry *hit = options.referenceCache->find(key))
      return *hit;
  compute(storage.ref, storage.mag);
  if (options.referenceCache)
    options.referenceCache->store(key, storage);
  return storage;
}

/// Why an output element `got` fails against fp64 `want` of magnitude
/// `size` (" (exact, bit for bit)", " (fp64), relative error ..."), or ""
/// when it passes: bit for bit when `exact`, else within `bound` * size.
inline std::string elementFailure(float got, double want, double size,
                                  bool exact, double bound) {
  if (!std::isfinite(got) && std::isfinite(want))
    return " (fp64)";
  if (exact && bitsOf(got) != bitsOf(float(want)))
    return " (exact, bit for bit)";
  if (!exact && size == 0 && double(got) != want)
    return " (fp64; every term is zero)";
  if (!exact && size != 0 && !(std::fabs(double(got) - want) <= bound * size))
    return " (fp64), relative error " +
           shortNum(relativeError(got, want, size)) + " > bound " +
           shortNum(bound);
  return "";
}

/// Runs `runOne(dist, report)` for each of the options' distributions,
/// stopping at the first failure, which becomes the report's (passed =
/// false); an llvm::Error from runOne (allocation) is returned as is.
template <typename RunOne>
llvm::Expected<ValidationReport>
validateEachDistribution(const ValidationOptions &options, RunOne runOne) {
  ValidationReport report;
  for (Distribution dist : options.distributions) {
    llvm::Expected<std::optional<std::string>> failure = runOne(dist, report);
    if (!failure)
      return failure.takeError();
    if (*failure) {
      report.passed = false;
      report.failure = std::move(**failure);
      return report;
    }
  }
  report.passed = true;
  return report;
}

} // namespace validation
} // namespace qimeng

#endif // QIMENG_LIB_RUNTIME_VALIDATIONSUPPORT_H
