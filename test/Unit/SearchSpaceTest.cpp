//===- SearchSpaceTest.cpp - The tuner's decisions and their configs ------===//
#include "qimeng/Tune/SearchSpace.h"
#include "ErrorHelpers.h"
#include "qimeng/Kernel/BlockingModel.h"
#include <algorithm>
#include <gtest/gtest.h>
#include <set>

using namespace qimeng;

namespace {

constexpr const char *zen3Spec =
    "x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:l1d=32K,l2=512K,l3=32M,"
    "cores=8";
constexpr const char *avx512Spec =
    "x86_64-unknown-linux-gnu:sapphirerapids:+avx,+avx2,+fma,+avx512f:"
    "l1d=48K,l2=2M,l3=260M,cores=2";

Target pinned(const char *spec) {
  auto target = Target::parse(spec);
  EXPECT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  return target ? *target : Target{};
}

std::vector<std::string> keys(const SearchSpace &space) {
  std::vector<std::string> out;
  for (const Decision &d : space.decisions())
    out.push_back(d.key);
  return out;
}

/// Calls `f` on every assignment of `space` in lexicographic order.
template <typename F> void forEachAssignment(const SearchSpace &space, F f) {
  const auto &decisions = space.decisions();
  Assignment a(decisions.size(), 0);
  for (uint64_t i = 0; i < space.size(); ++i) {
    f(a);
    for (size_t d = decisions.size(); d-- > 0;) {
      if (++a[d] < static_cast<int>(decisions[d].choices.size()))
        break;
      a[d] = 0;
    }
  }
}

/// The choice `a` makes for `key`, or "" when the space has no such
/// decision.
std::string choiceOf(const SearchSpace &space, const Assignment &a,
                     llvm::StringRef key) {
  for (size_t i = 0; i < space.decisions().size(); ++i)
    if (space.decisions()[i].key == key)
      return space.decisions()[i].choices[a[i]];
  return "";
}

/// Whether `a` picks a register block and order whose K step needs more
/// vector registers than the isa has: on avx2 (16 registers) only 4x24 with
/// the pipelined order (12 accumulators, 3 B vectors, 2 A registers); on
/// avx512 (32 registers) only 7x64 with bcast or pipelined (28
/// accumulators, 4 B vectors, 1 or 2 A registers).
bool lacksRegisters(const SearchSpace &space, const Assignment &a) {
  const std::string block = choiceOf(space, a, "block");
  const std::string order = choiceOf(space, a, "order");
  if (space.base().isa == VectorIsa::Avx2)
    return block == "4x24" && order == "pipelined";
  return block == "7x64" && (order == "bcast" || order == "pipelined");
}

/// The part of configFor's message for an `a` that lacksRegisters.
std::string registersMessage(const SearchSpace &space, const Assignment &a) {
  if (space.base().isa == VectorIsa::Avx2)
    return "needs 17 vector registers; avx2 has 16";
  return choiceOf(space, a, "order") == "bcast"
             ? "needs 33 vector registers; avx512 has 32"
             : "needs 34 vector registers; avx512 has 32";
}

/// Why configFor must refuse `a` other than for registers (part of its
/// message), or "" when it must not: B packed by the tiles where the
/// block's nr does not divide N, or B in place there on avx2 (avx512 masks
/// the last sliver's loads), a split axis with one thread.
std::string otherRefusal(const SearchSpace &space, const Assignment &a) {
  const std::string packb = choiceOf(space, a, "packb");
  if (packb == "fused" ||
      (packb == "0" && space.base().isa == VectorIsa::Avx2)) {
    std::string block = choiceOf(space, a, "block");
    int nr = 0;
    if (llvm::StringRef(block).split('x').second.getAsInteger(10, nr) ||
        nr <= 0 || space.desc().n % nr != 0)
      return packb == "0" ? "B in place (packb=0) needs"
                          : "B packed by the tiles (packb=fused) needs";
  }
  std::string split = choiceOf(space, a, "split");
  if (!split.empty() && split != "auto" && choiceOf(space, a, "threads") == "1")
    return "split axis other than auto";
  return "";
}

/// What expectValidOrTooFewRegisters counted.
struct Validity {
  uint64_t valid = 0;
  uint64_t tooFewRegisters = 0;
  uint64_t otherRefusals = 0;
};

/// Checks the config of every assignment against the emitter's rules: each
/// is valid, or fails because its block cannot hold its order's registers
/// (exactly when lacksRegisters says so, checked first), or for the reason
/// otherRefusal gives. Every block keeps at least one valid order.
Validity expectValidOrTooFewRegisters(const SearchSpace &space) {
  const GemmDesc &desc = space.desc();
  auto table = microKernelTable(space.base().isa);
  const int lanes = Target::vectorBits(space.base().isa) / 32;
  const int registers = Target::vectorRegisters(space.base().isa);
  Validity counts;
  std::set<int> blocksWithAValidOrder;
  forEachAssignment(space, [&](const Assignment &a) {
    SCOPED_TRACE(space.describe(a));
    auto config = space.configFor(a);
    std::string other = otherRefusal(space, a);
    if (!config) {
      std::string message = llvm::toString(config.takeError());
      if (lacksRegisters(space, a)) {
        ++counts.tooFewRegisters;
        EXPECT_NE(message.find(registersMessage(space, a)), std::string::npos)
            << message;
      } else {
        ++counts.otherRefusals;
        EXPECT_FALSE(other.empty()) << message;
        EXPECT_NE(message.find(other), std::string::npos) << message;
      }
      return;
    }
    EXPECT_EQ(other, "");
    ++counts.valid;
    blocksWithAValidOrder.insert(a[0]);
    EXPECT_FALSE(lacksRegisters(space, a));
    SCOPED_TRACE(config->str());
    EXPECT_EQ(config->isa, space.base().isa);
    // A table block, or one narrowed to M's few rows (B in place).
    EXPECT_TRUE(
        std::any_of(table.begin(), table.end(), [&](const MicroKernelShape &s) {
          return s.nr == config->nr &&
                 (s.mr == config->mr || config->mr == desc.m);
        }));
    EXPECT_LE(config->vectorRegistersNeeded(lanes), registers);
    EXPECT_GE(config->kc, 1);
    EXPECT_LE(config->kc, desc.k);
    EXPECT_GE(config->mc, config->mr);
    EXPECT_EQ(config->mc % config->mr, 0);
    EXPECT_LE(config->mc, (desc.m + config->mr - 1) / config->mr * config->mr);
    EXPECT_GE(config->nc, config->nr);
    EXPECT_EQ(config->nc % config->nr, 0);
    EXPECT_LE(config->nc, (desc.n + config->nr - 1) / config->nr * config->nr);
    EXPECT_TRUE(config->kUnroll == 1 || config->kUnroll == 2 ||
                config->kUnroll == 4 || config->kUnroll == 8);
    EXPECT_TRUE(config->prefetchA == 0 || config->prefetchA == 256 ||
                config->prefetchA == 512);
    EXPECT_TRUE(config->prefetchB == 0 || config->prefetchB == 256);
    EXPECT_TRUE(config->order == KStepOrder::Broadcast ||
                config->order == KStepOrder::Pipelined ||
                ((config->order == KStepOrder::Embedded ||
                  config->order == KStepOrder::BMem) &&
                 config->isa == VectorIsa::Avx512));
  });
  EXPECT_EQ(counts.valid + counts.tooFewRegisters + counts.otherRefusals,
            space.size());
  EXPECT_EQ(blocksWithAValidOrder.size(), space.decisions()[0].choices.size());
  return counts;
}

SearchSpace modelSpace(const GemmDesc &desc, const Target &target) {
  auto base = chooseGemmConfig(desc, target);
  EXPECT_TRUE(static_cast<bool>(base)) << llvm::toString(base.takeError());
  return SearchSpace::forGemm(desc, target, base ? *base : GemmConfig{});
}

TEST(SearchSpaceTest, Zen3DecisionsInOrder) {
  Target target = pinned(zen3Spec);
  SearchSpace space = modelSpace(GemmDesc::packed(2048, 2048, 2048), target);
  EXPECT_EQ(keys(space),
            (std::vector<std::string>{"block", "ku", "kc", "mc", "nc", "pfa",
                                      "pfb", "order", "loop", "alayout"}));
  const auto &d = space.decisions();
  EXPECT_EQ(d[0].choices, (std::vector<std::string>{"6x16", "4x24", "8x8"}));
  EXPECT_EQ(d[0].modelChoice, 0);
  EXPECT_EQ(d[1].choices, (std::vector<std::string>{"1", "2", "4", "8"}));
  EXPECT_EQ(d[1].modelChoice, 2);
  // Model kc 256: halves, three quarters, four thirds (341 -> 344), double.
  EXPECT_EQ(d[2].choices,
            (std::vector<std::string>{"128", "192", "256", "344", "512"}));
  EXPECT_EQ(d[2].modelChoice, 2);
  EXPECT_EQ(d[3].choices,
            (std::vector<std::string>{"x1/4", "x1/2", "x1", "x2"}));
  EXPECT_EQ(d[3].modelChoice, 2);
  // With A in place the model's B panel fills half of L2 (nc 256 of 2048
  // columns): every factor gives a distinct panel.
  EXPECT_EQ(d[4].choices,
            (std::vector<std::string>{"x1/4", "x1/2", "x1", "x2"}));
  EXPECT_EQ(d[4].modelChoice, 2);
  EXPECT_EQ(d[5].choices, (std::vector<std::string>{"0", "256", "512"}));
  EXPECT_EQ(d[5].modelChoice, 0);
  EXPECT_EQ(d[6].choices, (std::vector<std::string>{"0", "256"}));
  EXPECT_EQ(d[6].modelChoice, 0);
  // The K step's instruction order; no embedded broadcasts on avx2.
  EXPECT_EQ(d[7].choices, (std::vector<std::string>{"bcast", "pipelined"}));
  EXPECT_EQ(d[7].modelChoice, 0);
  EXPECT_EQ(d[8].choices, (std::vector<std::string>{"jr-ir", "ir-jr"}));
  EXPECT_EQ(d[8].modelChoice, 0);
  // A in place: the model's choice for an A as stored.
  EXPECT_EQ(d[9].choices,
            (std::vector<std::string>{"kmajor", "rows", "direct"}));
  EXPECT_EQ(d[9].modelChoice, 2);
  EXPECT_EQ(space.size(), 3u * 4 * 5 * 4 * 4 * 3 * 2 * 2 * 2 * 3);
}

TEST(SearchSpaceTest, Avx512BlocksFromTheTable) {
  Target target = pinned(avx512Spec);
  SearchSpace space = modelSpace(GemmDesc::packed(4096, 8192, 4096), target);
  EXPECT_EQ(keys(space),
            (std::vector<std::string>{"block", "ku", "kc", "mc", "nc", "pfa",
                                      "pfb", "order", "loop", "alayout"}));
  EXPECT_EQ(space.decisions()[0].choices,
            (std::vector<std::string>{"6x64", "12x32", "14x32", "8x48", "7x32",
                                      "7x64", "12x16", "8x16"}));
  EXPECT_EQ(space.base().isa, VectorIsa::Avx512);
  EXPECT_EQ(space.decisions()[2].choices,
            (std::vector<std::string>{"192", "288", "384", "512", "768"}));
  EXPECT_EQ(space.decisions()[4].choices,
            (std::vector<std::string>{"x1/4", "x1/2", "x1", "x2"}));
  // bmem for 7x64, whose bcast needs 33 registers.
  EXPECT_EQ(
      space.decisions()[7].choices,
      (std::vector<std::string>{"bcast", "pipelined", "embedded", "bmem"}));
  EXPECT_EQ(space.decisions()[7].modelChoice, 0);
  EXPECT_EQ(space.size(), 8u * 4 * 5 * 4 * 4 * 3 * 2 * 4 * 2 * 3);
}

TEST(SearchSpaceTest, OrderListsEmbeddedOnlyForAvx512) {
  GemmDesc desc = GemmDesc::packed(512, 512, 512);
  // The base's isa decides, not the target: an avx2 base on the avx512
  // host has no embedded order either.
  for (const char *spec : {zen3Spec, avx512Spec}) {
    SCOPED_TRACE(spec);
    Target target = pinned(spec);
    for (VectorIsa isa : {VectorIsa::Avx2, VectorIsa::Avx512}) {
      SCOPED_TRACE(isaName(isa).str());
      GemmConfig base;
      base.isa = isa;
      if (isa == VectorIsa::Avx512) {
        base.mr = 12;
        base.nr = 32;
      }
      SearchSpace space = SearchSpace::forGemm(desc, target, base);
      // order, loop, alayout (no packb: M > 64; no threads: one thread).
      ASSERT_EQ(space.decisions().size(), 10u);
      const Decision &order = space.decisions()[7];
      EXPECT_EQ(order.key, "order");
      EXPECT_EQ(space.decisions()[8].key, "loop");
      std::vector<std::string> expected = {"bcast", "pipelined"};
      if (isa == VectorIsa::Avx512) {
        expected.push_back("embedded");
        expected.push_back("bmem");
      }
      EXPECT_EQ(order.choices, expected);
      EXPECT_EQ(order.modelChoice, 0);
      // Every order the list holds gives its KStepOrder in the config.
      Assignment a = space.modelAssignment();
      for (size_t i = 0; i < order.choices.size(); ++i) {
        a[7] = static_cast<int>(i);
        QM_ASSERT_EXPECTED(config, space.configFor(a));
        EXPECT_EQ(orderName(config.order), order.choices[i]);
        EXPECT_NE(config.str().find(",order=" + order.choices[i] + ",threads="),
                  std::string::npos)
            << config.str();
      }
    }
  }
}

TEST(SearchSpaceTest, SizeIsTheProductOfChoiceCounts) {
  for (const char *spec : {zen3Spec, avx512Spec}) {
    SearchSpace space =
        modelSpace(GemmDesc::packed(1000, 3000, 700), pinned(spec));
    uint64_t product = 1;
    for (const Decision &d : space.decisions())
      product *= d.choices.size();
    EXPECT_EQ(space.size(), product) << spec;
    EXPECT_GT(space.size(), 1000u) << spec;
  }
  SearchSpace empty(GemmDesc::packed(8, 8, 8), GemmConfig{},
                    {{"ku", {"1", "2"}, 0}, {"kc", {}, 0}});
  EXPECT_EQ(empty.size(), 0u);
  SearchSpace none(GemmDesc::packed(8, 8, 8), GemmConfig{}, {});
  EXPECT_EQ(none.size(), 1u);
}

TEST(SearchSpaceTest, EveryAssignmentIsValidOrLacksOnlyRegisters) {
  for (const char *spec : {zen3Spec, avx512Spec}) {
    SCOPED_TRACE(spec);
    Target target = pinned(spec);
    for (GemmDesc desc :
         {GemmDesc::packed(2048, 2048, 2048), GemmDesc::packed(100, 37, 50),
          GemmDesc::packed(13, 1000, 9, true, true),
          GemmDesc::packed(1, 1, 1)}) {
      SCOPED_TRACE(desc.str());
      SearchSpace model = modelSpace(desc, target);
      Validity counts = expectValidOrTooFewRegisters(model);
      // On avx2 the 4x24 block with the pipelined order (one block of
      // three, one order of two) is out; on avx512 7x64 with bcast or
      // pipelined (one block of eight, two orders of four; of nine where
      // the model's block is narrowed to M's one row, 1x1x1).
      const size_t blocks = model.decisions()[0].choices.size();
      EXPECT_EQ(blocks, model.base().isa == VectorIsa::Avx2 ? 3u
                        : desc.m == 1                       ? 9u
                                                            : 8u);
      EXPECT_EQ(counts.tooFewRegisters, model.size() / blocks / 2);
      // A base that is not clamped to the problem, nor in the table.
      GemmConfig odd;
      odd.isa = target.bestIsa();
      odd.mr = 5;
      odd.nr = 16;
      odd.kc = 300;
      odd.mc = 500;
      odd.nc = 9000;
      SearchSpace space = SearchSpace::forGemm(desc, target, odd);
      Validity oddCounts;
      std::set<int> blocksWithAValidOrder;
      forEachAssignment(space, [&](const Assignment &a) {
        auto config = space.configFor(a);
        if (!config) {
          std::string message = llvm::toString(config.takeError());
          if (!lacksRegisters(space, a)) {
            ++oddCounts.otherRefusals;
            std::string other = otherRefusal(space, a);
            EXPECT_FALSE(other.empty()) << message;
            EXPECT_NE(message.find(other), std::string::npos) << message;
            return;
          }
          ++oddCounts.tooFewRegisters;
          EXPECT_NE(message.find(registersMessage(space, a)), std::string::npos)
              << message;
          return;
        }
        ++oddCounts.valid;
        blocksWithAValidOrder.insert(a[0]);
        EXPECT_FALSE(lacksRegisters(space, a)) << space.describe(a);
        EXPECT_EQ(config->mc % config->mr, 0);
        EXPECT_EQ(config->nc % config->nr, 0);
        EXPECT_LE(config->kc, desc.k);
      });
      EXPECT_EQ(oddCounts.valid + oddCounts.tooFewRegisters +
                    oddCounts.otherRefusals,
                space.size());
      // 5x16 fits with every order: on avx2 only the table's 4x24 (one
      // block of four) loses its pipelined order, on avx512 the table's
      // 7x64 (one of nine) its bcast and pipelined (two of four).
      EXPECT_EQ(oddCounts.tooFewRegisters, space.base().isa == VectorIsa::Avx2
                                               ? space.size() / 8
                                               : space.size() / 18);
      EXPECT_EQ(blocksWithAValidOrder.size(),
                space.decisions()[0].choices.size());
    }
  }
}

TEST(SearchSpaceTest, TooFewRegistersIsAnErrorNamingTheCount) {
  SearchSpace space =
      modelSpace(GemmDesc::packed(2048, 2048, 2048), pinned(zen3Spec));
  ASSERT_EQ(space.decisions()[0].choices[1], "4x24");
  ASSERT_EQ(space.decisions()[7].choices[1], "pipelined");
  Assignment a = space.modelAssignment();
  a[0] = 1;
  a[7] = 1;
  // 12 accumulators, 3 B vectors and 2 A registers.
  QM_ASSERT_FAILS_WITH(space.configFor(a).takeError(),
                       "a 4x24 block with order pipelined needs 17 vector "
                       "registers; avx2 has 16");
  // The same block with the broadcast order needs 16, and fits.
  a[7] = 0;
  QM_ASSERT_EXPECTED(bcast, space.configFor(a));
  EXPECT_EQ(bcast.vectorRegistersNeeded(8), 16);
  EXPECT_EQ(bcast.order, KStepOrder::Broadcast);
  // 6x16 pipelined needs exactly the 16 there are.
  a[0] = 0;
  a[7] = 1;
  QM_ASSERT_EXPECTED(pipelined, space.configFor(a));
  EXPECT_EQ(pipelined.vectorRegistersNeeded(8), 16);
  EXPECT_EQ(pipelined.order, KStepOrder::Pipelined);
}

TEST(SearchSpaceTest, ModelAssignmentReproducesTheModel) {
  for (const char *spec : {zen3Spec, avx512Spec}) {
    Target target = pinned(spec);
    for (GemmDesc desc :
         {GemmDesc::packed(2048, 2048, 2048), GemmDesc::packed(64, 48, 32),
          GemmDesc::packed(20000, 100000, 20000), GemmDesc::packed(1, 1, 1),
          GemmDesc::packed(7, 5, 3, false, true)}) {
      QM_ASSERT_EXPECTED(model, chooseGemmConfig(desc, target));
      SearchSpace space = SearchSpace::forGemm(desc, target, model);
      QM_ASSERT_EXPECTED(config, space.configFor(space.modelAssignment()));
      EXPECT_EQ(config, model) << spec << " " << desc.str() << ": "
                               << config.str() << " vs " << model.str();
      EXPECT_EQ(config.order, KStepOrder::Broadcast);
    }
  }
  // A base that is not clamped: the model's assignment gives it clamped.
  GemmDesc desc = GemmDesc::packed(64, 48, 32);
  GemmConfig base; // avx2 6x16, kc 256, mc 72, nc 4080
  base.prefetchA = 128;
  base.kUnroll = 16;
  SearchSpace space = SearchSpace::forGemm(desc, pinned(zen3Spec), base);
  QM_ASSERT_EXPECTED(config, space.configFor(space.modelAssignment()));
  EXPECT_EQ(config, clampToProblem(base, desc)) << config.str();
  // Values the fixed lists lack join them at their sorted place.
  EXPECT_EQ(space.decisions()[1].choices,
            (std::vector<std::string>{"1", "2", "4", "8", "16"}));
  EXPECT_EQ(space.decisions()[5].choices,
            (std::vector<std::string>{"0", "128", "256", "512"}));
  EXPECT_EQ(space.decisions()[5].modelChoice, 1);
}

TEST(SearchSpaceTest, ModelAssignmentKeepsTheBasesOrder) {
  GemmDesc desc = GemmDesc::packed(2048, 2048, 2048);
  // avx2 6x16 pipelined (16 registers: exactly the file).
  GemmConfig pipelined;
  pipelined.order = KStepOrder::Pipelined;
  SearchSpace avx2 = SearchSpace::forGemm(desc, pinned(zen3Spec), pipelined);
  EXPECT_EQ(avx2.decisions()[7].modelChoice, 1);
  QM_ASSERT_EXPECTED(config, avx2.configFor(avx2.modelAssignment()));
  EXPECT_EQ(config, clampToProblem(pipelined, desc)) << config.str();
  EXPECT_EQ(config.order, KStepOrder::Pipelined);
  // The avx512 model's config with embedded broadcasts.
  Target target = pinned(avx512Spec);
  QM_ASSERT_EXPECTED(model, chooseGemmConfig(desc, target));
  for (KStepOrder order :
       {KStepOrder::Broadcast, KStepOrder::Pipelined, KStepOrder::Embedded}) {
    GemmConfig base = model;
    base.order = order;
    SearchSpace space = SearchSpace::forGemm(desc, target, base);
    const Decision &d = space.decisions()[7];
    EXPECT_EQ(d.choices[d.modelChoice], orderName(order).str());
    QM_ASSERT_EXPECTED(same, space.configFor(space.modelAssignment()));
    EXPECT_EQ(same, base) << same.str() << " vs " << base.str();
    EXPECT_EQ(space.describe(space.modelAssignment()),
              "block=6x64,ku=4,kc=384,mc=x1,nc=x1,pfa=0,pfb=0,order=" +
                  orderName(order).str() + ",loop=jr-ir,alayout=direct");
  }
  // A base that cannot hold its own order's registers gives a model
  // assignment configFor refuses (the search prunes it like any other).
  GemmConfig tooWide;
  tooWide.mr = 4;
  tooWide.nr = 24;
  tooWide.mc = 96;
  tooWide.nc = 2040;
  tooWide.order = KStepOrder::Pipelined;
  SearchSpace wide = SearchSpace::forGemm(desc, pinned(zen3Spec), tooWide);
  QM_ASSERT_FAILS_WITH(wide.configFor(wide.modelAssignment()).takeError(),
                       "needs 17 vector registers");
}

TEST(SearchSpaceTest, BaseBlockOutsideTheTableComesFirst) {
  GemmConfig base;
  base.mr = 5;
  base.nr = 16;
  base.mc = 250;
  SearchSpace space = SearchSpace::forGemm(GemmDesc::packed(512, 512, 512),
                                           pinned(zen3Spec), base);
  const Decision &block = space.decisions()[0];
  EXPECT_EQ(block.choices,
            (std::vector<std::string>{"5x16", "6x16", "4x24", "8x8"}));
  EXPECT_EQ(block.modelChoice, 0);
  QM_ASSERT_EXPECTED(config, space.configFor(space.modelAssignment()));
  EXPECT_EQ(config.mr, 5);
  EXPECT_EQ(config.mc, 250);
}

TEST(SearchSpaceTest, DescribeIsStable) {
  Target target = pinned(avx512Spec);
  SearchSpace space = modelSpace(GemmDesc::packed(4096, 8192, 4096), target);
  EXPECT_EQ(space.describe(space.modelAssignment()),
            "block=6x64,ku=4,kc=384,mc=x1,nc=x1,pfa=0,pfb=0,order=bcast,"
            "loop=jr-ir,alayout=direct");
  EXPECT_EQ(space.describe({3, 0, 4, 0, 1, 2, 1, 2, 1, 1}),
            "block=8x48,ku=1,kc=768,mc=x1/4,nc=x1/2,pfa=512,pfb=256,"
            "order=embedded,loop=ir-jr,alayout=rows");
  EXPECT_EQ(space.describe({3, 0}),
            "block=8x48,ku=1,kc=?,mc=?,nc=?,pfa=?,pfb=?,order=?,loop=?,"
            "alayout=?");
}

TEST(SearchSpaceTest, FactorsKeepTheModelsFootprint) {
  Target target = pinned(avx512Spec);
  GemmDesc desc = GemmDesc::packed(20000, 100000, 20000);
  QM_ASSERT_EXPECTED(model, chooseGemmConfig(desc, target));
  ASSERT_EQ(model.kc, 384);
  // A in place: the B panel in half of L2, A's rows in what keeps both
  // within three quarters of it.
  ASSERT_EQ(model.mc, 384);
  ASSERT_EQ(model.nc, 640);
  SearchSpace space = SearchSpace::forGemm(desc, target, model);
  // block 6x64, ku 4, kc 192, mc x1, nc x1/2: half the kc, the same A
  // block bytes (twice the rows), the same B panel bytes at x1/2.
  QM_ASSERT_EXPECTED(config, space.configFor({0, 2, 0, 2, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(config.kc, 192);
  EXPECT_EQ(config.mc, 768);
  EXPECT_EQ(config.nc, 640);
  // 14x32 rounds mc to its mr: 384 / 14 = 27.4 -> 27 * 14. The order does
  // not change the blocking.
  for (int order = 0; order < 3; ++order) {
    QM_ASSERT_EXPECTED(other,
                       space.configFor({2, 2, 2, 2, 2, 0, 0, order, 0, 0}));
    EXPECT_EQ(other.mr, 14);
    EXPECT_EQ(other.mc, 378);
    EXPECT_EQ(other.mc % 14, 0);
  }
}

TEST(SearchSpaceTest, TinyProblemStillHasChoices) {
  for (const char *spec : {zen3Spec, avx512Spec}) {
    SearchSpace space = modelSpace(GemmDesc::packed(1, 1, 1), pinned(spec));
    EXPECT_GT(space.size(), 0u);
    // 1x1x1 with B not transposed also offers B in place (packb).
    ASSERT_EQ(space.decisions().size(), 11u);
    for (const Decision &d : space.decisions())
      EXPECT_FALSE(d.choices.empty()) << d.key;
    EXPECT_EQ(space.decisions()[2].choices, (std::vector<std::string>{"1"}));
    EXPECT_EQ(space.decisions()[3].choices, (std::vector<std::string>{"x1"}));
    EXPECT_EQ(space.decisions()[4].choices, (std::vector<std::string>{"x1"}));
    expectValidOrTooFewRegisters(space);
  }
}

TEST(SearchSpaceTest, BadAssignmentsAreErrors) {
  SearchSpace space =
      modelSpace(GemmDesc::packed(256, 256, 256), pinned(zen3Spec));
  QM_ASSERT_FAILS_WITH(space.configFor({0, 1}).takeError(),
                       "assignment has 2 choices but the space has 10");
  QM_ASSERT_FAILS_WITH(
      space.configFor({0, 9, 0, 0, 0, 0, 0, 0, 0, 0}).takeError(),
      "choice 9 is out of range for decision 'ku'");
  QM_ASSERT_FAILS_WITH(
      space.configFor({-1, 0, 0, 0, 0, 0, 0, 0, 0, 0}).takeError(),
      "out of range for decision 'block'");
  // avx2 has no embedded order: index 2 is past the end.
  QM_ASSERT_FAILS_WITH(
      space.configFor({0, 0, 0, 0, 0, 0, 0, 2, 0, 0}).takeError(),
      "choice 2 is out of range for decision 'order' with "
      "2 choices");
  QM_ASSERT_FAILS_WITH(
      space.configFor({1, 0, 0, 0, 0, 0, 0, 1, 0, 0}).takeError(),
      "needs 17 vector registers");
}

TEST(SearchSpaceTest, ExplicitDecisionsThatDoNotCombineAreErrors) {
  GemmDesc desc = GemmDesc::packed(512, 512, 512);
  GemmConfig base; // 6x16, mc 72
  SearchSpace space(desc, base,
                    {{"block", {"6x16", "5x16", "bad"}, 0},
                     {"mc", {"72", "70", "x2", "x0"}, 0},
                     {"kc", {"128", "many"}, 0},
                     {"frobs", {"1"}, 0}});
  QM_ASSERT_FAILS_WITH(space.configFor({0, 0, 0, 0}).takeError(),
                       "unknown kernel config key 'frobs'");
  SearchSpace known(desc, base,
                    {{"block", {"6x16", "5x16", "bad"}, 0},
                     {"mc", {"72", "70", "x2", "x0"}, 0},
                     {"kc", {"128", "many"}, 0}});
  QM_ASSERT_EXPECTED(ok, known.configFor({0, 0, 0}));
  EXPECT_EQ(ok.mc, 72);
  EXPECT_EQ(ok.kc, 128);
  QM_ASSERT_FAILS_WITH(known.configFor({0, 1, 0}).takeError(),
                       "mc 70 is not a positive multiple of mr 6");
  QM_ASSERT_FAILS_WITH(known.configFor({1, 0, 0}).takeError(),
                       "mc 72 is not a positive multiple of mr 5");
  QM_ASSERT_FAILS_WITH(known.configFor({2, 0, 0}).takeError(),
                       "block choice 'bad' is not MRxNR");
  QM_ASSERT_FAILS_WITH(known.configFor({0, 3, 0}).takeError(),
                       "mc choice 'x0' is not a factor");
  QM_ASSERT_FAILS_WITH(known.configFor({0, 0, 1}).takeError(),
                       "kernel config 'kc' needs a non-negative integer");
  // x2 with kc 128 (half the base's 256): four times the rows.
  QM_ASSERT_EXPECTED(doubled, known.configFor({0, 2, 0}));
  EXPECT_EQ(doubled.mc, 288);
  // Orders: unknown names are errors, and so is a block (given before or
  // after the order) that cannot hold the order's registers.
  SearchSpace orders(desc, base,
                     {{"order", {"bcast", "pipelined", "sideways"}, 0},
                      {"block", {"6x16", "4x24"}, 0},
                      {"mc", {"x1"}, 0}});
  QM_ASSERT_FAILS_WITH(orders.configFor({2, 0, 0}).takeError(),
                       "unknown kernel config order 'sideways'");
  QM_ASSERT_EXPECTED(fits, orders.configFor({1, 0, 0}));
  EXPECT_EQ(fits.order, KStepOrder::Pipelined);
  EXPECT_EQ(fits.mr, 6);
  QM_ASSERT_FAILS_WITH(orders.configFor({1, 1, 0}).takeError(),
                       "a 4x24 block with order pipelined needs 17 vector "
                       "registers; avx2 has 16");
  QM_ASSERT_EXPECTED(wide, orders.configFor({0, 1, 0}));
  EXPECT_EQ(wide.nr, 24);
  EXPECT_EQ(wide.mc % 4, 0);
}

TEST(SearchSpaceTest, StreamedBInPlaceOffersTheSweepOff) {
  // 8 rows against a B (64 MiB) larger than L3 (32 MiB): the model reads
  // B in place and sweeps it (sweepb=1); the space offers it off too.
  Target target = pinned("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,"
                         "+fma,+avx512f:l1d=48K,l2=1M,l3=32M,cores=2");
  GemmDesc desc = GemmDesc::packed(8, 4096, 4096);
  QM_ASSERT_EXPECTED(model, chooseGemmConfig(desc, target));
  ASSERT_TRUE(model.sweepB) << model.str();
  SearchSpace space = SearchSpace::forGemm(desc, target, model);
  std::vector<std::string> k = keys(space);
  auto at = std::find(k.begin(), k.end(), "sweepb");
  ASSERT_NE(at, k.end());
  EXPECT_EQ(*(at - 1), "packb");
  const Decision &sweep = space.decisions()[at - k.begin()];
  EXPECT_EQ(sweep.choices, (std::vector<std::string>{"1", "0"}));
  EXPECT_EQ(sweep.modelChoice, 0);
  QM_ASSERT_EXPECTED(same, space.configFor(space.modelAssignment()));
  EXPECT_EQ(same, clampToProblem(model, desc));
  Assignment off = space.modelAssignment();
  off[at - k.begin()] = 1;
  QM_ASSERT_EXPECTED(unswept, space.configFor(off));
  EXPECT_FALSE(unswept.sweepB);
  EXPECT_EQ(unswept.str().find("sweepb"), std::string::npos);
  // B within L3: no sweep, no decision.
  Target bigL3 = pinned("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,"
                        "+fma,+avx512f:l1d=48K,l2=1M,l3=256M,cores=2");
  QM_ASSERT_EXPECTED(cached, chooseGemmConfig(desc, bigL3));
  EXPECT_FALSE(cached.sweepB);
  std::vector<std::string> none =
      keys(SearchSpace::forGemm(desc, bigL3, cached));
  EXPECT_EQ(std::find(none.begin(), none.end(), "sweepb"), none.end());
}

TEST(SearchSpaceTest, FewRowsOfferBInPlaceAndThreadsAndSplit) {
  Target target = pinned(avx512Spec);
  // 16 rows: the model reads B in place; the space offers packing it too.
  GemmDesc desc = GemmDesc::packed(16, 4096, 4096);
  auto base = chooseGemmConfig(desc, target);
  QM_ASSERT_EXPECTED(model, std::move(base));
  model.threads = 4;
  SearchSpace space = SearchSpace::forGemm(desc, target, model);
  EXPECT_EQ(keys(space),
            (std::vector<std::string>{"block", "ku", "kc", "mc", "nc", "pfa",
                                      "pfb", "order", "loop", "alayout",
                                      "packb", "threads", "split"}));
  const auto &d = space.decisions();
  EXPECT_EQ(d[10].choices, (std::vector<std::string>{"1", "0"}));
  EXPECT_EQ(d[10].modelChoice, 1);
  EXPECT_EQ(d[11].choices, (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(d[11].modelChoice, 2);
  EXPECT_EQ(d[12].choices, (std::vector<std::string>{"auto", "m", "n"}));
  EXPECT_EQ(d[12].modelChoice, 0);
  QM_ASSERT_EXPECTED(same, space.configFor(space.modelAssignment()));
  EXPECT_EQ(same, clampToProblem(model, desc));

  Assignment a = space.modelAssignment();
  a[8] = 1;  // ir-jr
  a[9] = 1;  // A rows
  a[10] = 0; // pack B
  a[11] = 1; // 2 threads
  a[12] = 1; // split M
  QM_ASSERT_EXPECTED(c, space.configFor(a));
  EXPECT_EQ(c.loop, MacroLoopOrder::IrJr);
  EXPECT_EQ(c.packB, BPacking::Panels);
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.split, SplitAxis::M);
  EXPECT_EQ(c.aLayout, ALayout::Rows);
  EXPECT_NE(c.str().find(",packb=1,loop=ir-jr,split=m,alayout=rows"),
            std::string::npos)
      << c.str();
  a[11] = 0; // one thread: only split=auto means something
  QM_ASSERT_FAILS_WITH(space.configFor(a).takeError(),
                       "a split axis other than auto means nothing");
  Validity counts = expectValidOrTooFewRegisters(space);
  // 7x64 (one of eight blocks) with bcast or pipelined (two of four orders).
  const uint64_t lacking = space.size() / 8 / 2;
  EXPECT_EQ(counts.tooFewRegisters, lacking);
  // Of the rest, two of the nine (threads, split) pairs are refused: one
  // thread with m or n. 4096 columns: every block's nr divides N except 48
  // (8x48), which reads B in place all the same, its last sliver masked.
  EXPECT_EQ(counts.otherRefusals, 2 * (space.size() - lacking) / 9);

  // Transposed B packed, or many rows: no packb decision.
  GemmDesc transB = GemmDesc::packed(16, 4096, 4096, false, true);
  GemmConfig panels = model;
  panels.packB = BPacking::Panels;
  EXPECT_EQ(keys(SearchSpace::forGemm(transB, target, panels)).size(), 12u);
  GemmDesc tall = GemmDesc::packed(65, 4096, 64);
  EXPECT_EQ(keys(SearchSpace::forGemm(tall, target, model)).size(), 12u);
  // Transposed A: no alayout decision.
  GemmDesc transA = GemmDesc::packed(16, 4096, 4096, true, false);
  EXPECT_EQ(keys(SearchSpace::forGemm(transA, target, model)).size(), 12u);
}

TEST(SearchSpaceTest, F32MatrixVectorFormOffersPanelsAndThreads) {
  // 15 rows against a B^T that fits L3 on AVX-512 (with AVX512BW,
  // AVX512VL and BMI2, as the form needs; from 16 rows, or 8 against a
  // larger B^T, the product is transposed): the model
  // reads B^T's rows in place (the matrix-vector form); its space is that
  // or the panels the config keeps underneath, and the threads. Nothing
  // else reaches its kernel.
  Target target =
      pinned("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,+fma,+bmi2,+avx512f,"
             "+avx512bw,+avx512vl:l1d=48K,l2=1M,l3=32M,cores=2");
  GemmDesc desc = GemmDesc::packed(15, 2048, 2048, false, true);
  auto base = chooseGemmConfig(desc, target);
  QM_ASSERT_EXPECTED(model, std::move(base));
  EXPECT_EQ(model.packB, BPacking::InPlace);
  EXPECT_TRUE(isMatrixVectorForm(desc, model));
  model.threads = 2;
  SearchSpace space = SearchSpace::forGemm(desc, target, model);
  EXPECT_EQ(keys(space),
            (std::vector<std::string>{"packb", "threads", "split"}));
  EXPECT_EQ(space.decisions()[0].choices, (std::vector<std::string>{"0", "1"}));
  Assignment a = space.modelAssignment();
  a[0] = 1;
  QM_ASSERT_EXPECTED(packed, space.configFor(a));
  EXPECT_EQ(packed.packB, BPacking::Panels);
  EXPECT_FALSE(isMatrixVectorForm(desc, packed));
  QM_ASSERT_EXPECTED(inPlace, space.configFor(space.modelAssignment()));
  EXPECT_EQ(inPlace.packB, BPacking::InPlace);

  // 17 rows (against a B^T too narrow for the product transposed), AVX2,
  // AVX-512 without AVX512BW or a bias along the rows: B^T is packed.
  auto packsB = [](const GemmDesc &d, const Target &t) {
    auto c = chooseGemmConfig(d, t);
    if (!c) {
      ADD_FAILURE() << llvm::toString(c.takeError());
      return false;
    }
    return c->packB == BPacking::Panels && c->product == Product::Direct;
  };
  EXPECT_TRUE(packsB(GemmDesc::packed(17, 64, 4096, false, true), target));
  EXPECT_TRUE(packsB(desc, pinned(zen3Spec)));
  EXPECT_TRUE(packsB(desc, pinned(avx512Spec)));
  GemmDesc rowBias = desc;
  rowBias.bias = GemmBias::Rows;
  EXPECT_TRUE(packsB(rowBias, target));
  // A run-time N takes the matrix-vector form too: its columns come from
  // the header, as a part's do.
  GemmDesc runtimeN = desc;
  runtimeN.dynamicN = true;
  runtimeN.runtimeLd = true;
  QM_ASSERT_EXPECTED(runtimeNModel, chooseGemmConfig(runtimeN, target));
  EXPECT_TRUE(isMatrixVectorForm(runtimeN, runtimeNModel))
      << runtimeNModel.str();
}

TEST(SearchSpaceTest, TransposedProductSpaceBlocksTheSwappedProblem) {
  // The model computes 64 rows against B^T transposed: the tuner's space
  // is the swapped problem's (4096 rows of B^T by 64 of A), each config
  // the product transposed, and the model's config its model assignment.
  Target target =
      pinned("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,+fma,+bmi2,+avx512f,"
             "+avx512bw,+avx512vl:l1d=48K,l2=1M,l3=32M,cores=2");
  GemmDesc desc = GemmDesc::packed(64, 4096, 4096, false, true);
  QM_ASSERT_EXPECTED(model, chooseGemmConfig(desc, target));
  ASSERT_EQ(model.product, Product::Transposed) << model.str();
  SearchSpace space = SearchSpace::forGemm(desc, target, model);
  EXPECT_EQ(space.product(), Product::Transposed);
  EXPECT_EQ(space.desc().m, 4096);
  EXPECT_EQ(space.desc().n, 64);
  EXPECT_FALSE(space.desc().transA);
  QM_ASSERT_EXPECTED(back, space.configFor(space.modelAssignment()));
  EXPECT_EQ(back, model);
  const Decision *alayout = nullptr;
  for (const Decision &d : space.decisions())
    if (d.key == "alayout")
      alayout = &d;
  ASSERT_NE(alayout, nullptr);
  EXPECT_EQ(alayout->choices[alayout->modelChoice], "direct");
  // Every config of the space computes the product transposed.
  Assignment a = space.modelAssignment();
  for (size_t i = 0; i < space.decisions().size(); ++i)
    for (size_t j = 0; j < space.decisions()[i].choices.size(); ++j) {
      Assignment b = a;
      b[i] = static_cast<int>(j);
      auto c = space.configFor(b);
      if (!c) {
        llvm::consumeError(c.takeError());
        continue;
      }
      EXPECT_EQ(c->product, Product::Transposed) << space.describe(b);
    }
}

} // namespace

//===----------------------------------------------------------------------===//
// Convolutions (forProblem)
//===----------------------------------------------------------------------===//

namespace {
const Decision *decision(const SearchSpace &space, llvm::StringRef key) {
  for (const Decision &d : space.decisions())
    if (d.key == key)
      return &d;
  return nullptr;
}
} // namespace

TEST(SearchSpaceTest, OneSliverOfBWithAInPlaceOffersKInOneBlock) {
  // A Zen 4: 32 KiB L1d, 1 MiB L2. 4096x64x4096: A read in place against
  // one 6x64 sliver of B, K blocked by the model; K whole (a 1 MiB sliver)
  // joins the choices and builds a config with that kc.
  Target target = pinned("x86_64-unknown-linux-gnu:znver4:+avx,+avx2,+fma,"
                         "+avx512f,+avx512bw,+avx512vl:l1d=32K,l2=1M,"
                         "l3=32M,cores=2");
  GemmDesc d = GemmDesc::packed(4096, 64, 4096);
  QM_ASSERT_EXPECTED(base, chooseGemmConfig(d, target));
  ASSERT_EQ(base.aLayout, ALayout::Direct) << base.str();
  ASSERT_EQ(base.nr, 64) << base.str();
  ASSERT_LT(base.kc, 4096) << base.str();
  SearchSpace space = SearchSpace::forGemm(d, target, base);
  const Decision *kc = decision(space, "kc");
  ASSERT_NE(kc, nullptr);
  ASSERT_EQ(kc->choices.back(), "4096");
  EXPECT_EQ(kc->choices[kc->modelChoice], std::to_string(base.kc));
  Assignment a = space.modelAssignment();
  a[size_t(kc - space.decisions().data())] = int(kc->choices.size() - 1);
  QM_ASSERT_EXPECTED(whole, space.configFor(a));
  EXPECT_EQ(whole.kc, 4096);
  // Not where the sliver would not fit L2 (K = 8192: 2 MiB), nor against
  // several slivers of B (N = 256).
  for (GemmDesc other :
       {GemmDesc::packed(4096, 64, 8192), GemmDesc::packed(4096, 256, 4096)}) {
    QM_ASSERT_EXPECTED(otherBase, chooseGemmConfig(other, target));
    SearchSpace otherSpace = SearchSpace::forGemm(other, target, otherBase);
    for (const std::string &text : decision(otherSpace, "kc")->choices)
      EXPECT_NE(std::stoll(text), other.k) << other.m << "x" << other.n;
  }
}

TEST(SearchSpaceTest, DotConvolutionKcChoicesDivideTheRunInWholeGroups) {
  // A bf16 convolution (dotconv.py): each packed row of a block is one
  // piece of the input, so kc divides the run (KW*C = 192) in pairs; the
  // model's kc is one of them.
  Target target = pinned("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,+fma,"
                         "+avx512f,+avx512bw,+avx512vl,+avx512bf16,"
                         "+avx512vnni:l1d=48K,l2=1M,l3=32M,cores=2");
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::U8S8}) {
    ConvDesc conv =
        ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 58, 58, 64, 64, 3, 3);
    conv.precision = p;
    KernelProblem problem(conv);
    QM_ASSERT_EXPECTED(base, chooseKernelConfig(problem, target));
    const int64_t group = conv.gemmView().kGroup();
    EXPECT_EQ(192 % base.kc, 0) << base.str();
    SearchSpace space = SearchSpace::forProblem(problem, target, base);
    const Decision *kc = decision(space, "kc");
    ASSERT_NE(kc, nullptr);
    EXPECT_GE(kc->choices.size(), 2u);
    for (const std::string &text : kc->choices) {
      int64_t v = std::stoll(text);
      EXPECT_EQ(192 % v, 0) << v;
      EXPECT_EQ(v % group, 0) << v;
    }
    EXPECT_EQ(decision(space, "alayout"), nullptr);
  }
}

TEST(SearchSpaceTest, StreamedRowsOfferTheirKBlock) {
  // 8-bit and bf16 rows against B as stored, without the tiles: the model
  // streams B's rows in K blocks of streamedKBlock; the space offers B
  // packed, K in one block and blocks of 256 to 2048 k, each of which
  // builds a config with that kc.
  Target target = pinned("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,+fma,"
                         "+avx512f,+avx512bw,+avx512vl,+avx512bf16,"
                         "+avx512vnni:l1d=48K,l2=1M,l3=32M,cores=2");
  for (GemmPrecision p : {GemmPrecision::S8S8, GemmPrecision::Bf16}) {
    GemmDesc d = GemmDesc::packed(8, 4096, 3000);
    d.precision = p;
    QM_ASSERT_EXPECTED(base, chooseKernelConfig(KernelProblem(d), target));
    ASSERT_EQ(base.packB, BPacking::InPlace) << base.str();
    SearchSpace space = SearchSpace::forProblem(KernelProblem(d), target, base);
    const Decision *kc = decision(space, "kc");
    ASSERT_NE(kc, nullptr);
    EXPECT_EQ(kc->choices,
              (std::vector<std::string>{"256", "512", "1024", "2048", "3000"}));
    EXPECT_EQ(kc->choices[kc->modelChoice], std::to_string(streamedKBlock(p)));
    Assignment a = space.modelAssignment();
    const size_t at = size_t(kc - space.decisions().data());
    for (size_t k = 0; k < kc->choices.size(); ++k) {
      a[at] = int(k);
      QM_ASSERT_EXPECTED(c, space.configFor(a));
      EXPECT_EQ(std::to_string(c.kc), kc->choices[k]);
    }
  }
}

TEST(SearchSpaceTest, DotKernelsReadAInPlaceInWholeKSteps) {
  // An s8 GEMM of K = 24 (6 groups of 4; past streamedRows, so B is
  // packed): the model reads A in place with
  // ku 2; a ku of 4 would reach past K (padding the kernel never reads in
  // place) and is refused, naming why; the model's own assignment builds.
  Target target = pinned("x86_64-unknown-linux-gnu:znver5:+avx,+avx2,+fma,"
                         "+avx512f,+avx512bw,+avx512vl,+avx512bf16,"
                         "+avx512vnni:l1d=48K,l2=1M,l3=32M,cores=2");
  GemmDesc d = GemmDesc::packed(64, 48, 24);
  d.precision = GemmPrecision::S8S8;
  QM_ASSERT_EXPECTED(base, chooseKernelConfig(KernelProblem(d), target));
  EXPECT_EQ(base.aLayout, ALayout::Direct);
  EXPECT_EQ(base.kUnroll, 2);
  SearchSpace space = SearchSpace::forProblem(KernelProblem(d), target, base);
  Assignment a = space.modelAssignment();
  QM_ASSERT_EXPECTED(model, space.configFor(a));
  EXPECT_EQ(model.aLayout, ALayout::Direct);
  for (size_t i = 0; i < space.decisions().size(); ++i)
    if (space.decisions()[i].key == "ku")
      for (size_t j = 0; j < space.decisions()[i].choices.size(); ++j)
        if (space.decisions()[i].choices[j] == "4") {
          Assignment four = a;
          four[i] = int(j);
          QM_ASSERT_FAILS_WITH(space.configFor(four).takeError(),
                               "whole K steps of 16");
        }
  // The bf16 stem (runs of 21 k: 10 pairs and one k, loaded under a
  // mask): in place, all seven runs a block, with ku 2, whose K steps
  // divide the 10 pairs; ku 4 does not, and is refused, as is the block
  // of runs with A packed.
  ConvDesc stem =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 230, 230, 3, 64, 7, 7, 2, 2);
  stem.precision = GemmPrecision::Bf16;
  QM_ASSERT_EXPECTED(stemBase, chooseKernelConfig(KernelProblem(stem), target));
  EXPECT_EQ(stemBase.aLayout, ALayout::Direct) << stemBase.str();
  EXPECT_EQ(stemBase.kc, 147) << stemBase.str();
  EXPECT_EQ(stemBase.kUnroll, 2) << stemBase.str();
  SearchSpace stemSpace =
      SearchSpace::forProblem(KernelProblem(stem), target, stemBase);
  QM_ASSERT_EXPECTED(stemModel,
                     stemSpace.configFor(stemSpace.modelAssignment()));
  EXPECT_EQ(stemModel.aLayout, ALayout::Direct);
  bool refused = false;
  for (size_t i = 0; i < stemSpace.decisions().size(); ++i)
    if (stemSpace.decisions()[i].key == "ku")
      for (size_t j = 0; j < stemSpace.decisions()[i].choices.size(); ++j)
        if (stemSpace.decisions()[i].choices[j] == "4") {
          Assignment four = stemSpace.modelAssignment();
          four[i] = int(j);
          QM_ASSERT_FAILS_WITH(stemSpace.configFor(four).takeError(),
                               "one partial group");
          refused = true;
        }
  EXPECT_TRUE(refused);
  // kc offers one run (the block of one run before) and the block of all
  // seven; both build.
  const Decision *kc = decision(stemSpace, "kc");
  ASSERT_NE(kc, nullptr);
  EXPECT_NE(std::find(kc->choices.begin(), kc->choices.end(), "21"),
            kc->choices.end());
  EXPECT_EQ(kc->choices[kc->modelChoice], "147");
  const size_t at = size_t(kc - stemSpace.decisions().data());
  for (size_t k = 0; k < kc->choices.size(); ++k) {
    Assignment a = stemSpace.modelAssignment();
    a[at] = int(k);
    QM_ASSERT_EXPECTED(c, stemSpace.configFor(a));
    EXPECT_EQ(c.aLayout, ALayout::Direct);
  }
}

