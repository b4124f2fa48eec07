//===- PrepackedB.h - B packed once, in a kernel's panel layout -*- C++ -*-===//
//
// A kernel emitted with B prepacked (GemmDesc::bPrepacked; a convolution's
// filter, ConvDesc::bPrepacked) runs no PACK B: its caller hands it B
// already in the layout its microkernel reads, packed once (constant
// weights, as oneDNN reorders its weights once). The layout is the
// kernel's: its header says it (qm.b_prepacked, docs/KernelContract.md
// "B prepacked"), and packB writes it.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_PREPACKEDB_H
#define QIMENG_KERNEL_PREPACKEDB_H

#include "qimeng/Kernel/KernelDesc.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>

namespace qimeng {

/// The panel layout of a prepacked B: per NR-wide sliver of N (columns
/// s*nr ..), kGroups groups of NR 32-bit lanes, lane (g, j) holding the
/// 4 / elementBytes consecutive k of group g of column j, zero past K and
/// past N; every byte plus 128 (its sign bit flipped) when plus128 (an s8
/// B against an s8 A read in place: VPDPBUSD takes B as the unsigned
/// bytes). Sliver s, group g, column j at byte ((s * kGroups + g) * nr +
/// j) * 4.
struct PrepackedB {
  int64_t nr = 0;
  int64_t kGroups = 0;
  int64_t elementBytes = 0;
  bool plus128 = false;

  /// Bytes of B packed for `n` columns.
  int64_t bytes(int64_t n) const {
    return (n + nr - 1) / nr * kGroups * nr * 4;
  }

  /// The layout of a kernel header's qm.b_prepacked value: "nr=48
  /// k_groups=2304 element_bytes=2 plus128=0".
  static llvm::Expected<PrepackedB> parse(llvm::StringRef header);

  /// Checks that `desc`'s B fits: its element size, K within kGroups.
  llvm::Error check(const GemmDesc &desc) const;
};

/// Packs B of `desc` (B(k, n) at b[k * ldb + n], or b[n * ldb + k] when
/// transB; desc.operandElementBytes() each) into `out`, layout.bytes(desc.n)
/// bytes.
void packB(const PrepackedB &layout, const GemmDesc &desc, const void *b,
           void *out);

} // namespace qimeng

#endif // QIMENG_KERNEL_PREPACKEDB_H
