//===- ZeroPoints.cpp -----------------------------------------------------===//
#include "ZeroPoints.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace qimeng;

namespace {

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
      dynamic.push_back(linalg::createOrFoldDimOp(b, loc, c, d));
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

/// sums[...] += sext(x[...]) (x itself if of the sums' type) over the loops
/// `iterators` marks reductions:
/// `maps` are the inputs' (x first; any other input only gives a loop its
/// range, as a pooling op's window does) and the sums' last.
Value sumOver(OpBuilder &b, Location loc, ValueRange inputs, Value sums,
              ArrayRef<AffineMap> maps,
              ArrayRef<utils::IteratorType> iterators) {
  Type element = getElementTypeOrSelf(sums.getType());
  SmallVector<Type> results;
  if (isa<RankedTensorType>(sums.getType()))
    results.push_back(sums.getType());
  auto generic = linalg::GenericOp::create(
      b, loc, results, inputs, ValueRange{sums}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value wide =
            args.front().getType() == element
                ? args.front()
                : arith::ExtSIOp::create(nb, nl, element, args.front());
        Value sum = arith::AddIOp::create(nb, nl, args.back(), wide);
        linalg::YieldOp::create(nb, nl, sum);
      });
  return results.empty() ? sums : generic.getResult(0);
}

/// One term of the correction: - zeroPoint * sums[map].
struct Term {
  Value sums;
  AffineMap map;
  Value zeroPoint;
};

/// out[...] += constant - sum of the terms, over out's dimensions (all
/// parallel); the updated out (a tensor) or null (a buffer).
Value correct(OpBuilder &b, Location loc, Value out, ArrayRef<Term> terms,
              Value constant) {
  auto outType = cast<ShapedType>(out.getType());
  const unsigned loops = outType.getRank();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (const Term &t : terms) {
    inputs.push_back(t.sums);
    maps.push_back(t.map);
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(loops, b.getContext()));
  SmallVector<Type> results;
  if (isa<RankedTensorType>(outType))
    results.push_back(outType);
  auto generic = linalg::GenericOp::create(
      b, loc, results, inputs, ValueRange{out}, maps,
      SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value v = arith::AddIOp::create(nb, nl, args.back(), constant);
        for (size_t i = 0; i < terms.size(); ++i)
          v = arith::SubIOp::create(
              nb, nl, v,
              arith::MulIOp::create(nb, nl, terms[i].zeroPoint, args[i]));
        linalg::YieldOp::create(nb, nl, v);
      });
  return results.empty() ? Value() : generic.getResult(0);
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

/// The quantized ops this file expands, and how their operands lie.
enum class Quantized { Matmul, BatchMatmul, NhwcHwcf, NhwcFhwc, NchwFchw };

std::optional<Quantized> quantizedKind(Operation *op) {
  if (isa<linalg::QuantizedMatmulOp>(op))
    return Quantized::Matmul;
  if (isa<linalg::QuantizedBatchMatmulOp>(op))
    return Quantized::BatchMatmul;
  if (isa<linalg::Conv2DNhwcHwcfQOp>(op))
    return Quantized::NhwcHwcf;
  if (isa<linalg::Conv2DNhwcFhwcQOp>(op))
    return Quantized::NhwcFhwc;
  if (isa<linalg::Conv2DNchwFchwQOp>(op))
    return Quantized::NchwFchw;
  return std::nullopt;
}