TEST(SearchSpaceTest, ConvolutionKcChoicesAreWholePiecesOfTheRun) {
  Target target = pinned(avx512Spec);
  // ResNet-50's res2 3x3 on its padded input: the run is KW*C = 192.
  ConvDesc conv =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 58, 58, 64, 64, 3, 3);
  ASSERT_EQ(conv.contiguousRun(), 192);
  KernelProblem problem(conv);
  QM_ASSERT_EXPECTED(base, chooseKernelConfig(problem, target));
  SearchSpace space = SearchSpace::forProblem(problem, target, base);
  const Decision *kc = decision(space, "kc");
  ASSERT_NE(kc, nullptr);
  std::set<std::string> choices(kc->choices.begin(), kc->choices.end());
  EXPECT_TRUE(choices.count("192")) << "the largest divisor within the base";
  for (const std::string &text : kc->choices) {
    int64_t v = std::stoll(text);
    EXPECT_TRUE(192 % v == 0 || v % 192 == 0 || v == 576) << v;
  }
  const Decision *alayout = decision(space, "alayout");
  ASSERT_NE(alayout, nullptr);
  EXPECT_NE(
      std::find(alayout->choices.begin(), alayout->choices.end(), "direct"),
      alayout->choices.end());
  // The filter may be read in place, or packed by the tiles, at any M
  // (3136 here), right after alayout.
  ASSERT_NE(decision(space, "packb"), nullptr);
  EXPECT_EQ(decision(space, "packb")->choices,
            (std::vector<std::string>{"1", "0", "fused"}));
  std::vector<std::string> order;
  for (const Decision &d : space.decisions())
    order.push_back(d.key);
  auto at = std::find(order.begin(), order.end(), "alayout");
  ASSERT_NE(at, order.end());
  ASSERT_NE(at + 1, order.end());
  EXPECT_EQ(*(at + 1), "packb");
  // Direct A is valid with every kc choice (each divides the run or is a
  // multiple of it).
  Assignment a = space.modelAssignment();
  QM_ASSERT_EXPECTED(model, space.configFor(a));
  EXPECT_EQ(model, clampToProblem(base, problem.gemm()));
  size_t kcIndex = 0, alayoutIndex = 0;
  for (size_t i = 0; i < space.decisions().size(); ++i) {
    if (space.decisions()[i].key == "kc")
      kcIndex = i;
    if (space.decisions()[i].key == "alayout")
      alayoutIndex = i;
  }
  for (size_t k = 0; k < kc->choices.size(); ++k) {
    a[kcIndex] = int(k);
    a[alayoutIndex] = int(
        std::find(alayout->choices.begin(), alayout->choices.end(), "direct") -
        alayout->choices.begin());
    auto c = space.configFor(a);
    EXPECT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  }
}

