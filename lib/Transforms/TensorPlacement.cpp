//===- TensorPlacement.cpp ------------------------------------------------===//
#include "TensorPlacement.h"
#include "EpilogueMatcher.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "qimeng/Transforms/ConvMatcher.h"

using namespace mlir;
using namespace qimeng;

namespace {

/// Ops created for one placement, erased in reverse on a rollback.
struct Created {
  SmallVector<Operation *> ops;
  template <typename T> T add(T op) {
    ops.push_back(op.getOperation());
    return op;
  }
  void rollback() {
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    ops.clear();
  }
};

/// A memref type of `t`'s shape with a fully dynamic strided layout.
MemRefType dynamicLayoutOf(RankedTensorType t) {
  SmallVector<int64_t> strides(t.getRank(), ShapedType::kDynamic);
  return MemRefType::get(
      t.getShape(), t.getElementType(),
      StridedLayoutAttr::get(t.getContext(), ShapedType::kDynamic, strides));
}

/// A fresh identity-layout allocation shaped as `like` (a tensor), its
/// dynamic sizes read with tensor.dim.
Value allocLike(OpBuilder &b, Location loc, Value like, Created &created) {
  auto t = cast<RankedTensorType>(like.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < t.getRank(); ++d)
    if (t.isDynamicDim(d))
      sizes.push_back(created.add(tensor::DimOp::create(b, loc, like, d)));
  return created.add(memref::AllocOp::create(
      b, loc, MemRefType::get(t.getShape(), t.getElementType()), sizes));
}

/// `v` read as a buffer.
Value readBuffer(OpBuilder &b, Location loc, Value v, Created &created) {
  return created.add(bufferization::ToBufferOp::create(
      b, loc, dynamicLayoutOf(cast<RankedTensorType>(v.getType())), v,
      /*read_only=*/true));
}

/// The input `v` as a buffer: a transpose with no other user moves along
/// (into a fresh allocation, which the matcher folds), anything else is
/// read in place.
Value inputBuffer(OpBuilder &b, Location loc, Value v, Created &created,
                  SmallVectorImpl<Operation *> &movedProducers) {
  auto t = v.getDefiningOp<linalg::TransposeOp>();
  if (!t || !v.hasOneUse() || !t.hasPureTensorSemantics())
    return readBuffer(b, loc, v, created);
  Value source = readBuffer(b, loc, t.getInput(), created);
  Value alloc = allocLike(b, loc, v, created);
  created.add(
      linalg::TransposeOp::create(b, loc, source, alloc, t.getPermutation()));
  movedProducers.push_back(t);
  return alloc;
}

/// The output buffer for `init`: a fresh allocation holding its value. A
/// zero linalg.fill (or a broadcast of a bias) producing it with no other
/// user moves along onto the allocation; anything else is copied.
Value outputBuffer(OpBuilder &b, Location loc, Value init, Created &created,
                   SmallVectorImpl<Operation *> &movedProducers,
                   Operation *&initOp) {
  Operation *producer = init.getDefiningOp();
  // A producer that moves along: the allocation takes the sizes of its own
  // init (the tensor.dim of `init` would be a second use of it).
  auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(producer);
  const bool movable = dps && init.hasOneUse() && dps.getNumDpsInits() == 1;
  Value alloc =
      allocLike(b, loc, movable ? dps.getDpsInits()[0] : init, created);
  if (movable) {
    if (auto fill = dyn_cast<linalg::FillOp>(producer);
        fill && fill.hasPureTensorSemantics() &&
        (matchPattern(fill.getInputs()[0], m_PosZeroFloat()) ||
         matchPattern(fill.getInputs()[0], m_Zero()))) {
      initOp = created.add(
          linalg::FillOp::create(b, loc, fill.getInputs()[0], alloc));
      movedProducers.push_back(fill);
      return alloc;
    }
    if (auto broadcast = dyn_cast<linalg::BroadcastOp>(producer);
        broadcast && broadcast.hasPureTensorSemantics()) {
      Value bias = readBuffer(b, loc, broadcast.getInput(), created);
      initOp = created.add(linalg::BroadcastOp::create(
          b, loc, bias, alloc, broadcast.getDimensions()));
      movedProducers.push_back(broadcast);
      return alloc;
    }
    if (auto generic = dyn_cast<linalg::GenericOp>(producer);
        generic && generic.hasPureTensorSemantics() &&
        generic.getNumDpsInputs() == 1 && generic.getNumDpsInits() == 1 &&
        generic.getNumReductionLoops() == 0) {
      // A bias broadcast written as a copying generic: its body yields its
      // input (the matchers check the maps).
      Block &body = generic.getRegion().front();
      if (body.getOperations().size() == 1 &&
          body.getTerminator()->getOperand(0) == body.getArgument(0)) {
        Value in = readBuffer(b, loc, generic.getDpsInputs()[0], created);
        initOp = created.add(
            mlir::clone(b, generic, TypeRange(), ValueRange{in, alloc}));
        movedProducers.push_back(generic);
        return alloc;
      }
    }
  }
  Value source = readBuffer(b, loc, init, created);
  initOp = created.add(memref::CopyOp::create(b, loc, source, alloc));
  return alloc;
}

/// The dimension of `op`'s output along which its epilogue's bias runs:
/// N (the last) of a contraction's 2-D or batched product, the one of a
/// matrix-vector product's (aten.mv: its bias add a residual of its
/// shape), the channels of a convolution; nullopt for other outputs.
std::optional<unsigned> epilogueBiasDim(linalg::LinalgOp op, int64_t rank) {
  if (isa<linalg::Conv2DNchwFchwOp>(op))
    return 1;
  if (isa<linalg::Conv2DNhwcHwcfOp, linalg::Conv2DNhwcFhwcOp>(op))
    return 3;
  if (isConvolution(op) || rank < 1 || rank > 3)
    return std::nullopt;
  return static_cast<unsigned>(rank - 1);
}

/// The elementwise consumers of a product or convolution placed on buffers
/// (`out`, initialised by `initOp`, read back as the tensor `result`): the
/// consumer, and then its own consumer and so on (a bias add and then an
/// activation, unmerged), each moved onto buffers too while the epilogue
/// matcher takes the chain that far, so that the memref rewrite fuses
/// them: at the consumer's place, its bias read as a buffer, its output a
/// fresh allocation, its result that allocation as a tensor. After a
/// contraction of bf16 or f16 operands into f32 sums, the last consumer
/// may round to the operands' type (arith.truncf, torch-mlir's bf16
/// linear layer): its output allocation is of that type, and the chain
/// ends there. The rest is left on tensors.
void moveEpilogueConsumers(linalg::LinalgOp onBuffers, Value out,
                           Operation *initOp,
                           bufferization::ToTensorOp result) {
  auto outType = cast<MemRefType>(out.getType());
  std::optional<unsigned> biasDim =
      epilogueBiasDim(onBuffers, outType.getRank());
  if (!biasDim)
    return;
  DominanceInfo dominance(onBuffers->getParentOp());
  OpBuilder before(onBuffers);
  // The product, or the last consumer moved, read back as a tensor by the
  // next consumer alone: it goes once that consumer is on buffers.
  bufferization::ToTensorOp last = result;
  Value lastBuffer = out;
  auto outAlloc = out.getDefiningOp<memref::AllocOp>();
  // Whether every shaped operand's elements satisfy `is`.
  auto operandElements = [&](auto is) {
    return llvm::all_of(onBuffers->getOperandTypes(), [&](Type t) {
      auto shaped = dyn_cast<ShapedType>(t);
      return !shaped || is(shaped.getElementType());
    });
  };
  // Leaky relu and the smooth activations fuse into the floating-point
  // kernels (f32, bf16, f16), not the 8-bit ones (EpilogueMatcher.h);
  // where the target's kernels do not take a smooth one, the consumer
  // moved onto buffers stays as it is.
  const bool floatOperands =
      operandElements([](Type e) { return isa<FloatType>(e); });
  // The type a contraction's or convolution's f32 sums may be rounded to:
  // its operands' bf16 or f16 (the memref matchers' halfType).
  Type halfType;
  if (outType.getElementType().isF32()) {
    Type a = getElementTypeOrSelf(onBuffers.getDpsInputs()[0].getType());
    if (isa<BFloat16Type, Float16Type>(a) &&
        operandElements([&](Type e) { return e == a || e.isF32(); }))
      halfType = a;
  }
  for (size_t moved = 0;; ++moved) {
    if (!last->hasOneUse())
      return;
    auto g = dyn_cast<linalg::GenericOp>(*last->user_begin());
    if (!g || !g.hasPureTensorSemantics() || g->getNumResults() != 1 ||
        g.getNumDpsInits() != 1 || g.getNumDpsInputs() > 3)
      return;
    auto gType = dyn_cast<RankedTensorType>(g.getDpsInits()[0].getType());
    if (!gType || (gType.getElementType() != outType.getElementType() &&
                   gType.getElementType() != halfType))
      return;
    const bool narrows = gType.getElementType() != outType.getElementType();
    // Its bias and output buffer before the product is made (the epilogue
    // reads and writes them there), the generic itself where it was.
    Location loc = g.getLoc();
    Created created;
    SmallVector<Value> operands;
    for (Value in : g.getDpsInputs()) {
      if (in == last.getResult()) {
        operands.push_back(lastBuffer);
      } else if (isa<RankedTensorType>(in.getType()) &&
                 dominance.properlyDominates(in, onBuffers)) {
        operands.push_back(readBuffer(before, loc, in, created));
      } else {
        created.rollback();
        return;
      }
    }
    // Shaped as the product (identity maps): the sizes `out` was allocated
    // with, known before the product; of the generic's element type.
    Value gOut = created.add(memref::AllocOp::create(
        before, loc,
        MemRefType::get(outAlloc.getType().getShape(), gType.getElementType()),
        outAlloc.getDynamicSizes()));
    operands.push_back(gOut);
    OpBuilder at(g);
    auto onBuffersG = created.add(mlir::clone(at, g, TypeRange(), operands));
    auto gResult = created.add(bufferization::ToTensorOp::create(
        at, loc, g->getResult(0).getType(), gOut, /*restrict=*/true,
        /*writable=*/true));
    std::optional<ElementwiseEpilogue> e = matchElementwiseEpilogue(
        onBuffers, out, initOp, *biasDim,
        /*biasAllowed=*/true, /*goingAway=*/{last, gResult}, halfType,
        /*sliceOutput=*/false, /*leakyAllowed=*/floatOperands,
        /*smoothAllowed=*/floatOperands);
    if (!e || e->ops.size() != moved + 1 ||
        e->ops.back() != onBuffersG.getOperation() ||
        e->halfOutput != narrows) {
      created.rollback();
      return;
    }
    g->getResult(0).replaceAllUsesWith(gResult.getResult());
    g->erase();
    last->erase();
    if (narrows)
      return;
    last = gResult;
    lastBuffer = gOut;
  }
}

} // namespace

