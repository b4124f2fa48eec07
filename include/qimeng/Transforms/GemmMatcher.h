//===- GemmMatcher.h - linalg.matmul -> GemmDesc -----------------*- C++
//-*-===//
#ifndef QIMENG_TRANSFORMS_GEMMMATCHER_H
#define QIMENG_TRANSFORMS_GEMMMATCHER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Support/LLVM.h"
#include "qimeng/Kernel/KernelDesc.h"
#include <string>

namespace qimeng {

/// Describes a linalg.matmul as a GemmDesc, or says why it cannot be
/// accelerated ("dynamic size in dimension M", "element type 'f16' is not
/// supported; need f32", ...). The reason has no "not accelerated:" prefix.
mlir::FailureOr<GemmDesc> describeMatmul(mlir::linalg::MatmulOp op,
                                         std::string &reason);

} // namespace qimeng

#endif // QIMENG_TRANSFORMS_GEMMMATCHER_H