TEST(SearchSpaceTest, DirectANeedsAAsStored) {
  Target target = pinned(avx512Spec);
  GemmDesc gemm = GemmDesc::packed(64, 64, 64);
  QM_ASSERT_EXPECTED(base, chooseGemmConfig(gemm, target));
  EXPECT_EQ(base.aLayout, ALayout::Direct);
  SearchSpace space(gemm, base, {{"alayout", {"rows", "direct"}, 0}});
  QM_ASSERT_EXPECTED(direct, space.configFor({1}));
  EXPECT_EQ(direct.aLayout, ALayout::Direct);
  // With a run-time lda too, up to nine rows (three base registers).
  GemmDesc runtimeLd = gemm;
  runtimeLd.runtimeLd = true;
  SearchSpace runtime(
      runtimeLd, base,
      {{"block", {"6x64", "12x32"}, 0}, {"alayout", {"rows", "direct"}, 0}});
  QM_ASSERT_EXPECTED(sixRows, runtime.configFor({0, 1}));
  EXPECT_EQ(sixRows.aLayout, ALayout::Direct);
  QM_ASSERT_FAILS_WITH(runtime.configFor({1, 1}).takeError(),
                       "alayout=direct with run-time leading dimensions "
                       "reaches 9 rows of A in place; the 12x32 block has 12");
  // A transposed: refused, and the space around the model's config does
  // not offer it.
  GemmDesc transA = GemmDesc::packed(64, 64, 64, true, false);
  SearchSpace refused(transA, base, {{"alayout", {"rows", "direct"}, 0}});
  QM_ASSERT_FAILS_WITH(refused.configFor({1}).takeError(),
                       "alayout=direct reads A's rows in place: it needs an "
                       "f32 GEMM with A not transposed");
  QM_ASSERT_EXPECTED(model, chooseGemmConfig(transA, target));
  EXPECT_NE(model.aLayout, ALayout::Direct);
  SearchSpace offered = SearchSpace::forGemm(transA, target, model);
  EXPECT_EQ(decision(offered, "alayout"), nullptr);
}

