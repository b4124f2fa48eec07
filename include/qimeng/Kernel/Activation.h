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
struct Activation {
  bool relu = false;
  std::optional<float> floor;      ///< relu's floor where not 0
  std::optional<float> bound;      ///< min(x, bound) after relu
  bool nanToFloor = false;         ///< relu makes a NaN its floor
  std::optional<float> leakySlope; ///< leaky relu instead of relu

  /// Whether there is one to apply.
  bool any() const { return relu || leakySlope; }

  /// The activation of `x` as the consumer computes it (the validators'
  /// reference): NaN stays NaN (or becomes the floor with nanToFloor); -0
  /// becomes +0 against the floor 0 and stays -0 against a floor below it.
  template <typename T> T apply(T x) const {
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
  double errorGain() const {
    return leakySlope && *leakySlope > 1.0f ? double(*leakySlope) : 1.0;
  }

  /// The key's (and the emitters' symbols') part: "", or "_relu", then
  /// "_nf" where a NaN becomes the floor, "_min" and the floor's binary32
  /// bits in 8 hex digits where the floor is not 0, then "_max" and the
  /// bound's bits where there is one (exact, and valid in a symbol); or
  /// "_leaky" and the slope's bits.
  std::string suffix() const {
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
           nanToFloor == o.nanToFloor && leakySlope == o.leakySlope;
  }
  bool operator!=(const Activation &o) const { return !(*this == o); }

private:
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
