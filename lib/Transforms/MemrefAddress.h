//===- MemrefAddress.h - A memref's first element as a pointer ---*- C++
//-*-===//
//
// What a kernel call passes for a memref: the address of its first element
// (aligned base pointer plus offset), for the CPU kernels' calls and the
// NVIDIA launchers' alike.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_MEMREFADDRESS_H
#define QIMENG_LIB_TRANSFORMS_MEMREFADDRESS_H

#include "mlir/IR/Builders.h"

namespace qimeng {

/// Bytes of one element of a memref (f32 4, bf16 2).
int64_t elementBytesOf(mlir::Value memref);

/// Address of a memref's first element, as an index.
mlir::Value elementAddress(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value memref);

/// `address` (an index) plus `bytes` (an index or nothing) as !llvm.ptr.
mlir::Value toPointer(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value address, mlir::Value bytes);

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_MEMREFADDRESS_H
