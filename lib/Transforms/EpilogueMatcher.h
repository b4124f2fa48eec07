//===- EpilogueMatcher.h - What a kernel's store of its output computes -*-
// C++ -*-===//
//
// Private to lib/Transforms: around a contraction or a convolution, the
// op that initialises its fresh output (a +0.0 fill: the kernel's
// overwrite mode; a bias broadcast: overwrite plus a bias) and the
// linalg.generic after it that adds a bias along one dimension and/or a
// residual and/or applies relu, which the kernel computes as it stores its
// output (docs/FrontendIR.md).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_EPILOGUEMATCHER_H
#define QIMENG_LIB_TRANSFORMS_EPILOGUEMATCHER_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "qimeng/Kernel/Activation.h"
#include "qimeng/Transforms/StrideAssumptions.h"
#include <optional>

namespace qimeng {

/// The initialiser of an output that the kernel replaces.
struct OutputInit {
  mlir::Operation *op = nullptr; ///< null: none the kernel computes
  mlir::Value bias;              ///< a bias broadcast's bias, or null
  /// The bias's dynamic unit stride, to check at run time.
  llvm::SmallVector<StrideAssumption> assumed;
};

/// The initialiser of `c` for `use` alone: `c` is a fresh allocation and
/// its last user before `use` (every user in `use`'s block) is a
/// linalg.fill with +0.0 (the kernel's sums start from +0, as +0 + a
/// product does; a -0 fill would keep a -0 sum) or, with `biasDim`, a
/// broadcast of a unit-stride 1-D f32 bias along dimension `*biasDim` of
/// `c` (linalg.broadcast over every other dimension, or a linalg.generic
/// that copies `(..) -> (biasDim)` into the identity) that nothing writes
/// before `use`. Empty otherwise.
OutputInit outputInitOf(mlir::Value c, mlir::Operation *use,
                        std::optional<unsigned> biasDim);

/// The consumers the kernel's epilogue computes: one linalg.generic, or a
/// chain of them (each reading the previous one's output) as frontends
/// write a bias add and then an activation when linalg's elementwise
/// fusion has not merged them.
struct ElementwiseEpilogue {
  /// The generics, in order, to be replaced.
  llvm::SmallVector<mlir::Operation *, 2> ops;
  mlir::Value output; ///< the last one's output: the kernel writes it now
  mlir::Value bias;   ///< the bias it adds, or null
  /// The residual it adds (a buffer of the output's shape and type), or
  /// null. The kernel then accumulates: the call copies the residual into
  /// the output first, and the kernel adds its product to it (oneDNN's sum
  /// post-op), so the output is not overwritten.
  mlir::Value residual;
  Activation activation; ///< relu and its clamp, after the adds
  /// The result is rounded to bf16 last (arith.truncf): `output` is a bf16
  /// buffer of c's shape, not c's type.
  bool halfOutput = false;
  /// The allocations of the generics' outputs (or the subview of the last
  /// one's slice) that come after the producer, to move before it (the
  /// last one's the kernel writes, the others a guarded fallback's clones
  /// do).
  llvm::SmallVector<mlir::Operation *, 2> opsToHoist;
  /// The bias's dynamic unit stride, to check at run time.
  llvm::SmallVector<StrideAssumption> assumed;
};

/// The consumer of `c` (the output of `producer`, initialised by `cInit`
/// just before it, no other reader) that the epilogue computes, and then
/// each consumer of that consumer's output that the same epilogue can
/// still compute (the kernel's order: adds, relu, its bound, rounding;
/// each once): a
/// linalg.generic after `producer` in its block, all loops parallel,
/// reading `c` whole through the identity map and, if `biasAllowed`, an
/// f32 bias vector indexed by loop `biasDim` with a unit stride (its other
/// dimensions 1), and perhaps a
/// residual (another f32 buffer of c's shape, through the identity map,
/// defined before `producer`), neither written in between; its body the
/// sum of c and those (arith.addf in any order), then optionally relu as
/// arith.maximumf(x, +0.0) or select(cmpf ugt(x, +0.0), x, +0.0) (both keep
/// NaN and give +0 for -0), or the same with another finite floor than
/// +-0 (hardtanh's -1), or a floor that takes a NaN (torch-mlir's clamp:
/// select(cmpf ult(x, f), f, x); arith.maxnumf), bounded perhaps by
/// arith.minimumf with a constant above the floor (after a floor that
/// takes a NaN also select(cmpf ugt(x, b), b, x) or arith.minnumf; relu6;
/// in a later generic of a chain, after relu, arith.minimumf may come
/// alone), and more than c alone; its output a fresh
/// allocation of `c`'s type that nothing reads or writes before the
/// generic, whose sizes are known before `producer`, or `c` itself (the
/// generic rewrites the product in place). `goingAway` are users
/// of `c` or of a consumer's output to disregard: those the caller removes
/// with the rewrite (the tensor-level placement's to_tensor ops,
/// TensorPlacement.h). With
/// a `halfType` (bf16 or f16: the operands') the body may end in
/// arith.truncf to it (and may then be that alone), its output a fresh
/// buffer of that type and c's shape in any layout. With `sliceOutput`
/// (the caller's kernel writes c's shape in another layout) the last
/// generic's output may instead be a subview of a fresh allocation that
/// nothing touches through any view from `producer` to the generic and
/// `producer` does not read (a channel slice of a concatenation written in
/// place); its strides are the caller's to check. With `leakyAllowed` (the
/// caller's kernel takes it: f32, bf16 and f16, not 8-bit) a generic may
/// apply leaky relu instead of relu and its clamp (torch-mlir's, JAX's
/// and TOSA's forms). With `smoothAllowed` (the caller's kernel computes
/// them: a floating-point kernel whose ISA does,
/// isaAppliesSmoothActivations) a generic may apply a smooth activation
/// instead (sigmoid, silu, gelu, hardswish, tanh, mish, softplus,
/// hardsigmoid: SmoothActivationMatcher.h),
/// before a
/// truncf too (on the f32 sums, then rounded once).
std::optional<ElementwiseEpilogue>
matchElementwiseEpilogue(mlir::Operation *producer, mlir::Value c,
                         mlir::Operation *cInit, unsigned biasDim,
                         bool biasAllowed,
                         llvm::ArrayRef<mlir::Operation *> goingAway = {},
                         mlir::Type halfType = {}, bool sliceOutput = false,
                         bool leakyAllowed = false, bool smoothAllowed = false);

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_EPILOGUEMATCHER_H
