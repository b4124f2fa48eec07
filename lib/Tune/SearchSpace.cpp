//===- SearchSpace.cpp - The decisions the tuner makes --------------------===//
//
// forGemm lays out the decisions around the analytical model's config
// (docs/Tuning.md, "Search space"); configFor turns one choice per decision
// back into a GemmConfig the emitter accepts.
//
// mc and nc are chosen as factors of the model's packed-block footprint
// ("x1/2", "x1", "x2"): mc = f * mc0 * kc0 / kc, rounded to the chosen
// block's mr. The choices of every decision are then valid whatever the
// block and kc above them are, and "x1" keeps the packed A block (and the B
// panel) at the model's size in bytes when kc changes.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Tune/SearchSpace.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

using namespace qimeng;
using llvm::StringRef;

namespace {

/// Rows of A up to which the space offers B in place (packb=0).
constexpr int64_t kMaxRowsForInPlaceB = 64;
/// Thread counts the space offers at most.
constexpr size_t kMaxThreadChoices = 3;

/// A footprint factor num/den, spelled "x1", "x2", "x1/2".
struct Factor {
  int64_t num = 1;
  int64_t den = 1;
};

/// The packb decision over `choices` (config values); the base's value
/// joins them if missing and is the model's choice.
Decision packbDecision(std::vector<std::string> choices,
                       const GemmConfig &base) {
  const std::string value = bPackingName(base.packB).str();
  auto at = std::find(choices.begin(), choices.end(), value);
  if (at == choices.end())
    at = choices.insert(choices.end(), value);
  const int model = int(at - choices.begin());
  return Decision{"packb", std::move(choices), model};
}

std::string factorText(Factor f) {
  if (f.den == 1)
    return llvm::formatv("x{0}", f.num).str();
  return llvm::formatv("x{0}/{1}", f.num, f.den).str();
}

std::optional<Factor> parseFactor(StringRef text) {
  if (!text.consume_front("x"))
    return std::nullopt;
  auto [numText, denText] = text.split('/');
  Factor f;
  if (numText.getAsInteger(10, f.num) || f.num <= 0)
    return std::nullopt;
  if (!denText.empty() && (denText.getAsInteger(10, f.den) || f.den <= 0))
    return std::nullopt;
  if (text.contains('/') && denText.empty())
    return std::nullopt;
  return f;
}

/// Parses "MRxNR" with both positive.
std::optional<std::pair<int, int>> parseBlock(StringRef text) {
  auto [mrText, nrText] = text.split('x');
  int mr = 0, nr = 0;
  if (mrText.getAsInteger(10, mr) || nrText.getAsInteger(10, nr) || mr <= 0 ||
      nr <= 0)
    return std::nullopt;
  return std::make_pair(mr, nr);
}

std::string blockText(int mr, int nr) {
  return llvm::formatv("{0}x{1}", mr, nr).str();
}

/// `ref * kcRef / kc * f`, rounded to the nearest multiple of `unit` and at
/// least `unit`: a block that keeps `f` times the reference footprint.
int64_t scaledBlock(int64_t ref, int64_t kcRef, int64_t kc, Factor f,
                    int64_t unit) {
  double rows = static_cast<double>(ref) * static_cast<double>(kcRef) /
                static_cast<double>(kc) * static_cast<double>(f.num) /
                static_cast<double>(f.den);
  double units = std::round(rows / static_cast<double>(unit));
  // Far beyond any problem: clampToProblem brings it back down.
  units = std::min(units, 1e12);
  return std::max<int64_t>(1, static_cast<int64_t>(units)) * unit;
}

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// Sorted, deduplicated numeric choices containing `model`.
Decision numericDecision(std::string key, std::vector<int64_t> values,
                         int64_t model) {
  std::set<int64_t> sorted(values.begin(), values.end());
  sorted.insert(model);
  Decision d;
  d.key = std::move(key);
  for (int64_t v : sorted) {
    if (v == model)
      d.modelChoice = static_cast<int>(d.choices.size());
    d.choices.push_back(std::to_string(v));
  }
  return d;
}

/// The footprint factors for mc (or nc), keeping only those that give a
/// distinct clamped block for the model's block and kc ("x1" always).
Decision factorDecision(std::string key, int64_t ref, int64_t kcRef,
                        int64_t unit, int64_t problem) {
  static const Factor factors[] = {{1, 4}, {1, 2}, {1, 1}, {2, 1}};
  auto clamped = [&](Factor f) {
    return std::min(scaledBlock(ref, kcRef, kcRef, f, unit),
                    roundUp(problem, unit));
  };
  int64_t modelValue = clamped(Factor{});
  std::vector<int64_t> kept = {modelValue};
  Decision d;
  d.key = std::move(key);
  for (Factor f : factors) {
    bool isModel = f.num == 1 && f.den == 1;
    int64_t v = clamped(f);
    if (!isModel && std::find(kept.begin(), kept.end(), v) != kept.end())
      continue;
    if (isModel)
      d.modelChoice = static_cast<int>(d.choices.size());
    else
      kept.push_back(v);
    d.choices.push_back(factorText(f));
  }
  return d;
}

/// Threads: every count up to the base's (at most kMaxThreadChoices of
/// them, halving down from it), and the axis they split.
void addThreadDecisions(std::vector<Decision> &decisions,
                        const GemmConfig &base) {
  if (base.threads > 1) {
    std::vector<int64_t> counts;
    for (int64_t t = base.threads; t >= 1 && counts.size() < kMaxThreadChoices;
         t /= 2)
      counts.push_back(t);
    if (counts.back() != 1)
      counts.push_back(1);
    decisions.push_back(numericDecision("threads", counts, base.threads));
    Decision split{"split",
                   {splitName(SplitAxis::Auto).str(),
                    splitName(SplitAxis::M).str(),
                    splitName(SplitAxis::N).str()},
                   0};
    split.modelChoice = static_cast<int>(base.split);
    decisions.push_back(std::move(split));
  }
}

} // namespace

