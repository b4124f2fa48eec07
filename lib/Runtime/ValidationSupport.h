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
#include "qimeng/Runtime/ValidationNumerics.h"
#include <algorithm>
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

inline std::vector<float> copyRegion(const GuardedBuffer &buf) {
  return std::vector<float>(buf.regionBegin(),
                            buf.regionBegin() + buf.regionSize());
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

/// A bf16 or f16 output D (GemmDesc::halfOutput) for a kernel to write: its
/// M x N elements (ldd apart) a NaN, its gaps and guards the sentinel.
llvm::Expected<GuardedBuffer> allocateHalfOutput(const GemmDesc &d,
                                                 int64_t guard);

/// Checks a bf16 (f16) output D of `d` against the fp64 reference (`ref`
/// and `mag` M x N row-major): each element the reference rounded once to
/// its type (to nearest even), bit for bit when `exact` (the f32 sums are),
/// else within `bound` (bf16OutputErrorBound, f16OutputErrorBound) times
/// the magnitude and 2^-126 (f16: 2^-24, its subnormals' step) absolute;
/// nothing else of its region (`pristine` before the call) written.
std::optional<std::string>
checkHalfOutput(const GemmDesc &d, const GuardedBuffer &out,
                const std::vector<float> &pristine,
                const std::vector<double> &ref, const std::vector<double> &mag,
                bool exact, double bound, llvm::StringRef name,
                ValidationReport &report);

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

/// The copy of `floats` in `Element`s of narrow(float) that a bf16 or
/// 8-bit kernel reads: each element at the offset forEach gives it
/// (forEach calls its argument with each), `gap` (or the sentinel's bytes)
/// in every other of its `span` elements (a stride gap a kernel must not
/// read), its end against a page with no access, as the f32 operands.
template <typename Element, typename Narrow, typename ForEach>
llvm::Expected<GuardedBuffer>
narrowCopy(const GuardedBuffer &floats, int64_t span, int64_t guard,
           std::optional<Element> gap, Narrow narrow, ForEach forEach) {
  constexpr int64_t perFloat = sizeof(float) / sizeof(Element);
  auto buf = GuardedBuffer::allocateBeforeUnmapped(
      (span + perFloat - 1) / perFloat, guard);
  if (!buf)
    return buf.takeError();
  buf->fillSentinel();
  auto *out = reinterpret_cast<Element *>(buf->data());
  if (gap)
    std::fill_n(out, span, *gap);
  forEach([&](int64_t off) { out[off] = narrow(floats.data()[off]); });
  return buf;
}

/// A generated value `x` of `dist` as an 8-bit operand's: small integers
/// as they are (their magnitude for u8), uniform ones across the whole
/// type, mixed ones at its extremes (and next to zero) to catch sign and
/// offset errors.
inline float int8Value(float x, Distribution dist, bool isUnsigned) {
  double v = 0;
  switch (dist) {
  case Distribution::SmallIntegers:
    v = isUnsigned ? std::fabs(x) : x;
    break;
  case Distribution::Uniform:
    v = isUnsigned ? std::floor((double(x) + 1) * 128)
                   : std::floor(double(x) * 128);
    break;
  case Distribution::Mixed:
    v = std::fabs(x) >= 1 ? (x > 0 || isUnsigned ? 255 : -128)
                          : (x > 0 || isUnsigned ? 1 : -1);
    break;
  }
  return float(
      std::clamp(v, isUnsigned ? 0.0 : -128.0, isUnsigned ? 255.0 : 127.0));
}

/// The s32 a C element's bits hold (an 8-bit kernel's output).
inline int32_t int32Bits(const float *x) {
  int32_t v;
  std::memcpy(&v, x, sizeof(v));
  return v;
}

} // namespace validation
} // namespace qimeng

#endif // QIMENG_LIB_RUNTIME_VALIDATIONSUPPORT_H
