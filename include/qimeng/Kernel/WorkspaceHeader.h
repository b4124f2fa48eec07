//===- WorkspaceHeader.h - What a caller writes into a kernel's workspace -===//
//
// A kernel's run-time arguments beyond its four pointers travel in the
// first 128 bytes of its workspace, the header (docs/KernelContract.md):
// the part of C a parallel kernel computes and the leading dimensions of a
// run-time-ld kernel, written by the caller before each call. The same
// layout on every target: the calling convention only has to carry A, B,
// C and the workspace.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_WORKSPACEHEADER_H
#define QIMENG_KERNEL_WORKSPACEHEADER_H

#include "qimeng/Kernel/KernelDesc.h"
#include <cstdint>

namespace qimeng {

/// Where a parallel kernel reads its part of C: four little-endian int64,
/// mBegin, mEnd, nBegin, nEnd.
constexpr uint64_t kRangeOffset = 24;

/// Where a run-time-ld kernel reads lda, ldb and ldc: three little-endian
/// int64, in elements.
constexpr uint64_t kLeadingDimsOffset = 64;

/// Where a convolution with run-time strides reads its input's three
/// outer strides (ConvDesc::inputStrides): the leading dimensions' slots,
/// which a convolution's GEMM does not use.
constexpr uint64_t kInputStridesOffset = kLeadingDimsOffset;

/// Where a run-time-K kernel reads K (GemmDesc::dynamicK): one
/// little-endian int64. (Other kernels may use the slot for themselves.)
constexpr uint64_t kRuntimeKOffset = 56;

/// Where a kernel with an epilogue reads its bias pointer (GemmDesc::bias).
constexpr uint64_t kBiasOffset = 112;

/// Where a kernel with a bf16 or f16 output (GemmDesc::halfOutput) reads D's
/// pointer, and, with run-time leading dimensions, ldd (one little-endian
/// int64, in 16-bit elements; the run-time K's slot, which such a kernel
/// does not use).
constexpr uint64_t kHalfOutputOffset = 120;
constexpr uint64_t kHalfOutputLdOffset = 56;

/// Bytes of the header; the kernel's own data follows.
constexpr uint64_t kWorkspaceHeaderBytes = 128;

/// Writes `desc`'s leading dimensions (ldd too, for a 16-bit output) where a
/// run-time-ld kernel reads them; nothing for a kernel with immediates.
void writeLeadingDims(void *workspace, const GemmDesc &desc);

/// Writes `desc`'s input strides where a run-time-strides convolution reads
/// them; nothing for one with immediates.
void writeInputStrides(void *workspace, const ConvDesc &desc);

/// Writes the bias pointer where a kernel with an epilogue reads it.
void writeBias(void *workspace, const float *bias);

/// Writes `desc`'s K where a run-time-K kernel reads it; nothing for a
/// kernel with K as an immediate.
void writeRuntimeK(void *workspace, const GemmDesc &desc);

/// The bias pointer written into `workspace` (null if none was).
const float *readBias(const void *workspace);

/// Writes D's pointer where a kernel with a bf16 or f16 output reads it.
void writeHalfOutput(void *workspace, void *d);

/// The 16-bit output's pointer written into `workspace`.
void *readHalfOutput(const void *workspace);

} // namespace qimeng

#endif // QIMENG_KERNEL_WORKSPACEHEADER_H
