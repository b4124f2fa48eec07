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

/// Bytes of the header; the kernel's own data follows.
constexpr uint64_t kWorkspaceHeaderBytes = 128;

/// Writes `desc`'s leading dimensions where a run-time-ld kernel reads
/// them; nothing for a kernel with immediates.
void writeLeadingDims(void *workspace, const GemmDesc &desc);

} // namespace qimeng

#endif // QIMENG_KERNEL_WORKSPACEHEADER_H