SearchSpace SearchSpace::forGemm(const GemmDesc &desc, const Target &target,
                                 const GemmConfig &base, bool bInPlace) {
  // The product transposed blocks the swapped problem: its space, each
  // config of which computes the product transposed.
  if (base.product == Product::Transposed) {
    GemmConfig swappedBase = base;
    swappedBase.product = Product::Direct;
    SearchSpace space =
        forGemm(transposedProductBlocking(desc), target, swappedBase, bInPlace);
    space.product_ = Product::Transposed;
    return space;
  }
  // The base's isa fixes the table of register blocks; the target matters
  // through the model's base config and its L2 (kc below).
  const GemmConfig ref = clampToProblem(base, desc);
  // The dot kernels' forms that read B in place (packb=0: B^T's rows, for
  // f32 too, or B's rows streamed) take no register blocking: their space
  // is B in place or packed, and the threads; the streamed form's K block
  // too (kc: K in one block, or blocks of 256 to 2048 k, each whole
  // groups).
  if ((base.isa != VectorIsa::Amx && desc.precision != GemmPrecision::F32 &&
       base.packB == BPacking::InPlace) ||
      isMatrixVectorForm(desc, base)) {
    std::vector<Decision> decisions = {packbDecision({"0", "1"}, base)};
    if (desc.bRowsStreamInPlace()) {
      std::vector<int64_t> kcs = {desc.k};
      for (int64_t kc : {256, 512, 1024, 2048})
        if (kc < desc.k)
          kcs.push_back(kc);
      decisions.push_back(numericDecision("kc", kcs, ref.kc));
    }
    addThreadDecisions(decisions, base);
    return SearchSpace(desc, base, std::move(decisions));
  }
  std::vector<Decision> decisions;

  // Register block: every row of the isa's table, the model's first when it
  // is not one of them.
  const llvm::ArrayRef<MicroKernelShape> table =
      microKernelTable(base.isa, desc.precision);
  Decision block;
  block.key = "block";
  std::string baseBlock = blockText(base.mr, base.nr);
  for (const MicroKernelShape &shape : table)
    block.choices.push_back(blockText(shape.mr, shape.nr));
  auto found = std::find(block.choices.begin(), block.choices.end(), baseBlock);
  if (found == block.choices.end()) {
    block.choices.insert(block.choices.begin(), baseBlock);
    block.modelChoice = 0;
  } else {
    block.modelChoice = static_cast<int>(found - block.choices.begin());
  }
  decisions.push_back(std::move(block));

  // AMX's K unroll is its tile step, its kc whole tile steps.
  const bool amx = base.isa == VectorIsa::Amx;
  decisions.push_back(numericDecision(
      "ku", amx ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2, 4, 8},
      base.kUnroll));

  // kc: around the model's (clamped) kc, multiples of 8 (AMX: of its tile
  // step) within K.
  const int64_t kcStep =
      amx ? amxTileK(amxPackedElementBytes(desc)) : int64_t(8);
  const int64_t kcMax = amx ? (desc.k + kcStep - 1) / kcStep * kcStep : desc.k;
  std::vector<int64_t> kcs;
  for (auto [num, den] :
       {std::pair<int64_t, int64_t>{1, 2}, {3, 4}, {1, 1}, {4, 3}, {2, 1}}) {
    double scaled = static_cast<double>(ref.kc) * num / den;
    int64_t kc = std::max<int64_t>(
        kcStep, static_cast<int64_t>(std::round(scaled / kcStep)) * kcStep);
    if (kc <= kcMax)
      kcs.push_back(kc);
  }
  // And K in one block where the model blocks K of A read in place against
  // one B sliver (N <= NR) that would still fit L2 whole: C stays in registers
  // over the whole K loop and each row of A streams from memory once instead of
  // restarting at each block, against a sliver that fills L2 beside them.
  // Which wins is the machine's (4096x64x4096 ran 1.04x faster at kc 4096
  // than at the model's 1024 on a Zen 4, about 0.9x on a Zen 5), so the
  // tuner measures it.
  if (!amx && !desc.dynamicK && ref.kc < desc.k &&
      base.aLayout == ALayout::Direct && desc.n <= ref.nr &&
      desc.k * ref.nr * desc.operandElementBytes() <= target.caches.l2)
    kcs.push_back(desc.k);
  decisions.push_back(numericDecision("kc", kcs, ref.kc));

  decisions.push_back(factorDecision("mc", ref.mc, ref.kc, ref.mr, desc.m));
  decisions.push_back(factorDecision("nc", ref.nc, ref.kc, ref.nr, desc.n));
  // AMX packs A, or reads its tiles where A lies (amx.py's a_layout
  // direct: K whole tile steps, A as stored; a convolution's pixels; not
  // f16, split where it is packed).
  if (amx && !desc.transA && desc.k % kcStep == 0 && !desc.dynamicK &&
      desc.precision != GemmPrecision::F16)
    decisions.push_back({"alayout",
                         {aLayoutName(ALayout::KMajor).str(),
                          aLayoutName(ALayout::Direct).str()},
                         base.aLayout == ALayout::Direct ? 1 : 0});
  // A few rows against B^T: the product transposed (packb=0, B^T in place)
  // or B^T packed.
  if (amx && amxMayTransposeProduct(desc))
    decisions.push_back(packbDecision({"1", "0"}, base));
  // The dot-product kernels (dotgemm.py) have one K-step order, one loop
  // order, packed A and B and one thread: their space ends here.
  if (desc.precision != GemmPrecision::F32)
    return SearchSpace(desc, base, std::move(decisions));
  decisions.push_back(numericDecision("pfa", {0, 256, 512}, base.prefetchA));
  decisions.push_back(numericDecision("pfb", {0, 256}, base.prefetchB));
  // Instruction orders of the K step; blocks without the registers for
  // one are pruned in configFor. bmem (one B vector fewer) where a block of
  // the table or the base needs it.
  Decision order{"order", {"bcast", "pipelined"}, 0};
  if (base.isa == VectorIsa::Avx512)
    order.choices.push_back("embedded");
  if (base.order == KStepOrder::BMem ||
      llvm::any_of(table, [](const MicroKernelShape &s) {
        return s.order == KStepOrder::BMem;
      }))
    order.choices.push_back(orderName(KStepOrder::BMem).str());
  for (size_t i = 0; i < order.choices.size(); ++i)
    if (order.choices[i] == orderName(base.order))
      order.modelChoice = static_cast<int>(i);
  decisions.push_back(std::move(order));

  decisions.push_back({"loop",
                       {loopOrderName(MacroLoopOrder::JrIr).str(),
                        loopOrderName(MacroLoopOrder::IrJr).str()},
                       base.loop == MacroLoopOrder::IrJr ? 1 : 0});

  // A's sliver layout: rows copies rows of A (or of a convolution's
  // pixels) with vector moves; direct reads them in place (an f32 GEMM's
  // A; configFor bounds the rows where lda is a run-time value); only for
  // A as stored.
  if (!desc.transA) {
    Decision alayout{
        "alayout",
        {aLayoutName(ALayout::KMajor).str(), aLayoutName(ALayout::Rows).str()},
        base.aLayout == ALayout::Rows ? 1 : 0};
    // A convolution's model reads A in place: that joins the list.
    if (base.aLayout == ALayout::Direct || desc.aSliversInPlace()) {
      alayout.choices.push_back(aLayoutName(ALayout::Direct).str());
      if (base.aLayout == ALayout::Direct)
        alayout.modelChoice = 2;
    }
    decisions.push_back(std::move(alayout));
  }

  // B in place pays where B is used by few row blocks: offered for M up to
  // kMaxRowsForInPlaceB (blocks whose nr does not divide N are pruned).
  if (bInPlace && !desc.transB && desc.m <= kMaxRowsForInPlaceB)
    decisions.push_back(packbDecision({"1", "0"}, base));
  // The model sweeps a B in place that is larger than L3 (sweepb); the
  // space offers it off too, the sweep's worth being the machine's.
  if (base.sweepB)
    decisions.push_back(Decision{"sweepb", {"1", "0"}, 0});

  addThreadDecisions(decisions, base);
  return SearchSpace(desc, base, std::move(decisions));
}

