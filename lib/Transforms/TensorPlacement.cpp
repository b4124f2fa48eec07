//===- TensorPlacement.cpp ------------------------------------------------===//
#include "TensorPlacement.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Matchers.h"

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
                   SmallVectorImpl<Operation *> &movedProducers) {
  Value alloc = allocLike(b, loc, init, created);
  Operation *producer = init.getDefiningOp();
  if (producer && init.hasOneUse()) {
    if (auto fill = dyn_cast<linalg::FillOp>(producer);
        fill && fill.hasPureTensorSemantics() &&
        matchPattern(fill.getInputs()[0], m_PosZeroFloat())) {
      created.add(linalg::FillOp::create(b, loc, fill.getInputs()[0], alloc));
      movedProducers.push_back(fill);
      return alloc;
    }
    if (auto broadcast = dyn_cast<linalg::BroadcastOp>(producer);
        broadcast && broadcast.hasPureTensorSemantics()) {
      Value bias = readBuffer(b, loc, broadcast.getInput(), created);
      created.add(linalg::BroadcastOp::create(b, loc, bias, alloc,
                                              broadcast.getDimensions()));
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
        auto copy = created.add(
            mlir::clone(b, generic, TypeRange(), ValueRange{in, alloc}));
        (void)copy;
        movedProducers.push_back(generic);
        return alloc;
      }
    }
  }
  Value source = readBuffer(b, loc, init, created);
  created.add(memref::CopyOp::create(b, loc, source, alloc));
  return alloc;
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
  Value out = outputBuffer(b, loc, init, created, movedProducers);
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
  return onBuffers;
}
