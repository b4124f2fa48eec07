//===- BlockingModel.cpp - Analytical GEMM blocking -----------------------===//
//
// The model of Low et al., "Analytical Modeling Is Enough for High-Performance
// BLIS" (TOMS 2016), reduced to its cache-capacity rules:
//   kc: one packed B sliver (kc x nr floats) fills half of L1d, so it stays
//       there while the A sliver streams and C lives in registers;
//   mc: the packed A block (mc x kc) fills half of L2;
//   nc: the packed B panel (kc x nc) fills half of this core's share of L3.
// docs/BlockingModel.md explains the choices.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/Partition.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <numeric>

using namespace qimeng;

namespace {
// Per-target microkernel tables: data, not code. Preferred block first.
// Register use is mr * nr/lanes accumulators + nr/lanes B vectors + 1
// broadcast register, which must fit the register file; a block that needs
// one more names an order (bmem) that holds one B vector fewer.
const MicroKernelShape kAvx2Shapes[] = {
    {VectorIsa::Avx2, 6, 16, 4, 0, 0},
    {VectorIsa::Avx2, 4, 24, 4, 0, 0},
    {VectorIsa::Avx2, 8, 8, 4, 0, 0},
};
const MicroKernelShape kAvx512Shapes[] = {
    // Four B vectors a k step: the fewest loads per FMA; its sliver fills
    // twice L1d, which amortises the C tile's load and store over a deeper
    // K (measured on Zen 4 against 12x32 at half of L1d: 1.09-1.14x at
    // kc 128, 1.16-1.18x at 256, docs/BlockingModel.md).
    {VectorIsa::Avx512, 6, 64, 4, 0, 0, KStepOrder::Broadcast, 2.0},
    {VectorIsa::Avx512, 12, 32, 4, 0, 0},
    {VectorIsa::Avx512, 14, 32, 4, 0, 0},
    // As fast per FMA as 6x64 (leastPaddedBlock takes it where it pads M
    // or N less: 128 rows); its sliver fills twice L1d as 6x64's does (kc
    // 336 on Zen 4, side by side against kc 80: 128x3072x768 1.04-1.05x,
    // 128x768x768 and 128x768x3072 1.02x, docs/BlockingModel.md).
    {VectorIsa::Avx512, 8, 48, 4, 0, 0, KStepOrder::Broadcast, 2.0},
    // Seven rows: one output row of a 7-wide convolution layer per sliver.
    {VectorIsa::Avx512, 7, 32, 4, 0, 0},
    // 28 accumulators: the fourth B vector is read by its FMAs from L1.
    // Its sliver fills twice L1d too (kc 384 measured 1.05x kc 96 on
    // ResNet-50's res3 and res4 layers on Zen 5, docs/BlockingModel.md).
    // Only where such blocks pay (Target::fmaFromMemoryBlocksPay: not on
    // Intel's cores).
    {VectorIsa::Avx512, 7, 64, 4, 0, 0, KStepOrder::BMem, 2.0},
    // One vector: a GEMM of at most 16 columns (one sliver) and many rows,
    // A read in place (modelConfig's one-sliver rule, which also prefetches
    // A's rows 512 bytes ahead). Twelve rows (rows lda apart, 16 KiB at K =
    // 4096, share an L1 set: 14 and 16 rows fall behind), the broadcasts
    // embedded in the FMAs. Side by side on Zen 5 at 4096x16x4096 against
    // 8x48, which pads 16 columns to 48: 2.9x (211 GFLOPS; 14x16 1.8x,
    // 10x16 2.8x, 12x16 without the prefetch 2.3x); 4096x8x4096 2.9x.
    {VectorIsa::Avx512, 12, 16, 4, 0, 0, KStepOrder::Embedded, 0.5, true},
    // Eight rows where L1D has eight ways (modelConfig's one-sliver rule:
    // rows 4 KiB apart share one set). Side by side on Zen 4 (32 KiB, 8
    // ways) against 12x16: 4096x16x4096 1.26x, 4096x8x4096 1.29x,
    // 2048x16x1024 1.33x; the product transposed (its B^T's rows read in
    // place) at 8x4096x4096 1.25-1.28x, 16x4096x4096 1.27-1.29x,
    // 8x11008x4096 1.26x.
    {VectorIsa::Avx512, 8, 16, 4, 0, 0, KStepOrder::Embedded, 0.5, true},
};

// The dot-product kernels on AVX-512 (dotgemm.py): bf16 x bf16 -> f32 on
// VDPBF16PS, 8-bit x 8-bit -> s32 on VPDPBUSD. Each takes a group of k (2
// or 4) per 32-bit lane, so a B vector is 16 columns of a group of rows.
// The same register budget (mr * nr/16 accumulators, nr/16 B vectors, one
// broadcast); K unrolled in groups.
// The dot-product blocks in the model's order of preference where they
// waste as little of a problem (dotConfig): three or four B vectors first
// (12 rows of A read in place 4 KiB apart share one L1 set: 12 x 32 ran at
// 0.79x 6 x 64 on bf16 2048^3).
const MicroKernelShape kAvx512DotShapes[] = {
    {VectorIsa::Avx512, 8, 48, 4, 0, 0},
    {VectorIsa::Avx512, 6, 64, 4, 0, 0},
    {VectorIsa::Avx512, 7, 48, 4, 0, 0},
    {VectorIsa::Avx512, 4, 96, 4, 0, 0},
    {VectorIsa::Avx512, 12, 32, 4, 0, 0},
    {VectorIsa::Avx512, 14, 32, 4, 0, 0},
    // 16 rows by one vector: M of 9 to 16 in one A sliver (dotConfig).
    {VectorIsa::Avx512, 16, 16, 4, 0, 0},
};

// AMX (amx.py): one or two tiles of 16 rows by one or two of 16 columns;
// the tile step is the K unroll.
const MicroKernelShape kAmxShapes[] = {
    {VectorIsa::Amx, 32, 32, 1, 0, 0},
    {VectorIsa::Amx, 32, 16, 1, 0, 0},
    {VectorIsa::Amx, 16, 32, 1, 0, 0},
    {VectorIsa::Amx, 16, 16, 1, 0, 0},
};

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t roundDownAtLeast(int64_t v, int64_t m) {
  return std::max<int64_t>(m, v / m * m);
}
} // namespace

llvm::ArrayRef<MicroKernelShape>
qimeng::microKernelTable(VectorIsa isa, GemmPrecision precision) {
  // The dot-product kernels (bf16 and 8-bit) share their blocks.
  if (precision != GemmPrecision::F32)
    return isa == VectorIsa::Avx512 ? llvm::ArrayRef(kAvx512DotShapes)
           : isa == VectorIsa::Amx  ? llvm::ArrayRef(kAmxShapes)
                                    : llvm::ArrayRef<MicroKernelShape>();
  switch (isa) {
  case VectorIsa::Avx2:
    return kAvx2Shapes;
  case VectorIsa::Avx512:
    return kAvx512Shapes;
  case VectorIsa::Neon:
  case VectorIsa::Sve:
  case VectorIsa::Rvv:
  case VectorIsa::Amx:
  case VectorIsa::None:
    break;
  }
  return {};
}

int qimeng::epilogueVectorRegisters(const GemmDesc &desc) {
  const Activation &a = desc.activation;
  if (a.bound || a.leakySlope || !a.exact())
    return 4;
  if (desc.bias == GemmBias::Rows)
    return 3;
  return a.relu ? 2 : 0;
}

bool qimeng::epilogueFits(const GemmDesc &desc, const GemmConfig &config) {
  const int lanes = Target::vectorBits(config.isa) / 32;
  const int accumulators = config.mr * ((config.nr + lanes - 1) / lanes);
  return accumulators + epilogueVectorRegisters(desc) <=
         Target::vectorRegisters(config.isa);
}

bool qimeng::readsBInPlace(const GemmDesc &desc, int nr, VectorIsa isa) {
  return desc.bSliversInPlace(nr) ||
         (isa == VectorIsa::Avx512 && !desc.transB && !desc.bPrepacked);
}

bool qimeng::vectorBPackingFits(const GemmDesc &desc,
                                const GemmConfig &config) {
  if (config.packB == BPacking::Panels)
    return true;
  if (desc.precision != GemmPrecision::F32)
    return config.packB == BPacking::InPlace &&
           (desc.bTransposedRowsInPlace() || desc.bRowsStreamInPlace());
  if (isMatrixVectorForm(desc, config))
    return true;
  return config.packB == BPacking::InPlace
             ? readsBInPlace(desc, config.nr, config.isa)
             : desc.bSliversInPlace(config.nr);
}

bool qimeng::readsAInPlace(const GemmDesc &desc, int mr, VectorIsa isa,
                           BPacking packB) {
  return desc.aSliversInPlace() &&
         (!desc.runtimeLd || mr <= Target::directRowsWithRuntimeLd(
                                       isa, packB == BPacking::Panels));
}

GemmConfig qimeng::clampToProblem(GemmConfig c, const GemmDesc &d) {
  // The dot-product kernels' blocks hold whole groups of k (2 bf16, 4
  // bytes; f32's group is one k), AMX's whole tile steps (64 bytes of k).
  const int64_t kStep =
      c.isa == VectorIsa::Amx ? amxTileK(amxPackedElementBytes(d)) : d.kGroup();
  c.kc = std::max<int64_t>(1, std::min(c.kc, roundUp(d.k, kStep)));
  c.mc = std::min(c.mc, roundUp(d.m, c.mr));
  c.nc = std::min(c.nc, roundUp(d.n, c.nr));
  return c;
}

/// `c` with the register block `shape` and the cache blocking the model
/// gives it (not clamped to a problem).
static GemmConfig withShape(GemmConfig c, const MicroKernelShape &shape,
                            const Target &target) {
  c.mr = shape.mr;
  c.nr = shape.nr;
  c.order = shape.order;
  c.kUnroll = shape.kUnroll;
  c.prefetchA = shape.prefetchA;
  c.prefetchB = shape.prefetchB;

  const int64_t elem = 4;
  int64_t l1 = std::max<int64_t>(target.caches.l1d, 16 * 1024);
  int64_t l2 = std::max<int64_t>(target.caches.l2, 128 * 1024);
  int64_t l3 = std::max<int64_t>(target.caches.l3, l2);
  int64_t l3PerCore = l3 / std::max(1, target.cores);
  c.kc = roundDownAtLeast(
      static_cast<int64_t>(l1 * shape.bSliverL1dShare) / (c.nr * elem), 8);
  c.mc = roundDownAtLeast(l2 / 2 / (c.kc * elem), c.mr);
  c.nc = roundDownAtLeast(std::max(l3PerCore, l2) / 2 / (c.kc * elem), c.nr);
  // Past a few thousand columns a larger panel only costs workspace.
  c.nc = std::min<int64_t>(c.nc, roundDownAtLeast(8192, c.nr));
  return c;
}

/// The table's first block `nr` columns wide whose mr `fits`, of those whose
/// K step broadcasts A from a register (KStepOrder::Broadcast) and that are
/// not for one sliver only; nullptr where there is none.
template <typename MrFits>
static const MicroKernelShape *
broadcastBlock(llvm::ArrayRef<MicroKernelShape> table, int nr, MrFits fits) {
  for (const MicroKernelShape &s : table)
    if (s.nr == nr && fits(s.mr) && s.order == KStepOrder::Broadcast &&
        !s.oneSliverOnly)
      return &s;
  return nullptr;
}