/// The op without zero points on the same operands, where `op` is.
Operation *plainOp(OpBuilder &b, linalg::LinalgOp op, Quantized kind) {
  Location loc = op.getLoc();
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1];
  Value out = op.getDpsInits()[0];
  SmallVector<Type> results;
  if (isa<RankedTensorType>(out.getType()))
    results.push_back(out.getType());
  SmallVector<Value> ins{x, w}, outs{out};
  auto strides = [&] { return op->getAttr("strides"); };
  auto dilations = [&] { return op->getAttr("dilations"); };
  switch (kind) {
  case Quantized::Matmul:
    return linalg::MatmulOp::create(b, loc, results, ins, outs);
  case Quantized::BatchMatmul:
    return linalg::BatchMatmulOp::create(b, loc, results, ins, outs);
  case Quantized::NhwcHwcf:
    return linalg::Conv2DNhwcHwcfOp::create(b, loc, results, ins, outs,
                                            strides(), dilations());
  case Quantized::NhwcFhwc:
    return linalg::Conv2DNhwcFhwcOp::create(b, loc, results, ins, outs,
                                            strides(), dilations());
  case Quantized::NchwFchw:
    return linalg::Conv2DNchwFchwOp::create(b, loc, results, ins, outs,
                                            strides(), dilations());
  }
  llvm_unreachable("a quantized kind");
}

/// The sums a contraction's zero points need and their correction terms
/// (the header's comment); returns K, the products a result sums.
Value contractionTerms(OpBuilder &b, Location loc, Value a, Value bIn, Value c,
                       Value aZp, Value bZp, bool batch,
                       SmallVectorImpl<Term> &terms) {
  MLIRContext *ctx = b.getContext();
  Type element = getElementTypeOrSelf(c.getType());
  const unsigned r = batch ? 1 : 0; // C's first row dimension
  const unsigned loops = r + 2;
  // Loops ((b,) rows or columns, k) for the sums; C's ((b,) m, n).
  auto with = [&](std::initializer_list<unsigned> tail) {
    SmallVector<unsigned> dims;
    if (batch)
      dims.push_back(0);
    dims.append(tail.begin(), tail.end());
    return dims;
  };
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  auto sumsOfC = [&](unsigned dim) {
    SmallVector<int64_t> dims;
    if (batch)
      dims.push_back(0);
    dims.push_back(dim);
    return zeroSums(b, loc, c, dims, element);
  };
  if (bZp) {
    // rowsum(A)[(b,) m] = sum_k A[(b,) m, k].
    Value sums = sumOver(
        b, loc, a, sumsOfC(r),
        {AffineMap::getMultiDimMapWithTargets(loops, with({r, r + 1}), ctx),
         AffineMap::getMultiDimMapWithTargets(loops, with({r}), ctx)},
        iterators);
    terms.push_back(
        {sums, AffineMap::getMultiDimMapWithTargets(loops, with({r}), ctx),
         bZp});
  }
  if (aZp) {
    // colsum(B)[(b,) n] = sum_k B[(b,) k, n].
    Value sums = sumOver(
        b, loc, bIn, sumsOfC(r + 1),
        {AffineMap::getMultiDimMapWithTargets(loops, with({r + 1, r}), ctx),
         AffineMap::getMultiDimMapWithTargets(loops, with({r}), ctx)},
        iterators);
    terms.push_back(
        {sums, AffineMap::getMultiDimMapWithTargets(loops, with({r + 1}), ctx),
         aZp});
  }
  return arith::IndexCastOp::create(
      b, loc, element, linalg::createOrFoldDimOp(b, loc, a, r + 1));
}

