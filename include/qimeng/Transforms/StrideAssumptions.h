//===- StrideAssumptions.h - Strides a kernel is specialised for -*- C++
//-*-===//
//
// Kernels need a unit inner stride, and convolutions take their strides as
// constants. Where a memref type leaves such a stride dynamic (the default
// function-boundary layout of one-shot-bufferize,
// `strided<[?, ?], offset: ?>`), the matchers assume
// the dense row-major stride of the operand's shape and record it here; the
// rewrite checks every assumption at run time and runs the original op when
// one fails (docs/FrontendIR.md). A GEMM's leading dimensions and batch
// strides are not assumed: the matcher takes them out, and the kernel (or
// the call's batch loop) reads them at run time.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TRANSFORMS_STRIDEASSUMPTIONS_H
#define QIMENG_TRANSFORMS_STRIDEASSUMPTIONS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include <cstdint>
#include <string>

namespace qimeng {

/// Dimension `dim` of `memref` has element stride `stride` (a guess the
/// type does not promise). A stride of ShapedType::kDynamic is one with
/// nothing to guess: the dense stride depends on a dynamic size.
struct StrideAssumption {
  mlir::Value memref;
  unsigned dim = 0;
  int64_t stride = 0;

  bool checkable() const { return stride != mlir::ShapedType::kDynamic; }
};

/// The element strides of `memref`, whose type must be a memref with a
/// strided layout: each static stride as the type gives it, each dynamic
/// one as the dense row-major stride of the shape, recorded in `assumed`
/// (unless the dimension has size 1, whose stride never moves an address).
/// Where the dense stride depends on a dynamic size, it stays
/// ShapedType::kDynamic and the assumption is not checkable: only a caller
/// that takes that stride at run time can use it. Sizes may be dynamic only
/// with `allowDynamicSizes`. Failure with a reason naming `name` otherwise.
mlir::FailureOr<llvm::SmallVector<int64_t>>
resolveStrides(mlir::Value memref, llvm::StringRef name,
               llvm::SmallVectorImpl<StrideAssumption> &assumed,
               std::string &reason, bool allowDynamicSizes = false);

/// An i1 that is true when every assumption holds at run time (the
/// strides read with memref.extract_strided_metadata); each must be
/// checkable.
mlir::Value buildAssumptionCheck(mlir::OpBuilder &b, mlir::Location loc,
                                 llvm::ArrayRef<StrideAssumption> assumed);

} // namespace qimeng

#endif // QIMENG_TRANSFORMS_STRIDEASSUMPTIONS_H
