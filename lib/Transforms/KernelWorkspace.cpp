//===- KernelWorkspace.cpp ------------------------------------------------===//
#include "KernelWorkspace.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace qimeng;

namespace {

constexpr llvm::StringLiteral kCached = "qm_workspace_cache";
constexpr llvm::StringLiteral kCachedBytes = "qm_workspace_cache_bytes";
constexpr llvm::StringLiteral kClaimed = "qm_workspace_cache_claimed";
constexpr llvm::StringLiteral kAcquire = "qm_workspace_acquire";
constexpr llvm::StringLiteral kRelease = "qm_workspace_release";

/// `llvm.mlir.global internal @name` of `type`, zero: the cached pointer,
/// its size and the claim flag.
void getOrCreateGlobal(OpBuilder &b, ModuleOp module, StringRef name,
                       Type type) {
  if (module.lookupSymbol<LLVM::GlobalOp>(name))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  Location loc = NameLoc::get(b.getStringAttr(name));
  auto global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                                       LLVM::Linkage::Internal, name,
                                       Attribute(), /*alignment=*/8);
  Block *init = b.createBlock(&global.getInitializerRegion());
  b.setInsertionPointToStart(init);
  Value zero = isa<LLVM::LLVMPointerType>(type)
                   ? Value(LLVM::ZeroOp::create(b, loc, type))
                   : Value(LLVM::ConstantOp::create(b, loc, type,
                                                    b.getIntegerAttr(type, 0)));
  LLVM::ReturnOp::create(b, loc, zero);
}

Value addressOf(OpBuilder &b, Location loc, StringRef name) {
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), name);
}

/// @qm_workspace_acquire(i64 bytes) -> ptr:
///   if (atomic_exchange(&claimed, 1, acquire) != 0)
///     return aligned_alloc(64, bytes);            // another call has it
///   if (cached_bytes < bytes) {                   // grow: the new one is
///     old = cached; cached = aligned_alloc(64, bytes); // cached before
///     cached_bytes = bytes; free(old);            // the old is freed
///   }
///   return cached;
/// The cached pointer is read and written atomically (monotonic): a call
/// that allocated its own compares its pointer with it on release, and
/// malloc may hand it the old cached block once it is freed, by which
/// time the new one is in place.
LLVM::LLVMFuncOp getOrCreateAcquire(OpBuilder &b, ModuleOp module) {
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(kAcquire))
    return fn;
  MLIRContext *ctx = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = b.getI64Type(), i32 = b.getI32Type();
  getOrCreateGlobal(b, module, kCached, ptr);
  getOrCreateGlobal(b, module, kCachedBytes, i64);
  getOrCreateGlobal(b, module, kClaimed, i32);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto allocFn = LLVM::lookupOrCreateAlignedAllocFn(b, module, i64);
  auto freeFn = LLVM::lookupOrCreateFreeFn(b, module);
  assert(succeeded(allocFn) && succeeded(freeFn) &&
         "aligned_alloc and free have their C signatures in this module");
  Location loc = NameLoc::get(b.getStringAttr(kAcquire));
  auto fn = LLVM::LLVMFuncOp::create(b, loc, kAcquire,
                                     LLVM::LLVMFunctionType::get(ptr, {i64}),
                                     LLVM::Linkage::Internal);
  Block *entry = fn.addEntryBlock(b);
  Block *own = b.createBlock(&fn.getBody());
  Block *claimed = b.createBlock(&fn.getBody());
  Block *grow = b.createBlock(&fn.getBody());
  Block *reuse = b.createBlock(&fn.getBody());
  Value bytes = entry->getArgument(0);
  auto alloc = [&](Location l) {
    Value align = LLVM::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(64));
    return LLVM::CallOp::create(b, l, *allocFn, ValueRange{align, bytes})
        .getResult();
  };

  b.setInsertionPointToStart(entry);
  Value one = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(1));
  Value zero = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0));
  Value previous = LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::xchg,
                                             addressOf(b, loc, kClaimed), one,
                                             LLVM::AtomicOrdering::acquire);
  Value free =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, previous, zero);
  LLVM::CondBrOp::create(b, loc, free, claimed, own);

  b.setInsertionPointToStart(own);
  LLVM::ReturnOp::create(b, loc, alloc(loc));

  b.setInsertionPointToStart(claimed);
  Value cachedBytes =
      LLVM::LoadOp::create(b, loc, i64, addressOf(b, loc, kCachedBytes));
  Value fits = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge,
                                    cachedBytes, bytes);
  LLVM::CondBrOp::create(b, loc, fits, reuse, grow);

  b.setInsertionPointToStart(grow);
  Value old = LLVM::LoadOp::create(b, loc, ptr, addressOf(b, loc, kCached),
                                   /*alignment=*/8, false, false, false, false,
                                   LLVM::AtomicOrdering::monotonic);
  Value fresh = alloc(loc);
  LLVM::StoreOp::create(b, loc, fresh, addressOf(b, loc, kCached),
                        /*alignment=*/8, false, false, false,
                        LLVM::AtomicOrdering::monotonic);
  LLVM::StoreOp::create(b, loc, bytes, addressOf(b, loc, kCachedBytes));
  LLVM::CallOp::create(b, loc, *freeFn, ValueRange{old});
  LLVM::ReturnOp::create(b, loc, fresh);

  b.setInsertionPointToStart(reuse);
  LLVM::ReturnOp::create(
      b, loc,
      LLVM::LoadOp::create(b, loc, ptr, addressOf(b, loc, kCached),
                           /*alignment=*/8, false, false, false, false,
                           LLVM::AtomicOrdering::monotonic)
          .getResult());
  return fn;
}

