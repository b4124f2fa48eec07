//===- MemrefAddress.cpp - A memref's first element as a pointer ----------===//
#include "MemrefAddress.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

int64_t qimeng::elementBytesOf(Value memref) {
  return cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
}

Value qimeng::elementAddress(OpBuilder &b, Location loc, Value memref) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value elemBytes =
      arith::ConstantIndexOp::create(b, loc, elementBytesOf(memref));
  Value offsetBytes =
      arith::MulIOp::create(b, loc, meta.getOffset(), elemBytes);
  return arith::AddIOp::create(b, loc, base, offsetBytes);
}

Value qimeng::toPointer(OpBuilder &b, Location loc, Value address,
                        Value bytes) {
  if (bytes)
    address = arith::AddIOp::create(b, loc, address, bytes);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
}
