//===- StrideAssumptions.cpp - Strides a kernel is specialised for --------===//
#include "qimeng/Transforms/StrideAssumptions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace qimeng;

FailureOr<SmallVector<int64_t>>
qimeng::resolveStrides(Value memref, StringRef name,
                       SmallVectorImpl<StrideAssumption> &assumed,
                       std::string &reason, bool allowDynamicSizes) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type) {
    reason = ("the " + name + " is not a ranked memref").str();
    return failure();
  }
  if (!type.hasStaticShape() && !allowDynamicSizes) {
    reason = ("dynamic size in the " + name).str();
    return failure();
  }
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset))) {
    reason = ("the " + name + " has a layout that is not strided").str();
    return failure();
  }
  ArrayRef<int64_t> shape = type.getShape();
  int64_t dense = 1;
  SmallVector<StrideAssumption> mine;
  for (size_t i = shape.size(); i-- > 0;) {
    if (ShapedType::isDynamic(strides[i])) {
      strides[i] = dense;
      if (shape[i] != 1)
        mine.push_back({memref, static_cast<unsigned>(i), dense});
    }
    // Past a dynamic size the dense stride is unknown.
    dense = ShapedType::isDynamic(dense) || ShapedType::isDynamic(shape[i])
                ? ShapedType::kDynamic
                : dense * shape[i];
  }
  assumed.append(mine.rbegin(), mine.rend());
  return strides;
}

Value qimeng::buildAssumptionCheck(OpBuilder &b, Location loc,
                                   ArrayRef<StrideAssumption> assumed) {
  Value all = arith::ConstantIntOp::create(b, loc, 1, 1);
  // One metadata read per memref, in the order they were assumed.
  SmallVector<std::pair<Value, memref::ExtractStridedMetadataOp>> metadata;
  for (const StrideAssumption &a : assumed) {
    memref::ExtractStridedMetadataOp meta;
    for (auto &[value, op] : metadata)
      if (value == a.memref)
        meta = op;
    if (!meta) {
      meta = memref::ExtractStridedMetadataOp::create(b, loc, a.memref);
      metadata.emplace_back(a.memref, meta);
    }
    Value expected = arith::ConstantIndexOp::create(b, loc, a.stride);
    Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       meta.getStrides()[a.dim], expected);
    all = arith::AndIOp::create(b, loc, all, same);
  }
  return all;
}