/// Of the table's blocks as fast per FMA as its preferred one (as many
/// accumulators, at most 10% more loads per FMA: 8x48 beside 6x64), the one
/// whose tiles pad M and N least, where that is at least 1% less work than
/// the preferred block's tiles.
static const MicroKernelShape &
leastPaddedBlock(llvm::ArrayRef<MicroKernelShape> table, const GemmDesc &desc) {
  const MicroKernelShape &first = table.front();
  const int lanes = Target::vectorBits(first.isa) / 32;
  auto accumulators = [&](const MicroKernelShape &s) {
    return s.mr * (s.nr / lanes);
  };
  auto loadsPerFma = [&](const MicroKernelShape &s) {
    return double(s.mr + s.nr / lanes) / accumulators(s);
  };
  auto padded = [&](const MicroKernelShape &s) {
    return double(roundUp(desc.m, s.mr)) * double(roundUp(desc.n, s.nr));
  };
  const MicroKernelShape *best = &first;
  for (const MicroKernelShape &s : table)
    if (accumulators(s) == accumulators(first) &&
        loadsPerFma(s) <= 1.1 * loadsPerFma(first) && padded(s) < padded(*best))
      best = &s;
  return padded(*best) <= 0.99 * padded(first) ? *best : first;
}

/// Whether B's fused packing pays for a GEMM blocked `kc` deep: K within
/// one kc block, or a target where the fused tiles' prefetch of the next
/// panel does not cost more than the pass it saves.
static bool fusedPackingPays(const GemmDesc &desc, int64_t kc,
                             const Target &target) {
  return desc.k <= kc || target.fusedPackingAcrossKBlocksPays();
}

/// The most cache lines of B's next panel a K loop iteration of the in-place
/// sweep prefetches (sgemm.py's SWEEP_LINES, docs/KernelContract.md "B in
/// place, swept"): past it the emitter makes no sweep.
constexpr int64_t kSweepLines = 8;

/// Whether sgemm.py sweeps `c`'s B in place (sweep_lines_in_place), so
/// that a config's sweepb=1 is a kernel that sweeps: all of M one row
/// block, K more than one block (or read at run time), and at most
/// kSweepLines lines a K loop iteration (nr * 4 * ku bytes of each row per
/// row sliver; six rows' one 64-wide sliver would take 16).
static bool emitterSweepsBInPlace(const GemmDesc &desc, const GemmConfig &c) {
  const int64_t slivers = (desc.m + c.mr - 1) / c.mr;
  const int64_t lines =
      (int64_t(c.nr) * 4 * c.kUnroll + 64 * slivers - 1) / (64 * slivers);
  return lines <= kSweepLines && (desc.dynamicK || desc.k > c.kc) &&
         roundUp(desc.m, c.mr) <= c.mc;
}

/// B's K rows, ldb apart, are larger than L3: B read in place streams from
/// memory at every call.
static bool bRowsLargerThanL3(const GemmDesc &desc, const Target &target) {
  return 4.0 * double(desc.k) * double(desc.ldb) > double(target.caches.l3);
}

