//===- ZeroPoints.h - Quantized contractions as contractions plus sums -*- C++
//-*-===//
//
// Private to lib/Transforms. TOSA's and torch-mlir's quantized matmuls
// reach linalg as `linalg.quantized_matmul` and `quantized_batch_matmul`:
// C += (A - a_zp) * (B - b_zp), A and B i8 sign-extended into C's i32, the
// zero points scalars. Expanded,
//
//   C += A * B - b_zp * rowsum(A) - a_zp * colsum(B) + K * a_zp * b_zp,
//
// each sum over K (per batch), everything modulo 2^32 as C's additions
// are. The op becomes the plain contraction (`linalg.matmul` or
// `batch_matmul` on the same operands, which the pass then gives to an
// 8-bit kernel like any other, a zero fill of C folding into it) followed
// by one elementwise `linalg.generic` that adds the other terms to C, and
// the sums it needs: rowsum(A) where b_zp may be non-zero, colsum(B) where
// a_zp may be (zero points that are constant zero need nothing). On
// tensors the sums are fresh tensors; on buffers they live on the stack
// (`memref.alloca`, (M + N) * 4 bytes a batch, freed when the function
// returns; an op inside a loop on buffers stays, with a remark), which no
// deallocation pipeline has to see. The sums and the correction
// are stock linalg, lowered with the rest of the module: O(M*K + N*K +
// M*N) work beside the kernel's O(M*N*K).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_ZEROPOINTS_H
#define QIMENG_LIB_TRANSFORMS_ZEROPOINTS_H

#include "mlir/IR/BuiltinOps.h"

namespace qimeng {

/// Rewrites every quantized matmul and batch_matmul in `module` as above;
/// returns how many.
unsigned expandZeroPoints(mlir::ModuleOp module);

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_ZEROPOINTS_H
