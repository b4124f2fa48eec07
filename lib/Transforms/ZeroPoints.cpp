//===- ZeroPoints.cpp -----------------------------------------------------===//
#include "ZeroPoints.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace qimeng;

namespace {

/// `v`'s size along `dim` (a tensor or a memref), as an index.
Value sizeOf(OpBuilder &b, Location loc, Value v, int64_t dim) {
  if (isa<RankedTensorType>(v.getType()))
    return tensor::DimOp::create(b, loc, v, dim);
  return memref::DimOp::create(b, loc, v, dim);
}

/// A zero-filled sum of `shape` (C's sizes along `dims`) of `element`
/// type: a tensor, or (C a buffer) a stack allocation of the function.
Value zeroSums(OpBuilder &b, Location loc, Value c, ArrayRef<int64_t> dims,
               Type element) {
  auto shaped = cast<ShapedType>(c.getType());
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamic;
  for (int64_t d : dims) {
    shape.push_back(shaped.getDimSize(d));
    if (shaped.isDynamicDim(d))
      dynamic.push_back(sizeOf(b, loc, c, d));
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  if (isa<RankedTensorType>(c.getType())) {
    Value empty = tensor::EmptyOp::create(b, loc, shape, element, dynamic);
    return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
        .getResult(0);
  }
  Value sums = memref::AllocaOp::create(b, loc, MemRefType::get(shape, element),
                                        dynamic);
  linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{sums});
  return sums;
}

/// `v` (an integer scalar) as `element`.
Value castTo(OpBuilder &b, Location loc, Value v, Type element) {
  unsigned from = v.getType().getIntOrFloatBitWidth();
  unsigned to = element.getIntOrFloatBitWidth();
  if (from < to)
    return arith::ExtSIOp::create(b, loc, element, v);
  if (from > to)
    return arith::TruncIOp::create(b, loc, element, v);
  return v;
}

/// sums[...] += sext(x[...]) over the reduction dimension: `maps` are x's
/// and the sums' over the loop's dimensions, the last a reduction.
Value sumOver(OpBuilder &b, Location loc, Value x, Value sums,
              ArrayRef<AffineMap> maps) {
  unsigned loops = maps[0].getNumDims();
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  Type element = getElementTypeOrSelf(sums.getType());
  SmallVector<Type> results;
  if (isa<RankedTensorType>(sums.getType()))
    results.push_back(sums.getType());
  auto generic = linalg::GenericOp::create(
      b, loc, results, ValueRange{x}, ValueRange{sums}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value wide = arith::ExtSIOp::create(nb, nl, element, args[0]);
        Value sum = arith::AddIOp::create(nb, nl, args[1], wide);
        linalg::YieldOp::create(nb, nl, sum);
      });
  return results.empty() ? sums : generic.getResult(0);
}

/// Whether `op` runs in a loop of its function. (scf.for is an automatic
/// allocation scope, but the stock lowering frees nothing per iteration.)
bool insideLoop(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (isa<FunctionOpInterface>(p))
      return false;
    if (isa<LoopLikeOpInterface>(p))
      return true;
  }
  return false;
}

