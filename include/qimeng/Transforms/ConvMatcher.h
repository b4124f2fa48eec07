//===- ConvMatcher.h - linalg.conv_2d_* -> ConvDesc -------------*- C++ -*-===//
#ifndef QIMENG_TRANSFORMS_CONVMATCHER_H
#define QIMENG_TRANSFORMS_CONVMATCHER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Support/LLVM.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Transforms/StrideAssumptions.h"
#include <string>

namespace qimeng {

/// Whether `op` is a convolution the pass looks at: every linalg op with
/// the convolution interface (so that the ones it cannot take get a
/// remark saying why).
bool isConvolution(mlir::linalg::LinalgOp op);

/// What the kernel replaces around a convolution: the op that initialises
/// its output for it alone, a zero linalg.fill (ConvDesc::overwrite) or a
/// broadcast of a bias along the output channels (overwrite and
/// ConvDesc::bias, the bias in `bias`); then perhaps the elementwise
/// consumer of that output (a bias per channel, a residual and/or relu,
/// ConvDesc::relu), whose output the kernel writes instead.
struct ConvInit {
  mlir::Operation *op = nullptr;
  mlir::Value bias;
  /// The fused consumers (ElementwiseEpilogue::ops), or empty.
  llvm::SmallVector<mlir::Operation *, 2> epilogueOps;
  mlir::Value output; ///< the last consumer's output, or null
  /// A residual the consumer adds: copied into `output` before the kernel,
  /// which then accumulates (ConvDesc::overwrite false); or null.
  mlir::Value residual;
  /// The consumers' output allocations (or the last one's slice) that came
  /// after the convolution.
  llvm::SmallVector<mlir::Operation *, 2> opsToHoist;
  /// A bf16 or f16 convolution's consumer that ends in arith.truncf to the
  /// operands' type (torch-mlir's bf16 conv2d): its dense 16-bit output,
  /// which the kernel writes (ConvDesc::halfOutput), the f32 output then
  /// its scratch; or null.
  mlir::Value halfOutput;
};

/// What the target's convolution kernels can take (describeConv).
struct ConvMatchOptions {
  /// Fold a bias broadcast into the output (and fuse consumers).
  bool foldBiasInit = true;
  /// Fuse a smooth activation (sigmoid, silu, gelu, hardswish, tanh, mish,
  /// softplus, hardsigmoid) into a floating-point kernel where the ISA's
  /// kernels compute one (isaAppliesSmoothActivations).
  bool smoothActivations = false;
  /// Read the input's strides at run time (isaReadsConvStridesAtRunTime).
  bool stridesAtRunTime = false;
  /// Write an nhwc f32 output whose pixels lie more than F apart
  /// (ConvDesc::outputPixelStride; isaWritesStridedConvOutput).
  bool stridedOutput = false;
};

/// Describes linalg.conv_2d_nhwc_hwcf, conv_2d_nhwc_fhwc or
/// conv_2d_nchw_fchw on f32 memrefs as a ConvDesc, or says why it
/// cannot be accelerated ("linalg.depthwise_conv_2d_nhwc_hwc is not
/// supported; ...", "dynamic size in the input", ...). The input may be a
/// strided view (a subview of a padded buffer) with a unit innermost
/// stride; the filter must be dense, and the output dense but, with
/// `stridedOutput` (nhwc, f32), for its static pixel stride (a channel
/// slice of a wider buffer). With `stridesAtRunTime`
/// (the target's kernels can read them, isaReadsConvStridesAtRunTime),
/// input strides the type leaves dynamic make the kernel read all of them
/// at run time (ConvDesc::runtimeStrides, the dense ones as its
/// representative); the unit inner stride, an nhwc input's w stride (C)
/// and other dynamic strides are taken as dense and recorded in `assumed`
/// (StrideAssumptions.h). A dynamic batch (dimension 0 of the input and
/// output; any other dynamic size is refused) describes one image
/// (ConvDesc::n = 1), sets `*imageCalls` to ShapedType::kDynamic when
/// given, and leaves the batch strides to the caller's loop; so does a
/// static batch whose output images lie further apart than one image (a
/// channel slice of a wider nchw buffer), `*imageCalls` then the batch
/// (1 otherwise: one call for all images). When
/// `init` is given, an initialiser of a fresh output just before the op (a
/// zero fill; with `foldBiasInit`, a bias broadcast: linalg.broadcast, or a
/// generic copying `(n, ...) -> (channel)`) is described too and returned
/// there, and then (with `foldBiasInit`) an elementwise consumer the
/// epilogue computes (EpilogueMatcher.h), for bf16 and f16 one that may
/// end by rounding into a 16-bit buffer, dense or, with a call an image,
/// each image dense (ConvInit::halfOutput). The reason has no "not
/// accelerated:" prefix.
mlir::FailureOr<ConvDesc> describeConv(
    mlir::linalg::LinalgOp op, llvm::SmallVectorImpl<StrideAssumption> &assumed,
    std::string &reason, ConvInit *init = nullptr,
    const ConvMatchOptions &options = {}, int64_t *imageCalls = nullptr);

} // namespace qimeng

#endif // QIMENG_TRANSFORMS_CONVMATCHER_H