/// The model's config; `bInPlace` allows reading B in place for few rows,
/// `oneSliver` the blocking for one column sliver (plain GEMMs: the
/// convolutions' model has its own rules for their A); `threads` the
/// threads the caller will run it on (rules that pay on one thread only
/// apply where the problem runs as one part).
static llvm::Expected<GemmConfig> modelConfig(const GemmDesc &desc,
                                              const Target &target,
                                              bool bInPlace, bool oneSliver,
                                              int threads) {
  if (auto err = desc.verify())
    return std::move(err);
  VectorIsa isa = target.bestIsa();
  const int lanes = Target::vectorBits(isa) / 32;
  auto table = microKernelTable(isa);
  if (table.empty())
    return llvm::createStringError(
        llvm::formatv("target {0} ({1}) has no vector isa the emitters "
                      "support; need avx2 and fma, or avx512f and fma",
                      target.triple, target.cpu)
            .str());
  // Few rows of A (M within a register block or two): B is used once, so
  // packing it only doubles B's traffic. Read it in place with the widest
  // block whose nr divides N, of those that take no more row slivers (each
  // a pass over B's kc rows) than the first (16x3072x768 on AVX2: 6x16's
  // three passes over 4x24's four, 1.28x on Zen 1; docs/BlockingModel.md).
  // A prepacked B (constant weights) takes the same block over its
  // panels, of exactly M rows: 1x4096x4096 1.34x, 1x768x3072 1.03x,
  // 1x3072x768 0.98x B read in place, side by side on Zen 5 (the general
  // rules' 6x64 for one row: 1.28x, 0.94x, 0.90x).
  const MicroKernelShape *chosen = &table.front();
  BPacking packB = BPacking::Panels;
  bool fewRows = false;
  auto slivers = [&](const MicroKernelShape &s) {
    return (desc.m + s.mr - 1) / s.mr;
  };
  if (bInPlace && desc.m <= 16) {
    // The widest block that `reads` B, of those that take no more row
    // slivers than the first.
    auto takeWidest = [&](auto reads) {
      for (const MicroKernelShape &s : table)
        if (reads(s) && (!fewRows || (s.nr > chosen->nr &&
                                      slivers(s) <= slivers(*chosen)))) {
          chosen = &s;
          fewRows = true;
        }
    };
    takeWidest([&](const MicroKernelShape &s) {
      return desc.bSliversInPlace(s.nr) || desc.bPrepacked;
    });
    // No block's nr divides N (1x1000x300, a classifier's 1000 columns):
    // on AVX-512 the widest such block all the same, its last sliver's
    // loads of B masked, rather than B packed at each call for one pass of
    // few rows. Side by side on Zen 4 against the same block with B packed,
    // 1.4x (16 rows) to 3x (one row): docs/BlockingModel.md, "Few rows of
    // A: B in place". A run-time N likewise (its last sliver's lanes set
    // from the call's columns; but see below for more than eight rows).
    if (!fewRows)
      takeWidest([&](const MicroKernelShape &s) {
        return readsBInPlace(desc, s.nr, isa);
      });
    if (fewRows && !desc.bPrepacked)
      packB = BPacking::InPlace;
  }
  // Seven or eight rows against B in place on AVX-512: one row sliver of
  // two vectors (the 12x32 block narrowed to M rows) rather than the 6x64
  // block's two slivers, the second of one or two rows, its FMAs mostly
  // padding; at kc 16 (below). Side by side on Zen 5 against 6x64 at kc
  // 32: 8x4096x4096 1.22-1.26x, 8x11008x4096 1.17x, 8x2048x2048 1.28x,
  // 8x1024x4096 1.30x, 8x768x768 1.21x, 7x4096x4096 1.30x, 7x3072x768
  // 1.37x (kc 32: 1.12-1.18x). 16 rows in two such slivers: 0.88-1.16x
  // (not taken). Three to six rows likewise where B streams from memory
  // (larger than L3), rather than the 6x64 block narrowed to them: its K
  // loop would prefetch 16 lines of B's next panel an iteration, past the
  // sweep's 8 (kSweepLines), so B streamed unswept. Side by side on Zen 4
  // against 3x64 .. 6x64 at kc 32, 1 thread: 3x4096x4096 1.83x,
  // 4x4096x4096 2.20x, 5x4096x4096 2.04x, 6x4096x4096 2.29x, 4x11008x4096
  // 1.75x, 6x11008x4096 1.93x, 4x4096x11008 1.83x; 2 threads: 4x4096x4096
  // 1.51x, 6x4096x4096 1.79x. B in L3 (4x768x768, 6x3072x768,
  // 6x768x3072): 0.99-1.01x on 1 thread, 0.89-0.95x on 2 (not taken).
  // One and two rows keep their own rules (0.94x, 1.04x). A run-time N
  // takes the block as well, its last sliver masked (B unswept: against
  // 4x64 and 6x64 at kc 16 on Zen 5, 4x4096x4096 1.27x, 8x4096x4096
  // 1.23x).
  const bool bRowsStream = bRowsLargerThanL3(desc, target);
  const MicroKernelShape *oneSliverOfTwoVectors =
      packB == BPacking::InPlace && isa == VectorIsa::Avx512 &&
              (desc.m > 6 || (desc.m > 2 && bRowsStream)) &&
              desc.m <= kF32TwoVectorSliverRows &&
              (desc.bSliversInPlace(2 * lanes) || desc.dynamicN)
          ? broadcastBlock(table, 2 * lanes,
                           [&](int mr) { return mr >= desc.m; })
          : nullptr;
  // Thirteen to sixteen rows against B in place on AVX-512 whose N is a
  // multiple of 48: two slivers of the 8x48 block (none of padding at 16
  // rows, where 6x64's three pad two) at kc 256. Side by side on Zen 5
  // against 6x64 at kc 32: 16x3072x768 1.15-1.27x, 16x6144x1024 1.31x,
  // 16x3072x4096 1.18x, 16x1536x1536 1.11x, 16x9216x768 1.08x, 14x3072x768
  // 1.10-1.24x, 13x3072x768 1.23x (kc 64: 1.03-1.20x, kc 128 0.96-1.28x;
  // 7x48 0.64-0.93x at 16 rows).
  const MicroKernelShape *twoSliversOfThreeVectors =
      packB == BPacking::InPlace && isa == VectorIsa::Avx512 && desc.m > 12 &&
              desc.m <= 16 && desc.bSliversInPlace(3 * lanes)
          ? broadcastBlock(table, 3 * lanes, [](int mr) { return mr == 8; })
          : nullptr;
  if (oneSliverOfTwoVectors)
    chosen = oneSliverOfTwoVectors;
  if (twoSliversOfThreeVectors)
    chosen = twoSliversOfThreeVectors;
  // One column sliver (N is a block's nr, or below one vector: that
  // block's columns past N masked) and many rows: the table's preferred
  // block of that width (its cache blocks below). Its rows of A, read in
  // place lda apart (often a multiple of 4 KiB), share one L1 set, and an
  // x86 L1D, virtually indexed within a 4 KiB page, has a way per 4 KiB of
  // its size: a block for one sliver only takes at most that many rows
  // (12 on Zen 5's 48 KiB, 8 on Zen 4's 32 KiB).
  const int64_t l1dWays = std::max<int64_t>(target.caches.l1d / 4096, 1);
  const MicroKernelShape *sliverBlock = nullptr;
  if (oneSliver && !fewRows)
    for (const MicroKernelShape &s : table)
      if (!sliverBlock && desc.m >= 4 * s.mr &&
          (s.nr == desc.n || (s.nr == lanes && desc.n < s.nr)) &&
          (!s.oneSliverOnly || s.mr <= l1dWays))
        sliverBlock = &s; // the table's preferred block of that width
  if (sliverBlock)
    chosen = sliverBlock;
  // A plain GEMM takes the block that pads its tiles least of those as
  // fast per FMA (128x768: 8x48 leaves no row of padding where 6x64 pads
  // 4 of 128).
  if (oneSliver && !fewRows && !sliverBlock)
    chosen = &leastPaddedBlock(table, desc);
  GemmConfig c;
  c.packB = packB;
  c.isa = isa;
  c = withShape(c, *chosen, target);
  // Fewer rows than the block has (B in place or prepacked): a block of
  // exactly those rows, so that no FMA works on padding
  // (docs/BlockingModel.md), and A in place is judged by them
  // (8x4096x4096's 12x32 block narrowed to 8 rows reads A in place with a
  // run-time lda).
  if (fewRows)
    c.mr = static_cast<int>(std::min<int64_t>(c.mr, desc.m));
  // A as stored is read in place (a run-time lda for at most 17 rows, 9
  // with B not in panels) or
  // copied in rows, the cheaper packing; a transposed A is packed k-major
  // (docs/BlockingModel.md, "A in place").
  const bool aInPlace = oneSliver && readsAInPlace(desc, c.mr, c.isa, c.packB);
  if (oneSliver && !desc.transA)
    c.aLayout = aInPlace ? ALayout::Direct : ALayout::Rows;
  // With A in place, L2 holds the packed B panel while A's rows stream
  // past it: kc x nc fills half of L2 (no A block is packed there).
  const int64_t l2Bytes = std::max<int64_t>(target.caches.l2, 128 * 1024);
  if (aInPlace && packB == BPacking::Panels) {
    const int64_t kcBytes = std::min(c.kc, desc.k) * 4;
    c.nc = roundDownAtLeast(l2Bytes / 2 / kcBytes, c.nr);
    // Where M takes several row blocks, the rows of A a block's sliver
    // calls read (mc x kc, re-read for every sliver of the panel) share
    // L2 with the panel: together at most three quarters of it, the rest
    // for C's tiles and the lines the prefetchers bring. mc from half of
    // L2 beside a panel in the other half overfills it (2048^3 on a 512
    // KiB L2: mc 252 -> 126, 1.05x side by side; docs/BlockingModel.md).
    // All of M in one block stays one block (its B packed as it is first
    // read, packb=fused, below).
    const int64_t cols = std::min(c.nc, roundUp(desc.n, c.nr));
    const int64_t budget = l2Bytes * 3 / 4 / kcBytes;
    if (roundUp(desc.m, c.mr) > c.mc && c.mc + cols > budget)
      c.mc = roundDownAtLeast(std::max<int64_t>(budget - cols, c.mr), c.mr);
  }
  // A problem whose operands together fit half of L2 (64^3, 128^3):
  // packing buys no locality, so B is read in place (when its slivers can
  // be) too (docs/BlockingModel.md).
  const double footprint =
      4.0 * (double(desc.m) * desc.k + double(desc.k) * desc.n +
             double(desc.m) * desc.n);
  if (oneSliver && packB == BPacking::Panels && footprint <= l2Bytes / 2 &&
      !desc.transA && desc.bSliversInPlace(c.nr))
    c.packB = BPacking::InPlace;
  // All of M in one row block (M <= mc): every packed B sliver is used by
  // that block's tiles only, so they pack it as they first read it
  // (packb=fused) and no PACK B pass runs (not with a run-time K, whose
  // header slot is the fused packing's).
  else if (oneSliver && c.packB == BPacking::Panels && !sliverBlock &&
           desc.bSliversInPlace(c.nr) && !desc.dynamicK &&
           roundUp(desc.m, c.mr) <= c.mc &&
           fusedPackingPays(desc, c.kc, target))
    c.packB = BPacking::Fused;
  // Seventeen to 48 rows in one row block against a B larger than L3 (it
  // streams from memory at every call) on AVX-512 and one thread: B read
  // in place (the last sliver's loads masked where nr does not divide N),
  // the K loops prefetching its next panel into L2 (sweepb), not packed as
  // the tiles first read it. Side by side on Zen 5 against
  // packb=fused (6x64, kc 384, nc 320) or panels (8x48, kc 512):
  // 20x4096x4096 1.13x, 24x4096x4096 1.29x, 24x3072x4096 1.37x,
  // 32x4096x4096 1.20x, 48x4096x4096 1.16x; 64 rows 0.99x and 96 rows
  // 0.96x (not there). A run-time N or K too (sgemm.py sweeps those): the
  // run-time form of 24, 32 and 48 rows 1.19x, 1.24x and 1.02x the static
  // fused form, where it packed B (docs/Benchmarks.md, section 37).
  if (bInPlace && oneSliver && isa == VectorIsa::Avx512 && !fewRows &&
      !sliverBlock && desc.m > 16 && desc.m <= kF32SweptInPlaceRows &&
      bRowsLargerThanL3(desc, target) && !desc.transB && !desc.bPrepacked &&
      c.packB != BPacking::InPlace &&
      (!desc.runtimeLd || c.aLayout == ALayout::Direct) &&
      partitionedThreads(desc, c, threads) == 1 &&
      emitterSweepsBInPlace(desc, c)) {
    c.packB = BPacking::InPlace;
    c.sweepB = true;
  }
  // One column sliver with A packed: each packed block is used once, so
  // all of K in one block while B's sliver fits L2 (C then stays in
  // registers over K), a few row blocks per packed block. With A in place
  // nothing is packed: the sliver takes a quarter of L2 (the C tile's
  // updates amortised over a deeper K; A's rows stream past it), and mc
  // stands.
  // A in place past a narrow sliver (at most three vectors) streams A
  // faster than the prefetchers fetch it: its rows are prefetched 512
  // bytes ahead. Side by side on Zen 5: 4096x32x4096 1.12x, 4096x48x4096
  // 1.03x (4096x64x4096 1.00x, 2048x32x1024 in L3 1.00x: not set there).
  if (sliverBlock) {
    c.kc = std::min(
        desc.k, roundDownAtLeast(l2Bytes / (aInPlace ? 4 : 1) / (c.nr * 4), 8));
    if (!aInPlace)
      c.mc = 4 * c.mr;
    if (aInPlace && c.nr <= 3 * lanes && c.prefetchA == 0)
      c.prefetchA = 512;
  }
  if (packB == BPacking::InPlace) {
    // B streams from memory once, row by row: each sweep of the column
    // blocks walks kc rows of B at once, kc streams for the prefetchers.
    // With at most two rows each B vector feeds two FMAs at most and the
    // product runs at the read bandwidth: kc 8; with more, kc 32 (16 for
    // seven or eight rows in one sliver of two vectors, 256 for two
    // slivers of three, above), and the
    // A sliver outer (ir-jr), so that each row sliver sweeps B's kc rows
    // from end to end, in the order they lie (the block's rows narrowed to
    // M's above).
    // A block whose nr floats are not whole cache lines (AVX2's 4x24: 96
    // bytes) shares a line between neighbouring slivers, and its kc rows,
    // often an L1 set's worth apart (N a multiple of 1024), evict it
    // before the next sliver reads it: kc 8 (4x3072x4096 on Zen 1, 1.79x
    // kc 32; docs/BlockingModel.md).
    const bool wholeLines = c.nr * 4 % 64 == 0;
    c.kc = desc.m <= 2 || !wholeLines ? 8
           : oneSliverOfTwoVectors    ? 16
           : twoSliversOfThreeVectors ? 256
                                      : 32;
    c.loop = MacroLoopOrder::IrJr;
    // A sliver of one cache line a row (the one-vector block, 16 floats
    // on AVX-512) reads one line of each of B's rows, ldb apart, and
    // moves on: the prefetchers do not follow, so each k step prefetches
    // its row 512 bytes (eight slivers) ahead, 1024 where a sweep walks
    // only 8 rows (kc 8). Side by side on Zen 5, against none, B streaming
    // from memory: 4x3088x4096 1.47x, 8 rows 2.20x, 16 rows 1.68x (256
    // bytes: 1.61x, 1.83x, 1.76x); 2 rows 1.26x, and 1.17x more at 1024
    // bytes (1 row 1.09x more); B in L3 (8x1040x4096, 8x3088x1024)
    // 0.99-1.00x, 2x1040x4096 at 1024 0.98x. Wider slivers (6x64 at
    // 8x4096x4096 and 8x11008x4096) lose 5-9% with it.
    const bool oneLineSliver = c.nr * 4 == 64;
    if (oneLineSliver && c.prefetchB == 0)
      c.prefetchB = c.kc == 8 ? 1024 : 512;
    // A B larger than L3 streams from memory at every call, and every
    // tile waits on its lines: the K loops prefetch its next panel into L2
    // (sweepb; the emitter applies it where all of M is one row block, at
    // most 8 lines a K loop iteration: from seven rows on with these
    // blocks). Side by side on Zen 5, old against new emitters:
    // 12x4096x4096 1.19-1.24x, 16x4096x4096 1.13x, 12x3072x4096 1.11x,
    // 8x11008x4096 (6x64) 1.27-1.35x; B in L3 (16x3072x768, 12x3072x768,
    // 16x768x3072, 16x2048x2048) 0.94-0.99x: not there.
    // With a run-time ldb only where A is read in place (the walk's row
    // slots are the A slots' spare ones, its register IC's: sgemm.py's
    // sweep_register). On Zen 4, the run-time form against the immediate
    // one side by side: 16x4096x4096 0.98x (0.66x unswept). A run-time M
    // (the pass's m-bucket kernels) is swept as its representative rows
    // are, and so are a run-time N and K (sgemm.py walks the next panel a
    // row at a time and reads K from the header). Side by side on Zen 5,
    // M, N and K at run time, swept in place against the immediate form:
    // 4x4096x4096 0.99x, 8x4096x4096 1.08x, 12x4096x4096 0.91x,
    // 16x4096x4096 0.96x, 8x11008x4096 1.02x, where the run-time form
    // read 0.59-0.93x before, B packed (12, 16 rows: 0.73-0.76x) or in
    // place unswept (docs/Benchmarks.md, section 38).
    const bool runtimeWalk = c.aLayout == ALayout::Direct;
    const bool sweepable = isa == VectorIsa::Avx512 &&
                           (!desc.runtimeLd || runtimeWalk) && bRowsStream;
    c.sweepB = sweepable && !oneLineSliver;
    // The one-line sliver is swept only with one to four rows on one
    // thread, over a shallow kc: kc 2 at a K unroll of 2 for one or two
    // rows, 4 for three or four, each row prefetched 2048 bytes ahead. On
    // Zen 5 side by side with the unswept kc 8 (kc 32 at four rows):
    // 1x3088x4096 1.41-1.50x, 2x3088x4096 1.21-1.50x, 4x3088x4096 1.21x.
    // Past four rows (kc 32) the sweep does not pay (8x3088x4096 unswept
    // 1.18x swept, 16x3088x4096 0.98x), nor on two threads, where each
    // part's tiles are half as many for the same walk (0.85-0.97x at one
    // and two rows, 0.68-0.88x at four).
    const bool onePart = partitionedThreads(desc, c, threads) == 1;
    if (sweepable && oneLineSliver && desc.m <= 4 && onePart) {
      c.kc = c.kUnroll = desc.m <= 2 ? 2 : 4;
      c.prefetchB = 2048;
      c.sweepB = true;
    }
    // Up to eight rows on more than one thread, each part a share of the
    // columns: the one-line sliver runs down kc 128 rows of its column,
    // each row prefetched 128 bytes ahead, rather than across a shallow kc.
    // On Zen 5 at two threads, side by side with kc 8 / 32: 1x3088x4096
    // 1.21-1.45x, 2x3088x4096 1.27-1.29x, 4x3088x4096 1.29x, 8x3088x4096
    // 1.20x, 1x6160x4096 1.21x, 2x1040x4096 (B in L3) 1.97x, 8x1040x4096
    // 1.09x, 4x1040x1024 1.02x; 14x3088x4096 (two slivers of 7 rows)
    // 0.95x, 16x3088x768 1.03x: not past eight rows.
    else if (oneLineSliver && desc.m <= 8 && !onePart) {
      c.kc = 128;
      c.prefetchB = 128;
    }
    // Each of those rows read whole: a column block narrower than N cuts
    // every row of B into pieces read far apart in time, each a stream
    // the prefetchers start again. So the block takes all of N while C's
    // rows under it (M x nc) fit half of L2 (1x4096x4096 on Zen 1, nc
    // 2048 -> 4096: 1.12-1.20x side by side; docs/BlockingModel.md).
    const int64_t cRowsFit = roundDownAtLeast(l2Bytes / 2 / (desc.m * 4), c.nr);
    c.nc = std::max(c.nc, std::min(roundUp(desc.n, c.nr), cRowsFit));
    // The one-vector block against a B that fits half of L2 (nothing
    // streams from memory): one row sliver of all of M (its accumulators
    // and one B vector fit, the broadcasts embedded) and all of K in one
    // block, so that C's tile is stored once. Side by side on Zen 5
    // against 12 rows at kc 32: 16x16x4096 1.38x, 13x16x4096 1.72x,
    // 16x80x768 1.43x, 16x16x768 2.46x (16x3088x4096, B in memory: 0.90x,
    // not taken).
    GemmConfig allRows = c;
    allRows.mr = static_cast<int>(desc.m);
    if (chosen->oneSliverOnly && 4 * desc.k * desc.n <= l2Bytes / 2 &&
        allRows.vectorRegistersNeeded(lanes) <= Target::vectorRegisters(isa) &&
        epilogueFits(desc, allRows)) {
      c.mr = allRows.mr;
      c.kc = desc.k;
      c.loop = MacroLoopOrder::JrIr;
    }
    // More than 13 rows of A in place on one L1 set (lda a multiple of 4
    // KiB) fall behind (16 rows of a 16-wide B ran at 0.7x 13): two
    // slivers of half of them each. Side by side on Zen 5 against the
    // block above: 16x16x4096 1.69x, 16x16x3072 1.66x, 16x32x4096 1.70x
    // (12 + 4 rows), 14x16x4096 1.29x (7 + 7), 15x16x4096 1.19x (8 + 7);
    // B streaming from memory, 16x3088x4096 and 14x3088x4096 1.15x (12 +
    // 4 before); 13 rows stay one sliver (8 + 5: 0.72x), as do 12 (0.69x).
    if (aInPlace && desc.m > 13 && c.mr > (desc.m + 1) / 2 &&
        desc.lda * 4 % 4096 == 0)
      c.mr = static_cast<int>((desc.m + 1) / 2);
    // The sweep only where the emitter makes one.
    if (c.sweepB && !emitterSweepsBInPlace(desc, c))
      c.sweepB = false;
    // A run-time N past kF32TwoVectorSliverRows rows against a B larger
    // than L3, where the sweep does not apply: this blocking with B
    // packed. In place unswept they lose to it, and the general blocking
    // (kc 384, nc 320) loses more. Side by side on Zen 5, the in-place and
    // the general blocking against this: 12x4096x4096 0.53x and 0.92x,
    // 16x4096x4096 0.48x and 0.86x (docs/Benchmarks.md, section 33).
    if (desc.dynamicN && desc.m > kF32TwoVectorSliverRows && bRowsStream &&
        !c.sweepB)
      c.packB = BPacking::Panels;
  }
  // Rows against a wider B^T (tokens through a torch linear layer whose
  // weights are an argument) on AVX-512: the product transposed, C^T =
  // B^T * A^T, B^T's rows read in place as the kernel's A (a_layout
  // direct: the weights stream once and nothing packs them) and A's rows
  // packed as its B, the tiles transposed into C a row of C at a time; the
  // blocking the swapped problem's model. Side by side on Zen
  // 5 against B^T packed: docs/BlockingModel.md, "The product
  // transposed".
  // From 8 rows where B^T is larger than L3 (it streams from memory
  // either way, and the form re-reads each group of its rows for every
  // pair of A's rows): side by side against the form, 8x4096x4096 1.22x,
  // 12x4096x4096 1.59x, 12x11008x4096 1.65x; B^T in L3 0.61-0.83x
  // (8x3072x768, 8x4096x1024, 8x2048x2048, 12x3072x768).
  const bool bStreams =
      4.0 * double(desc.n) * double(desc.k) > double(target.caches.l3);
  if (bInPlace && oneSliver && isa == VectorIsa::Avx512 &&
      mayTransposeProduct(desc) &&
      desc.m >= (bStreams ? kF32TransposedProductStreamedRows
                          : kF32TransposedProductRows) &&
      desc.m <= kF32TransposedProductMaxRows &&
      desc.n >= kF32TransposedProductWidth * desc.m) {
    const GemmDesc product = transposedProductBlocking(desc);
    auto swapped = modelConfig(product, target, bInPlace, oneSliver, threads);
    if (!swapped)
      return swapped.takeError();
    // Its tiles update C across C's rows, ldc apart (at an ldc of a
    // multiple of 1 KiB all on one L1 set), once a kc block: past one
    // vector of C's rows, the 12x32 block (32 of C's rows, 12 of its
    // columns a tile) and kc up to 1024, with every row of C (up to 256)
    // in one column block. Side by side on Zen 5 against the swapped
    // problem's 6x64 at kc 384: 1.43-1.48x at 128 and 256 rows of 4096 x
    // 4096 and 3072 x 768, 1.17-1.21x at 64 rows; mc and pfa change
    // nothing, embedded broadcasts 0.82-0.88x. With a run-time lda the K
    // loop reaches 17 rows in place with B in panels
    // (Target::directRowsWithRuntimeLd): 12x32 too; 8x48 (0.85x 12x32 at
    // 128 rows) only where it would reach fewer.
    if (desc.m > lanes) {
      const int blockRows =
          readsAInPlace(product, 12, isa, swapped->packB) ? 12 : 8;
      if (const MicroKernelShape *s =
              broadcastBlock(table, 384 / blockRows,
                             [&](int mr) { return mr == blockRows; })) {
        GemmConfig t = withShape(*swapped, *s, target);
        t.kc = std::min<int64_t>(product.k, 1024);
        t.mc = roundDownAtLeast(l2Bytes / 2 / (t.kc * 4), t.mr);
        t.nc = std::min<int64_t>(roundUp(product.n, t.nr), 256);
        *swapped = clampToProblem(t, product);
      }
    }
    if (transposedProductFits(*swapped)) {
      swapped->product = Product::Transposed;
      return *swapped;
    }
  }
  // Few rows against B^T (a token through a torch linear layer whose
  // weights are an argument) on AVX-512: B^T's rows read where they lie,
  // a dot product per column of C (the matrix-vector form, dotgemm.py),
  // so that B^T streams from memory once where packing it reads and writes
  // all of it for one use. The panel blocking above stays in the config:
  // packb=1 in the tuner's space is that kernel.
  // (The form's masks and BZHI need AVX512BW, AVX512VL and BMI2, as the
  // dot kernels' do.)
  if (bInPlace && oneSliver && isa == VectorIsa::Avx512 &&
      target.hasFeature("avx512bw") && target.hasFeature("avx512vl") &&
      target.hasFeature("bmi2") && desc.m <= kF32MatrixVectorRows &&
      !desc.bPrepacked && desc.bTransposedRowsInPlace())
    c.packB = BPacking::InPlace;
  return clampToProblem(c, desc);
}