/// Expands one quantized contraction (the header's comment). `batch`: a
/// quantized_batch_matmul.
void expand(linalg::LinalgOp op, bool batch) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  Value a = op.getDpsInputs()[0], bOperand = op.getDpsInputs()[1];
  Value aZp = op.getDpsInputs()[2], bZp = op.getDpsInputs()[3];
  Value c = op.getDpsInits()[0];
  const bool onTensors = isa<RankedTensorType>(c.getType());
  Type element = getElementTypeOrSelf(c.getType());

  // The plain contraction where the op was, so that a zero fill of C
  // right before it still folds into its kernel.
  Operation *plain =
      batch ? linalg::BatchMatmulOp::create(
                  b, loc, onTensors ? TypeRange{c.getType()} : TypeRange{},
                  ValueRange{a, bOperand}, ValueRange{c})
                  .getOperation()
            : linalg::MatmulOp::create(
                  b, loc, onTensors ? TypeRange{c.getType()} : TypeRange{},
                  ValueRange{a, bOperand}, ValueRange{c})
                  .getOperation();
  Value product = onTensors ? plain->getResult(0) : c;
  const bool aZpZero = matchPattern(aZp, m_Zero());
  const bool bZpZero = matchPattern(bZp, m_Zero());
  if (aZpZero && bZpZero) {
    if (onTensors)
      op->getResult(0).replaceAllUsesWith(product);
    op->erase();
    return;
  }

  const unsigned r = batch ? 1 : 0; // C's first row dimension
  auto map = [&](unsigned dims, ArrayRef<unsigned> results) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : results)
      exprs.push_back(getAffineDimExpr(d, ctx));
    return AffineMap::get(dims, 0, exprs, ctx);
  };
  // Loops (batch, rows or columns, k); C's dimensions (batch, m, n).
  SmallVector<unsigned> outer;
  if (batch)
    outer.push_back(0);
  auto with = [&](std::initializer_list<unsigned> tail) {
    SmallVector<unsigned> dims(outer);
    dims.append(tail.begin(), tail.end());
    return dims;
  };
  const unsigned loops = r + 2;
  Value rowSums, colSums;
  if (!bZpZero) {
    // rowsum(A)[(b,) m] = sum_k A[(b,) m, k]: loops ((b,) m, k).
    SmallVector<int64_t> dims(outer.begin(), outer.end());
    dims.push_back(r);
    rowSums = sumOver(b, loc, a, zeroSums(b, loc, c, dims, element),
                      {map(loops, with({r, r + 1})), map(loops, with({r}))});
  }
  if (!aZpZero) {
    // colsum(B)[(b,) n] = sum_k B[(b,) k, n]: loops ((b,) n, k).
    SmallVector<int64_t> dims(outer.begin(), outer.end());
    dims.push_back(r + 1);
    colSums = sumOver(b, loc, bOperand, zeroSums(b, loc, c, dims, element),
                      {map(loops, with({r + 1, r})), map(loops, with({r}))});
  }
  // K * a_zp * b_zp, and the zero points, as C's element type.
  Value aZpC = castTo(b, loc, aZp, element);
  Value bZpC = castTo(b, loc, bZp, element);
  Value k =
      arith::IndexCastOp::create(b, loc, element, sizeOf(b, loc, a, r + 1));
  Value kTerm = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, k, aZpC), bZpC);

  // C[(b,) m, n] += K a_zp b_zp - b_zp rowsum[(b,) m] - a_zp colsum[(b,) n].
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  if (rowSums) {
    inputs.push_back(rowSums);
    maps.push_back(map(loops, with({r})));
  }
  if (colSums) {
    inputs.push_back(colSums);
    maps.push_back(map(loops, with({r + 1})));
  }
  maps.push_back(map(loops, with({r, r + 1})));
  SmallVector<Type> results;
  if (onTensors)
    results.push_back(c.getType());
  auto correction = linalg::GenericOp::create(
      b, loc, results, inputs, ValueRange{product}, maps,
      SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value v = arith::AddIOp::create(nb, nl, args.back(), kTerm);
        unsigned i = 0;
        if (rowSums)
          v = arith::SubIOp::create(
              nb, nl, v, arith::MulIOp::create(nb, nl, bZpC, args[i++]));
        if (colSums)
          v = arith::SubIOp::create(
              nb, nl, v, arith::MulIOp::create(nb, nl, aZpC, args[i++]));
        linalg::YieldOp::create(nb, nl, v);
      });
  if (onTensors)
    op->getResult(0).replaceAllUsesWith(correction.getResult(0));
  op->erase();
}

} // namespace

unsigned qimeng::expandZeroPoints(ModuleOp module) {
  SmallVector<std::pair<linalg::LinalgOp, bool>> ops;
  module.walk([&](Operation *op) {
    if (isa<linalg::QuantizedMatmulOp>(op))
      ops.push_back({cast<linalg::LinalgOp>(op), false});
    else if (isa<linalg::QuantizedBatchMatmulOp>(op))
      ops.push_back({cast<linalg::LinalgOp>(op), true});
  });
  unsigned expanded = 0;
  for (auto [op, batch] : ops) {
    // i8 operands into an i32 C, scalar integer zero points; anything else
    // stays, with a remark.
    Type cType = getElementTypeOrSelf(op.getDpsInits()[0].getType());
    auto isI8 = [](Value v) {
      return getElementTypeOrSelf(v.getType()).isInteger(8);
    };
    auto isScalarInt = [](Value v) { return isa<IntegerType>(v.getType()); };
    if (!isI8(op.getDpsInputs()[0]) || !isI8(op.getDpsInputs()[1]) ||
        !cType.isInteger(32) || !isScalarInt(op.getDpsInputs()[2]) ||
        !isScalarInt(op.getDpsInputs()[3])) {
      op->emitRemark() << "not accelerated: " << op->getName()
                       << ": the kernels take i8 operands into an i32 "
                          "result, with integer scalar zero points";
      continue;
    }
    if (!op.hasPureTensorSemantics() && !op.hasPureBufferSemantics())
      continue; // the pass says why for mixed operands
    // On buffers the sums are stack allocations of the enclosing function
    // (an alloca_scope would not survive scf-to-cf in stock pipelines):
    // not inside a loop, where each iteration would take more stack.
    if (op.hasPureBufferSemantics() && insideLoop(op)) {
      op->emitRemark()
          << "not accelerated: " << op->getName()
          << " with zero points inside a loop on buffers (the zero points' "
             "sums would take stack at every iteration); run the pass on "
             "tensors, before bufferization";
      continue;
    }
    expand(op, batch);
    ++expanded;
  }
  return expanded;
}
