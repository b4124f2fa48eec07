//===- ConstantForms.h - constants in elementwise bodies --------*- C++ -*-===//
//
// Private to lib/Transforms: the finite constants and the min, max and
// select forms with a constant that frontends write in elementwise
// bodies (relu's floor and bound, torch-mlir's clamp), shared by the
// epilogue matcher (EpilogueMatcher.cpp) and the smooth activations'
// (SmoothActivationMatcher.cpp: hardswish's relu6).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_CONSTANTFORMS_H
#define QIMENG_LIB_TRANSFORMS_CONSTANTFORMS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <optional>
#include <utility>

namespace qimeng {

/// A finite f32 constant other than -0, or nullopt.
inline std::optional<float> finiteConstant(mlir::Value x) {
  mlir::FloatAttr attr;
  if (!mlir::matchPattern(x, mlir::m_Constant(&attr)) ||
      !attr.getType().isF32() || !attr.getValue().isFinite() ||
      attr.getValue().isNegZero())
    return std::nullopt;
  return attr.getValue().convertToFloat();
}

/// A binary op's operands `lhs` and `rhs`, one of them a finite constant
/// (finiteConstant), in either order: the constant and the other operand.
inline std::optional<std::pair<float, mlir::Value>>
withConstant(mlir::Value lhs, mlir::Value rhs) {
  if (std::optional<float> c = finiteConstant(rhs))
    return std::pair(*c, lhs);
  if (std::optional<float> c = finiteConstant(lhs))
    return std::pair(*c, rhs);
  return std::nullopt;
}

/// `s` as select(cmpf `pred`(x, c), `x or c`, `c or x`): (c, x), the
/// constant selected when the comparison holds (`constantIfTrue`), the
/// select and the compare added to `used`.
inline std::optional<std::pair<float, mlir::Value>>
selectForm(mlir::Value s, mlir::arith::CmpFPredicate pred, bool constantIfTrue,
           llvm::SmallPtrSetImpl<mlir::Operation *> &used) {
  auto select = s.getDefiningOp<mlir::arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<mlir::arith::CmpFOp>()
                    : mlir::arith::CmpFOp();
  if (!cmp || cmp.getPredicate() != pred)
    return std::nullopt;
  std::optional<float> c = finiteConstant(cmp.getRhs());
  mlir::Value chosen =
      constantIfTrue ? select.getTrueValue() : select.getFalseValue();
  mlir::Value other =
      constantIfTrue ? select.getFalseValue() : select.getTrueValue();
  if (!c || finiteConstant(chosen) != c || cmp.getLhs() != other)
    return std::nullopt;
  used.insert(select);
  used.insert(cmp);
  return std::pair(*c, other);
}

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_CONSTANTFORMS_H
