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

/// Describes linalg.conv_2d_nhwc_hwcf, conv_2d_nhwc_fhwc or
/// conv_2d_nchw_fchw on static f32 memrefs as a ConvDesc, or says why it
/// cannot be accelerated ("linalg.depthwise_conv_2d_nhwc_hwc is not
/// supported; ...", "dynamic size in the input", ...). The input may be a
/// strided view (a subview of a padded buffer) with a unit innermost
/// stride; the filter and output must be dense. Dynamic strides are
/// taken as dense and recorded in `assumed` (StrideAssumptions.h). The
/// reason has no "not accelerated:" prefix.
mlir::FailureOr<ConvDesc>
describeConv(mlir::linalg::LinalgOp op,
             llvm::SmallVectorImpl<StrideAssumption> &assumed,
             std::string &reason);

} // namespace qimeng

#endif // QIMENG_TRANSFORMS_CONVMATCHER_H
