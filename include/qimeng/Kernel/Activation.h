//===- Activation.h - The activation of a fused epilogue ---------*- C++
//-*-===//
//
// What a kernel's epilogue applies after its adds, and how a reference
// computes it. Standard C++ only: the cross runners (built with a cross g++,
// no LLVM) use it as the host's validators do.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_ACTIVATION_H
#define QIMENG_KERNEL_ACTIVATION_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace qimeng {

/// The activation a fused epilogue applies after its adds (bias,
/// residual), as the consumer it replaces computes it. `relu` takes
/// arith.maximumf(x, 0) (NaN stays NaN, -0 becomes +0), or
/// arith.maximumf(x, *floor) where relu's floor is another number, then
/// with `bound` arith.minimumf(x, *bound): relu6, hardtanh and other
/// clamps to [floor, bound]. With `nanToFloor` relu makes a NaN its floor
/// instead (select(cmpf ult(x, floor), floor, x), torch-mlir's clamp;
/// arith.maxnumf), and then a bound never sees a NaN.
///
/// Or, instead of relu, leaky relu of slope s (`leakySlope`): x > 0 ? x :
/// s * x, NaN staying NaN (torch's leaky_relu, jax.nn.leaky_relu, TOSA's
/// maximum(x, mul(x, s))). The slope is above 0 and not 1: the kernels
/// take the larger of x and s * x for a slope below 1, the smaller above,
/// which every ISA's max or min computes, NaN included.
///
/// Or one of the smooth activations (`smooth`, request field
/// `activation`), which kernels compute in f32 to a few ulps rather than
/// exactly (allowance()): sigmoid 1 / (1 + e^-x), silu x * sigmoid(x),
/// gelu_tanh 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), gelu_erf
/// 0.5 x (1 + erf(x / sqrt(2))), hardswish x min(max(x + 3, 0), 6) / 6,
/// tanh, mish x tanh(log(1 + e^x)), softplus log(1 + e^x) and hardsigmoid
/// min(max(x + 3, 0), 6) / 6; NaN stays NaN.
struct Activation {
  enum class Smooth : uint8_t {
    None,
    Sigmoid,
    Silu,
    GeluTanh,
    GeluErf,
    HardSwish,
    Tanh,
    Mish,
    Softplus,
    HardSigmoid
  };
  /// Every smooth activation, in the enum's order.
  static constexpr Smooth kSmoothActivations[] = {
      Smooth::Sigmoid, Smooth::Silu,      Smooth::GeluTanh,
      Smooth::GeluErf, Smooth::HardSwish, Smooth::Tanh,
      Smooth::Mish,    Smooth::Softplus,  Smooth::HardSigmoid};

  bool relu = false;
  std::optional<float> floor;      ///< relu's floor where not 0
  std::optional<float> bound;      ///< min(x, bound) after relu
  bool nanToFloor = false;         ///< relu makes a NaN its floor
  std::optional<float> leakySlope; ///< leaky relu instead of relu
  Smooth smooth = Smooth::None;    ///< a smooth one instead of relu

  /// Whether there is one to apply.
  bool any() const { return relu || leakySlope || smooth != Smooth::None; }

  /// Whether a kernel computes it exactly as apply() does (relu, its
  /// clamp, leaky relu), so that exact sums give bit-exact results; the
  /// smooth ones are approximations.
  bool exact() const { return smooth == Smooth::None; }

  /// The smooth activation's name (the request's `activation` field), or
  /// "" for none; and the one of that name.
  static const char *smoothName(Smooth s) {
    switch (s) {
    case Smooth::Sigmoid:
      return "sigmoid";
    case Smooth::Silu:
      return "silu";
    case Smooth::GeluTanh:
      return "gelu_tanh";
    case Smooth::GeluErf:
      return "gelu_erf";
    case Smooth::HardSwish:
      return "hardswish";
    case Smooth::Tanh:
      return "tanh";
    case Smooth::Mish:
      return "mish";
    case Smooth::Softplus:
      return "softplus";
    case Smooth::HardSigmoid:
      return "hardsigmoid";
    case Smooth::None:
      break;
    }
    return "";
  }
  static std::optional<Smooth> smoothNamed(const std::string &name) {
    for (Smooth s : kSmoothActivations)
      if (name == smoothName(s))
        return s;
    return std::nullopt;
  }

