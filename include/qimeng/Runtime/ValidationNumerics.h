//===- ValidationNumerics.h - The validators' numbers, standard C++ only
//-*-===//
//
// What every validator of ours computes the same way, with nothing but the
// C++ standard library: the input distributions and their deterministic
// values, the guard sentinel, the relative error measure, the K-scaled
// bound and the per-element verdict. The host validators (GemmValidator,
// ConvValidator) and the cross-built runner that checks kernels under
// qemu-user (tools/qimeng-cross-runner) include it, so a kernel for another
// architecture passes exactly the checks a host kernel passes.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_VALIDATIONNUMERICS_H
#define QIMENG_RUNTIME_VALIDATIONNUMERICS_H

#include "qimeng/Kernel/Activation.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>

namespace qimeng {

/// Input distributions the validators run.
enum class Distribution {
  SmallIntegers, ///< A, B, C in [-4, 4]: every partial sum exact, bit for bit
  Uniform,       ///< uniform in [-1, 1): error bound grows with K
  Mixed,         ///< uniform magnitudes spanning 2^-8 .. 2^8 with signs
};

/// The distribution's name as it appears in failure messages:
/// "small-integers", "uniform", "mixed".
inline const char *distributionCName(Distribution dist) {
  switch (dist) {
  case Distribution::SmallIntegers:
    return "small-integers";
  case Distribution::Uniform:
    return "uniform";
  case Distribution::Mixed:
    return "mixed";
  }
  return "unknown";
}

/// Bit pattern of the sentinel written into guards and leading-dimension
/// gaps: a signalling NaN with a recognisable payload, so that a kernel that
/// computes with it produces NaN and one that passes it through arithmetic
/// changes its bits (the result is quieted).
inline constexpr uint32_t kGuardSentinelBits = 0x7fa5a5a5u;

// C(i,j) is c0 plus k products: k + 1 summands. Whatever the summation order
// (blocked, tree, several accumulators added at the end) and whether
// products are rounded separately or fused (FMA only removes roundings),
// each summand passes through at most k + 1 roundings, so the classic bound
// (Higham, Accuracy and Stability, 3.1) gives
//   |fl(c) - c| <= gamma_{k+1} * (|c0| + sum_k |a b|),
//   gamma_n = n u / (1 - n u), u = 2^-24 (round to nearest).
// We allow twice that: the slack covers the fp64 reference's own rounding
// (about (k + 1) * 2^-53 relative, six orders of magnitude below) and keeps
// the gate from flaking on kernels that are correct by this bound, while a
// dropped term, a wrong index or a lost accumulation is off by O(1)
// relative error and far above it. Inputs here are normal floats with no
// underflow, which the classic bound assumes. When (k + 1) u >= 1/2 no
// useful bound exists and infinity is returned (only exact zero terms are
// then checked).
/// The error bound for the relative measure at reduction length k: a few
/// units of float rounding per term, growing with k.
inline double gemmErrorBound(int64_t k) {
  const double u = std::ldexp(1.0, -24);
  double nu = double(std::max<int64_t>(k, 0) + 1) * u;
  if (nu >= 0.5)
    return std::numeric_limits<double>::infinity();
  return 2.0 * nu / (1.0 - nu);
}

/// The bound for a result rounded once more to bf16 (a bf16 output): the
/// f32 sum's, then half an ulp of bf16's 8 significant bits, at most 2^-8
/// of the value (so of its magnitude), on top.
inline double bf16OutputErrorBound(int64_t k) {
  const double r = std::ldexp(1.0, -8);
  return gemmErrorBound(k) * (1 + r) + r;
}

/// The same for an f16 output: the f32 sum of up to four exact partial
/// products a k (amx.py's split), then half an ulp of f16's 11
/// significant bits, 2^-11.
inline double f16OutputErrorBound(int64_t k) {
  const double r = std::ldexp(1.0, -11);
  return gemmErrorBound(4 * k) * (1 + r) + r;
}

namespace validation {

inline uint32_t bitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

/// The bf16 nearest `f` (round to nearest, ties to even), as its 16 bits:
/// the upper half of the f32 after rounding. NaN stays a quiet NaN.
inline uint16_t bf16BitsOf(float f) {
  uint32_t bits = bitsOf(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

/// The f32 value of bf16 bits (exact: bf16 is f32's upper half).
inline float floatOfBf16(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// `f` rounded to bf16, as a float.
inline float roundToBf16(float f) { return floatOfBf16(bf16BitsOf(f)); }

/// The f16 (IEEE binary16) nearest `f` (to nearest, ties to even), as its
/// 16 bits: subnormals below 2^-14, infinity from 65520 on, NaN quiet.
inline uint16_t f16BitsOf(float f) {
  const uint32_t bits = bitsOf(f);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u)
    return uint16_t(sign | 0x7e00u);
  if (abs >= 0x477ff000u) // 65520: rounds to 2^16, past f16's largest
    return uint16_t(sign | 0x7c00u);
  if (abs < 0x38800000u) // below 2^-14: a multiple of 2^-24 (exact scaling)
    return uint16_t(sign | uint16_t(std::nearbyint(std::fabs(f) * 0x1p24f)));
  // Normal: 13 bits fewer, rounded (a carry moves into the exponent), the
  // exponent rebiased from 127 to 15.
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return uint16_t(sign | ((rounded - (112u << 23)) >> 13));
}

/// The f32 value of f16 bits (exact: f32 holds every f16).
inline float floatOfF16(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float f = std::ldexp(float(mantissa), -24);
    return sign ? -f : f;
  }
  const uint32_t bits =
      sign | (exponent == 31 ? 0x7f800000u : (exponent + 112u) << 23) |
      (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// `f` rounded to f16, as a float.
inline float roundToF16(float f) { return floatOfF16(f16BitsOf(f)); }

/// One 16-bit float type's conversions: bf16's or f16's.
struct HalfFloat {
  const char *name;           ///< "bf16", "f16"
  uint16_t (*bitsOf)(float);  ///< the nearest value's bits
  float (*valueOf)(uint16_t); ///< the bits' value, exact
  float (*roundTo)(float);    ///< the nearest value, as a float
};

/// f16's conversions when `f16`, else bf16's.
inline HalfFloat halfFloat(bool f16) {
  return f16 ? HalfFloat{"f16", f16BitsOf, floatOfF16, roundToF16}
             : HalfFloat{"bf16", bf16BitsOf, floatOfBf16, roundToBf16};
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

/// Whether a run of distribution `dist` sets one input element to NaN, for
/// a kernel with an activation (`hasActivation`): the exact distribution,
/// where the results that NaN reaches must be the activation of a NaN
/// (NaN kept; the floor where relu makes it its floor), bit for bit.
/// Numbers alone would not tell relu's NaN rules apart.
inline bool poisonsWithNan(Distribution dist, bool hasActivation) {
  return hasActivation && dist == Distribution::SmallIntegers;
}

/// |x - ref| / mag, with 0 / 0 = 0 and anything non-finite infinite; 0
/// for NaN against a NaN reference.
inline double relativeError(double x, double ref, double mag) {
  if (std::isnan(ref)) // a NaN input's result: NaN is exact
    return std::isnan(x) ? 0 : std::numeric_limits<double>::infinity();
  if (!std::isfinite(x))
    return std::numeric_limits<double>::infinity();
  double err = std::fabs(x - ref);
  if (err == 0)
    return 0;
  if (mag == 0)
    return std::numeric_limits<double>::infinity();
  return err / mag;
}

/// The magnitude of an element after the epilogue's activation, `size`
/// being its sum's magnitude (bias included), `x` the activation's exact
/// input and `y` its result: the size scaled by the activation's
/// errorGain, plus the activation's own allowance (a smooth activation's
/// approximation, Activation::allowance) in units of `bound`, so that
/// bound times the magnitude covers both.
inline double activatedMagnitude(const Activation &activation, double size,
                                 double x, double y, double bound) {
  return size * activation.errorGain() + activation.allowance(x, y) / bound;
}

/// True when small-integer inputs (|a|, |b|, |c0| <= 4) make every partial
/// sum of a k-term reduction exact in float in any order: an integer of
/// magnitude <= 16 k + 4, exact while that is <= 2^24.
inline bool smallIntegersAreExact(int64_t k) {
  return k <= ((int64_t(1) << 24) - 4) / 16;
}

/// Whether a k-term result drawn from `dist` must match its fp64 reference
/// bit for bit: small integers, whose sums are exact, through an
/// activation the kernels compute exactly (not a smooth one).
inline bool comparedBitForBit(Distribution dist, int64_t k,
                              const Activation &activation) {
  return dist == Distribution::SmallIntegers && smallIntegersAreExact(k) &&
         activation.exact();
}

/// Why an output element `got` fails against fp64 `want` of magnitude
/// `size` (" (exact, bit for bit)", " (fp64), relative error ..."), or ""
/// when it passes: bit for bit when `exact`, else within `bound` * size.
inline std::string elementFailure(float got, double want, double size,
                                  bool exact, double bound) {
  // A NaN among the element's inputs (nanRow): the activation keeps it,
  // or makes it its floor, exactly.
  if (std::isnan(want))
    return std::isnan(got) ? "" : " (a NaN input's result is NaN)";
  if (std::isnan(size))
    return bitsOf(got) == bitsOf(float(want))
               ? ""
               : " (a NaN input's result is the floor, exactly)";
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

} // namespace validation
} // namespace qimeng

#endif // QIMENG_RUNTIME_VALIDATIONNUMERICS_H