static llvm::Expected<GemmConfig> dotConfig(const KernelProblem &problem,
                                            const Target &target);

llvm::Expected<GemmConfig> qimeng::chooseGemmConfig(const GemmDesc &desc,
                                                    const Target &target,
                                                    int threads) {
  if (desc.precision != GemmPrecision::F32)
    return dotConfig(KernelProblem(desc), target);
  return modelConfig(desc, target, /*bInPlace=*/true, /*oneSliver=*/true,
                     threads);
}

/// The register block of the sketch-driven ISAs, which read A and B in
/// place, chosen by llvm-mca's models of the paper's cores (docs/
/// CrossTargets.md): NEON 7 rows by three q registers (21 accumulators, 7 A
/// and 3 B registers of 32; 98% of Neoverse-N1's two FMAs a cycle); RVV at
/// LMUL 4, 6 rows by one group (6 accumulator groups, two for B, so that the
/// next row of B loads while the FMAs issue; 93% of the X60's one LMUL-1
/// vfmacc a cycle), K unrolled 8 times.
/// A convolution (nhwc) is the same GEMM with A gathered per filter tap.
static llvm::Expected<GemmConfig> sketchConfig(const KernelProblem &problem,
                                               const Target &target) {
  if (const ConvDesc *conv = problem.conv())
    if (auto err = conv->verify())
      return std::move(err);
  if (auto err = problem.gemm().verify())
    return std::move(err);
  GemmConfig c;
  c.isa = target.bestIsa();
  // All of K in one block, B read in place: no model here sees the caches,
  // so K blocks with B's panels copied are left to a board's timings
  // (rankByModel's candidates, or kernel-config=kc=N,packb=1).
  c.kc = problem.gemm().k;
  c.packB = BPacking::InPlace;
  // A convolution's threads split its GEMM view's rows: an nhwc one's
  // output pixels (thousands, against tens of filters, so the parts
  // balance), an nchw one's filters (requiredSplit).
  if (problem.conv())
    c.split = SplitAxis::M;
  if (c.isa == VectorIsa::Neon) {
    c.mr = 7;
    c.nr = 12;
    c.kUnroll = 4;
  } else if (c.isa == VectorIsa::Sve) {
    // NEON's block in SVE vectors of the target's length (no model yet);
    // a scalable kernel's columns count at the least length, 128 bits.
    c.mr = 7;
    c.nr = 3 * (target.scalableVectors ? 128 : std::max(target.vlen, 128)) / 32;
    c.kUnroll = 4;
  } else {
    c.lmul = 4;
    c.mr = 6;
    c.nr = std::max(target.vlen, 128) * c.lmul / 32;
    c.kUnroll = 8;
  }
  return c;
}

std::optional<SplitAxis> qimeng::requiredSplit(const KernelProblem &problem,
                                               VectorIsa isa) {
  if (isSketchIsa(isa) && problem.conv() && !problem.conv()->isNhwc())
    return SplitAxis::M;
  return std::nullopt;
}

/// The share of an mr x nr block's tiles that is `desc`'s work: the share
/// of M its row blocks cover times the share of N its slivers do (edge
/// tiles compute rows and columns past the edges).
static double coveredShare(const GemmDesc &desc, int64_t mr, int64_t nr) {
  return double(desc.m) / double(roundUp(desc.m, mr)) * double(desc.n) /
         double(roundUp(desc.n, nr));
}

/// The axis threads split in an nchw convolution's GEMM view: its pixels
/// (N), so that each thread gathers only its own, unless there are fewer
/// pixels than filters (res5: 49 pixels, one sliver, for 512 filters):
/// then the filters (M), each thread gathering all of the few pixels.
static SplitAxis nchwSplit(const GemmDesc &view) {
  return view.n >= view.m ? SplitAxis::N : SplitAxis::M;
}

/// The dot-product GEMMs (dotgemm.py): bf16 x bf16 -> f32 on AVX512-BF16,
/// 8-bit x 8-bit -> s32 on AVX512-VNNI. 8 rows by three vectors (24
/// accumulators). kc deep: a packed B sliver (kc/group groups of nr dwords)
/// of an eighth of L2, 128 to 512 groups, since each kc block pays a C
/// tile update that costs more than streaming the sliver from L2 (measured
/// on Zen 4 for bf16, 1024^3 and 2048^3: kc 1024 1.08-1.14x kc 336, the
/// sliver that fills L1d); mc and nc from L2 and L3 for the A block and B
/// panel of these element sizes.
/// A convolution (nhwc, A gathered by dotconv.py) is its GEMM view with kc
/// the largest divisor of the contiguous run within that, in whole groups,
/// so that each packed row of a block is one piece of the input; threads
/// split the pixels (M), as for f32. An nchw convolution gathers B through
/// its tables, one k at a time: kc stays whole groups, A (the filter, as
/// stored) is read in place where a GEMM's would be, and threads split the
/// pixels (N).
bool qimeng::amxRowsCrowdL1(int64_t strideBytes, int64_t rows,
                            int64_t l1Bytes) {
  // 64 sets of 64-byte lines: rows a multiple of 64 bytes apart reach
  // 4096 / gcd(stride, 4096) of them.
  const int64_t ways = std::max<int64_t>(l1Bytes / 4096, 1);
  const int64_t sets = 4096 / std::gcd<int64_t>(strideBytes, 4096);
  const int64_t perSet =
      (rows + std::min(rows, sets) - 1) / std::min(rows, sets);
  return 3 * perSet > 2 * ways;
}