linalg::LinalgOp
qimeng::placeOnBuffers(linalg::LinalgOp op,
                       llvm::function_ref<bool(linalg::LinalgOp)> accepts,
                       std::string &reason) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      !llvm::all_of(op->getOperands(), [](Value v) {
        return isa<RankedTensorType>(v.getType());
      })) {
    reason = "tensor operands other than ranked tensors with one result are "
             "not supported";
    return {};
  }
  OpBuilder b(op);
  Location loc = op.getLoc();
  Created created;
  SmallVector<Operation *> movedProducers;
  SmallVector<Value> operands;
  for (Value in : op.getDpsInputs())
    operands.push_back(inputBuffer(b, loc, in, created, movedProducers));
  Value init = op.getDpsInits()[0];
  Operation *initOp = nullptr;
  Value out = outputBuffer(b, loc, init, created, movedProducers, initOp);
  operands.push_back(out);
  auto onBuffers = created.add(mlir::clone(b, op, TypeRange(), operands));
  auto result = created.add(bufferization::ToTensorOp::create(
      b, loc, op->getResult(0).getType(), out, /*restrict=*/true,
      /*writable=*/true));
  if (!accepts(onBuffers)) {
    created.rollback();
    return {};
  }
  op->getResult(0).replaceAllUsesWith(result.getResult());
  op->erase();
  for (Operation *p : movedProducers)
    if (p->use_empty())
      p->erase();
  moveEpilogueConsumers(onBuffers, out, initOp, result);
  return onBuffers;
}