SearchSpace SearchSpace::forProblem(const KernelProblem &problem,
                                    const Target &target,
                                    const GemmConfig &base) {
  const ConvDesc *conv = problem.conv();
  const GemmDesc desc = problem.gemm();
  // An nchw_fchw convolution gathers B from its input: never in place.
  bool bInPlace = !conv || conv->layout == ConvLayout::NhwcHwcf;
  SearchSpace space = forGemm(desc, target, base, bInPlace);
  if (!conv)
    return space;
  space.conv_ = true;
  if (!conv->isNhwc()) {
    // The GEMM view's A is the filter as stored, its B gathered a k at a
    // time: the GEMM's kc choices (multiples of 8, whole groups) stand, and
    // an f32 filter is read in place, copied in rows or packed under a
    // GEMM's rules (the dot kernels keep the model's A layout).
    space.conv_ = desc.precision != GemmPrecision::F32;
    return space;
  }
  if (desc.precision != GemmPrecision::F32) {
    // The dot-product convolutions (dotconv.py) pack each row of a block
    // from one piece of the input: kc whole steps dividing the run (AMX's:
    // whole tile steps).
    const int64_t run = conv->contiguousRun();
    const int64_t step = base.isa == VectorIsa::Amx
                             ? amxTileK(amxPackedElementBytes(desc))
                             : conv->kcStep();
    const GemmConfig ref = clampToProblem(base, desc);
    std::vector<int64_t> kcs;
    for (int64_t kc = step; kc <= run; kc += step)
      if (run % kc == 0 && (4 * kc >= ref.kc || kc == run))
        kcs.push_back(kc);
    // AMX's blocks of whole runs, each padded to whole tile steps, where
    // no tile step divides the run (the stem): one run, the model's and
    // all of K.
    if (base.isa == VectorIsa::Amx && kcs.empty())
      for (int64_t kc : {run, ref.kc, desc.k})
        if (kc % run == 0 && std::find(kcs.begin(), kcs.end(), kc) == kcs.end())
          kcs.push_back(kc);
    // The dot kernels' blocks of several short runs, read in place
    // (dotconv.py's k_runs; configFor refuses them packed).
    if (base.isa != VectorIsa::Amx) {
      space.directRun_ = run;
      if (shortRunsShareABlock(desc, run))
        for (int64_t runs = 2; runs <= kMaxRunsABlock; ++runs)
          if (desc.k % (runs * run) == 0)
            kcs.push_back(runs * run);
    }
    for (Decision &d : space.decisions_)
      if (d.key == "kc")
        d = numericDecision("kc", kcs, ref.kc);
    return space;
  }
  const int64_t run = conv->contiguousRun();
  space.directRun_ = run;
  const GemmConfig ref = clampToProblem(base, desc);
  // Values whose panel rows are whole pieces of a run.
  std::set<int64_t> pieceKcs = {desc.k};
  for (int64_t d = 8; d <= std::min(run, desc.k); ++d)
    if (run % d == 0)
      pieceKcs.insert(d);
  for (int64_t m = run; m <= desc.k; m += run)
    pieceKcs.insert(m);
  const int64_t divisor = conv->largestRunDivisorAtMost(ref.kc);
  auto nearest = [&](int64_t kc) {
    auto above = pieceKcs.lower_bound(kc);
    if (above == pieceKcs.end())
      return *pieceKcs.rbegin();
    if (above == pieceKcs.begin())
      return *above;
    auto below = std::prev(above);
    return kc - *below <= *above - kc ? *below : *above;
  };
  for (Decision &d : space.decisions_) {
    if (d.key == "kc") {
      // The divisor (if a piece of 8 or more), and all of K when it is
      // within three base panels.
      std::vector<int64_t> kcs;
      if (divisor >= 8)
        kcs.push_back(divisor);
      if (desc.k <= 3 * ref.kc)
        kcs.push_back(desc.k);
      for (const std::string &text : d.choices)
        kcs.push_back(nearest(std::stoll(text)));
      d = numericDecision("kc", kcs, ref.kc);
    }
    if (d.key == "alayout" &&
        std::find(d.choices.begin(), d.choices.end(),
                  aLayoutName(ALayout::Direct).str()) == d.choices.end())
      d.choices.push_back(aLayoutName(ALayout::Direct).str());
  }
  // The filter (hwcf: a K x F matrix) in place, or packed by the tiles
  // (fused), is offered at any M: every pixel block reads the same filter,
  // and either saves the pass that packs every panel.
  if (conv->layout == ConvLayout::NhwcHwcf) {
    auto packb =
        std::find_if(space.decisions_.begin(), space.decisions_.end(),
                     [](const Decision &d) { return d.key == "packb"; });
    Decision d = packbDecision({"1", "0", "fused"}, base);
    if (packb != space.decisions_.end()) {
      *packb = std::move(d);
    } else {
      auto after =
          std::find_if(space.decisions_.begin(), space.decisions_.end(),
                       [](const Decision &d) { return d.key == "alayout"; });
      space.decisions_.insert(
          after == space.decisions_.end() ? after : after + 1, std::move(d));
    }
  }
  return space;
}

