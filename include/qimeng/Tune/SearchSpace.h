//===- SearchSpace.h - The decisions the tuner makes -------------*- C++
//-*-===//
//
// A GEMM kernel's sketch parameters as an ordered list of decisions, each a
// short list of choices. The MCTS tree has one level per decision; a path
// from the root to a leaf is one complete candidate configuration.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TUNE_SEARCHSPACE_H
#define QIMENG_TUNE_SEARCHSPACE_H

#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/Kernel/Target.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>
#include <vector>

namespace qimeng {

/// One decision: a GemmConfig key (as in GemmConfig::str(), or "block" for
/// the register block "MRxNR", which fixes isa, mr and nr together) and
/// its choices, spelled as values of that key ("12x32", "256", ...).
///
/// "mc" and "nc" choices may also be footprint factors "xN" or "xN/D"
/// (forGemm uses x1/4, x1/2, x1, x2): the packed block keeps that multiple
/// of the model's mc * kc (nc * kc) elements whatever kc is chosen, so
/// mc = f * mc0 * kc0 / kc, rounded to the nearest multiple of the chosen mr
/// (at least mr), then clamped; mc0, kc0 from the base clamped to the
/// problem. An mc or nc without a decision behaves as "x1".
struct Decision {
  std::string key;
  std::vector<std::string> choices;
  /// Index of the analytical model's choice (the built-in prior's centre).
  int modelChoice = 0;
};

/// A full assignment: one choice index per decision, in decision order.
using Assignment = std::vector<int>;

class SearchSpace {
public:
  /// The space for `desc` on `target` around the model's `base` config:
  /// register blocks from the target's table, K unroll, prefetch distances,
  /// kc / mc / nc around the model's values, clamped to the problem.
  ///
  /// Decisions, in this order (the tree's levels): block (the rows of
  /// microKernelTable(base.isa), the base's block first when it is not one
  /// of them), ku {1, 2, 4, 8}, kc (the base kc clamped to K, and it times
  /// 1/2, 3/4, 4/3, 2 rounded to multiples of 8, at least 8, at most K; and
  /// K itself where A is read in place against one B sliver of K x NR that
  /// fits the target's L2),
  /// mc and nc (factors x1/4, x1/2, x1, x2, keeping only those that give a
  /// distinct block for the base's block and kc), pfa {0, 256, 512}, pfb
  /// {0, 256}, order {bcast, pipelined, embedded on avx512, bmem where a
  /// block of the table or the base needs it}, loop
  /// {jr-ir, ir-jr}; alayout {kmajor, rows} when A is not transposed; then
  /// packb {1, 0} when B is not transposed and M <= 64 (the base's packb
  /// joins them when it is fused); then, when base.threads > 1, threads
  /// (the base's count, halved down to 1, at most three counts) and split
  /// {auto, m, n}. A base value missing from a list joins it in sorted
  /// order; each modelChoice is the base's value, so
  /// configFor(modelAssignment()) == clampToProblem(base, desc) whenever
  /// the base is valid (mc a multiple of mr, nc of nr). configFor refuses
  /// (the search prunes) an assignment whose block lacks the registers for
  /// its order, B in place or fused where nr does not divide N or B is
  /// transposed, and a split other than auto with one thread. The target
  /// is not consulted beyond the base for now.
  /// Without `bInPlace` (a convolution that gathers B) there is no packb
  /// decision. A base that computes the product transposed
  /// (Product::Transposed) gets the space of transposedProductBlocking
  /// around it, each config the product transposed (configFor refuses
  /// blocks of more rows than a vector has lanes, transposedProductFits).
  static SearchSpace forGemm(const GemmDesc &desc, const Target &target,
                             const GemmConfig &base, bool bInPlace = true);

  /// The space for a GEMM or a convolution. A GEMM's is forGemm's. A
  /// convolution's is forGemm's on its GEMM view, with no packb decision
  /// when it gathers B (nchw_fchw) and B transposed (nhwc_fhwc) as the view
  /// says. For nhwc it differs in three ways:
  /// - each kc choice is snapped to the nearest value whose panel rows are
  ///   whole pieces of the input's contiguous run (a divisor of the run, at
  ///   least 8, or a multiple of it, or K); the largest divisor of the run
  ///   within the base kc (if 8 or more) joins the list, as does K when it
  ///   is at most three times the base kc;
  /// - the alayout decision offers direct (A read in place), which
  ///   configFor refuses unless kc divides the run or is a multiple of it;
  /// - nhwc_hwcf has a packb decision {1, 0, fused} at any M (after
  ///   alayout).
  static SearchSpace forProblem(const KernelProblem &problem,
                                const Target &target, const GemmConfig &base);

  /// A space from explicit decisions (tests).
  SearchSpace(GemmDesc desc, GemmConfig base, std::vector<Decision> decisions)
      : desc_(desc), base_(base), decisions_(std::move(decisions)) {}

  const std::vector<Decision> &decisions() const { return decisions_; }
  const GemmConfig &base() const { return base_; }
  /// The problem the decisions block: the GEMM's, or for the product
  /// transposed (product()), transposedProductBlocking's.
  const GemmDesc &desc() const { return desc_; }
  /// How each config of the space forms C: the base's product.
  Product product() const { return product_; }

  /// Number of complete assignments (saturates at UINT64_MAX).
  uint64_t size() const;

  /// The assignment that reproduces the model's config.
  Assignment modelAssignment() const;

  /// The config an assignment stands for, clamped to the problem; an error
  /// when the choices do not combine (mc not a multiple of mr, ...).
  llvm::Expected<GemmConfig> configFor(const Assignment &a) const;

  /// "block=12x32,ku=4,kc=256,...": stable text of an assignment.
  std::string describe(const Assignment &a) const;

private:
  GemmDesc desc_;
  GemmConfig base_;
  std::vector<Decision> decisions_;
  /// An nhwc convolution's contiguous run (ConvDesc::contiguousRun), which
  /// a direct A layout's kc must divide or be a multiple of; 0 otherwise.
  int64_t directRun_ = 0;
  Product product_ = Product::Direct;
  /// A convolution's space whose A is gathered (nhwc) or whose A layout is
  /// the model's (bf16, 8-bit): direct follows directRun_ there (f32).
  bool conv_ = false;
};

} // namespace qimeng

#endif // QIMENG_TUNE_SEARCHSPACE_H