  /// The activation of `x` as the consumer computes it (the validators'
  /// reference): NaN stays NaN (or becomes the floor with nanToFloor); -0
  /// becomes +0 against the floor 0 and stays -0 against a floor below it.
  template <typename T> T apply(T x) const {
    if (smooth != Smooth::None)
      return applySmooth(x);
    if (leakySlope)
      return x > T(0) || std::isnan(x) ? x : T(*leakySlope) * x;
    if (!relu)
      return x;
    const T f = floor ? T(*floor) : T(0);
    if (nanToFloor && std::isnan(x))
      x = f;
    if (!(x > f || std::isnan(x)))
      x = f; // +0 for -0 against the floor 0
    return bound && x > T(*bound) ? T(*bound) : x;
  }

  /// The most it multiplies a difference in its input by: leaky relu's
  /// slope where above 1, else 1 (relu and its clamp never enlarge one).
  /// A validator scales its error bound's magnitude by it.
  /// The smooth ones: their largest slope, 1.13 (gelu's, at x = 1.4;
  /// silu's is 1.10, mish's 1.09, sigmoid's 1/4), hardswish's 1.5 (at x =
  /// 3); hardsigmoid's 1/6 (so 1).
  double errorGain() const {
    if (smooth == Smooth::HardSwish)
      return 1.5;
    if (smooth == Smooth::Silu || smooth == Smooth::GeluTanh ||
        smooth == Smooth::GeluErf || smooth == Smooth::Mish)
      return 1.13;
    return leakySlope && *leakySlope > 1.0f ? double(*leakySlope) : 1.0;
  }

  /// The error a kernel's own computation of the activation may add at
  /// the exact input `x` whose result is `y` (0 for the exact ones), as
  /// smooth.py's programs make it (measured in
  /// python_emitters/tests/test_smooth_activations.py): 6 ulps of y for
  /// sigmoid, silu, tanh, mish and softplus, 6 + 4 |2u| for gelu_tanh (its
  /// argument 2u is rounded first), 1.5e-7 |x| + 8 ulps for gelu_erf
  /// (Abramowitz and Stegun's erf, to 1.5e-7 absolute), and |x| 2^-126
  /// where e^-z is clamped at z = 87.3 (mish's e^x: |x| 2^-125, e^-87.3
  /// being 2^-126 rounded up); hardswish |x| 2^-23 + 3 ulps (x + 3
  /// rounded, then the product and the division), hardsigmoid the same
  /// (x + 3 rounded, then the division). An ulp of y taken as |y| 2^-23
  /// (its largest).
  double allowance(double x, double y) const {
    if (smooth == Smooth::None || std::isnan(x))
      return 0.0;
    const double ulp = std::fabs(y) * std::ldexp(1.0, -23);
    if (smooth == Smooth::HardSwish || smooth == Smooth::HardSigmoid)
      return std::fabs(x) * std::ldexp(1.0, -23) + 3 * ulp;
    const double clamped =
        std::max(std::fabs(x), 1.0) *
        std::ldexp(1.0, smooth == Smooth::Mish ? -125 : -126);
    switch (smooth) {
    case Smooth::GeluErf:
      return 1.5e-7 * std::fabs(x) + 8 * ulp + clamped;
    case Smooth::GeluTanh:
      return (6 + 4 * std::fabs(x) * (1.5957691216 + 0.0713548162 * x * x)) *
                 ulp +
             clamped;
    default:
      return 6 * ulp + clamped;
    }
  }

  /// The key's (and the emitters' symbols') part: "", or "_relu", then
  /// "_nf" where a NaN becomes the floor, "_min" and the floor's binary32
  /// bits in 8 hex digits where the floor is not 0, then "_max" and the
  /// bound's bits where there is one (exact, and valid in a symbol); or
  /// "_leaky" and the slope's bits.
  std::string suffix() const {
    if (smooth != Smooth::None)
      return std::string("_") + smoothName(smooth);
    if (leakySlope)
      return "_leaky" + hexBits(*leakySlope);
    if (!relu)
      return "";
    std::string s = nanToFloor ? "_relu_nf" : "_relu";
    if (floor)
      s += "_min" + hexBits(*floor);
    if (bound)
      s += "_max" + hexBits(*bound);
    return s;
  }