std::string qimeng::amxRefusal(const GemmDesc &d) {
  // (Run-time M, N and K the tiles take: amx.py's dynamic_m, dynamic_n
  // and dynamic_k, with B packed at each call.)
  return d.transA                   ? "A transposed"
         : d.bias == GemmBias::Rows ? "a bias along the rows"
         : !d.activation.exact()    ? "a smooth activation"
         : (d.bias != GemmBias::None || d.activation.any()) &&
                 isIntegerPrecision(d.precision)
             ? "an 8-bit epilogue"
             : "";
}

/// bf16 and 8-bit GEMMs on AMX tiles (amx.py), where the target has them
/// and the kernel takes the problem (amxRefusal): a 32 x 32 block (2 x 2
/// tiles); kc 512 bytes of k a row of A (256 bf16, 8 tile steps between
/// C's loads and stores), A's block in a third of L1d (one 32-row sliver
/// of 512 bytes a row, 16 KiB: it stays in L1 beside the B sliver that
/// streams past it from L2, 16 KiB more) and B's panel in half of L2. On a
/// 2-vCPU Xeon with AMX (L1d 48 KiB, L2 2 MiB), bf16, side by side against
/// kc 1 KiB with A's block in a quarter of L2: 1.49x at 1024^3, 1.35x at
/// 2048^3, 0.99x at 256^3; then one sliver a block against two (two
/// thirds of L1d, B's sliver and A's two filling it): bf16 1.01x at 256^3,
/// 1.06-1.13x at 512^3, 1.10-1.11x at 1024^3, 1.18x at 2048^3, 1.08-1.11x
/// at 128x3072x768; s8 1.01-1.06x at 128^3-512^3, 1.14-1.17x at 1024^3
/// and 2048^3; 0.98-0.99x at 128x768x768.
///
/// A is read in place (amx.py's a_layout direct: the tiles loaded where
/// A's rows lie, no PACK A) where K is whole tile steps and the block's
/// rows do not crowd one L1 set (amxRowsCrowdL1); with at most two
/// slivers of columns (N <= 64) kc is then all of K where B's panel fits
/// in half of L2, so that each row of A streams once, a page at a time
/// (those few slivers read A in place whatever its rows' L1 sets).
/// Side by side against A packed, bf16, 1 thread: 1.15x at 64^3 and
/// 256^3, 1.11-1.15x at 128x768x768, 2.0x at 4096x64x4096 (s8 1.9x: kc
/// 4096 against 1.07x with kc 512); 0.92x at 1024^3 and 2048^3 (rows 2
/// and 4 KiB apart: packed there).
///
/// An nhwc convolution (amx.AmxConv) takes the same, with kc the largest
/// whole tile steps within it that divide the run of consecutive k (C, or
/// KW*C), so that each packed row is one piece of the input; where no
/// tile step divides the run (the 3-channel stem: KW*C = 21), kc whole
/// runs within 1 KiB of packed k (the stem: all of K, 7 runs of 21 in 7
/// steps of 32), each run packed padded with zero k to whole steps; not
/// nchw. Its A is
/// read in place (the pixels' rows a pixel step apart; a tile across
/// output rows copied), kc then within 1 KiB of k and mc one block's
/// rows, so that the sliver's tiles stay in L1 while B's panel streams:
/// bf16, side by side against A packed, res2 3x3 1.33x, res3 1.34x, the 1x1
/// 256->64 1.33x, res4 and res5 (every tile across rows) 1.00-1.03x.
/// Its A and C tiles then hold whole pieces of output rows
/// (amxOutputRowTileRows: 14 pixels at ResNet-50's 56-, 28- and 14-wide
/// rows), so that no tile crosses a row and none is copied: side by side
/// against tiles of 16, bf16, res4 1.19-1.27x, res3 1.07x, res2 1.05x;
/// s8 res4 1.27x, res3 1.04x. (A 1x1 convolution's pixels lie the pixel
/// step apart across rows too: its tiles keep 16 rows, 1.02-1.03x.)
int64_t qimeng::amxOutputRowTileRows(int64_t outputWidth) {
  if (outputWidth % kAmxTileRows == 0)
    return kAmxTileRows;
  for (int64_t rows = kAmxTileRows - 1; rows >= 12; --rows)
    if (outputWidth % rows == 0)
      return rows;
  return kAmxTileRows;
}

static std::optional<GemmConfig> amxConfig(const KernelProblem &problem,
                                           const Target &target) {
  const GemmDesc desc = problem.gemm();
  const ConvDesc *conv = problem.conv();
  // Few rows against B^T (tokens through a linear layer) stay the
  // matrix-vector form, which reads B^T once and packs nothing. The tiles'
  // convolutions are nhwc ones into the f32 (s32) output.
  if (!target.hasAmx(isHalfPrecision(desc.precision)) ||
      !amxRefusal(desc).empty() || (!conv && dotReadsBInPlace(desc)) ||
      (conv && (!conv->isNhwc() || conv->halfOutput)))
    return std::nullopt;
  GemmConfig c;
  c.isa = VectorIsa::Amx;
  c.mr = 32;
  c.nr = 32;
  c.kUnroll = 1;
  // Bytes of k as packed (f16: four bf16 a k).
  const int64_t eb = amxPackedElementBytes(desc);
  const int64_t l1 = std::max<int64_t>(target.caches.l1d, 32 * 1024);
  const int64_t l2 = std::max<int64_t>(target.caches.l2, 256 * 1024);
  c.kc = 512 / eb;
  if (conv) {
    const int64_t step = amxTileK(eb), run = conv->contiguousRun();
    int64_t kc = 0;
    for (int64_t v = step; v <= std::min(run, c.kc); v += step)
      if (run % v == 0)
        kc = v;
    c.split = SplitAxis::M;
    // Consecutive pixels of an output row: the width stride apart.
    const int64_t pixelStep =
        conv->strideW * conv->inputStrides[2] * desc.operandElementBytes();
    // A prepacked filter, and f16 (split where it is packed), have no
    // padded runs.
    if (kc == 0 && (desc.bPrepacked || desc.precision == GemmPrecision::F16))
      return std::nullopt;
    if (kc == 0) {
      // No whole tile steps divide the run (the stem's 3 channels: KW*C =
      // 21): kc whole runs, each packed padded with zero k to whole tile
      // steps (amxPaddedRunSteps), as many as 1 KiB of packed k a row
      // holds, at most K.
      const int64_t runs =
          std::max<int64_t>(1, 1024 / eb / (amxPaddedRunSteps(run, eb) * step));
      c.kc = std::min(desc.k, runs * run);
    } else if (desc.precision != GemmPrecision::F16 &&
               !amxRowsCrowdL1(pixelStep, c.mr, l1)) {
      c.kc = kc;
      c.aLayout = ALayout::Direct;
      // Where an output row's last pixel is not the pixel step before the
      // next row's first (padding, a kernel wider than one pixel), tiles
      // of whole pieces of output rows.
      if (conv->strideH * conv->inputStrides[1] !=
          conv->ow() * conv->strideW * conv->inputStrides[2])
        c.mr = 2 * amxOutputRowTileRows(conv->ow());
      for (int64_t v = step; v <= std::min<int64_t>(run, 1024 / eb); v += step)
        if (run % v == 0)
          c.kc = v;
    } else {
      c.kc = kc;
    }
  } else if (desc.k % amxTileK(eb) == 0 && !desc.dynamicK &&
             desc.precision != GemmPrecision::F16) {
    // (f16 is split where it is packed: never in place.)
    // Few slivers of columns read each block of A's rows only once or
    // twice: in place whatever their L1 sets, all of K a block where B's
    // panel fits.
    const bool fewColumns = desc.n <= 2 * c.nr;
    const int64_t panel = (desc.n + c.nr - 1) / c.nr * c.nr * desc.k * eb;
    if (fewColumns && panel <= l2 / 2) {
      c.aLayout = ALayout::Direct;
      c.kc = desc.k;
    } else if (fewColumns ||
               !amxRowsCrowdL1(desc.lda * eb, std::min<int64_t>(c.mr, desc.m),
                               l1)) {
      c.aLayout = ALayout::Direct;
    }
  }
  c.mc = roundDownAtLeast(l1 / 3 / (c.kc * eb), c.mr);
  // B prepacked (constant weights) over a long K: one B tile a block, whose
  // rows lie 64 bytes apart in the caller's panels (NR 32 interleaves two
  // tiles' rows, 128 bytes apart). Side by side, bf16, nr 16 against 32:
  // 49x512x4608 1.12x, ResNet-50's res3-res5 with their filters prepacked
  // 1.08-1.21x; 0.83x at 512^3 (K 512), 0.92x at res2 (K 576).
  if (desc.bPrepacked && desc.k >= 1024)
    c.nr = 16;
  // A convolution's row block is one sliver: its packed (or copied)
  // pixels stay in L1 while the filter's panel streams past them. The
  // stem (kc whole runs), side by side: mc 32 1.35x mc 64.
  if (conv)
    c.mc = c.mr;
  c.nc = roundDownAtLeast(l2 / 2 / (c.kc * eb), c.nr);
  // f16 (split where it is packed) from few rows against a B^T larger
  // than L2: one-tile rows and a panel of 128 columns over 512 k, so that
  // each packed block is read back from L2 while the next is split. Side
  // by side against the general blocking: 1.53x at 16x4096x4096, 1.70x at
  // 8x11008x4096 (still below oneDNN's f32 matmul on the widened values
  // there: the split B^T is written and read back, 8 bytes a k).
  if (desc.precision == GemmPrecision::F16 && desc.transB && desc.m <= 16 &&
      desc.n * desc.k * desc.operandElementBytes() > target.caches.l2) {
    c.mr = 16;
    c.mc = 16;
    c.kc = 512;
    c.nc = 128;
  }
  // f16 with at most two slivers of columns: kc 1024 over one block of
  // rows, so that C's tiles are loaded and stored once every 128 tile
  // steps rather than 8 (its split A block of 256 KiB in L2). Side by
  // side: 1.60x at 4096x64x4096, 1.01x at 512x64x2048.
  if (!conv && desc.precision == GemmPrecision::F16 && desc.n <= 2 * c.nr) {
    c.kc = 1024;
    c.mc = c.mr;
  }
  // Few rows against a B^T larger than L2 (tokens through a linear
  // layer): the product transposed (amx.py's pack_b false, packb=0), B^T's
  // rows read in place as the tiles' A and A's rows packed as their B,
  // so that the weights stream once and nothing packs them; kc all of K
  // where a block of A's rows fits in half of L2, C's columns one sliver
  // a block (the sliver of B^T stays in the caches while every block of
  // A's rows meets it). bf16, side by side against B^T packed: 2.3x at
  // 16x4096x4096 and 32x4096x4096, 2.0x at 64x4096x4096, 1.6x at
  // 128x4096x4096, 1.2-1.4x at 128x3072x768 and 128x768x3072; 0.95x at
  // 128x768x768 (B^T in L2), 0.7-0.8x at 512^3 and 1024^3.
  if (!conv && amxMayTransposeProduct(desc) &&
      (desc.m <= 32 ||
       (desc.m <= 128 && desc.n * desc.k * eb > target.caches.l2))) {
    c.packB = BPacking::InPlace;
    c.aLayout = ALayout::Direct;
    c.mr = desc.m <= 16 ? 16 : 32;
    const int64_t step = amxTileK(eb);
    c.kc = std::min<int64_t>(
        desc.k, std::max<int64_t>(step, l2 / 2 / (c.mr * eb) / step * step));
    c.mc = roundDownAtLeast(l2 / 2 / (c.kc * eb), c.mr);
    c.nc = c.nr;
  }
  return clampToProblem(c, desc);
}

