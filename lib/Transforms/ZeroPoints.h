//===- ZeroPoints.h - Quantized contractions as contractions plus sums -*- C++
//-*-===//
//
// Private to lib/Transforms. TOSA's and torch-mlir's quantized matmuls
// and convolutions reach linalg as `linalg.quantized_matmul`,
// `quantized_batch_matmul` and `conv_2d_nhwc_hwcf_q`, `_nhwc_fhwc_q`,
// `_nchw_fchw_q`: out += (x - x_zp) * (w - w_zp), x and w i8
// sign-extended into out's i32, the zero points scalars. Expanded,
//
//   out += x * w - w_zp * sum(x) - x_zp * sum(w) + K * x_zp * w_zp,
//
// where for a contraction sum(x) is each row of A's sum over K and sum(w)
// each column of B's, for a convolution each output pixel's window of the
// input (KH * KW * C values) and each filter; K the products a result
// sums; everything modulo 2^32, as out's additions are. The op becomes the
// plain one (`linalg.matmul`, `batch_matmul`, `conv_2d_*` on the same
// operands, strides and dilations, which the pass then gives to an 8-bit
// kernel like any other, a zero fill of out folding into it) followed by
// one elementwise `linalg.generic` that adds the other terms, and the sums
// those need (none for a zero point that is constant zero: TOSA's weights
// are symmetric). On tensors the sums are fresh tensors; on buffers they
// live on the stack (`memref.alloca`, freed when the function returns; an
// op inside a loop on buffers stays, with a remark), which no deallocation
// pipeline has to see. The sums and the correction are stock linalg,
// lowered with the rest of the module: O(M*K + N*K + M*N) work beside the
// kernel's O(M*N*K) (a convolution's window sums: each input pixel's
// channels summed once, then KH * KW of those a window).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_ZEROPOINTS_H
#define QIMENG_LIB_TRANSFORMS_ZEROPOINTS_H

#include "mlir/IR/BuiltinOps.h"

namespace qimeng {

/// Rewrites every quantized matmul, batch_matmul and 2-D convolution in
/// `module` as above; returns how many.
unsigned expandZeroPoints(mlir::ModuleOp module);

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_ZEROPOINTS_H