/// A convolution's: the sum of each output pixel's window of the input
/// (for the filter's zero point) and of each filter (for the input's);
/// returns KH * KW * C.
Value convolutionTerms(OpBuilder &b, Location loc, linalg::LinalgOp op,
                       Quantized kind, Value xZp, Value wZp,
                       SmallVectorImpl<Term> &terms) {
  MLIRContext *ctx = b.getContext();
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1];
  Value out = op.getDpsInits()[0];
  Type element = getElementTypeOrSelf(out.getType());
  const bool nchw = kind == Quantized::NchwFchw;
  // The filter's KH, KW and C dimensions.
  const unsigned fKh = kind == Quantized::NhwcHwcf   ? 0
                       : kind == Quantized::NhwcFhwc ? 1
                                                     : 2;
  const unsigned fC = kind == Quantized::NhwcHwcf   ? 2
                      : kind == Quantized::NhwcFhwc ? 3
                                                    : 1;
  // The output's pixel (n, oh, ow) and channel dimensions.
  const SmallVector<unsigned> pixel =
      nchw ? SmallVector<unsigned>{0, 2, 3} : SmallVector<unsigned>{0, 1, 2};
  const unsigned channel = nchw ? 1 : 3;
  if (wZp) {
    // window[n, oh, ow] = sum over (kh, kw, c) of the input under it, in
    // two steps: each input pixel's sum over its channels (loops n, h, w,
    // c), then each window's of those (loops n, oh, ow, kh, kw, a [KH, KW]
    // operand giving kh and kw their ranges, its values unread, as a
    // pooling op's window): C times less work than summing the window's
    // KH * KW * C values at every output pixel.
    AffineExpr n = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
               d2 = getAffineDimExpr(2, ctx), d3 = getAffineDimExpr(3, ctx),
               d4 = getAffineDimExpr(4, ctx);
    SmallVector<int64_t> xPixel =
        nchw ? SmallVector<int64_t>{0, 2, 3} : SmallVector<int64_t>{0, 1, 2};
    SmallVector<utils::IteratorType> channelLoops(
        3, utils::IteratorType::parallel);
    channelLoops.push_back(utils::IteratorType::reduction);
    Value pixelSums =
        sumOver(b, loc, x, zeroSums(b, loc, x, xPixel, element),
                {AffineMap::get(4, 0,
                                nchw ? ArrayRef<AffineExpr>{n, d3, d1, d2}
                                     : ArrayRef<AffineExpr>{n, d1, d2, d3},
                                ctx),
                 AffineMap::getMultiDimMapWithTargets(4, {0, 1, 2}, ctx)},
                channelLoops);
    auto strides = op->getAttrOfType<DenseIntElementsAttr>("strides");
    auto dilations = op->getAttrOfType<DenseIntElementsAttr>("dilations");
    auto at = [](DenseIntElementsAttr a, int i) {
      return a ? (*(a.getValues<int64_t>().begin() + i)) : int64_t(1);
    };
    AffineMap pixelMap =
        AffineMap::get(5, 0,
                       {n, d1 * at(strides, 0) + d3 * at(dilations, 0),
                        d2 * at(strides, 1) + d4 * at(dilations, 1)},
                       ctx);
    auto wType = cast<ShapedType>(w.getType());
    SmallVector<int64_t> windowShape{wType.getDimSize(fKh),
                                     wType.getDimSize(fKh + 1)};
    SmallVector<Value> windowSizes;
    for (unsigned d : {fKh, fKh + 1})
      if (wType.isDynamicDim(d))
        windowSizes.push_back(linalg::createOrFoldDimOp(b, loc, w, d));
    Type i8 = b.getI8Type();
    Value window =
        isa<RankedTensorType>(out.getType())
            ? Value(
                  tensor::EmptyOp::create(b, loc, windowShape, i8, windowSizes))
            : Value(memref::AllocaOp::create(
                  b, loc, MemRefType::get(windowShape, i8), windowSizes));
    SmallVector<utils::IteratorType> windowLoops(3,
                                                 utils::IteratorType::parallel);
    windowLoops.append(2, utils::IteratorType::reduction);
    Value sums =
        sumOver(b, loc, ValueRange{pixelSums, window},
                zeroSums(b, loc, out, {pixel[0], pixel[1], pixel[2]}, element),
                {pixelMap, AffineMap::getMultiDimMapWithTargets(5, {3, 4}, ctx),
                 AffineMap::getMultiDimMapWithTargets(5, {0, 1, 2}, ctx)},
                windowLoops);
    terms.push_back(
        {sums, AffineMap::getMultiDimMapWithTargets(4, pixel, ctx), wZp});
  }
  if (xZp) {
    // filter[f] = sum of the filter's (kh, kw, c): loops (f, then the
    // filter's other dimensions in its order).
    SmallVector<unsigned> wDims(4);
    const unsigned fF = kind == Quantized::NhwcHwcf ? 3 : 0;
    for (unsigned d = 0, loop = 1; d < 4; ++d)
      wDims[d] = d == fF ? 0 : loop++;
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::reduction);
    iterators[0] = utils::IteratorType::parallel;
    Value sums = sumOver(b, loc, w, zeroSums(b, loc, out, {channel}, element),
                         {AffineMap::getMultiDimMapWithTargets(4, wDims, ctx),
                          AffineMap::getMultiDimMapWithTargets(4, {0}, ctx)},
                         iterators);
    terms.push_back(
        {sums, AffineMap::getMultiDimMapWithTargets(4, {channel}, ctx), xZp});
  }
  Value k = arith::MulIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, linalg::createOrFoldDimOp(b, loc, w, fKh),
                            linalg::createOrFoldDimOp(b, loc, w, fKh + 1)),
      linalg::createOrFoldDimOp(b, loc, w, fC));
  return arith::IndexCastOp::create(b, loc, element, k);
}

