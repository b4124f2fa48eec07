//===- BufferEffects.cpp --------------------------------------------------===//
#include "BufferEffects.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value qimeng::underlyingBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

bool qimeng::mayAlias(Value a, Value b) {
  a = underlyingBuffer(a);
  b = underlyingBuffer(b);
  if (a == b)
    return true;
  auto fresh = [](Value v) {
    return v.getDefiningOp<memref::AllocOp>() ||
           v.getDefiningOp<memref::AllocaOp>();
  };
  return !fresh(a) && !fresh(b);
}

bool qimeng::noWritesBetween(Operation *from, Operation *to, Value buffer) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(op);
    if (!effects)
      return false;
    for (const MemoryEffects::EffectInstance &e : *effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
        continue;
      if (!e.getValue() || mayAlias(e.getValue(), buffer))
        return false;
    }
  }
  return true;
}