TEST(SearchSpaceTest, GemmSpacesAreForGemmsAndNchwReadsItsFilterInPlace) {
  Target target = pinned(avx512Spec);
  GemmDesc gemm = GemmDesc::packed(256, 256, 256);
  QM_ASSERT_EXPECTED(base, chooseGemmConfig(gemm, target));
  SearchSpace space =
      SearchSpace::forProblem(KernelProblem(gemm), target, base);
  SearchSpace plain = SearchSpace::forGemm(gemm, target, base);
  ASSERT_EQ(space.decisions().size(), plain.decisions().size());
  for (size_t i = 0; i < space.decisions().size(); ++i)
    EXPECT_EQ(space.decisions()[i].choices, plain.decisions()[i].choices);
  ConvDesc nchw = ConvDesc::dense(ConvLayout::NchwFchw, 1, 20, 20, 8, 16, 3, 3);
  QM_ASSERT_EXPECTED(nbase, chooseKernelConfig(KernelProblem(nchw), target));
  SearchSpace nspace =
      SearchSpace::forProblem(KernelProblem(nchw), target, nbase);
  EXPECT_EQ(decision(nspace, "packb"), nullptr) << "B is gathered";
  // Its A is the filter as stored: read in place (the model's choice), as
  // a GEMM's A is, among the layouts offered; the model's config is valid.
  EXPECT_EQ(nbase.aLayout, ALayout::Direct);
  const Decision *alayout = decision(nspace, "alayout");
  ASSERT_NE(alayout, nullptr);
  EXPECT_NE(
      std::find(alayout->choices.begin(), alayout->choices.end(), "direct"),
      alayout->choices.end());
  QM_ASSERT_EXPECTED(config, nspace.configFor(nspace.modelAssignment()));
  EXPECT_EQ(config.aLayout, ALayout::Direct);
}