bool qimeng::dotKStepsReadAInPlace(const GemmDesc &desc, int64_t kc,
                                   int kUnroll, int64_t runK) {
  const int64_t group = desc.kGroup(), step = group * kUnroll;
  if (runK == 0)
    runK = kc;
  if (runK == kc && desc.k % step == 0 && kc % step == 0)
    return true;
  // Runs padded to whole groups are packed into B run by run: B as stored
  // (B^T's pack, and a prepacked B, take a block's k in one run).
  if (runK % group != 0 && kc > runK && (desc.transB || desc.bPrepacked))
    return false;
  return (runK % group != 0 || kc > runK) && kc % runK == 0 &&
         kc / runK <= kMaxRunsABlock && desc.k % kc == 0 &&
         runK / group >= kUnroll && runK / group % kUnroll == 0;
}

int qimeng::dotInPlaceKUnroll(const GemmDesc &desc, int64_t kc, int64_t runK) {
  for (int ku : {4, 2, 1})
    if (dotKStepsReadAInPlace(desc, kc, ku, runK))
      return ku;
  return 0;
}

bool qimeng::shortRunsShareABlock(const GemmDesc &desc, int64_t run) {
  return run < 32 * desc.kGroup();
}

bool qimeng::dotReadsBInPlace(const GemmDesc &desc) {
  if (desc.bRowsStreamInPlace())
    return desc.precision == GemmPrecision::F16 &&
           desc.m <= kF16MatrixVectorRows;
  if (!desc.bTransposedRowsInPlace())
    return false;
  if (desc.precision != GemmPrecision::F16)
    return desc.m == 1;
  return desc.m <= kF16MatrixVectorRows;
}

int64_t qimeng::i8MatrixVectorRows(const GemmDesc &desc) {
  return desc.k >= kI8LongK ? kI8MatrixVectorRowsLongK : kI8MatrixVectorRows;
}

int64_t qimeng::streamedRows(const GemmDesc &desc, const Target &target) {
  const int64_t bBytes = desc.n * desc.k * desc.operandElementBytes();
  if (bBytes <= target.caches.l2 ||
      (desc.precision == GemmPrecision::Bf16 && bBytes <= target.caches.l3 / 2))
    return kStreamedRowsInCache;
  return kStreamedRows;
}

int64_t qimeng::dotRowsReadingBInPlace(const GemmDesc &desc,
                                       const Target &target) {
  if (desc.bRowsStreamInPlace())
    return streamedRows(desc, target);
  if (!desc.bTransposedRowsInPlace())
    return 0;
  if (desc.precision == GemmPrecision::Bf16)
    return kBf16MatrixVectorRows;
  if (isIntegerPrecision(desc.precision))
    return i8MatrixVectorRows(desc);
  return 0;
}

bool qimeng::isMatrixVectorForm(const GemmDesc &desc,
                                const GemmConfig &config) {
  return config.isa == VectorIsa::Avx512 && config.packB == BPacking::InPlace &&
         !desc.bPrepacked && desc.bTransposedRowsInPlace();
}

llvm::SmallVector<int64_t, 2> qimeng::formRowBounds(const GemmDesc &desc,
                                                    const Target &target) {
  // Without the type's tiles, the last M of dotConfig's forms that read B
  // in place.
  if (!target.hasAmx(isHalfPrecision(desc.precision)))
    if (int64_t rows = dotRowsReadingBInPlace(desc, target))
      return {rows};
  GemmDesc few = desc;
  few.m = kF16MatrixVectorRows;
  if (desc.precision == GemmPrecision::F16 && dotReadsBInPlace(few))
    return {kF16MatrixVectorRows};
  // f32: the matrix-vector form up to 7 rows, and up to 15 where B^T fits
  // L3, where 16 (or 8) take the product transposed (on AVX-512;
  // elsewhere more direct kernels).
  few.m = kF32TransposedProductRows;
  if (mayTransposeProduct(few) && few.bTransposedRowsInPlace() &&
      few.n >= kF32TransposedProductWidth * few.m)
    return {kF32TransposedProductStreamedRows - 1,
            kF32TransposedProductRows - 1};
  // f32 against B as stored, larger than L3, on AVX-512: up to 8 rows one
  // sliver of two vectors with B's next panel swept, where 16 rows take
  // 6x64's slivers (modelConfig). A dynamic batch of 4 rows through a
  // 4096 -> 4096 layer on Zen 4 (bench/dynamic-m.sh): 3.1-3.9 ms with the
  // 8-row kernel against 5.5-5.8 with the 16-row one.
  if (desc.precision == GemmPrecision::F32 && !desc.transA &&
      target.bestIsa() == VectorIsa::Avx512 && !desc.dynamicK &&
      desc.bSliversInPlace(2 * Target::vectorBits(VectorIsa::Avx512) / 32) &&
      bRowsLargerThanL3(desc, target))
    return {kF32TwoVectorSliverRows};
  return {};
}

bool qimeng::mayTransposeProduct(const GemmDesc &desc) {
  return desc.precision == GemmPrecision::F32 && desc.transB && !desc.transA &&
         !desc.bPrepacked && !desc.dynamicN && !desc.dynamicK;
}

GemmDesc qimeng::transposedProductBlocking(const GemmDesc &desc) {
  GemmDesc product = desc.transposedProduct();
  product.dynamicN = false;
  return product;
}

bool qimeng::transposedProductFits(const GemmConfig &config) {
  return config.isa == VectorIsa::Avx512 &&
         config.mr <= Target::vectorBits(VectorIsa::Avx512) / 32;
}

bool qimeng::amxMayTransposeProduct(const GemmDesc &desc) {
  return desc.transB && !desc.transA && !desc.bPrepacked && desc.m > 1 &&
         !desc.dynamicM && !desc.dynamicN && !desc.dynamicK &&
         desc.precision != GemmPrecision::F16 &&
         desc.k % amxTileK(amxPackedElementBytes(desc)) == 0;
}

VectorIsa qimeng::matrixIsa(const Target &target, GemmPrecision precision) {
  if (precision != GemmPrecision::F32 &&
      target.hasAmx(isHalfPrecision(precision)))
    return VectorIsa::Amx;
  return target.bestIsa();
}

/// bf16 rows against a B^T wider than L2 without the tiles (a torch linear
/// layer's weights passed as an argument, a few dozen to a few hundred
/// tokens): the product transposed (dotgemm.py's product "transposed", as
/// sgemm.py's for f32), C^T = B^T A^T with B^T's rows read in place as the
/// kernel's A and A's rows packed as its B, its tiles stored into C
/// through 16 x 16 transposes, so that B^T is never packed. On Zen 5, 1
/// thread, side by side with the kernels before (B^T packed from 33 rows,
/// the matrix-vector form up to kBf16MatrixVectorRows): 24x4096x4096
/// 1.29x, 32x4096x4096 1.63x, 48x4096x4096 1.49x (8 x 48; 12 x 32 1.26x),
/// 64x4096x4096 1.46-1.52x, 128x4096x4096 1.22x, 256x4096x4096 1.08x,
/// 32x3072x768 1.19x; not at 16 rows (0.94-0.98x: the matrix-vector form
/// stays) nor past 64 rows where B^T fits half of L3 (128x3072x768 0.98x).
/// s8 is left packed: each call would sum B^T's rows (s8 A in place),
/// 0.99x at 64 rows. Static sizes; the leading dimensions immediates or
/// run-time values (the default function-boundary layout: B^T's rows
/// reached from base registers, Target::dotDirectRowsWithRuntimeLd).
static std::optional<GemmConfig> dotTransposedProduct(const GemmDesc &desc,
                                                      const Target &target) {
  if (desc.precision != GemmPrecision::Bf16 || !desc.transB || desc.transA ||
      desc.bPrepacked || desc.dynamicM || desc.dynamicN || desc.dynamicK ||
      desc.bias == GemmBias::Rows || desc.m <= kBf16TransposedProductMinRows ||
      desc.m > kBf16TransposedProductMaxRows)
    return std::nullopt;
  const int64_t bytes = desc.n * desc.k * desc.operandElementBytes();
  if (bytes <= target.caches.l2 ||
      (desc.m > 64 && 2 * bytes <= target.caches.l3))
    return std::nullopt;
  const GemmDesc product = transposedProductBlocking(desc);
  GemmConfig c;
  c.isa = VectorIsa::Avx512;
  // C's rows are the tile's columns: the width that pads them least.
  c.nr = roundUp(desc.m, 48) - desc.m < roundUp(desc.m, 32) - desc.m ? 48 : 32;
  c.mr = c.nr == 48 ? 8 : 12;
  c.kc = std::min<int64_t>(product.k, 1024);
  c.kUnroll = dotInPlaceKUnroll(product, c.kc);
  if (c.kUnroll == 0)
    return std::nullopt;
  c.mc = roundDownAtLeast(1024, c.mr);
  c.nc = std::min(roundUp(desc.m, c.nr), roundDownAtLeast(256, c.nr));
  c.aLayout = ALayout::Direct;
  c.packB = BPacking::Panels;
  c = clampToProblem(c, product);
  c.product = Product::Transposed;
  return c;
}