/// @qm_workspace_release(ptr ws): the cached one unclaimed (release
/// ordering), any other freed.
LLVM::LLVMFuncOp getOrCreateRelease(OpBuilder &b, ModuleOp module) {
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(kRelease))
    return fn;
  getOrCreateAcquire(b, module); // the globals
  MLIRContext *ctx = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = b.getI32Type();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto freeFn = LLVM::lookupOrCreateFreeFn(b, module);
  Location loc = NameLoc::get(b.getStringAttr(kRelease));
  auto fn = LLVM::LLVMFuncOp::create(
      b, loc, kRelease,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}),
      LLVM::Linkage::Internal);
  Block *entry = fn.addEntryBlock(b);
  Block *unclaim = b.createBlock(&fn.getBody());
  Block *own = b.createBlock(&fn.getBody());
  Value ws = entry->getArgument(0);

  b.setInsertionPointToStart(entry);
  Value cached = LLVM::LoadOp::create(b, loc, ptr, addressOf(b, loc, kCached),
                                      /*alignment=*/8, false, false, false,
                                      false, LLVM::AtomicOrdering::monotonic);
  Value isCached =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, ws, cached);
  LLVM::CondBrOp::create(b, loc, isCached, unclaim, own);

  b.setInsertionPointToStart(unclaim);
  Value zero = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0));
  LLVM::StoreOp::create(b, loc, zero, addressOf(b, loc, kClaimed),
                        /*alignment=*/4, false, false, false,
                        LLVM::AtomicOrdering::release);
  LLVM::ReturnOp::create(b, loc, ValueRange());

  b.setInsertionPointToStart(own);
  LLVM::CallOp::create(b, loc, *freeFn, ValueRange{ws});
  LLVM::ReturnOp::create(b, loc, ValueRange());
  return fn;
}

} // namespace

Value qimeng::acquireWorkspace(OpBuilder &b, Location loc, ModuleOp module,
                               Value bytes) {
  LLVM::LLVMFuncOp fn = getOrCreateAcquire(b, module);
  return LLVM::CallOp::create(b, loc, fn, ValueRange{bytes}).getResult();
}

void qimeng::releaseWorkspace(OpBuilder &b, Location loc, ModuleOp module,
                              Value workspace) {
  LLVM::LLVMFuncOp fn = getOrCreateRelease(b, module);
  LLVM::CallOp::create(b, loc, fn, ValueRange{workspace});
}