/// A 2-vCPU Sapphire Rapids-class Xeon with AMX, as the model sees it.
const char *const kXeonWithAmx =
    "x86_64-unknown-linux-gnu:sapphirerapids:+avx,+avx2,+fma,+avx512f,"
    "+avx512bw,+avx512vl,+avx512bf16,+avx512vnni,+bmi2,+f16c,+amx-tile,"
    "+amx-bf16,+amx-int8:l1d=48K,l2=2M,l3=105M,cores=2";

TEST(SearchSpaceTest, AmxReadsAInPlaceWhereItsRowsDoNotCrowdAnL1Set) {
  // 64 sets of a 48 KiB, 12-way L1: 32 rows 2 KiB apart put 16 on each of
  // two sets; 1 KiB apart, 8 on each of four (at most two thirds of 12).
  EXPECT_TRUE(amxRowsCrowdL1(2048, 32, 48 * 1024));
  EXPECT_FALSE(amxRowsCrowdL1(1024, 32, 48 * 1024));
  EXPECT_TRUE(amxRowsCrowdL1(8192, 16, 48 * 1024));
  EXPECT_FALSE(amxRowsCrowdL1(128, 32, 48 * 1024));
  EXPECT_FALSE(amxRowsCrowdL1(4096 + 64, 32, 48 * 1024));
  Target target = pinned(kXeonWithAmx);
  auto config = [&](int64_t m, int64_t n, int64_t k, GemmPrecision p) {
    GemmDesc d = GemmDesc::packed(m, n, k);
    d.precision = p;
    return chooseKernelConfig(KernelProblem(d), target);
  };
  QM_ASSERT_EXPECTED(mid, config(256, 256, 256, GemmPrecision::Bf16));
  EXPECT_EQ(mid.aLayout, ALayout::Direct) << mid.str();
  GemmDesc d = GemmDesc::packed(256, 256, 256);
  d.precision = GemmPrecision::Bf16;
  SearchSpace space = SearchSpace::forProblem(KernelProblem(d), target, mid);
  ASSERT_NE(decision(space, "alayout"), nullptr);
  EXPECT_EQ(decision(space, "alayout")->choices,
            (std::vector<std::string>{"kmajor", "direct"}));
  EXPECT_EQ(decision(space, "alayout")->modelChoice, 1);
  // The model's assignment is the model's config: AMX's blocks are tiles,
  // not counted against the vector registers (all four took 16x16 before).
  QM_ASSERT_EXPECTED(again, space.configFor(space.modelAssignment()));
  EXPECT_EQ(again.str(), mid.str());
  QM_ASSERT_EXPECTED(big, config(1024, 1024, 1024, GemmPrecision::Bf16));
  EXPECT_EQ(big.aLayout, ALayout::KMajor) << big.str();
  // Two slivers of columns: all of K a block, each row of A streamed once.
  QM_ASSERT_EXPECTED(skinny, config(4096, 64, 4096, GemmPrecision::S8S8));
  EXPECT_EQ(skinny.aLayout, ALayout::Direct) << skinny.str();
  EXPECT_EQ(skinny.kc, 4096) << skinny.str();
  // K not whole tile steps: packed, and nothing else to choose.
  QM_ASSERT_EXPECTED(odd, config(100, 200, 300, GemmPrecision::Bf16));
  EXPECT_EQ(odd.aLayout, ALayout::KMajor) << odd.str();
  d = GemmDesc::packed(100, 200, 300);
  d.precision = GemmPrecision::Bf16;
  EXPECT_EQ(decision(SearchSpace::forProblem(KernelProblem(d), target, odd),
                     "alayout"),
            nullptr);
}

