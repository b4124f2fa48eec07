//===- BufferEffects.h - What may touch a buffer between two ops -*- C++
//-*-===//
//
// Private to lib/Transforms: the aliasing and side-effect questions the
// matchers ask before they move a read or a write of a buffer (a folded
// transpose, an initialiser, a bias) to another op's place.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_BUFFEREFFECTS_H
#define QIMENG_LIB_TRANSFORMS_BUFFEREFFECTS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace qimeng {

/// The buffer `v` is a view of (through view-like ops and casts).
mlir::Value underlyingBuffer(mlir::Value v);

/// Whether two memrefs may share memory: distinct allocations never do;
/// anything else (function arguments, loads of memrefs) may.
bool mayAlias(mlir::Value a, mlir::Value b);

/// Whether no op strictly between `from` and `to` (the same block, `from`
/// first) may write or free memory that `buffer` may share.
bool noWritesBetween(mlir::Operation *from, mlir::Operation *to,
                     mlir::Value buffer);

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_BUFFEREFFECTS_H
