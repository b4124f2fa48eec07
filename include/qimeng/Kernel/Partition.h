//===- Partition.h - Splitting a GEMM across threads -------------*- C++
//-*-===//
//
// Multi-core kernels are the single-core kernel run once per part of C: a
// kernel emitted with `parallel` reads the rows [mBegin, mEnd) and columns
// [nBegin, nEnd) of C it owns from its workspace (docs/KernelContract.md),
// so each thread calls it with its own workspace. The partition is a pure
// function of (desc, config, threads): the validator, the benchmark and the
// pass all use this one, so what was validated is what runs.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_PARTITION_H
#define QIMENG_KERNEL_PARTITION_H

#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/WorkspaceHeader.h"
#include <cstdint>
#include <vector>

namespace qimeng {

/// The part of C one call computes: rows [mBegin, mEnd), columns
/// [nBegin, nEnd), all of K.
struct GemmRange {
  int64_t mBegin = 0, mEnd = 0, nBegin = 0, nEnd = 0;
  bool operator==(const GemmRange &o) const {
    return mBegin == o.mBegin && mEnd == o.mEnd && nBegin == o.nBegin &&
           nEnd == o.nEnd;
  }
};

/// Work below which another thread costs more than it brings: a fork/join
/// of an OpenMP team is microseconds, 2 MFLOP is about twenty: 128^3 (4.2
/// MFLOP) runs on two threads (161 GFLOPS on Zen 4 against 105 on one).
constexpr double kMinFlopsPerPart = 2e6;

/// Splits C into at most `threads` non-empty parts along the config's split
/// axis: N at multiples of nr, M at multiples of mr (mr and nr swapped for the
/// product transposed, whose nr blocks C's rows), or (auto) N when N has
/// at least `threads` register blocks (or as many as M), else M; always N
/// for a run-time M (each part then runs all of the call's rows). Fewer parts
/// when the problem is too small, so that each part has at least
/// `minFlopsPerPart` of work, or when the axis has fewer blocks than
/// threads. One part covers everything.
std::vector<GemmRange> partitionGemm(const GemmDesc &desc,
                                     const GemmConfig &config, int threads,
                                     double minFlopsPerPart = kMinFlopsPerPart);

/// The thread count partitionGemm gives `threads` for `config`: its number
/// of parts, at least 1 (what a config's `threads` field is set to).
int partitionedThreads(const GemmDesc &desc, const GemmConfig &config,
                       int threads);

/// The parts of C a kernel with `config` runs as, one call each
/// (partitionGemm over `config.threads`); empty for one thread.
std::vector<GemmRange> kernelParts(const GemmDesc &desc,
                                   const GemmConfig &config);

/// Writes `range` where a parallel kernel reads it (kRangeOffset).
void writeRange(void *workspace, const GemmRange &range);

} // namespace qimeng

#endif // QIMENG_KERNEL_PARTITION_H