TEST(SearchSpaceTest, AmxTakesTheGemmsItsKernelsDoAndStepsKcInTiles) {
  // On a target with AMX (a Sapphire Rapids-class Xeon), bf16 and 8-bit
  // GEMMs with A as stored get the tile kernels (amx.py), B as stored or
  // transposed, their space K unrolls of one tile step and kcs of whole
  // tile steps (32 bf16, 64 bytes); what amx.py does not take (A
  // transposed, an epilogue, an nchw convolution) stays on AVX512-BF16/VNNI,
  // and a target without the amx-bf16 feature keeps its bf16 there too.
  Target target = pinned(kXeonWithAmx);
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::S8S8}) {
    GemmDesc d = GemmDesc::packed(100, 200, 300);
    d.precision = p;
    QM_ASSERT_EXPECTED(base, chooseKernelConfig(KernelProblem(d), target));
    EXPECT_EQ(base.isa, VectorIsa::Amx) << base.str();
    EXPECT_EQ(base.kUnroll, 1);
    const int64_t step = amxTileK(d.operandElementBytes());
    EXPECT_EQ(base.kc % step, 0) << base.str();
    SearchSpace space = SearchSpace::forProblem(KernelProblem(d), target, base);
    ASSERT_NE(decision(space, "ku"), nullptr);
    EXPECT_EQ(decision(space, "ku")->choices, std::vector<std::string>{"1"});
    for (const std::string &text : decision(space, "kc")->choices)
      EXPECT_EQ(std::stoll(text) % step, 0) << text;
    for (const std::string &text : decision(space, "block")->choices)
      EXPECT_TRUE(text == "32x32" || text == "32x16" || text == "16x32" ||
                  text == "16x16")
          << text;
    d.transB = true;
    d.ldb = d.k;
    QM_ASSERT_EXPECTED(nt, chooseKernelConfig(KernelProblem(d), target));
    EXPECT_EQ(nt.isa, VectorIsa::Amx) << nt.str();
    d.transA = true;
    d.lda = d.m;
    EXPECT_EQ(amxRefusal(d), "A transposed");
    QM_ASSERT_EXPECTED(tt, chooseKernelConfig(KernelProblem(d), target));
    EXPECT_EQ(tt.isa, VectorIsa::Avx512) << tt.str();
  }
  GemmDesc relu = GemmDesc::packed(64, 64, 64);
  relu.precision = GemmPrecision::Bf16;
  relu.activation.relu = true;
  EXPECT_EQ(amxRefusal(relu), "");
  relu.bias = GemmBias::Rows;
  EXPECT_EQ(amxRefusal(relu), "a bias along the rows");
  relu.bias = GemmBias::None;
  // A smooth activation: the tiles' kernels compute none; AVX512-BF16's
  // dot kernels do.
  GemmDesc gelu = relu;
  gelu.activation = Activation{};
  gelu.activation.smooth = Activation::Smooth::GeluErf;
  EXPECT_EQ(amxRefusal(gelu), "a smooth activation");
  QM_ASSERT_EXPECTED(geluConfig,
                     chooseKernelConfig(KernelProblem(gelu), target));
  EXPECT_EQ(geluConfig.isa, VectorIsa::Avx512) << geluConfig.str();
  relu.precision = GemmPrecision::S8S8;
  EXPECT_EQ(amxRefusal(relu), "an 8-bit epilogue");
  ConvDesc conv =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 16, 16, 64, 64, 3, 3);
  conv.precision = GemmPrecision::Bf16;
  // An nhwc convolution: kc whole tile steps dividing the run (KW*C =
  // 192), the tuner's kcs too, its pixels read in place, one sliver a row
  // block; an nchw one stays on AVX512-BF16.
  QM_ASSERT_EXPECTED(convConfig,
                     chooseKernelConfig(KernelProblem(conv), target));
  EXPECT_EQ(convConfig.isa, VectorIsa::Amx) << convConfig.str();
  EXPECT_EQ(convConfig.kc, 192) << convConfig.str();
  EXPECT_EQ(convConfig.aLayout, ALayout::Direct) << convConfig.str();
  EXPECT_EQ(convConfig.mc, convConfig.mr) << convConfig.str();
  // Output rows of 14 pixels: tiles of 14 rows, two a block, so that no
  // tile crosses a row; a 1x1's pixels lie a pixel step apart across rows
  // too, and keep tiles of 16.
  EXPECT_EQ(convConfig.mr, 28) << convConfig.str();
  for (auto [width, rows] : {std::pair<int64_t, int64_t>{14, 14},
                             {28, 14},
                             {56, 14},
                             {13, 13},
                             {12, 12},
                             {64, 16},
                             {7, 16},
                             {11, 16},
                             {17, 16}})
    EXPECT_EQ(amxOutputRowTileRows(width), rows) << width;
  ConvDesc pointwise =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 14, 14, 64, 64, 1, 1);
  pointwise.precision = GemmPrecision::Bf16;
  QM_ASSERT_EXPECTED(pointwiseConfig,
                     chooseKernelConfig(KernelProblem(pointwise), target));
  EXPECT_EQ(pointwiseConfig.mr, 32) << pointwiseConfig.str();
  SearchSpace convSpace =
      SearchSpace::forProblem(KernelProblem(conv), target, convConfig);
  for (const std::string &text : decision(convSpace, "kc")->choices)
    EXPECT_TRUE(192 % std::stoll(text) == 0 && std::stoll(text) % 32 == 0)
        << text;
  // The model's block is among the tuner's; tiles of 14 rows only with A
  // in place (amx.py's PACK A writes tiles of 16).
  EXPECT_EQ(decision(convSpace, "block")
                ->choices[decision(convSpace, "block")->modelChoice],
            "28x32");
  Assignment packedA = convSpace.modelAssignment();
  const auto &layouts = convSpace.decisions();
  for (size_t i = 0; i < layouts.size(); ++i)
    if (layouts[i].key == "alayout")
      packedA[i] = 0;
  QM_ASSERT_FAILS_WITH(convSpace.configFor(packedA).takeError(),
                       "an AMX block of 28 rows (tiles of fewer than 16) "
                       "reads A in place (alayout=direct)");
  ConvDesc stem =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 30, 30, 3, 64, 7, 7, 2, 2);
  stem.precision = GemmPrecision::Bf16;
  QM_ASSERT_EXPECTED(stemConfig,
                     chooseKernelConfig(KernelProblem(stem), target));
  // The stem (a run of 21 k, no tile step dividing it): kc whole runs,
  // all 7 of K, each padded to a tile step; the tuner's kcs whole runs.
  EXPECT_EQ(stemConfig.isa, VectorIsa::Amx) << stemConfig.str();
  EXPECT_EQ(stemConfig.kc, 147) << stemConfig.str();
  SearchSpace stemSpace =
      SearchSpace::forProblem(KernelProblem(stem), target, stemConfig);
  for (const std::string &text : decision(stemSpace, "kc")->choices)
    EXPECT_EQ(std::stoll(text) % 21, 0) << text;
  ConvDesc nchw =
      ConvDesc::dense(ConvLayout::NchwFchw, 1, 16, 16, 64, 64, 3, 3);
  nchw.precision = GemmPrecision::Bf16;
  QM_ASSERT_EXPECTED(nchwConfig,
                     chooseKernelConfig(KernelProblem(nchw), target));
  EXPECT_EQ(nchwConfig.isa, VectorIsa::Avx512) << nchwConfig.str();
  Target noAmxBf16 = pinned("x86_64-unknown-linux-gnu:sapphirerapids:+avx,"
                            "+avx2,+fma,+avx512f,+avx512bw,+avx512vl,"
                            "+avx512bf16,+amx-tile,+amx-int8:l2=2M,cores=2");
  GemmDesc d = GemmDesc::packed(64, 64, 64);
  d.precision = GemmPrecision::Bf16;
  QM_ASSERT_EXPECTED(plain, chooseKernelConfig(KernelProblem(d), noAmxBf16));
  EXPECT_EQ(plain.isa, VectorIsa::Avx512);
  EXPECT_EQ(matrixIsa(noAmxBf16, GemmPrecision::Bf16), VectorIsa::Avx512);
  EXPECT_EQ(matrixIsa(noAmxBf16, GemmPrecision::S8S8), VectorIsa::Amx);
  EXPECT_EQ(matrixIsa(target, GemmPrecision::F32), VectorIsa::Avx512);
}