static llvm::Expected<GemmConfig> dotConfig(const KernelProblem &problem,
                                            const Target &target) {
  const GemmDesc desc = problem.gemm();
  const std::string type = precisionName(desc.precision).str();
  const ConvDesc *conv = problem.conv();
  if (conv)
    if (auto err = conv->verify())
      return std::move(err);
  if (auto err = desc.verify())
    return std::move(err);
  // (f16 convolutions the tiles do not take, the 3-channel stem and nchw,
  // and every f16 convolution without AMX-BF16, run on the dot kernels
  // below: each f16 widened to f32 where it is gathered and packed.)
  if (std::optional<GemmConfig> amx = amxConfig(problem, target))
    return *amx;
  if (!conv)
    if (std::optional<GemmConfig> t = dotTransposedProduct(desc, target))
      return *t;
  const bool bf16 = desc.precision == GemmPrecision::Bf16;
  // Without the tiles (amxConfig took none of it), bf16 rows against B^T
  // take the matrix-vector form up to kBf16MatrixVectorRows rows too:
  // two rows of A a pass share each chunk of B^T's rows, which stream
  // once. On Zen 5, 1 thread, side by side with the 8x16 and 16x16 blocks
  // (B^T packed; 8x48 past 16 rows): 2x4096x4096 2.67-2.75x, 4x4096x4096
  // 2.28x, 8x4096x4096 1.33-1.44x, 12x4096x4096 1.31x, 16x4096x4096
  // 1.01-1.02x, 24x4096x4096 1.24x, 32x4096x4096 1.08-1.10x, 8x3072x768
  // 1.71x, 16x3072x768 1.18x, 8x768x3072 1.55x, 16x768x3072 1.06x,
  // 32x3072x768 1.02x; 2 threads 1.50x, 1.02x and 1.08x at 8, 16 and 32
  // rows of 4096x4096; past them not (64x4096x4096 0.84x, 48x4096x4096
  // at 2 threads 0.91x).
  // And rows against B as stored (a JAX dense layer's kernel) up to
  // streamedRows, bf16, f16 and 8-bit: B's rows streamed in place, two
  // (bf16) or four (bytes) interleaved into groups of k as they are
  // loaded, groups of up to eight passes of up to 6 rows of A, K in blocks
  // of streamedKBlock (below). On Zen 5, 1 thread, side by side with the
  // blocked kernels (B packed in shallow, wide panels): s8 1x4096x4096 3.8x,
  // 8x4096x4096 2.6-2.7x, 16x4096x4096 2.4-2.5x, 20x4096x4096 2.5x,
  // 24x4096x4096 1.26x, 8x3072x768 1.9x, 16x768x3072 1.7x; 28x4096x4096 1.13x
  // (two groups of four passes), 32x4096x4096 0.9x; bf16 24x4096x4096 1.4-1.5x,
  // 28x4096x4096 0.96x; f16 (widened) 16x4096x4096 1.45x, 24x4096x4096 1.71x.
  // With groups of eight passes (one group up to 48 rows): s8
  // 32x4096x4096 1.08x, 36x 1.18x, 48x 1.19x, 64x 1.05x (two groups),
  // 32x3072x768 1.20x, 48x3072x768 1.17x, 48x768x3072 1.19x; f16
  // 64x4096x4096 1.09x, 48x3072x768 1.09x, 48x768x3072 1.12x,
  // 32x3072x768 1.01x; bf16 32x4096x4096 1.30x, 36x 1.29x, 48x 1.31x,
  // but where B fits half of L3 32x3072x768 0.90x, 48x3072x768 0.96x,
  // 48x768x3072 0.97x (24 rows there: 24x3072x768 1.10 of oneDNN, the
  // blocked kernels at 25 rows 1.00); 64x4096x4096 0.89x. (With the
  // tiles, amxConfig took these rows above, f16's past
  // kF16MatrixVectorRows.)
  // 8-bit rows against B^T (an int8 torch linear layer) up to
  // i8MatrixVectorRows: the matrix-vector form, 64 bytes of k a
  // VPDPBUSD, the sums reduced by VPHADDD (s8 A against B^T's bytes plus
  // 128, each row's sum subtracted). On Zen 5, 1 thread, side by side with
  // the blocked kernels (B^T packed): 2x4096x4096 3.4x, 4x4096x4096 2.2x,
  // 8x4096x4096 1.5x, 12x4096x4096 2.0x, 16x4096x4096 1.5x, 8x3072x768
  // 1.3x, 12x3072x768 1.32x, 16x3072x768 1.03x, 16x768x3072 1.17x; at 24
  // and 32 rows 0.85-0.91x of 3072x768 (short rows of B^T, over which the
  // reduction of each row's 8 sums weighs), 1.04x of 32x768x3072; with K
  // 4096, up to 64 rows: 24x4096x4096 1.68x, 32x 1.44x, 48x 1.28x, 64x
  // 1.19x (96x 1.08x, 128x 1.04x).
  // (dotRowsReadingBInPlace holds these bounds.)
  const bool matrixVector =
      !conv && (dotReadsBInPlace(desc) ||
                desc.m <= dotRowsReadingBInPlace(desc, target));
  const bool f16 = desc.precision == GemmPrecision::F16;
  const char *feature = bf16 ? "avx512bf16" : f16 ? "avx512vl" : "avx512vnni";
  if (target.bestIsa() != VectorIsa::Avx512 || !target.hasFeature(feature) ||
      !target.hasFeature("avx512bw") || (f16 && !target.hasFeature("f16c")))
    return llvm::createStringError(
        llvm::formatv("{0} GEMM needs {1}, which target {2} ({3}) lacks", type,
                      bf16  ? "AVX512-BF16 (VDPBF16PS)"
                      : f16 ? "AVX512BW, AVX512VL and F16C (f16 widened by "
                              "VCVTPH2PS, masked word loads)"
                            : "AVX512-VNNI (VPDPBUSD)",
                      target.triple, target.cpu)
            .str());
  // The block whose slivers waste least of the problem (the share of M
  // times the share of N they cover: an edge sliver computes rows and
  // columns past the edge), the table's first (8 x 48) on a tie; the
  // 16-row, one-vector block is for few rows (below). With A packed, 8 x
  // 48 unless another covers a fifth more (s8 256^3 and 512^3 with A
  // packed, on Zen 5: 8 x 48 1.07-1.10x 6 x 64 despite its padding to 288
  // and 528 columns); with
  // A read in place (below), the least waste: bf16 256^3 6 x 64 1.13x 8 x
  // 48, ResNet-50's res2 layers 1.5x with 64 filters (8 x 48 pads them to
  // 96), res5's 49 pixels 7 x 48.
  // (f16 is widened where it is packed: never in place.)
  const bool aMayBeInPlace =
      !desc.transA && !desc.dynamicK && desc.precision != GemmPrecision::F16;
  auto share = [&](const MicroKernelShape &s) {
    return coveredShare(desc, s.mr, s.nr);
  };
  const MicroKernelShape *shape = &kAvx512DotShapes[0];
  double bestShare = share(*shape) * (aMayBeInPlace ? 1.0 : 1.2);
  for (const MicroKernelShape &s : kAvx512DotShapes)
    if (s.nr >= 32 && share(s) > bestShare + 1e-9) {
      bestShare = share(s);
      shape = &s;
    }
  GemmConfig c;
  c.isa = shape->isa;
  c.mr = shape->mr;
  c.nr = shape->nr;
  c.kUnroll = shape->kUnroll;
  // Bytes of k as packed (f16 widened to f32).
  const int64_t eb = f16 ? 4 : desc.operandElementBytes();
  const int64_t group = desc.kGroup();
  const int64_t l2 = std::max<int64_t>(target.caches.l2, 128 * 1024);
  const int64_t l3PerCore =
      std::max(target.caches.l3 / std::max(1, target.cores), l2);
  c.kc = std::clamp<int64_t>(roundDownAtLeast(l2 / 8 / (48 * eb), 16),
                             128 * group, 512 * group);
  // Few rows (M <= 16, a token or a small batch through a linear layer):
  // each packed B element serves those rows only, so the panel stays in L2
  // (nc from L2, not L3), and the block is one vector wide and as tall as
  // M allows (8 x 16 or 16 x 16: one A sliver, each B sliver read once and
  // packed 16 rows of B^T at a time). bf16 with B transposed on Zen 4:
  // 16x4096x4096 1.6-1.7x and 8x4096x4096 1.28x the 8 x 48 block with the
  // L3 panel.
  const bool fewRows = desc.m <= 16;
  if (fewRows) {
    c.mr = desc.m > 8 ? 16 : 8;
    c.nr = 16;
  }
  // Few columns (a GEMM of at most 32, more rows): one sliver of exactly
  // one or two vectors, 12 rows, and A read in place (below) even where
  // its rows share an L1 set: each element of A serves N products only,
  // so packing A would cost more than the product. On Zen 5 against the
  // 14 x 32 block with A packed: bf16 4096x16x4096 4.2x (8 x 16 3.6x, 16 x
  // 16 3.1x), 4096x32x4096 3.4x (8 x 32 3.6x); s8 2.6x and 1.9x; bf16
  // 2048x32x1024 (A in place already) 1.00x.
  const bool fewColumns = !fewRows && !conv && desc.n <= 32;
  if (fewColumns) {
    c.mr = 12;
    c.nr = desc.n <= 16 ? 16 : 32;
  }
  // Few rows against B^T (tokens through a torch linear layer): B^T read
  // in place, a dot product per column (dotgemm.py, pack_b false); f16 and
  // bf16 against B as stored (a JAX dense layer): B's rows streamed in
  // place. Either way B is never packed.
  if (matrixVector)
    c.packB = BPacking::InPlace;
  if (conv && !conv->isNhwc()) {
    c.split = nchwSplit(desc);
  } else if (conv) {
    const int64_t run = conv->contiguousRun(), step = conv->kcStep();
    int64_t kc = std::min(c.kc, run) / step * step;
    while (run % kc)
      kc -= step; // ends at the step at the latest: the run is whole steps
    c.kc = kc;
    c.split = SplitAxis::M;
    // Blocks ending in a partial group (a stem of 3 channels: kc 21, 11
    // pairs or 6 quads): the K unroll that pads no group. Zen 5, bf16,
    // ResNet-50's stem: ku 1 1.05x ku 4 (12 pairs, one of zeros).
    if (step == 1) {
      const int64_t groups = (c.kc + group - 1) / group;
      while (c.kUnroll > 1 && groups % c.kUnroll != 0)
        c.kUnroll /= 2;
    }
  }
  // Up to 512 rows against a B as stored larger than L2 (a JAX dense
  // layer's kernel, B packed): PACK B, a large share of the work with few
  // rows, reads kc rows of B nc columns each, every row a stream of its
  // own. The panels above (kc 2048 bytes of k by 256 columns with few
  // rows; 1024-2048 by 4080 past them) read short pieces of rows far
  // apart; a shallow, wide one reads long runs: nc up to 2048 columns and
  // kc what is left of L2 for it (whole K steps). On Zen 5, 1 thread, side
  // by side: s8 1x4096x4096 2.83x, 8x4096x4096 2.82x, 16x4096x4096 2.45x,
  // 32x4096x4096 1.64x, 64x4096x4096 1.87x, 128x4096x4096 1.37x,
  // 256x4096x4096 1.26x, 8x3072x768 1.04x, 1024^3 1.00x; bf16
  // 32x4096x4096 1.32x, 64x4096x4096 1.24x, 128x4096x4096 1.14x,
  // 256x4096x4096 1.08x, 512x4096x4096 1.05x.
  const bool shallowPanel = !conv && !desc.transB && !desc.bPrepacked &&
                            desc.m <= 512 && !matrixVector &&
                            desc.n * desc.k * eb > l2;
  const int64_t wideNc =
      std::min(roundUp(desc.n, c.nr), roundDownAtLeast(2048, c.nr));
  if (shallowPanel) {
    const int64_t step = group * c.kUnroll;
    c.kc = std::clamp<int64_t>(l2 / (wideNc * eb) / step * step, step, c.kc);
  }
  const int64_t blockBytes = c.kc * eb; // one row of A's block, B's panel
  c.mc = roundDownAtLeast(l2 / 2 / blockBytes, c.mr);
  c.nc = shallowPanel ? wideNc
         : fewRows    ? roundDownAtLeast(l2 / 2 / blockBytes, c.nr)
                      : std::min<int64_t>(
                         roundDownAtLeast(l3PerCore / 2 / blockBytes, c.nr),
                         roundDownAtLeast(8192, c.nr));
  // B^T packed for up to 512 rows (one or two row blocks): the packed
  // panel within L2, where the row blocks read it back, rather than L3.
  // On Zen 5, 1 thread, nc 960 side by side with 4080: s8 96x4096x4096
  // 1.05x, 128x4096x4096 1.05x, 256x4096x4096 1.03x, 512x4096x4096 1.02x;
  // bf16 512x4096x4096 1.015x, 128x3072x768 and 128x768x3072 1.00x.
  if (!conv && desc.transB && !desc.bPrepacked && !fewRows && !shallowPanel &&
      desc.m <= 512 && c.packB == BPacking::Panels)
    c.nc = std::min(c.nc, roundDownAtLeast(l2 / blockBytes, c.nr));
  c = clampToProblem(c, desc);
  // The streamed form runs K in blocks of streamedKBlock k, each over
  // every block of columns: B's rows one a page (N of 4096 bytes), K's
  // 4096 pages at a time overflow the TLB (the second level's 2048-4096
  // entries) and the later passes' rows, 4 KiB apart, share a handful of
  // cache sets. On Zen 5, 1 thread, s8 against K in one block:
  // 1x4096x4096 2.4x, 8x4096x4096 2.2x (kc 1024 0.93x kc 512); bf16
  // 1.05-1.25x, 8x3072x768 (one block) 1.24x kc 512.
  if (matrixVector && desc.bRowsStreamInPlace())
    c.kc = std::min(desc.k, streamedKBlock(desc.precision));
  // A read in place (dotgemm.py's a_layout direct: no PACK A; a
  // convolution's pixels where they lie in its input) where the kernel
  // can (dotKStepsReadAInPlace): A's rows of k as stored (a run-time lda
  // too), K and kc whole K steps of 4 groups (or 2, or 1: a convolution of
  // 6 channels), or blocks of whole K steps and one partial group (the
  // 3-channel stem); an s8 A stays signed, B is packed plus 128 and each
  // row's 128 sum_k A subtracted. On Zen 5, bf16: 1.05-1.09x from 256^3
  // to 1024^3 and on 3136x64x256, 1.03-1.09x on ResNet-50's layers; the
  // stem (kc 21, 10 pairs and one k) 1.46x its packed A, u8s8 1.39x, s8
  // 1.05x. Not where more than 8 rows lie a multiple of 4 KiB apart (one
  // L1 set).
  const bool rowsShareASet = (!conv || !conv->isNhwc()) &&
                             desc.lda * eb % 4096 == 0 && c.mr > 8 &&
                             !fewColumns;
  // (A K that is not whole groups within one block: kc all of K, the
  // last group loaded under a mask.)
  const int64_t kcInPlace = c.kc >= desc.k ? desc.k : c.kc;
  // (With a run-time lda the K loop reaches the rows from base registers:
  // Target::dotDirectRowsWithRuntimeLd, every block of the table.)
  const bool rowsReached =
      !desc.runtimeLd || c.mr <= Target::dotDirectRowsWithRuntimeLd(c.isa);
  if (aMayBeInPlace && rowsReached && c.packB != BPacking::InPlace &&
      !rowsShareASet)
    if (int ku = dotInPlaceKUnroll(desc, kcInPlace)) {
      c.kc = kcInPlace;
      c.kUnroll = ku;
      c.aLayout = ALayout::Direct;
    }
  // An nhwc convolution read in place whose run of consecutive k is short
  // (fewer than 32 groups: the stem's 21 k, 11 pairs) has each tile's K
  // loop end after a few groups, and C's tile updated, once a block: a kc
  // block of several runs (dotconv.py's k_runs, up to kMaxRunsABlock), the
  // K loop stepping from one run to the next through the column table.
  // The stem on Zen 5, 1 thread, kc 147 (7 runs) side by side with kc 21:
  // bf16 1.20-1.22x, u8s8 1.36x, s8 1.47x.
  // (Whether a K unroll fits depends on the run, not on how many share a
  // block: the most runs dividing K that fit at all.)
  if (conv && conv->isNhwc() && c.aLayout == ALayout::Direct) {
    const int64_t run = conv->contiguousRun();
    if (c.kc == run && shortRunsShareABlock(desc, run))
      for (int64_t runs = kMaxRunsABlock; runs > 1; --runs)
        if (int ku = dotInPlaceKUnroll(desc, runs * run, run)) {
          c.kc = runs * run;
          c.kUnroll = ku;
          break;
        }
  }
  // B prepacked by the caller (PrepackedB.h): its panels are all of K's
  // groups per sliver, so a kc block may not pad in the middle: kc whole
  // K steps (a smaller K unroll where it is not); no matrix-vector form.
  if (desc.bPrepacked) {
    c.packB = BPacking::Panels;
    while (c.kUnroll > 1 && desc.k > c.kc && c.kc % (group * c.kUnroll) != 0)
      c.kUnroll /= 2;
  }
  return c;
}