  /// What is wrong with it, or nullopt: a floor, a bound and the NaN rule
  /// come with relu, the floor and bound are finite, the floor is not 0
  /// (0 is relu's own: no floor) and the bound lies above the floor; a
  /// leaky relu comes alone, its slope finite, above 0 and not 1.
  std::optional<std::string> problem() const {
    if (smooth != Smooth::None &&
        (relu || floor || bound || nanToFloor || leakySlope))
      return std::string(smoothName(smooth)) +
             " and relu, its clamp or leaky relu exclude each other: one "
             "activation";
    if (leakySlope && (relu || floor || bound || nanToFloor))
      return std::string("leaky relu (leaky_relu) and relu or its clamp "
                         "exclude each other: one activation");
    if (leakySlope && (!(*leakySlope > 0.0f) || *leakySlope == 1.0f ||
                       !std::isfinite(*leakySlope)))
      return "leaky_relu's slope " + number(*leakySlope) +
             " must be finite, above 0 and not 1";
    if ((floor || bound || nanToFloor) && !relu)
      return std::string("a floor, bound or NaN rule on relu (relu_min, "
                         "relu_max, relu_nan_to_floor) needs relu");
    if (floor && (*floor == 0.0f || !std::isfinite(*floor)))
      return "relu_min " + number(*floor) +
             " must be finite and not 0 (relu's own floor)";
    const float lowest = floor.value_or(0.0f);
    if (bound && (!(*bound > lowest) || !std::isfinite(*bound)))
      return "relu_max " + number(*bound) +
             " must be finite and above relu's floor " + number(lowest);
    return std::nullopt;
  }

  bool operator==(const Activation &o) const {
    return relu == o.relu && floor == o.floor && bound == o.bound &&
           nanToFloor == o.nanToFloor && leakySlope == o.leakySlope &&
           smooth == o.smooth;
  }
  bool operator!=(const Activation &o) const { return !(*this == o); }

private:
  /// The smooth activation of x in T, in forms without cancellation: 0.5
  /// (1 + tanh(u)) as 1 / (1 + e^-2u), 0.5 (1 + erf(y)) as erfc(-y) / 2.
  template <typename T> T applySmooth(T x) const {
    if (std::isnan(x))
      return x;
    auto logistic = [](T z) { return T(1) / (T(1) + std::exp(-z)); };
    switch (smooth) {
    case Smooth::Sigmoid:
      return logistic(x);
    case Smooth::Silu:
      return std::isinf(x) ? (x > 0 ? x : T(-0.0)) : x * logistic(x);
    case Smooth::GeluTanh: {
      if (std::isinf(x))
        return x > 0 ? x : T(-0.0);
      const T twoU = T(1.5957691216057308) * (x + T(0.044715) * x * x * x);
      return x * logistic(twoU);
    }
    case Smooth::GeluErf:
      if (std::isinf(x))
        return x > 0 ? x : T(-0.0);
      return T(0.5) * x * std::erfc(-x * T(0.7071067811865476));
    case Smooth::HardSwish:
      // -inf * 0 is NaN, as the frontends' x * relu6(x + 3) / 6 is.
      return x * std::min(std::max(x + T(3), T(0)), T(6)) / T(6);
    case Smooth::Tanh:
      return std::tanh(x);
    case Smooth::Mish:
      if (std::isinf(x))
        return x > 0 ? x : T(-0.0);
      return x * std::tanh(std::log1p(std::exp(x)));
    case Smooth::Softplus:
      // max(x, 0) + log1p(e^-|x|): no overflow; +inf's and -inf's limits.
      return std::max(x, T(0)) + std::log1p(std::exp(-std::fabs(x)));
    case Smooth::HardSigmoid:
      return std::min(std::max(x + T(3), T(0)), T(6)) / T(6);
    case Smooth::None:
      break;
    }
    return x;
  }

  static std::string hexBits(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    char text[16];
    std::snprintf(text, sizeof text, "%08x", static_cast<unsigned>(bits));
    return text;
  }
  static std::string number(float value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
    return text;
  }
};

} // namespace qimeng

#endif // QIMENG_KERNEL_ACTIVATION_H