/// f16 on AMX (split where it is packed): the model packs A and B, steps
/// kc in tile steps of 8 k (8 bytes a packed k), and the space has no A
/// layout to try nor a transposed product; configFor refuses A in place.
/// Few rows against a large B^T and few columns take their own blocking;
/// fewer rows the matrix-vector form, as does B^T without AMX-BF16.
TEST(SearchSpaceTest, AmxF16PacksBothOperandsInTileStepsOfEightK) {
  Target target = pinned(kXeonWithAmx);
  auto model = [&](int64_t m, int64_t n, int64_t k, bool transB) {
    GemmDesc d = GemmDesc::packed(m, n, k, false, transB);
    d.precision = GemmPrecision::F16;
    return chooseKernelConfig(KernelProblem(d), target);
  };
  GemmDesc d = GemmDesc::packed(256, 256, 256);
  d.precision = GemmPrecision::F16;
  QM_ASSERT_EXPECTED(mid, model(256, 256, 256, false));
  EXPECT_EQ(mid.isa, VectorIsa::Amx) << mid.str();
  EXPECT_EQ(mid.aLayout, ALayout::KMajor) << mid.str();
  EXPECT_EQ(mid.kc, 64) << mid.str(); // 512 bytes of packed k
  SearchSpace space = SearchSpace::forProblem(KernelProblem(d), target, mid);
  EXPECT_EQ(decision(space, "alayout"), nullptr);
  ASSERT_NE(decision(space, "kc"), nullptr);
  for (const std::string &kc : decision(space, "kc")->choices)
    EXPECT_EQ(std::stoi(kc) % 8, 0) << kc;
  GemmConfig direct = mid;
  direct.aLayout = ALayout::Direct;
  SearchSpace directSpace =
      SearchSpace::forProblem(KernelProblem(d), target, direct);
  auto refused = directSpace.configFor(directSpace.modelAssignment());
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("split into bf16"),
            std::string::npos);
  QM_ASSERT_EXPECTED(decode, model(16, 4096, 4096, true));
  EXPECT_EQ(decode.packB, BPacking::Panels) << decode.str();
  EXPECT_EQ(decode.mr, 16) << decode.str();
  EXPECT_EQ(decode.kc, 512) << decode.str();
  EXPECT_EQ(decode.nc, 128) << decode.str();
  QM_ASSERT_EXPECTED(skinny, model(4096, 64, 4096, false));
  EXPECT_EQ(skinny.kc, 1024) << skinny.str();
  EXPECT_EQ(skinny.mc, skinny.mr) << skinny.str();
  // Up to kF16MatrixVectorRows rows, B^T or B as stored: B read in place
  // on AVX-512 (once, 2 bytes an element), not the tiles (B split and
  // packed, 8 bytes a k).
  for (bool transB : {true, false})
    for (int64_t m : {int64_t(1), int64_t(8), kF16MatrixVectorRows}) {
      QM_ASSERT_EXPECTED(few, model(m, 11008, 4096, transB));
      EXPECT_EQ(few.isa, VectorIsa::Avx512) << few.str();
      EXPECT_EQ(few.packB, BPacking::InPlace) << few.str();
      GemmDesc fd = GemmDesc::packed(m, 11008, 4096, false, transB);
      fd.precision = GemmPrecision::F16;
      SearchSpace fewSpace =
          SearchSpace::forProblem(KernelProblem(fd), target, few);
      QM_ASSERT_EXPECTED(again, fewSpace.configFor(fewSpace.modelAssignment()));
      EXPECT_EQ(again.packB, BPacking::InPlace) << again.str();
      // No blocking to tune in place: B in place or packed.
      EXPECT_EQ(decision(fewSpace, "block"), nullptr);
      ASSERT_NE(decision(fewSpace, "packb"), nullptr);
      EXPECT_EQ(decision(fewSpace, "packb")->choices.size(), 2u);
    }
  for (bool transB : {true, false}) {
    QM_ASSERT_EXPECTED(more,
                       model(kF16MatrixVectorRows + 1, 4096, 4096, transB));
    EXPECT_EQ(more.isa, VectorIsa::Amx) << more.str();
    // A run-time M gets a kernel for up to that many rows (m-buckets),
    // with an f16 output too (the in-place forms round where they store);
    // not with a bias along the rows (no in-place form), nor for bf16.
    GemmDesc dyn = GemmDesc::packed(256, 4096, 4096, false, transB);
    dyn.precision = GemmPrecision::F16;
    dyn.dynamicM = true;
    const llvm::SmallVector<int64_t, 2> bounds = formRowBounds(dyn, target);
    ASSERT_EQ(bounds.size(), 1u);
    EXPECT_EQ(bounds[0], kF16MatrixVectorRows);
    dyn.halfOutput = true;
    EXPECT_EQ(formRowBounds(dyn, target).size(), 1u);
    dyn.halfOutput = false;
    dyn.bias = GemmBias::Rows;
    EXPECT_TRUE(formRowBounds(dyn, target).empty());
    dyn.bias = GemmBias::None;
    dyn.precision = GemmPrecision::Bf16;
    EXPECT_TRUE(formRowBounds(dyn, target).empty());
    // bf16 without the tiles: the matrix-vector form up to 32 rows of A
    // against B^T, B's rows streamed up to 48 against B as stored (24
    // where B fits half of L3).
    const Target noTiles = target.withoutAmx();
    EXPECT_EQ(
        formRowBounds(dyn, noTiles),
        (llvm::SmallVector<int64_t, 2>{transB ? kBf16MatrixVectorRows
                                              : streamedRows(dyn, noTiles)}));
    if (!transB) {
      GemmDesc small = dyn;
      small.n = small.k = 768;
      EXPECT_EQ(streamedRows(dyn, noTiles),
                dyn.n * dyn.k * 2 > noTiles.caches.l3 / 2
                    ? kStreamedRows
                    : kStreamedRowsInCache);
      EXPECT_EQ(formRowBounds(small, noTiles),
                (llvm::SmallVector<int64_t, 2>{kStreamedRowsInCache}));
    }
  }
  // No AMX-BF16: the dot kernels (f16 widened to f32 where it is
  // packed), packed A (never in place) and B, B in place for few rows
  // (B^T's or B's rows); f16 convolutions on the dot kernels too; no
  // F16C, no f16 at all.
  auto skx = [](const char *more) {
    const std::string spec =
        std::string("x86_64-unknown-linux-gnu:skylake-avx512:+avx,+avx2,+fma,"
                    "+avx512f,+avx512bw,+avx512vl,+avx512bf16,+avx512vnni,"
                    "+bmi2") +
        more + ":l1d=32K,l2=1M,l3=32M,cores=2";
    return pinned(spec.c_str());
  };
  const Target noAmx = skx(",+f16c");
  for (bool transB : {false, true}) {
    GemmDesc plain = GemmDesc::packed(64, 64, 64, false, transB);
    plain.precision = GemmPrecision::F16;
    QM_ASSERT_EXPECTED(dot, chooseKernelConfig(KernelProblem(plain), noAmx));
    EXPECT_EQ(dot.isa, VectorIsa::Avx512) << dot.str();
    EXPECT_EQ(dot.packB, BPacking::Panels) << dot.str();
    EXPECT_EQ(dot.aLayout, ALayout::KMajor) << dot.str();
    plain.m = 4;
    QM_ASSERT_EXPECTED(few, chooseKernelConfig(KernelProblem(plain), noAmx));
    EXPECT_EQ(few.packB, BPacking::InPlace) << few.str();
    auto none = chooseKernelConfig(KernelProblem(plain), skx(""));
    ASSERT_FALSE(bool(none));
    EXPECT_NE(llvm::toString(none.takeError()).find("F16C"), std::string::npos);
  }
  // f16 convolutions without AMX-BF16, and those the tiles do not take
  // with it (the 3-channel stem: a run of 21 k, no tile step of 8; nchw),
  // on the dot kernels: f16 widened where it is gathered and packed,
  // kc dividing the run in whole k (a group is one k), A never in place.
  ConvDesc conv = ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 8, 8, 16, 16, 3, 3);
  conv.precision = GemmPrecision::F16;
  ConvDesc stem =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 30, 30, 3, 64, 7, 7, 2, 2);
  stem.precision = GemmPrecision::F16;
  ConvDesc nchw = ConvDesc::dense(ConvLayout::NchwFchw, 1, 8, 8, 16, 16, 3, 3);
  nchw.precision = GemmPrecision::F16;
  const Target amx = pinned(kXeonWithAmx);
  for (auto [c, t] : {std::pair{conv, noAmx},
                      {stem, noAmx},
                      {nchw, noAmx},
                      {stem, amx},
                      {nchw, amx}}) {
    QM_ASSERT_EXPECTED(dot, chooseKernelConfig(KernelProblem(c), t));
    EXPECT_EQ(dot.isa, VectorIsa::Avx512) << dot.str();
    EXPECT_NE(dot.aLayout, ALayout::Direct) << dot.str();
    if (c.isNhwc()) {
      EXPECT_EQ(c.contiguousRun() % dot.kc, 0) << dot.str();
    }
  }
  QM_ASSERT_EXPECTED(tiles, chooseKernelConfig(KernelProblem(conv), amx));
  EXPECT_EQ(tiles.isa, VectorIsa::Amx) << tiles.str();
}
