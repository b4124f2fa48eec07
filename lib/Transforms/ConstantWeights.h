//===- ConstantWeights.h - B packed at compile time -------------*- C++ -*-===//
//
// Private to lib/Transforms: a contraction's or convolution's B (weights,
// a filter) that is a constant of the module is packed once, at compile
// time, into the layout its kernel reads (PrepackedB.h), as a new constant
// global: the kernel then runs no PACK B at each call, as oneDNN reorders
// constant weights once.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_CONSTANTWEIGHTS_H
#define QIMENG_LIB_TRANSFORMS_CONSTANTWEIGHTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "qimeng/Kernel/PrepackedB.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include <string>

namespace qimeng {

/// The elements of `memref` when it is a constant of the module: a
/// memref.get_global of a constant memref.global with an initial value, or
/// (the pass on tensors) a bufferization.to_buffer of an arith.constant
/// (dense in row-major order once bufferized, whatever layout the buffer's
/// type states); null otherwise.
mlir::DenseElementsAttr constantOperandValue(mlir::Value memref);

/// Packed constants of one module, each created once per value, layout and
/// the way the op reads it (B transposed or not, its sizes and ldb).
class ConstantWeights {
public:
  explicit ConstantWeights(mlir::ModuleOp module) : module(module) {}

  /// A memref<bytes x i8> (64-byte aligned) holding `value`, B of `desc`
  /// as stored, packed into `layout` (packB): a memref.get_global at `b`'s
  /// insertion point of a private constant global, created the first time.
  mlir::Value packed(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::DenseElementsAttr value, const GemmDesc &desc,
                     const PrepackedB &layout);

  /// Records `source`, an operand whose constant was packed, for
  /// eraseUnused.
  void noteSource(mlir::Value source);

  /// Erases what the rewritten ops left unused: the get_global (or
  /// to_buffer and arith.constant) ops of the constants packed, and a
  /// global no one refers to any more.
  void eraseUnused();

private:
  mlir::ModuleOp module;
  llvm::DenseMap<std::pair<mlir::Attribute, mlir::Attribute>, std::string>
      globals; ///< (value, layout and B's form as a string) -> symbol
  llvm::SetVector<mlir::Value> sources; ///< the operands packed
};

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_CONSTANTWEIGHTS_H