llvm::Expected<GemmConfig>
qimeng::chooseKernelConfig(const KernelProblem &problem, const Target &target,
                           int threads) {
  if (problem.gemm().precision != GemmPrecision::F32)
    return dotConfig(problem, target);
  if (isSketchIsa(target.bestIsa()))
    return sketchConfig(problem, target);
  const ConvDesc *conv = problem.conv();
  if (conv)
    if (auto err = conv->verify())
      return std::move(err);
  auto config = modelConfig(problem.gemm(), target,
                            !conv || conv->layout != ConvLayout::NchwFchw,
                            /*oneSliver=*/!conv, threads);
  // A convolution's A is gathered from its pixels, in rows: each row of a
  // panel is a few runs of contiguous input (docs/BlockingModel.md).
  if (config && conv && conv->isNhwc()) {
    config->aLayout = ALayout::Rows;
    const int64_t run = conv->contiguousRun();
    const int64_t l2 = std::max<int64_t>(target.caches.l2, 128 * 1024);
    int lanes = Target::vectorBits(config->isa) / 32;
    auto blockRows = [&](int64_t kc) {
      return std::max<int64_t>(config->mr,
                               l2 / 2 / (kc * 4) / config->mr * config->mr);
    };
    // kc for A read in place: all of K when a B sliver of all of K takes
    // at most a quarter of L2 and K is whole runs (unit width dilation), so
    // that each tile updates C once and its sliver streams from L2; else
    // the largest divisor of the run within the (clamped) model kc when
    // that is at least a quarter of it (and a vector), so each panel row is
    // one piece of the input; else, for runs of at least half a vector, the
    // largest multiple of the run within it, so each panel row is whole
    // runs, which the microkernel's K loop walks one at a time (segments).
    // 0: copy A in rows instead.
    auto directKc = [&]() -> int64_t {
      const int64_t k = problem.gemm().k;
      if (k * config->nr * 4 <= l2 / 4 && k % run == 0 && 2 * run >= lanes)
        return k;
      int64_t kc = conv->largestRunDivisorAtMost(config->kc);
      if (kc >= lanes && 4 * kc >= config->kc)
        return kc;
      if (2 * run >= lanes && run <= config->kc)
        return config->kc / run * run;
      return 0;
    };
    // A block whose nr divides the filter count reads each pixel's input
    // once per sliver without padding columns: of the widest such, the
    // tallest whose mr divides the output width (every sliver then lies in
    // one output row, so none is copied), else the tallest, whose tiles
    // stream each B sliver for the most rows. No such block: one of the
    // same nr whose mr divides the output width.
    if (int64_t kc = directKc()) {
      auto reshape = [&](const MicroKernelShape &shape) {
        *config =
            clampToProblem(withShape(*config, shape, target), problem.gemm());
        kc = directKc();
      };
      auto table = microKernelTable(config->isa);
      int widestNr = 0;
      // (Not a block for one GEMM sliver only: unmeasured on convolutions.)
      for (const MicroKernelShape &s : table)
        if (conv->f % s.nr == 0 && !s.oneSliverOnly)
          widestNr = std::max(widestNr, s.nr);
      const int wantNr = widestNr ? widestNr : config->nr;
      const MicroKernelShape *tallest = nullptr, *tallestInRow = nullptr;
      // Blocks of FMAs from memory only where they pay (Target.h), or where
      // the others leave a twentieth more of the rows as padding (res5's 49
      // pixels: 7 rows cover them, 6 pad them to 54; on an Intel core 7x64
      // 1.04x 6x64 there, 0.93-0.96x on the other layers).
      auto memoryBlockPays = [&](const MicroKernelShape &s) {
        if (target.fmaFromMemoryBlocksPay())
          return true;
        for (const MicroKernelShape &o : table)
          if (o.nr == wantNr && o.order != KStepOrder::BMem &&
              coveredShare(problem.gemm(), s.mr, s.nr) <=
                  1.05 * coveredShare(problem.gemm(), o.mr, o.nr))
            return false;
        return true;
      };
      for (const MicroKernelShape &s : table) {
        if (s.nr != wantNr ||
            (s.order == KStepOrder::BMem && !memoryBlockPays(s)))
          continue;
        if (!tallest || s.mr > tallest->mr)
          tallest = &s;
        if (conv->ow() % s.mr == 0 &&
            (!tallestInRow || s.mr > tallestInRow->mr))
          tallestInRow = &s;
      }
      const MicroKernelShape *chosen = tallestInRow ? tallestInRow : tallest;
      if (!widestNr && !tallestInRow)
        chosen = nullptr; // keep the model's block
      if (chosen && (chosen->mr != config->mr || chosen->nr != config->nr ||
                     chosen->order != config->order))
        reshape(*chosen);
      config->kc = kc;
      config->mc = blockRows(kc);
      config->aLayout = ALayout::Direct;
    } else if (run < config->kc) {
      // Packed in rows: kc a multiple of the run, so that every panel row
      // is whole runs, each copied by a fixed sequence of vector moves.
      config->kc = config->kc / run * run;
      config->mc = blockRows(config->kc);
    }
    *config = clampToProblem(*config, problem.gemm());
    // The filter is packed by the first tile that uses each sliver, from
    // its K loop, rather than by a pass of its own before the tiles.
    if (config->packB == BPacking::Panels &&
        problem.gemm().bSliversInPlace(config->nr) &&
        fusedPackingPays(problem.gemm(), config->kc, target))
      config->packB = BPacking::Fused;
  }
  // nchw: the pixels are the GEMM's columns, so a layer's few pixels (196
  // at 14x14) pad to the block's nr: the block that covers at least a
  // twentieth more of M x N than the model's replaces it (the share of M
  // times the share of N its slivers compute). res4 (F 256, 196 pixels):
  // 12 x 32 (85% covered) 1.09-1.11x 6 x 64 (76%) side by side on Zen 5.
  if (config && conv && !conv->isNhwc()) {
    const GemmDesc view = problem.gemm();
    const MicroKernelShape *best = nullptr;
    double bestShare = coveredShare(view, config->mr, config->nr) * 1.05;
    for (const MicroKernelShape &s : microKernelTable(config->isa))
      if (!s.oneSliverOnly && coveredShare(view, s.mr, s.nr) > bestShare) {
        best = &s;
        bestShare = coveredShare(view, s.mr, s.nr);
      }
    if (best) {
      const int threads = config->threads;
      *config = clampToProblem(withShape(*config, *best, target), view);
      config->threads = threads;
    }
    // The filter (A, F x K as stored) is read where it lies rather than
    // packed for every image and kc block: f32 res5 (a 9.4 MB filter for
    // 49 pixels) 1.76x, res4 1.16x, res3 1.06x the packed A side by side on
    // Zen 5, the small filters of res2, its 1x1 and the stem 0.99-1.01x.
    if (readsAInPlace(view, config->mr, config->isa, config->packB))
      config->aLayout = ALayout::Direct;
  }
  // Threads split the gathered operand's dimension, so that each gathers
  // only its own part: pixels are M for nhwc (A) and N for nchw (B) (see
  // nchwSplit). A read in place is not gathered: then the larger operand's
  // dimension is split, so that each thread packs or streams only its
  // share of it (the filter, K x F, for layers with more filters than
  // pixels).
  if (config && conv) {
    config->split = conv->isNhwc() ? SplitAxis::M : nchwSplit(problem.gemm());
    const GemmDesc view = problem.gemm();
    if (conv->isNhwc() && config->aLayout == ALayout::Direct && view.n > view.m)
      config->split = SplitAxis::N;
  }
  return config;
}
