//===- Partition.cpp ------------------------------------------------------===//
#include "qimeng/Kernel/Partition.h"
#include <algorithm>
#include <cstring>

using namespace qimeng;

/// Splits [0, extent) into at most `parts` pieces at multiples of `block`,
/// as even as the blocks allow (earlier pieces get the extra block).
static std::vector<std::pair<int64_t, int64_t>>
splitExtent(int64_t extent, int64_t block, int parts) {
  int64_t blocks = (extent + block - 1) / block;
  int64_t n = std::max<int64_t>(1, std::min<int64_t>(parts, blocks));
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t begin = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t count = blocks / n + (i < blocks % n ? 1 : 0);
    int64_t end = std::min(extent, begin + count * block);
    out.emplace_back(begin, end);
    begin = end;
  }
  return out;
}

std::vector<GemmRange> qimeng::partitionGemm(const GemmDesc &d,
                                             const GemmConfig &c, int threads,
                                             double minFlopsPerPart) {
  threads = std::max(1, threads);
  if (minFlopsPerPart > 0)
    threads = static_cast<int>(std::max<double>(
        1, std::min<double>(threads, d.flops() / minFlopsPerPart)));
  std::vector<GemmRange> parts;
  // The product transposed blocks C's rows by nr and its columns by mr.
  const bool transposed = c.product == Product::Transposed;
  const int64_t rowBlock = transposed ? c.nr : c.mr;
  const int64_t columnBlock = transposed ? c.mr : c.nr;
  int64_t nBlocks = (d.n + columnBlock - 1) / columnBlock;
  int64_t mBlocks = (d.m + rowBlock - 1) / rowBlock;
  // A run-time M leaves only N to split at compile time, a run-time N
  // only M; with both, the GEMM is one part.
  if (d.dynamicM && d.dynamicN)
    return {GemmRange{0, d.m, 0, d.n}};
  bool alongN = d.dynamicM ||
                (!d.dynamicN && (c.split == SplitAxis::N ||
                                 (c.split == SplitAxis::Auto &&
                                  (nBlocks >= threads || nBlocks >= mBlocks))));
  if (alongN) {
    for (auto [b, e] : splitExtent(d.n, columnBlock, threads))
      parts.push_back({0, d.m, b, e});
  } else {
    for (auto [b, e] : splitExtent(d.m, rowBlock, threads))
      parts.push_back({b, e, 0, d.n});
  }
  return parts;
}

int qimeng::partitionedThreads(const GemmDesc &desc, const GemmConfig &config,
                               int threads) {
  return static_cast<int>(
      std::max<size_t>(1, partitionGemm(desc, config, threads).size()));
}

std::vector<GemmRange> qimeng::kernelParts(const GemmDesc &desc,
                                           const GemmConfig &config) {
  if (config.threads <= 1)
    return {};
  return partitionGemm(desc, config, config.threads);
}

void qimeng::writeRange(void *workspace, const GemmRange &r) {
  int64_t v[4] = {r.mBegin, r.mEnd, r.nBegin, r.nEnd};
  std::memcpy(static_cast<char *>(workspace) + kRangeOffset, v, sizeof(v));
}
