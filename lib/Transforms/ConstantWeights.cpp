//===- ConstantWeights.cpp - B packed at compile time ---------------------===//

#include "ConstantWeights.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/FormatVariadic.h"
#include <vector>

using namespace mlir;
using namespace qimeng;

/// `value` when its raw data is its elements as stored, whole bytes each
/// (one of them for a splat); null otherwise.
static DenseElementsAttr asStored(DenseElementsAttr value) {
  if (!value || !value.getElementType().isIntOrFloat())
    return {};
  const unsigned bits = value.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0)
    return {};
  const size_t elements = value.isSplat() ? 1 : size_t(value.getNumElements());
  return value.getRawData().size() == elements * bits / 8 ? value
                                                          : DenseElementsAttr();
}

DenseElementsAttr qimeng::constantOperandValue(Value memref) {
  Operation *def = memref.getDefiningOp();
  if (auto get = dyn_cast_or_null<memref::GetGlobalOp>(def)) {
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        get, get.getNameAttr());
    if (!global || !global.getConstant())
      return {};
    return asStored(
        dyn_cast_or_null<DenseElementsAttr>(global.getConstantInitValue()));
  }
  if (auto toBuffer = dyn_cast_or_null<bufferization::ToBufferOp>(def)) {
    // (Whatever layout the buffer's type states, a constant bufferizes to a
    // dense global in row-major order.)
    auto cst = toBuffer.getTensor().getDefiningOp<arith::ConstantOp>();
    if (!cst)
      return {};
    return asStored(dyn_cast<DenseElementsAttr>(cst.getValue()));
  }
  return {};
}

Value ConstantWeights::packed(OpBuilder &b, Location loc,
                              DenseElementsAttr value, const GemmDesc &desc,
                              const PrepackedB &layout) {
  MLIRContext *ctx = b.getContext();
  const std::string layoutText =
      llvm::formatv("nr{0}_g{1}_e{2}{3}", layout.nr, layout.kGroups,
                    layout.elementBytes, layout.plus128 ? "_p128" : "")
          .str();
  const int64_t bytes = layout.bytes(desc.n);
  auto type = MemRefType::get({bytes}, IntegerType::get(ctx, 8));
  // The packed bytes depend on how the op reads the constant too: one
  // constant may be B of two products, as stored and transposed (tied
  // weights), in the same layout.
  const std::string form =
      llvm::formatv("{0}_{1}_k{2}_n{3}_ldb{4}", layoutText,
                    desc.transB ? 't' : 'n', desc.k, desc.n, desc.ldb)
          .str();
  auto key =
      std::make_pair(Attribute(value), Attribute(StringAttr::get(ctx, form)));
  auto it = globals.find(key);
  if (it == globals.end()) {
    // The elements as stored, row-major (a splat expanded).
    const size_t elementBytes = size_t(layout.elementBytes);
    const size_t count = size_t(value.getNumElements());
    ArrayRef<char> raw = value.getRawData();
    std::vector<char> stored;
    if (value.isSplat()) {
      stored.resize(count * elementBytes);
      for (size_t i = 0; i < count; ++i)
        std::copy_n(raw.begin(), elementBytes,
                    stored.begin() + i * elementBytes);
      raw = stored;
    }
    std::vector<char> packedBytes(static_cast<size_t>(bytes));
    packB(layout, desc, raw.data(), packedBytes.data());
    auto init = DenseElementsAttr::getFromRawBuffer(
        RankedTensorType::get({bytes}, IntegerType::get(ctx, 8)), packedBytes);
    OpBuilder detached(ctx);
    auto global = memref::GlobalOp::create(
        detached, loc, "qm_packed_weights_" + layoutText,
        detached.getStringAttr("private"), type, init, /*constant=*/true,
        detached.getI64IntegerAttr(64));
    SymbolTable(module).insert(global, module.getBody()->begin());
    it = globals.try_emplace(key, global.getSymName().str()).first;
  }
  return memref::GetGlobalOp::create(b, loc, type, it->second);
}

void ConstantWeights::noteSource(Value source) { sources.insert(source); }

void ConstantWeights::eraseUnused() {
  llvm::SetVector<Operation *> globalsLeft;
  for (Value source : sources) {
    Operation *def = source.getDefiningOp();
    if (!def || !source.use_empty())
      continue;
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      if (auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
              get, get.getNameAttr()))
        globalsLeft.insert(global);
      get.erase();
    } else if (auto toBuffer = dyn_cast<bufferization::ToBufferOp>(def)) {
      Operation *cst = toBuffer.getTensor().getDefiningOp();
      toBuffer.erase();
      if (cst && cst->use_empty())
        cst->erase();
    }
  }
  for (Operation *global : globalsLeft)
    if (SymbolTable::symbolKnownUseEmpty(global, module))
      global->erase();
}