/// Expands one quantized op (the header's comment).
void expand(linalg::LinalgOp op, Quantized kind) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value out = op.getDpsInits()[0];
  const bool onTensors = isa<RankedTensorType>(out.getType());
  Type element = getElementTypeOrSelf(out.getType());
  Value aZp = op.getDpsInputs()[2], bZp = op.getDpsInputs()[3];

  // The plain op where the quantized one was, so that a zero fill of its
  // output right before it still folds into its kernel.
  Operation *plain = plainOp(b, op, kind);
  Value product = onTensors ? plain->getResult(0) : out;
  const bool aZpZero = matchPattern(aZp, m_Zero());
  const bool bZpZero = matchPattern(bZp, m_Zero());
  Value aZpC = aZpZero ? Value()
                       : convertScalarToDtype(b, loc, aZp, element,
                                              /*isUnsignedCast=*/false);
  Value bZpC = bZpZero ? Value()
                       : convertScalarToDtype(b, loc, bZp, element,
                                              /*isUnsignedCast=*/false);
  Value result = product;
  if (aZpC || bZpC) {
    SmallVector<Term> terms;
    Value k = kind == Quantized::Matmul || kind == Quantized::BatchMatmul
                  ? contractionTerms(b, loc, op.getDpsInputs()[0],
                                     op.getDpsInputs()[1], out, aZpC, bZpC,
                                     kind == Quantized::BatchMatmul, terms)
                  : convolutionTerms(b, loc, op, kind, aZpC, bZpC, terms);
    // K * a_zp * b_zp (zero where either is).
    Value constant =
        aZpC && bZpC
            ? Value(arith::MulIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, k, aZpC), bZpC))
            : Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(element)));
    Value corrected = correct(b, loc, product, terms, constant);
    if (onTensors)
      result = corrected;
  }
  if (onTensors)
    op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

} // namespace

unsigned qimeng::expandZeroPoints(ModuleOp module) {
  SmallVector<std::pair<linalg::LinalgOp, Quantized>> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (std::optional<Quantized> kind = quantizedKind(op))
      ops.push_back({op, *kind});
  });
  unsigned expanded = 0;
  for (auto [op, kind] : ops) {
    // i8 operands into an i32 result, scalar integer zero points; anything
    // else stays, with a remark.
    Type outType = getElementTypeOrSelf(op.getDpsInits()[0].getType());
    auto isI8 = [](Value v) {
      return getElementTypeOrSelf(v.getType()).isInteger(8);
    };
    auto isScalarInt = [](Value v) { return isa<IntegerType>(v.getType()); };
    if (!isI8(op.getDpsInputs()[0]) || !isI8(op.getDpsInputs()[1]) ||
        !outType.isInteger(32) || !isScalarInt(op.getDpsInputs()[2]) ||
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
    expand(op, kind);
    ++expanded;
  }
  return expanded;
}