uint64_t SearchSpace::size() const {
  uint64_t total = 1;
  for (const Decision &d : decisions_) {
    uint64_t n = d.choices.size();
    if (n == 0)
      return 0;
    if (total > std::numeric_limits<uint64_t>::max() / n)
      return std::numeric_limits<uint64_t>::max();
    total *= n;
  }
  return total;
}

Assignment SearchSpace::modelAssignment() const {
  Assignment a;
  a.reserve(decisions_.size());
  for (const Decision &d : decisions_) {
    int last = std::max<int>(0, static_cast<int>(d.choices.size()) - 1);
    a.push_back(std::clamp(d.modelChoice, 0, last));
  }
  return a;
}

llvm::Expected<GemmConfig> SearchSpace::configFor(const Assignment &a) const {
  if (a.size() != decisions_.size())
    return llvm::createStringError(
        llvm::formatv("assignment has {0} choices but the space has {1} "
                      "decisions",
                      a.size(), decisions_.size())
            .str());
  // Factors refer to the model's config as clamped to the problem.
  const GemmConfig ref = clampToProblem(base_, desc_);
  GemmConfig c = ref;
  // mc and nc not given as a number keep the model's footprint ("x1").
  Factor mcFactor, ncFactor;
  bool mcAbsolute = false, ncAbsolute = false;
  for (size_t i = 0; i < decisions_.size(); ++i) {
    const Decision &d = decisions_[i];
    if (a[i] < 0 || a[i] >= static_cast<int>(d.choices.size()))
      return llvm::createStringError(
          llvm::formatv("choice {0} is out of range for decision '{1}' with "
                        "{2} choices",
                        a[i], d.key, d.choices.size())
              .str());
    StringRef text = d.choices[a[i]];
    if (d.key == "block") {
      auto block = parseBlock(text);
      if (!block)
        return llvm::createStringError(
            llvm::formatv("block choice '{0}' is not MRxNR", text).str());
      c.mr = block->first;
      c.nr = block->second;
      continue;
    }
    if ((d.key == "mc" || d.key == "nc") && text.starts_with("x")) {
      auto f = parseFactor(text);
      if (!f)
        return llvm::createStringError(
            llvm::formatv("{0} choice '{1}' is not a factor such as x2 or "
                          "x1/2",
                          d.key, text)
                .str());
      (d.key == "mc" ? mcFactor : ncFactor) = *f;
      (d.key == "mc" ? mcAbsolute : ncAbsolute) = false;
      continue;
    }
    auto parsed = GemmConfig::parse((d.key + "=" + text).str(), c);
    if (!parsed)
      return parsed.takeError();
    c = *parsed;
    if (d.key == "mc")
      mcAbsolute = true;
    if (d.key == "nc")
      ncAbsolute = true;
  }
  if (c.mr <= 0 || c.nr <= 0 || c.kc <= 0 || c.kUnroll <= 0)
    return llvm::createStringError(
        llvm::formatv("config {0} needs positive mr, nr, kc and ku", c.str())
            .str());
  // (AMX's blocks are tiles: its four shapes fit the eight tile registers.)
  int lanes = Target::vectorBits(c.isa) / 32;
  if (c.isa != VectorIsa::Amx &&
      c.vectorRegistersNeeded(lanes) > Target::vectorRegisters(c.isa))
    return llvm::createStringError(
        llvm::formatv("a {0}x{1} block with order {2} needs {3} vector "
                      "registers; {4} has {5}",
                      c.mr, c.nr, orderName(c.order),
                      c.vectorRegistersNeeded(lanes), isaName(c.isa),
                      Target::vectorRegisters(c.isa))
            .str());
  // sgemm.py's epilogue registers beside the accumulators.
  if ((c.isa == VectorIsa::Avx2 || c.isa == VectorIsa::Avx512) &&
      desc_.precision == GemmPrecision::F32 && !isMatrixVectorForm(desc_, c) &&
      !epilogueFits(desc_, c))
    return llvm::createStringError(
        llvm::formatv("a {0}x{1} block's epilogue needs {2} vector registers "
                      "beside its accumulators; {3} has {4}",
                      c.mr, c.nr, epilogueVectorRegisters(desc_),
                      isaName(c.isa), Target::vectorRegisters(c.isa))
            .str());
  if (c.isa == VectorIsa::Amx && c.packB != BPacking::Panels &&
      (c.packB == BPacking::Fused || !desc_.transB || desc_.transA ||
       desc_.bPrepacked || c.aLayout != ALayout::Direct ||
       desc_.k % amxTileK(amxPackedElementBytes(desc_)) != 0))
    return llvm::createStringError(
        "an AMX kernel packs B, or (packb=0) computes the product transposed "
        "with B^T's rows read in place: B transposed and not prepacked, A "
        "not, alayout=direct, K whole tile steps");
  const bool f32 = desc_.precision == GemmPrecision::F32;
  if ((f32 || c.isa != VectorIsa::Amx) && !vectorBPackingFits(desc_, c))
    return llvm::createStringError(
        !f32 ? std::string(
                   "a bf16 or 8-bit kernel packs B, or (packb=0) reads B^T "
                   "in place as a matrix-vector product per row of A (B "
                   "transposed) or streams B's rows in place (B as stored): "
                   "A not transposed, no bias along the rows, N static")
             : llvm::formatv(
                   "B {0} (packb={1}) needs B not transposed and N = "
                   "{2} a multiple of nr = {3} (in place on avx512, any "
                   "N), or (packb=0 on avx512) "
                   "B transposed, A not, no bias along the rows, N and "
                   "K static: the matrix-vector form",
                   c.packB == BPacking::InPlace ? "in place"
                                                : "packed by the tiles",
                   bPackingName(c.packB), desc_.n, c.nr)
                   .str());
  const int64_t panelKc = std::min(c.kc, desc_.k);
  // The dot kernels read A in place (dotgemm.py) when the K loop never
  // reaches padding: A's rows of k, immediate leading dimensions, K and
  // kc whole K steps (or blocks of them ending in the same partial group,
  // dotKStepsReadAInPlace); their convolutions' kc divides the run
  // already.
  if (desc_.precision != GemmPrecision::F32) {
    // AMX's K step is its tile step; it takes lda at run time too.
    const bool amx = c.isa == VectorIsa::Amx;
    const int64_t step = amx ? amxTileK(amxPackedElementBytes(desc_))
                             : desc_.kGroup() * c.kUnroll;
    if (amx && c.aLayout == ALayout::Rows)
      return llvm::createStringError(
          "an AMX kernel packs A (alayout=kmajor) or reads it in place "
          "(alayout=direct)");
    // PACK A writes whole tiles of 16 rows; tiles of fewer (a
    // convolution's output rows) are read in place.
    if (amx && c.mr % kAmxTileRows != 0 && c.aLayout != ALayout::Direct)
      return llvm::createStringError(llvm::formatv(
          "an AMX block of {0} rows (tiles of fewer than {1}) reads A in "
          "place (alayout=direct)",
          c.mr, kAmxTileRows));
    if (c.aLayout == ALayout::Direct && desc_.precision == GemmPrecision::F16)
      return llvm::createStringError(
          "alayout=direct: f16 is split into bf16 parts where A is packed");
    // A convolution's kc of several runs (dotconv.py's k_runs).
    const int64_t kc = clampToProblem(c, desc_).kc;
    const bool blockOfRuns = conv_ && directRun_ > 0 && kc > directRun_;
    if (!amx && blockOfRuns && c.aLayout != ALayout::Direct)
      return llvm::createStringError(llvm::formatv(
          "kc = {0} spans several runs of {1} consecutive input k: only A "
          "read in place (alayout=direct) steps from run to run",
          kc, directRun_));
    const bool stepsFit =
        amx ? desc_.k % step == 0 && kc % step == 0
            : dotKStepsReadAInPlace(desc_, kc, c.kUnroll,
                                    blockOfRuns ? directRun_ : 0);
    const bool rowsReached = amx || !desc_.runtimeLd ||
                             c.mr <= Target::dotDirectRowsWithRuntimeLd(c.isa);
    if (c.aLayout == ALayout::Direct &&
        (desc_.transA || !rowsReached || desc_.dynamicK || !stepsFit))
      return llvm::createStringError(llvm::formatv(
          "alayout=direct ({0}) reads A's rows in place: A not transposed, "
          "{1}K = {2} and kc whole K steps of {3}{4}",
          amx ? "an AMX kernel" : "a dot-product kernel",
          amx ? ""
              : llvm::formatv("at most {0} rows with run-time leading "
                              "dimensions, ",
                              Target::dotDirectRowsWithRuntimeLd(c.isa))
                    .str(),
          desc_.k, step,
          amx ? ""
              : ", or kc dividing K in whole K steps and one partial "
                "group"));
    // A prepacked B holds all of K's groups per sliver: a kc block must
    // not pad in the middle (and the matrix-vector form packs nothing).
    if (desc_.bPrepacked &&
        (c.packB != BPacking::Panels || (desc_.k > kc && kc % step != 0)))
      return llvm::createStringError(llvm::formatv(
          "a prepacked B takes its panels from all of K's groups: B packed "
          "(packb=1) and kc = {0} whole K steps of {1} where K = {2} spans "
          "more than one block",
          kc, step, desc_.k));
  } else if (c.aLayout == ALayout::Direct && !conv_ && !desc_.aSliversInPlace())
    return llvm::createStringError(
        "alayout=direct reads A's rows in place: it needs an f32 GEMM with A "
        "not transposed");
  // An f32 prepacked B is all of K's rows per sliver: read from there
  // (packb=1), neither in place nor packed by the tiles.
  if (desc_.precision == GemmPrecision::F32 && desc_.bPrepacked &&
      c.packB != BPacking::Panels)
    return llvm::createStringError(
        "a prepacked B is read from its caller's panels: packb=1");
  if (desc_.precision == GemmPrecision::F32 && c.aLayout == ALayout::Direct &&
      !conv_ && !readsAInPlace(desc_, c.mr, c.isa, c.packB))
    return llvm::createStringError(llvm::formatv(
        "alayout=direct with run-time leading dimensions reaches {0} rows of "
        "A in place; the {1}x{2} block has {1}",
        Target::directRowsWithRuntimeLd(c.isa, c.packB == BPacking::Panels),
        c.mr, c.nr));
  if (desc_.precision == GemmPrecision::F32 && c.aLayout == ALayout::Direct &&
      conv_ &&
      (directRun_ == 0 ||
       (directRun_ % panelKc != 0 && panelKc % directRun_ != 0)))
    return llvm::createStringError(
        directRun_ == 0
            ? std::string("alayout=direct reads A in place from an nhwc "
                          "convolution's input; this is not one")
            : llvm::formatv("alayout=direct needs kc = {0} to divide the "
                            "run of {1} contiguous input floats or to be a "
                            "multiple of it",
                            panelKc, directRun_)
                  .str());
  // With a split decision, one thread takes only "auto" (the others would
  // repeat its kernel); without one, the base's axis stays, unused.
  bool splitDecided =
      std::any_of(decisions_.begin(), decisions_.end(),
                  [](const Decision &d) { return d.key == "split"; });
  if (splitDecided && c.threads == 1 && c.split != SplitAxis::Auto)
    return llvm::createStringError(
        "a split axis other than auto means nothing with one thread");
  if (!mcAbsolute)
    c.mc = scaledBlock(ref.mc, ref.kc, c.kc, mcFactor, c.mr);
  if (!ncAbsolute)
    c.nc = scaledBlock(ref.nc, ref.kc, c.kc, ncFactor, c.nr);
  c = clampToProblem(c, desc_);
  c.product = product_;
  if (product_ == Product::Transposed && !transposedProductFits(c))
    return llvm::createStringError(llvm::formatv(
        "the product transposed stores a row of C's tile (mr of its "
        "columns) as one AVX-512 vector: a {0}x{1} block has more",
        c.mr, c.nr));
  if (c.mc <= 0 || c.mc % c.mr != 0)
    return llvm::createStringError(
        llvm::formatv("mc {0} is not a positive multiple of mr {1}", c.mc, c.mr)
            .str());
  if (c.nc <= 0 || c.nc % c.nr != 0)
    return llvm::createStringError(
        llvm::formatv("nc {0} is not a positive multiple of nr {1}", c.nc, c.nr)
            .str());
  return c;
}

std::string SearchSpace::describe(const Assignment &a) const {
  std::string out;
  for (size_t i = 0; i < decisions_.size(); ++i) {
    const Decision &d = decisions_[i];
    if (i)
      out += ',';
    out += d.key;
    out += '=';
    if (i < a.size() && a[i] >= 0 && a[i] < static_cast<int>(d.choices.size()))
      out += d.choices[a[i]];
    else
      out += '?';
  }
  return out;
}
