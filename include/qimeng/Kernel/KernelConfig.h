//===- KernelConfig.h - How a kernel computes -------------------*- C++ -*-===//
//
// The sketch parameters of a GEMM kernel: register block, K unroll, cache
// blocking and prefetch distances. Plain data; printable and parseable so a
// test or a user can pin it (pass option `kernel-config=`).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_KERNELCONFIG_H
#define QIMENG_KERNEL_KERNELCONFIG_H

#include "qimeng/Kernel/Target.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>

namespace qimeng {

/// Instruction order of the microkernel's K step (emitter field "order").
enum class KStepOrder {
  Broadcast, ///< "bcast": B loads, then per row a broadcast and its FMAs
  Pipelined, ///< "pipelined": next row's broadcast before this row's FMAs
  Embedded,  ///< "embedded": FMAs with {1toN} memory broadcasts (AVX-512)
  BMem,      ///< "bmem": bcast with the last B vector an FMA memory operand
};

/// "bcast", "pipelined", "embedded", "bmem".
llvm::StringRef orderName(KStepOrder order);

/// Order of the macro-kernel's loops over a packed block (emitter field
/// "loop_order").
enum class MacroLoopOrder {
  JrIr, ///< "jr-ir": B sliver outer, held in L1 (BLIS)
  IrJr, ///< "ir-jr": A sliver outer, held in L1
};

/// "jr-ir", "ir-jr".
llvm::StringRef loopOrderName(MacroLoopOrder order);

/// Layout of a packed A sliver (emitter field "a_layout").
enum class ALayout {
  KMajor, ///< "kmajor": MR floats per k (BLIS)
  Rows,   ///< "rows": each row's kb floats, kc floats apart (needs A not
          ///< transposed); copied from rows of A with vector moves
  Direct, ///< "direct": A read where it lies, no PACK A: an f32 GEMM's A
          ///< as stored (readsAInPlace: at most 17 rows, or 9 with B not
          ///< in panels, with a run-time lda), or an nhwc convolution's input
          ///< (kc divides the input's contiguous run, or is a multiple of it);
          ///< docs/KernelContract.md
};

/// "kmajor", "rows", "direct".
llvm::StringRef aLayoutName(ALayout layout);

/// How B reaches the layout the K loop reads (config key "packb").
enum class BPacking {
  InPlace, ///< "0": read where it lies, with its own row stride (small M,
           ///< where a packed B would be reused only once)
  Panels,  ///< "1": PACK B copies each kc x nc panel into the workspace
           ///< before the row blocks that use it (BLIS)
  Fused,   ///< "fused": the first tile that uses a B sliver reads it in
           ///< place and stores it packed from its K loop; no PACK B pass
};

/// "0", "1", "fused".
llvm::StringRef bPackingName(BPacking packing);

/// Which dimension of C a multi-threaded kernel splits among threads
/// (Partition.h).
enum class SplitAxis {
  Auto, ///< N when it has a register block per thread, else M
  M,    ///< rows, at multiples of mr
  N,    ///< columns, at multiples of nr
};

/// "auto", "m", "n".
llvm::StringRef splitName(SplitAxis axis);

/// How an f32 x86 kernel forms C (config key "product", emitter field
/// "product"; docs/BlockingModel.md, "The product transposed").
enum class Product {
  Direct,     ///< "direct": C = op(A) * op(B), C's tiles as they lie
  Transposed, ///< "transposed": C^T = op(B)^T * op(A)^T (GemmDesc::
              ///< transposedProduct), B^T's rows the kernel's A and A's
              ///< rows its B; the tiles transposed into C a row of C at a
              ///< time (AVX-512). The config's blocking (mr,
              ///< nr, kc, mc, nc, alayout, loop) is that product's: mr of
              ///< C's columns by nr of its rows. Split stays C's.
};
/// "direct", "transposed".
llvm::StringRef productName(Product product);

struct GemmConfig {
  VectorIsa isa = VectorIsa::Avx2;
  int mr = 6;        ///< rows of the register block
  int nr = 16;       ///< columns of the register block (multiple of lanes)
  int kUnroll = 4;   ///< K loop unroll: 1, 2, 4, 8 or 16
  int64_t kc = 256;  ///< reduction block (packed panels' depth)
  int64_t mc = 72;   ///< rows of A packed per block (multiple of mr)
  int64_t nc = 4080; ///< columns of B packed per block (multiple of nr)
  int prefetchA = 0; ///< bytes ahead on packed A in the K loop; 0: none
  int prefetchB = 0; ///< bytes ahead on packed B in the K loop; 0: none
  KStepOrder order = KStepOrder::Broadcast;
  /// Threads: 1 is the single-core kernel; more run the parallel form of
  /// it once per part of C (Partition.h), each with its own workspace.
  int threads = 1;
  /// In place and fused need B not transposed and N a multiple of nr.
  BPacking packB = BPacking::Panels;
  MacroLoopOrder loop = MacroLoopOrder::JrIr;
  /// The dimension the threads split (threads > 1 only).
  SplitAxis split = SplitAxis::Auto;
  ALayout aLayout = ALayout::KMajor;
  /// f32 on AVX-512: the product transposed, its blocking the swapped
  /// problem's (Product).
  Product product = Product::Direct;
  /// f32 on AVX-512, B read in place (packB InPlace) and streaming from
  /// memory: the K loops prefetch B's next panel into L2 where the
  /// blocking leaves one (config key "sweepb", emitter field "sweep_b";
  /// docs/KernelContract.md, "B in place, swept"). Elsewhere it changes
  /// nothing.
  bool sweepB = false;
  /// RVV only: vector registers per group (LMUL 1, 2, 4 or 8); a "vector"
  /// of nr is one group of vlen * lmul / 32 floats.
  int lmul = 1;

  /// "isa=avx2,mr=6,nr=16,ku=4,kc=256,mc=72,nc=4080,pfa=0,pfb=0,
  /// order=bcast,threads=1,packb=1,loop=jr-ir,split=auto,alayout=kmajor",
  /// and ",product=transposed" and ",sweepb=1" where they are;
  /// for the sketch-driven ISAs only "isa=neon,mr=7,nr=12,ku=4" (and
  /// ",lmul=N" for rvv).
  std::string str() const;

  /// Parses a comma-separated `key=value` list (keys as in str()); keys not
  /// given keep their value from `base`. Unknown keys and bad numbers are
  /// errors naming them. Does not check register pressure: the emitter does.
  static llvm::Expected<GemmConfig> parse(llvm::StringRef spec,
                                          const GemmConfig &base);

  bool operator==(const GemmConfig &o) const { return str() == o.str(); }

  /// Vector registers the microkernel's K step needs: accumulators, B
  /// vectors and the A registers of the order (the emitter checks too).
  int vectorRegistersNeeded(int lanes) const;
};

} // namespace qimeng

#endif // QIMENG_KERNEL_KERNELCONFIG_H
