//===- TensorPlacement.h - The pass on tensors, before bufferization -*- C++
//-*-===//
//
// Private to lib/Transforms. On tensors, a contraction or convolution is
// moved onto buffers at its place, in the form one-shot-bufferize then
// takes as it is: its inputs read through `bufferization.to_buffer` (a
// fully dynamic layout, which any buffer casts to), its output a fresh
// `memref.alloc` (sizes from the init) that the same op on memrefs
// writes, and its result that allocation as a tensor
// (`bufferization.to_tensor restrict writable`, destination-passing
// style). What the memref matchers fold is moved along: a zero
// `linalg.fill` or bias broadcast of the init becomes the same op on the
// allocation, and an input that a `linalg.transpose` with no other user
// produces becomes that transpose into a fresh allocation. The memref op
// is then rewritten like any other (docs/FrontendIR.md).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_TENSORPLACEMENT_H
#define QIMENG_LIB_TRANSFORMS_TENSORPLACEMENT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <string>

namespace qimeng {

/// Moves `op` (on ranked tensors, one result) onto buffers as above
/// and asks `accepts` about the memref op. When it accepts, the tensor op
/// (and the producers moved along, left without users) is erased and the
/// memref op returned; otherwise everything created is erased, `op` stays
/// and null is returned. `reason` gets why an op on tensors is not moved.
mlir::linalg::LinalgOp
placeOnBuffers(mlir::linalg::LinalgOp op,
               llvm::function_ref<bool(mlir::linalg::LinalgOp)> accepts,
               std::string &reason);

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_TENSORPLACEMENT_H
