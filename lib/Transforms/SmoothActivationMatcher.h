//===- SmoothActivationMatcher.h - smooth activations in a body -*- C++ -*-===//
//
// Private to lib/Transforms: the smooth activations (Activation::Smooth)
// as frontends write them in an elementwise linalg.generic's body, for the
// epilogue matcher (EpilogueMatcher.h).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_SMOOTHACTIVATIONMATCHER_H
#define QIMENG_LIB_TRANSFORMS_SMOOTHACTIVATIONMATCHER_H

#include "mlir/IR/Value.h"
#include "qimeng/Kernel/Activation.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <optional>
#include <utility>

namespace qimeng {

/// `v` (an f32 value of a generic's body) as a smooth activation of some x:
/// (the activation, x), the ops computing it from x added to `used`.
/// The body is read as a polynomial in x and one transcendental term, so
/// that any association of the same products and sums matches:
///  - gelu_erf: x * 0.5 * (1 + erf(x * c)), c = 1/sqrt(2) (a constant, or
///    x / math.sqrt(2.0), torch-mlir's aten.gelu);
///  - gelu_tanh: 0.5 * x * (1 + tanh(c1 * x + c3 * x^3)), c1 = sqrt(2/pi),
///    c3 = 0.044715 c1 (x^3 as products, math.powf or math.fpowi: torch's
///    and JAX's approximate gelu), or x / (1 + exp(-2 (c1 x + c3 x^3)));
///  - sigmoid: 1 / (1 + exp(-x)) (torch-mlir's aten.sigmoid, TOSA's and
///    StableHLO's logistic);
///  - silu: x * sigmoid(x), or x / (1 + exp(-x));
///  - tanh: math.tanh(x) alone (BERT's pooler, an LSTM's cell);
///  - softplus: log1p(exp(x)) or log(1 + exp(x)), perhaps behind torch's
///    threshold (x > 20 ? x : ...; any threshold from 15 up), or JAX's
///    jax.nn.softplus, logaddexp(x, 0): max(x, 0) + log1p(exp(-|x - 0|))
///    behind its NaN select (Mamba's dt projection);
///  - mish: x * tanh(softplus(x)) (YOLOv4's), softplus as above (any
///    threshold from 10 up);
///  - hardswish: x * relu6(x + 3) / 6 (torch's), or x times hardsigmoid's
///    clamp of x / 6 + 1/2 to [0, 1], the clamp as arith's max and min
///    (maximumf, maxnumf, minimumf, minnumf) or torch-mlir's aten.clamp
///    (cmpf and select), the term the polynomial's in place of the
///    transcendental one;
///  - hardsigmoid: relu6(x + 3) / 6 (torch's, jax.nn.hard_sigmoid) or the
///    clamp of x / 6 + 1/2 to [0, 1] alone (MobileNetV3's
///    squeeze-and-excitation gate), the clamp as for hardswish.
/// Constants within a relative 1e-6 of these (f32 roundings of them).
/// Nullopt for anything else.
std::optional<std::pair<Activation::Smooth, mlir::Value>>
matchSmoothActivation(mlir::Value v,
                      llvm::SmallPtrSetImpl<mlir::Operation *> &used);

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_SMOOTHACTIVATIONMATCHER_H
