//===- GemmMatcher.cpp - linalg.matmul -> GemmDesc
//--------------------------===//
//
// One reason per check, in the order a user would fix them.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Transforms/GemmMatcher.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace qimeng;

namespace {
/// Operand layout: row stride (leading dimension) of a 2-D memref whose
/// inner stride is 1.
FailureOr<int64_t> leadingDimension(MemRefType type, StringRef name,
                                    std::string &reason) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset))) {
    reason = ("operand " + name + " has a layout that is not strided").str();
    return failure();
  }
  if (strides[1] != 1) {
    reason = ShapedType::isDynamic(strides[1])
                 ? ("dynamic inner stride in operand " + name).str()
                 : llvm::formatv("non-unit inner stride {0} in operand {1}",
                                 strides[1], name)
                       .str();
    return failure();
  }
  if (ShapedType::isDynamic(strides[0])) {
    reason =
        ("dynamic leading dimension (row stride) in operand " + name).str();
    return failure();
  }
  return strides[0];
}

/// Matches `map` results against (d[x], d[y]); returns 0 for (x, y), 1 for
/// (y, x), -1 otherwise.
int matchPair(AffineMap map, unsigned x, unsigned y) {
  if (map.getNumResults() != 2)
    return -1;
  auto r0 = dyn_cast<AffineDimExpr>(map.getResult(0));
  auto r1 = dyn_cast<AffineDimExpr>(map.getResult(1));
  if (!r0 || !r1)
    return -1;
  if (r0.getPosition() == x && r1.getPosition() == y)
    return 0;
  if (r0.getPosition() == y && r1.getPosition() == x)
    return 1;
  return -1;
}
} // namespace

FailureOr<GemmDesc> qimeng::describeMatmul(linalg::MatmulOp op,
                                           std::string &reason) {
  if (!op.hasPureBufferSemantics()) {
    reason = "tensor operands are not supported yet; bufferize first "
             "(--one-shot-bufferize)";
    return failure();
  }
  Value a = op.getDpsInputOperand(0)->get();
  Value b = op.getDpsInputOperand(1)->get();
  Value c = op.getDpsInitOperand(0)->get();
  auto aType = dyn_cast<MemRefType>(a.getType());
  auto bType = dyn_cast<MemRefType>(b.getType());
  auto cType = dyn_cast<MemRefType>(c.getType());
  if (!aType || !bType || !cType) {
    reason = "operands are not ranked memrefs";
    return failure();
  }
  for (auto [type, name] : {std::pair<MemRefType, StringRef>{aType, "A"},
                            {bType, "B"},
                            {cType, "C"}}) {
    if (!type.getElementType().isF32()) {
      std::string typeName;
      llvm::raw_string_ostream os(typeName);
      type.getElementType().print(os);
      reason = llvm::formatv("element type '{0}' of operand {1} is not "
                             "supported; need f32",
                             typeName, name)
                   .str();
      return failure();
    }
  }

  // Dimensions from the indexing maps: linalg.matmul carries transposes
  // (and broadcasts) in `indexing_maps`.
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(cast<linalg::LinalgOp>(op.getOperation()));
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || !dims->batch.empty()) {
    reason = "indexing maps are not a plain (m, n, k) contraction; batch and "
             "broadcast dimensions are not supported";
    return failure();
  }
  unsigned m = dims->m[0], n = dims->n[0], k = dims->k[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  int aOrder = matchPair(maps[0], m, k);
  int bOrder = matchPair(maps[1], k, n);
  int cOrder = matchPair(maps[2], m, n);
  if (aOrder < 0 || bOrder < 0) {
    reason = "indexing maps of A or B are not (m, k)/(k, m) and (k, n)/(n, "
             "k)";
    return failure();
  }
  if (cOrder != 0) {
    reason = "output indexing map is not (m, n)";
    return failure();
  }

  GemmDesc d;
  d.transA = aOrder == 1;
  d.transB = bOrder == 1;
  auto dimSize = [](MemRefType t, unsigned i) { return t.getDimSize(i); };
  int64_t sizes[3] = {dimSize(cType, 0), dimSize(cType, 1),
                      dimSize(aType, d.transA ? 0 : 1)};
  const char *names[3] = {"M", "N", "K"};
  for (int i = 0; i < 3; ++i) {
    if (ShapedType::isDynamic(sizes[i])) {
      reason = llvm::formatv("dynamic size in dimension {0}", names[i]).str();
      return failure();
    }
  }
  if (aType.getNumDynamicDims() || bType.getNumDynamicDims()) {
    reason = "dynamic size in operand A or B";
    return failure();
  }
  d.m = sizes[0];
  d.n = sizes[1];
  d.k = sizes[2];
  if (d.m == 0 || d.n == 0 || d.k == 0) {
    reason = "empty matmul (a dimension is 0)";
    return failure();
  }
  auto lda = leadingDimension(aType, "A", reason);
  if (failed(lda))
    return failure();
  auto ldb = leadingDimension(bType, "B", reason);
  if (failed(ldb))
    return failure();
  auto ldc = leadingDimension(cType, "C", reason);
  if (failed(ldc))
    return failure();
  d.lda = *lda;
  d.ldb = *ldb;
  d.ldc = *ldc;
  if (auto err = d.verify()) {
    reason = llvm::toString(std::move(err));
    return failure();
  }
  return d;
}
