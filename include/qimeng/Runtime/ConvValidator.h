//===- ConvValidator.h - Convolution kernels are checked too ----*- C++ -*-===//
//
// The GEMM validator's protocol for a convolution kernel: several input
// distributions (small integers bit for bit, random floats within a bound
// that grows with K = KH*KW*C), signalling-NaN guards around every buffer
// and in the input's stride gaps, input and filter checked unchanged, an
// fp64 reference and OpenBLAS on the im2col matrix as a cross-check.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_CONVVALIDATOR_H
#define QIMENG_RUNTIME_CONVVALIDATOR_H

#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <vector>

namespace qimeng {

/// A convolution kernel's ABI (docs/KernelContract.md):
/// kernel(input, filter, output, workspace) computes output += conv.
using ConvKernel =
    std::function<void(const float *, const float *, float *, void *)>;

/// The im2col matrix of the GEMM view (ConvDesc::gemmView): for the nhwc
/// layouts the whole batch as M x K (pixels x (kh, kw, c)), for nchw_fchw image
/// `image` as K x N ((c, kh, kw) x pixels); row-major into `out`.
void convIm2col(const ConvDesc &desc, const float *input, int64_t image,
                std::vector<float> &out);

/// output += conv(input, filter) by im2col and OpenBLAS cblas_sgemm (beta
/// 1), the way frameworks without a convolution kernel do it; `scratch`
/// holds the im2col matrix between calls.
void convIm2colSgemm(const ConvDesc &desc, const float *input,
                     const float *filter, float *output,
                     std::vector<float> &scratch);

/// Runs `kernel` on fresh buffers for each distribution and checks it.
/// Returns an error only for an invalid descriptor or allocation failure; a
/// wrong kernel gives a report with passed = false and the reason, such as
/// "uniform: O(0,3,5,2) = 1.5, expected 2.25 (fp64)" (O's coordinates in
/// the layout's order).
llvm::Expected<ValidationReport>
validateConv(const ConvDesc &desc, const ConvKernel &kernel,
             size_t workspaceBytes, const ValidationOptions &options = {});

} // namespace qimeng

#endif // QIMENG_RUNTIME_CONVVALIDATOR_H
