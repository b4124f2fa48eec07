//===- BlockingModel.h - Analytical choice of a GEMM config ------*- C++
//-*-===//
//
// The offline policy: picks the register block from the target's table and
// kc, mc, nc from its caches (docs/BlockingModel.md). Deterministic and
// cheap; the auto-tuner starts from it.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_BLOCKINGMODEL_H
#define QIMENG_KERNEL_BLOCKINGMODEL_H

#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/Kernel/Target.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>

namespace qimeng {

/// One row of a target's microkernel table: a register block the emitter
/// supports for an ISA and the model's defaults for it.
struct MicroKernelShape {
  VectorIsa isa;
  int mr, nr, kUnroll;
  int prefetchA, prefetchB;
  /// The K step's order: bcast where the block, its B vectors and a
  /// broadcast register fit the register file.
  KStepOrder order = KStepOrder::Broadcast;
  /// How much of L1d one packed B sliver (kc x nr floats) may fill: the
  /// model's kc. Half (BLIS's rule: the sliver stays in L1) unless the
  /// block was measured to run better with a deeper sliver streamed from L2
  /// (docs/BlockingModel.md).
  double bSliverL1dShare = 0.5;
  /// A block for a GEMM of one sliver of at most nr columns and many rows
  /// only (modelConfig's one-sliver rule; the few-rows rule and the tuner
  /// take it too): the convolutions' rules leave it out.
  bool oneSliverOnly = false;
};

/// The register blocks for an ISA and operand precision, preferred first
/// (bf16 and 8-bit: AVX512-BF16/VNNI's on Avx512, AMX's tiles on Amx,
/// empty for other ISAs).
llvm::ArrayRef<MicroKernelShape>
microKernelTable(VectorIsa isa, GemmPrecision precision = GemmPrecision::F32);

/// The ISA of `precision`'s fastest kernels on `target`: Amx for bf16 with
/// amx-bf16 and for 8-bit integers with amx-int8 (their tile engine), else
/// target.bestIsa(). Its instructions are the peak a kernel of that
/// precision is measured against (PeakGauge).
VectorIsa matrixIsa(const Target &target, GemmPrecision precision);

/// k of one AMX tile step: a tile row's 64 bytes (32 bf16, 64 bytes; 8
/// f16, each packed as four bf16).
inline int64_t amxTileK(int64_t elementBytes) { return 64 / elementBytes; }

/// Rows of a whole AMX tile (A's and C's may hold fewer: amx.py's mr 8 to
/// 16 is one tile of mr rows, an even mr up to 32 two of mr / 2).
inline constexpr int64_t kAmxTileRows = 16;

/// The rows of an AMX convolution's A and C tiles (its mr, two tiles, is
/// twice them) for output rows of `outputWidth` pixels: 16 where 16 divide
/// the row, else its largest divisor from 15 down to 12, so that every tile
/// is a piece of one output row, its pixels a pixel step apart, and is read
/// where it lies rather than copied; else 16.
int64_t amxOutputRowTileRows(int64_t outputWidth);

/// Bytes one k of A takes in a packed AMX row (and one column of B's
/// packed tiles): the element's own, but 8 for f16, split into four bf16
/// (amx.py, TileType.split).
inline int64_t amxPackedElementBytes(const GemmDesc &desc) {
  return desc.precision == GemmPrecision::F16 ? 8 : desc.operandElementBytes();
}

/// Tile steps of one run of `run` consecutive k packed padded to whole
/// steps (an AMX convolution whose kc is whole runs: amx.py's k_run).
inline int64_t amxPaddedRunSteps(int64_t run, int64_t elementBytes) {
  return (run + amxTileK(elementBytes) - 1) / amxTileK(elementBytes);
}

/// Why amx.py's kernels do not take `desc` ("A transposed", "an 8-bit
/// epilogue", ...), or empty when they do: its bf16 and 8-bit GEMMs are C
/// (+)= A * B with A as stored and B as stored or transposed, static
/// sizes (f16: a run-time M too), bf16 and f16 with their epilogue (a
/// bias along the columns, relu), bf16 output.
std::string amxRefusal(const GemmDesc &desc);

/// Whether `desc` runs on a dot kernel that reads B in place (dotgemm.py,
/// pack_b false): B^T's rows, a dot product per column of C, rows of A
/// one after another against each group of B^T's rows (one row of bf16
/// or 8-bit A, with the tiles or without; f16, widened where it is
/// loaded, up to kF16MatrixVectorRows rows);
/// or B's rows streamed against passes of rows of A (f16 up to
/// kF16MatrixVectorRows rows).
bool dotReadsBInPlace(const GemmDesc &desc);

/// Whether `config` runs `desc` as the matrix-vector form (dotgemm.py's
/// pack_b false with B transposed: B^T's rows read in place, a dot product
/// per column of C, for bf16, f16 and f32 alike): packb=0 on AVX-512 with
/// B transposed and not prepacked. The form takes none of the config's
/// register or cache blocking, prefetch distances, K-step order or A
/// layout: only the threads and their split.
bool isMatrixVectorForm(const GemmDesc &desc, const GemmConfig &config);

/// The vector registers sgemm.py's epilogue takes beside a block's
/// accumulators (its refusals): 4 for relu's bound, leaky relu or a smooth
/// activation (whose three temporaries join the masked updates' one), 3
/// for a bias along the rows, 2 for relu, else none.
int epilogueVectorRegisters(const GemmDesc &desc);

/// Whether `config`'s accumulators and sgemm.py's epilogue registers
/// (epilogueVectorRegisters) fit its ISA's vector registers.
bool epilogueFits(const GemmDesc &desc, const GemmConfig &config);

/// Rows of f32 A up to which the model reads B^T in place (the
/// matrix-vector form, isMatrixVectorForm) on AVX-512, where the product
/// transposed (from kF32TransposedProductRows on) does not take them.
inline constexpr int64_t kF32MatrixVectorRows = 16;

/// Rows of f32 A from which (from kF32TransposedProductStreamedRows where
/// B^T is larger than L3), and up to which, the model computes a GEMM
/// against B^T as its product transposed (Product::Transposed) on
/// AVX-512, where N is at least kF32TransposedProductWidth times M.
inline constexpr int64_t kF32TransposedProductRows = 16;
inline constexpr int64_t kF32TransposedProductStreamedRows = 8;
inline constexpr int64_t kF32TransposedProductMaxRows = 256;
inline constexpr int64_t kF32TransposedProductWidth = 4;

/// Rows of f32 A up to which few rows against B as stored, read in place,
/// take one row sliver of two vectors on AVX-512 (from seven rows on, and
/// from three where B's rows are larger than L3, swept).
inline constexpr int64_t kF32TwoVectorSliverRows = 8;

/// Rows of f32 A up to which, past the few-rows blocks' 16, all of M in one
/// row block against a B larger than L3 reads B in place, its next panel
/// swept into L2 by the K loops (sweepb), on AVX-512 and one thread.
inline constexpr int64_t kF32SweptInPlaceRows = 48;

/// Whether an f32 kernel may compute `desc` as its product transposed
/// (GemmDesc::transposedProduct): B^T as stored (the kernel's A, read in
/// place), A as stored (its B^T, packed), B not prepacked, N and K static
/// (a run-time M is the product's run-time N: C's rows from the header).
bool mayTransposeProduct(const GemmDesc &desc);

/// The problem the product transposed's config blocks:
/// GemmDesc::transposedProduct with its N static (a run-time M of C is the
/// product's N at run time; its C's ldc stays C's, which a GEMM of a
/// run-time N would read at run time, and no blocking rule that applies
/// to it looks at a run-time N: B^T, A's rows, is packed whatever N).
GemmDesc transposedProductBlocking(const GemmDesc &desc);

/// Whether the product transposed can store `config`'s tiles: AVX-512, and
/// mr (C's columns in a tile) at most a vector's lanes (sgemm.py transposes
/// each vector's 16 rows of C into registers of mr lanes each).
bool transposedProductFits(const GemmConfig &config);

/// Row counts up to which `desc`'s kernel on `target` keeps a form that the
/// next row leaves (f16: the last M that reads B in place; bf16 without
/// AMX-BF16: 32 against B^T, the last M of the matrix-vector form, 16
/// against B as stored, the last M that streams B's rows; f32: 7
/// and 15, the last M of the matrix-vector form where 8 rows, B^T larger
/// than L3, or 16 take the product transposed, and against B as stored
/// larger than L3 on AVX-512 8, the last M of one swept sliver of two
/// vectors), ascending: for a
/// run-time M, kernels for at most that many rows (the pass adds them to
/// its m-buckets) run the form where it pays.
llvm::SmallVector<int64_t, 2> formRowBounds(const GemmDesc &desc,
                                            const Target &target);

/// Rows of f16 A up to which the forms that read B in place (B^T once, B's
/// rows once a pass of 6 rows; 2 bytes an element) beat the blocked
/// kernels, which pack B (AMX's split: 8 bytes a k; AVX-512's widened: 4)
/// and read it back (docs/BlockingModel.md).
inline constexpr int64_t kF16MatrixVectorRows = 12;

/// Rows of bf16 A up to which the matrix-vector form (B^T read in place)
/// beats the blocked kernels that pack B^T, on a target without AMX-BF16
/// (with it, the tiles take every bf16 GEMM of more than one row;
/// docs/BlockingModel.md).
inline constexpr int64_t kBf16MatrixVectorRows = 32;
/// Without the tiles, bf16 rows against a B^T wider than L2 from above
/// kBf16TransposedProductMinRows up to kBf16TransposedProductMaxRows take
/// the product transposed (C^T = B^T A^T: B^T read in place, never
/// packed), before the matrix-vector form (BlockingModel.cpp,
/// dotTransposedProduct).
inline constexpr int64_t kBf16TransposedProductMinRows = 16;
inline constexpr int64_t kBf16TransposedProductMaxRows = 256;

/// Rows of 8-bit A up to which the matrix-vector form (B^T read in place,
/// 64 bytes of k a VPDPBUSD) beats the blocked kernels that pack B^T, on a
/// target without AMX-INT8 (docs/BlockingModel.md): kI8MatrixVectorRows,
/// and kI8MatrixVectorRowsLongK for a K of at least kI8LongK, over which
/// the reduction of each row's sums weighs less.
int64_t i8MatrixVectorRows(const GemmDesc &desc);
inline constexpr int64_t kI8MatrixVectorRows = 16;
inline constexpr int64_t kI8MatrixVectorRowsLongK = 64;
inline constexpr int64_t kI8LongK = 4096;

/// Rows of A up to which streaming B's rows in place (B as stored, one
/// group of up to eight passes of up to 6 rows of A: B read from memory
/// once, in K blocks of streamedKBlock k, the first pass leaving each
/// step's vectors for the others) beats the blocked kernels that pack B,
/// bf16, f16 and 8-bit on a target without the type's tiles (AMX-BF16,
/// AMX-INT8; f16 with them: kF16MatrixVectorRows): kStreamedRows against
/// a B beyond L2 (measured there), kStreamedRowsInCache where B fits L2,
/// or for bf16 half of L3 (docs/BlockingModel.md).
int64_t streamedRows(const GemmDesc &desc, const Target &target);

/// Rows of A up to which a dot kernel reads B in place where the target has
/// no tiles for the type (dotConfig's rule, formRowBounds's bound for a
/// run-time M): B's rows streamed against B as stored up to
/// streamedRows; against B^T the matrix-vector form up to
/// kBf16MatrixVectorRows (bf16) or i8MatrixVectorRows (8-bit); 0 for
/// anything else (f16 against B^T: dotReadsBInPlace; f32).
int64_t dotRowsReadingBInPlace(const GemmDesc &desc, const Target &target);

/// streamedRows against a B beyond L2: one group of eight passes of 6
/// rows (dotgemm.py's STREAM_GROUP_PASSES, STREAM_ROWS), B read once.
inline constexpr int64_t kStreamedRows = 48;

/// streamedRows where B fits L2 (bf16: half of L3), where the blocked
/// kernels (from packed panels) win from 32 rows of bf16 and past 24 are
/// unmeasured for the others.
inline constexpr int64_t kStreamedRowsInCache = 24;

/// The k of a K block of the streamed form (B's rows in place), over
/// which every block of columns runs before the next: B's rows one a page
/// where N is a page of bytes or more, so a block of K keeps its pages in
/// the TLB (docs/BlockingModel.md). 8-bit: 512; bf16 and f16: 1024.
inline int64_t streamedKBlock(GemmPrecision precision) {
  return isIntegerPrecision(precision) ? 512 : 1024;
}

/// Whether an AMX kernel can compute `desc` transposed (C^T = B^T * A^T,
/// packb=0: amx.py's pack_b false): B^T as stored and not prepacked, A as
/// stored with more than one row, K whole tile steps, every size static
/// (amx.py reads none of the transposed product's from its header). The
/// config still blocks C: mr and mc its rows, nr and nc its columns.
bool amxMayTransposeProduct(const GemmDesc &desc);

/// Whether `rows` rows `strideBytes` apart, read in place by AMX tile loads,
/// would crowd one set of an L1 of `l1Bytes` (64 sets of 64-byte lines):
/// more of them on a set than two thirds of its ways (rows 2 KiB apart in
/// a 48 KiB, 12-way L1: 16 of 32 rows on each of two sets).
bool amxRowsCrowdL1(int64_t strideBytes, int64_t rows, int64_t l1Bytes);

/// The analytical config for `desc` on `target`, blocking clamped to the
/// problem, for a caller that runs it on `threads` threads (before
/// partitionedThreads; a rule that pays on one thread only applies where
/// the problem runs as one part). The config's own `threads` stays 1: the
/// caller sets it. Error when the target has no supported vector ISA.
llvm::Expected<GemmConfig>
chooseGemmConfig(const GemmDesc &desc, const Target &target, int threads = 1);

/// Whether a dot-product kernel's K loop reads A in place with kc blocks of
/// `kc` k and a K unroll of `kUnroll` groups (dotgemm.py's a_layout
/// direct): K and kc whole K steps, or every kc block (kc dividing K) runs
/// of `runK` k (a convolution's consecutive k; 0: one run of kc), each
/// whole K steps and then perhaps the same partial group, loaded under a
/// mask (a 3-channel stem's runs of 21 k: 10 pairs and one k, 5 quads and
/// one byte); several such runs a block only with B as stored and packed
/// at each call.
bool dotKStepsReadAInPlace(const GemmDesc &desc, int64_t kc, int kUnroll,
                           int64_t runK = 0);

/// The largest K unroll (4, 2 or 1 groups) with which dotKStepsReadAInPlace
/// holds for `kc` and `runK`, or 0 where none does.
int dotInPlaceKUnroll(const GemmDesc &desc, int64_t kc, int64_t runK = 0);

/// The most runs of consecutive k a dot convolution's kc block read in
/// place holds (dotconv.py's k_runs: each run's K loop is written out).
constexpr int64_t kMaxRunsABlock = 8;

/// Whether a dot convolution's run of `run` consecutive k is short enough
/// (fewer than 32 groups: the stem's 21 k) for several runs to share a kc
/// block read in place (the model's rule and the tuner's kc choices).
bool shortRunsShareABlock(const GemmDesc &desc, int64_t run);

/// Whether an f32 block `nr` wide on `isa` can read `desc`'s B in place
/// (packb=0): its slivers where they lie (GemmDesc::bSliversInPlace), or on
/// AVX-512 with a last sliver short of columns, which sgemm.py reads
/// through lane masks (b_edge_masked: N not a multiple of nr, or a run-time
/// N, whose last sliver's lanes each tile sets from the call's columns); B
/// not transposed, not prepacked.
bool readsBInPlace(const GemmDesc &desc, int nr, VectorIsa isa);

/// Whether `config`'s B packing can serve `desc` in a vector kernel (not
/// AMX's tiles, whose rule is amx.py's): B in panels always; an f32
/// kernel's B in place where readsBInPlace or the matrix-vector form
/// (isMatrixVectorForm) reads it, packed by its tiles where its slivers
/// lie in place (GemmDesc::bSliversInPlace); a bf16, f16 or 8-bit
/// kernel's B in place as the matrix-vector form
/// (GemmDesc::bTransposedRowsInPlace) or its rows streamed
/// (GemmDesc::bRowsStreamInPlace), never packed by its tiles.
bool vectorBPackingFits(const GemmDesc &desc, const GemmConfig &config);

/// Whether a block of `mr` rows on `isa` with B as `packB` can read
/// `desc`'s A in place (alayout=direct): GemmDesc::aSliversInPlace, and
/// with a run-time lda at most Target::directRowsWithRuntimeLd rows (17
/// with B in panels, 9 with B read or packed by the tiles: its run-time
/// row step, or the next panel swept, takes a register).
bool readsAInPlace(const GemmDesc &desc, int mr, VectorIsa isa, BPacking packB);

/// Clamps kc, mc and nc to the problem (kc <= K, mc <= M rounded up to mr,
/// nc <= N rounded up to nr), keeping the multiples the emitter requires.
GemmConfig clampToProblem(GemmConfig config, const GemmDesc &desc);

/// chooseGemmConfig for a GEMM or a convolution's GEMM view; an nchw_fchw
/// convolution gathers B from its input, so B is always packed.
llvm::Expected<GemmConfig> chooseKernelConfig(const KernelProblem &problem,
                                              const Target &target,
                                              int threads = 1);

/// The axis `problem`'s parallel form on `isa` must split, where it has no
/// choice: the sketch-driven ISAs' nchw convolutions split their filters
/// (M; the kernel reads no columns, whose header slots its image loop
/// keeps). Callers apply it over a pinned config too.
std::optional<SplitAxis> requiredSplit(const KernelProblem &problem,
                                       VectorIsa isa);

} // namespace qimeng

#endif // QIMENG_KERNEL_BLOCKINGMODEL_H
