//===- SearchTest.cpp - MCTS and the baselines with a fake evaluator ------===//
//
// The search is a pure function of (space, seed, evaluator, proposer,
// budget), so a synthetic performance landscape stands in for the machine.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Tune/Search.h"
#include "ErrorHelpers.h"
#include "ScriptedChat.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Tune/LlmProposer.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>

using namespace qimeng;

namespace {

constexpr const char *avx512Spec =
    "x86_64-unknown-linux-gnu:sapphirerapids:+avx,+avx2,+fma,+avx512f:"
    "l1d=48K,l2=2M,l3=260M,cores=2";
constexpr const char *zen3Spec =
    "x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:l1d=32K,l2=512K,l3=32M,"
    "cores=8";

/// The space around the model's config for `desc` with A packed k-major
/// (the model's config for A transposed, which packs A) and without the
/// choice of A in place: two A layouts (k-major, rows), the model's the
/// first, so that the search tests below do not move with the model's
/// rules for A in place; nor with the table's one-vector blocks (12x16 and
/// 8x16 on AVX-512, for a single sliver of at most 16 columns), left out.
SearchSpace modelSpace(const char *spec, GemmDesc desc) {
  auto target = Target::parse(spec);
  EXPECT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  GemmDesc packedA = desc;
  packedA.transA = true;
  auto base = chooseGemmConfig(packedA, *target);
  EXPECT_TRUE(static_cast<bool>(base)) << llvm::toString(base.takeError());
  base->aLayout = ALayout::KMajor;
  std::vector<Decision> decisions =
      SearchSpace::forGemm(desc, *target, *base).decisions();
  for (Decision &d : decisions) {
    if (d.key == "alayout")
      d.choices.erase(std::remove(d.choices.begin(), d.choices.end(),
                                  aLayoutName(ALayout::Direct).str()),
                      d.choices.end());
    if (d.key == "block")
      for (const char *oneSliver : {"12x16", "8x16"})
        d.choices.erase(
            std::remove(d.choices.begin(), d.choices.end(), oneSliver),
            d.choices.end());
  }
  return SearchSpace(desc, *base, std::move(decisions));
}

/// The avx512 space of a 4096x8192x4096 GEMM: 6 blocks x 4 x 5 x 4 x 3 x 3
/// x 2 x 4 orders x 2 x 2 = 138240 assignments; the twelfth with block
/// 7x64 and the bcast or pipelined order (33 and 34 of the 32 registers)
/// are pruned.
SearchSpace largeSpace() {
  return modelSpace(avx512Spec, GemmDesc::packed(4096, 8192, 4096));
}
uint64_t largeSpacePruned(const SearchSpace &space) {
  return space.size() / 12;
}

/// The avx2 (Zen 3) space of a 2048^3 GEMM: 3 blocks x 4 x 5 x 4 x 3 x 3 x 2
/// x 2 orders x 2 loop orders x 2 A layouts = 34560 assignments, of which
/// the 5760 with block 4x24 and the pipelined order need 17 of the 16
/// registers and are pruned.
SearchSpace avx2Space() {
  return modelSpace(zen3Spec, GemmDesc::packed(2048, 2048, 2048));
}
constexpr uint64_t avx2Pruned = 5760;

/// Whether configFor refuses `a` (in avx2Space: 4x24 with pipelined).
bool pruned(const SearchSpace &space, const Assignment &a) {
  auto config = space.configFor(a);
  if (config)
    return false;
  llvm::consumeError(config.takeError());
  return true;
}

/// A small explicit space: 2 x 3 = 6 assignments.
SearchSpace tinySpace() {
  return SearchSpace(GemmDesc::packed(64, 64, 64), GemmConfig{},
                     {{"ku", {"2", "4"}, 1}, {"pfa", {"0", "256", "512"}, 0}});
}

/// The model's assignment is {0, 2, 2, 2, 2, 0, 0, 0, 0, 0}; the hidden
/// optimum differs in seven decisions: block 14x32, ku 8, kc 288, mc x1/2,
/// pfa 256, the pipelined order and the ir-jr loop order.
const Assignment hiddenOptimum = {2, 3, 1, 1, 2, 1, 0, 1, 1, 0};

double log2Ratio(double a, double b) { return std::abs(std::log2(a / b)); }

/// A synthetic performance landscape: 100 GFLOPS at the hidden optimum's
/// config, 15 fewer per unit of a distance from it (a wrong block, prefetch
/// distance or order, a factor of two in ku, mc or nc, a factor of sqrt(2)
/// in kc), at least 1. ku 1 with pfa 512 "crashes". Counts its calls, and
/// fails the test if it is handed a config whose block cannot hold its
/// order's registers (the search must have pruned it).
class LandscapeEvaluator : public Evaluator {
public:
  explicit LandscapeEvaluator(GemmConfig optimum) : optimum_(optimum) {}

  Evaluation evaluate(const GemmConfig &c) override {
    ++calls;
    EXPECT_LE(c.vectorRegistersNeeded(Target::vectorBits(c.isa) / 32),
              Target::vectorRegisters(c.isa))
        << c.str();
    Evaluation e;
    if (c.kUnroll == 1 && c.prefetchA == 512) {
      e.failure = "crashed: Segmentation fault";
      return e;
    }
    e.ok = true;
    e.gflops = std::max(1.0, 100.0 - 15.0 * distance(c));
    return e;
  }
  double peakGflops() const override { return 125; }

  double distance(const GemmConfig &c) const {
    const GemmConfig &o = optimum_;
    return (c.mr != o.mr || c.nr != o.nr ? 1.0 : 0.0) +
           log2Ratio(c.kUnroll, o.kUnroll) + 2 * log2Ratio(c.kc, o.kc) +
           log2Ratio(c.mc, o.mc) + log2Ratio(c.nc, o.nc) +
           (c.prefetchA != o.prefetchA ? 1.0 : 0.0) +
           (c.prefetchB != o.prefetchB ? 1.0 : 0.0) +
           (c.order != o.order ? 1.0 : 0.0) + (c.loop != o.loop ? 1.0 : 0.0) +
           (c.aLayout != o.aLayout ? 1.0 : 0.0);
  }

  int calls = 0;

private:
  GemmConfig optimum_;
};

LandscapeEvaluator landscape(const SearchSpace &space,
                             const Assignment &optimumAt = hiddenOptimum) {
  auto optimum = space.configFor(optimumAt);
  EXPECT_TRUE(static_cast<bool>(optimum))
      << llvm::toString(optimum.takeError());
  return LandscapeEvaluator(optimum ? *optimum : GemmConfig{});
}

/// GFLOPS from ku and pfa only (for spaces without a block decision).
class SimpleEvaluator : public Evaluator {
public:
  Evaluation evaluate(const GemmConfig &c) override {
    ++calls;
    Evaluation e;
    e.ok = true;
    e.gflops = 10.0 * c.kUnroll + c.prefetchA / 64.0;
    return e;
  }
  double peakGflops() const override { return 100; }
  int calls = 0;
};

/// Sleeps 20 ms per measurement.
class SleepingEvaluator : public SimpleEvaluator {
public:
  Evaluation evaluate(const GemmConfig &c) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return SimpleEvaluator::evaluate(c);
  }
};

/// Every candidate fails; the peak is unusable too.
class FailingEvaluator : public Evaluator {
public:
  Evaluation evaluate(const GemmConfig &) override {
    ++calls;
    Evaluation e;
    e.failure = "wrong result: max relative error 1";
    return e;
  }
  double peakGflops() const override { return 0; }
  int calls = 0;
};

/// Replies with fixed weights whatever it is asked.
class FixedProposer : public Proposer {
public:
  explicit FixedProposer(std::vector<double> weights)
      : weights_(std::move(weights)) {}
  std::vector<double> priors(const SearchSpace &, const Assignment &,
                             const SearchHistory &) override {
    ++calls;
    return weights_;
  }
  int calls = 0;

private:
  std::vector<double> weights_;
};

/// Uniform weights of the right size: what invalid replies fall back to.
class UniformProposer : public Proposer {
public:
  std::vector<double> priors(const SearchSpace &space, const Assignment &prefix,
                             const SearchHistory &) override {
    size_t n = space.decisions()[prefix.size()].choices.size();
    return std::vector<double>(n, 3.0);
  }
};

double bestGflops(const SearchHistory &h) {
  const Trial *best = h.best();
  return best ? best->result.gflops : 0.0;
}

SearchOptions withSeed(uint64_t seed) {
  SearchOptions options;
  options.seed = seed;
  return options;
}

/// Trial by trial, everything but the time.
void expectSameHistory(const SearchHistory &a, const SearchHistory &b) {
  ASSERT_EQ(a.trials.size(), b.trials.size());
  for (size_t i = 0; i < a.trials.size(); ++i) {
    const Trial &x = a.trials[i], &y = b.trials[i];
    SCOPED_TRACE("trial " + std::to_string(i));
    EXPECT_EQ(x.index, y.index);
    EXPECT_EQ(x.assignment, y.assignment);
    EXPECT_EQ(x.description, y.description);
    EXPECT_EQ(x.config, y.config);
    EXPECT_EQ(x.result.ok, y.result.ok);
    EXPECT_EQ(x.result.gflops, y.result.gflops);
    EXPECT_EQ(x.result.failure, y.result.failure);
    EXPECT_EQ(x.reward, y.reward);
  }
}

bool sameAssignments(const SearchHistory &a, const SearchHistory &b) {
  if (a.trials.size() != b.trials.size())
    return false;
  for (size_t i = 0; i < a.trials.size(); ++i)
    if (a.trials[i].assignment != b.trials[i].assignment)
      return false;
  return true;
}

void expectNoRepeats(const SearchHistory &h) {
  std::set<Assignment> seen;
  for (const Trial &t : h.trials)
    EXPECT_TRUE(seen.insert(t.assignment).second)
        << "evaluated twice: " << t.description;
}

TEST(SearchTest, ModelPriorsDecayWithDistanceFromTheModel) {
  SearchSpace space = largeSpace();
  SearchHistory history;
  ModelPriorProposer proposer;
  // block: 6 choices, the model's first.
  std::vector<double> block = proposer.priors(space, {}, history);
  ASSERT_EQ(block.size(), 6u);
  double sum = 1 + 0.5 + 0.25 + 0.125 + 0.0625 + 0.03125;
  EXPECT_DOUBLE_EQ(block[0], 1 / sum);
  EXPECT_DOUBLE_EQ(block[1], 0.5 / sum);
  EXPECT_DOUBLE_EQ(block[3], 0.125 / sum);
  EXPECT_DOUBLE_EQ(block[5], 0.03125 / sum);
  // ku: 4 choices, the model's is 4 (index 2).
  std::vector<double> ku = proposer.priors(space, {0}, history);
  ASSERT_EQ(ku.size(), 4u);
  sum = 0.25 + 0.5 + 1 + 0.5;
  EXPECT_DOUBLE_EQ(ku[0], 0.25 / sum);
  EXPECT_DOUBLE_EQ(ku[2], 1 / sum);
  EXPECT_DOUBLE_EQ(ku[3], 0.5 / sum);
  // order: bcast, pipelined, embedded, bmem; the model's is bcast.
  std::vector<double> order = proposer.priors(space, Assignment(7, 0), history);
  ASSERT_EQ(order.size(), 4u);
  sum = 1 + 0.5 + 0.25 + 0.125;
  EXPECT_DOUBLE_EQ(order[0], 1 / sum);
  EXPECT_DOUBLE_EQ(order[1], 0.5 / sum);
  EXPECT_DOUBLE_EQ(order[2], 0.25 / sum);
  EXPECT_DOUBLE_EQ(order[3], 0.125 / sum);
  ModelPriorProposer sharper(0.25);
  EXPECT_LT(sharper.priors(space, {0}, history)[0], ku[0]);
  // Nothing below the last decision.
  EXPECT_TRUE(proposer.priors(space, Assignment(10, 0), history).empty());
}

TEST(SearchTest, BestIsTheFastestSuccessfulTrial) {
  SearchHistory history;
  EXPECT_EQ(history.best(), nullptr);
  for (auto [ok, gflops] : {std::pair<bool, double>{true, 10},
                            {false, 500},
                            {true, 30},
                            {true, 20},
                            {true, 30}}) {
    Trial t;
    t.index = static_cast<int>(history.trials.size());
    t.result.ok = ok;
    t.result.gflops = gflops;
    history.trials.push_back(t);
  }
  ASSERT_NE(history.best(), nullptr);
  EXPECT_EQ(history.best()->index, 2); // the earliest of the two at 30
  // Against a real search: the max-gflops ok trial.
  SearchSpace space = largeSpace();
  LandscapeEvaluator evaluator = landscape(space);
  ModelPriorProposer proposer;
  SearchHistory h = runMcts(space, evaluator, proposer, {200, 0}, {});
  const Trial *best = h.best();
  ASSERT_NE(best, nullptr);
  for (const Trial &t : h.trials) {
    if (t.result.ok) {
      EXPECT_LE(t.result.gflops, best->result.gflops);
    }
  }
  EXPECT_TRUE(best->result.ok);
}

TEST(SearchTest, FirstTrialIsTheModelsAssignment) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  for (uint64_t seed : {1, 2, 3, 99}) {
    LandscapeEvaluator evaluator = landscape(space);
    SearchHistory h =
        runMcts(space, evaluator, proposer, {5, 0}, withSeed(seed));
    ASSERT_FALSE(h.trials.empty());
    EXPECT_EQ(h.trials[0].assignment, space.modelAssignment());
    EXPECT_EQ(h.trials[0].description,
              "block=6x64,ku=4,kc=384,mc=x1,nc=x1,pfa=0,pfb=0,order=bcast,"
              "loop=jr-ir,alayout=kmajor");
    auto model = space.configFor(space.modelAssignment());
    ASSERT_TRUE(static_cast<bool>(model));
    EXPECT_EQ(h.trials[0].config, *model);
  }
  // Even a proposer that puts all weight elsewhere starts at the model.
  FixedProposer elsewhere({0, 0, 0, 1});
  LandscapeEvaluator evaluator = landscape(space);
  SearchHistory h = runMcts(space, evaluator, elsewhere, {3, 0}, {});
  ASSERT_FALSE(h.trials.empty());
  EXPECT_EQ(h.trials[0].assignment, space.modelAssignment());
}

TEST(SearchTest, ExpansionTriesTheRootsChildrenInPriorOrder) {
  SearchSpace space = largeSpace();
  LandscapeEvaluator evaluator = landscape(space);
  ModelPriorProposer proposer;
  SearchHistory h = runMcts(space, evaluator, proposer, {4, 0}, {});
  ASSERT_EQ(h.trials.size(), 4u);
  // The model's block first (trial 0), then the others by falling prior.
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(h.trials[i].assignment[0], i) << h.trials[i].description;
}

TEST(SearchTest, SameSeedSameHistory) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  LandscapeEvaluator e1 = landscape(space), e2 = landscape(space);
  SearchHistory a = runMcts(space, e1, proposer, {120, 0}, withSeed(7));
  SearchHistory b = runMcts(space, e2, proposer, {120, 0}, withSeed(7));
  expectSameHistory(a, b);
  LandscapeEvaluator e3 = landscape(space), e4 = landscape(space);
  expectSameHistory(runRandomSearch(space, e3, {60, 0}, withSeed(7)),
                    runRandomSearch(space, e4, {60, 0}, withSeed(7)));
}

TEST(SearchTest, DifferentSeedsGiveDifferentHistories) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  LandscapeEvaluator e1 = landscape(space), e2 = landscape(space);
  SearchHistory a = runMcts(space, e1, proposer, {60, 0}, withSeed(1));
  SearchHistory b = runMcts(space, e2, proposer, {60, 0}, withSeed(2));
  EXPECT_EQ(a.trials.size(), b.trials.size());
  EXPECT_FALSE(sameAssignments(a, b));
  LandscapeEvaluator e3 = landscape(space), e4 = landscape(space);
  EXPECT_FALSE(
      sameAssignments(runRandomSearch(space, e3, {60, 0}, withSeed(1)),
                      runRandomSearch(space, e4, {60, 0}, withSeed(2))));
}

TEST(SearchTest, NoAssignmentIsEvaluatedTwice) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  LandscapeEvaluator e1 = landscape(space), e2 = landscape(space),
                     e3 = landscape(space);
  SearchHistory mcts = runMcts(space, e1, proposer, {600, 0}, withSeed(3));
  SearchHistory random = runRandomSearch(space, e2, {600, 0}, withSeed(3));
  SearchHistory grid = runGridSearch(space, e3, {600, 0}, withSeed(3));
  for (const SearchHistory *h : {&mcts, &random, &grid}) {
    EXPECT_EQ(h->trials.size(), 600u);
    expectNoRepeats(*h);
  }
  // Every candidate reached the evaluator exactly once.
  EXPECT_EQ(e1.calls, 600);
  EXPECT_EQ(e2.calls, 600);
  EXPECT_EQ(e3.calls, 600);
  // The same where some assignments are pruned: none of them is recorded.
  SearchSpace avx2 = avx2Space();
  LandscapeEvaluator e4 = landscape(avx2, avx2.modelAssignment()),
                     e5 = landscape(avx2, avx2.modelAssignment()),
                     e6 = landscape(avx2, avx2.modelAssignment());
  SearchHistory mcts2 = runMcts(avx2, e4, proposer, {600, 0}, withSeed(3));
  SearchHistory random2 = runRandomSearch(avx2, e5, {600, 0}, withSeed(3));
  SearchHistory grid2 = runGridSearch(avx2, e6, {600, 0}, withSeed(3));
  for (const SearchHistory *h : {&mcts2, &random2, &grid2}) {
    EXPECT_EQ(h->trials.size(), 600u);
    expectNoRepeats(*h);
    for (const Trial &t : h->trials)
      EXPECT_FALSE(pruned(avx2, t.assignment)) << t.description;
  }
  EXPECT_EQ(e4.calls, 600);
  EXPECT_EQ(e5.calls, 600);
  EXPECT_EQ(e6.calls, 600);
}

TEST(SearchTest, MctsCanExhaustTheWholeSpace) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  LandscapeEvaluator evaluator = landscape(space);
  SearchHistory h = runMcts(space, evaluator, proposer, {200000, 0}, {});
  EXPECT_EQ(h.trials.size(), space.size() - largeSpacePruned(space));
  expectNoRepeats(h);
  ASSERT_NE(h.best(), nullptr);
  EXPECT_EQ(h.best()->result.gflops, 100);
  // With pruning: every valid assignment once, no pruned one, then stop.
  SearchSpace avx2 = avx2Space();
  ASSERT_EQ(avx2.size(), 34560u);
  LandscapeEvaluator avx2Evaluator = landscape(avx2, avx2.modelAssignment());
  SearchHistory all = runMcts(avx2, avx2Evaluator, proposer, {100000, 0}, {});
  EXPECT_EQ(all.trials.size(), avx2.size() - avx2Pruned);
  EXPECT_EQ(avx2Evaluator.calls, static_cast<int>(avx2.size() - avx2Pruned));
  expectNoRepeats(all);
  ASSERT_NE(all.best(), nullptr);
  EXPECT_EQ(all.best()->result.gflops, 100);
}

TEST(SearchTest, TrialBudgetIsExact) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  for (int budget : {0, 1, 2, 37}) {
    LandscapeEvaluator e1 = landscape(space), e2 = landscape(space),
                       e3 = landscape(space);
    EXPECT_EQ(runMcts(space, e1, proposer, {budget, 0}, {}).trials.size(),
              static_cast<size_t>(budget));
    EXPECT_EQ(runRandomSearch(space, e2, {budget, 0}, {}).trials.size(),
              static_cast<size_t>(budget));
    EXPECT_EQ(runGridSearch(space, e3, {budget, 0}, {}).trials.size(),
              static_cast<size_t>(budget));
    EXPECT_EQ(e1.calls, budget);
    EXPECT_EQ(e2.calls, budget);
    EXPECT_EQ(e3.calls, budget);
  }
  // Pruned assignments do not count: the budget is met exactly anyway.
  SearchSpace avx2 = avx2Space();
  for (int budget : {0, 1, 2, 37, 500}) {
    SCOPED_TRACE(budget);
    LandscapeEvaluator e1 = landscape(avx2, avx2.modelAssignment()),
                       e2 = landscape(avx2, avx2.modelAssignment()),
                       e3 = landscape(avx2, avx2.modelAssignment());
    EXPECT_EQ(runMcts(avx2, e1, proposer, {budget, 0}, {}).trials.size(),
              static_cast<size_t>(budget));
    EXPECT_EQ(runRandomSearch(avx2, e2, {budget, 0}, {}).trials.size(),
              static_cast<size_t>(budget));
    EXPECT_EQ(runGridSearch(avx2, e3, {budget, 0}, {}).trials.size(),
              static_cast<size_t>(budget));
    EXPECT_EQ(e1.calls, budget);
    EXPECT_EQ(e2.calls, budget);
    EXPECT_EQ(e3.calls, budget);
  }
}

TEST(SearchTest, TimeBudgetStopsTheSearch) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  SearchBudget budget{1000, 0.1};
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(which);
    SleepingEvaluator evaluator;
    auto start = std::chrono::steady_clock::now();
    SearchHistory h =
        which == 0   ? runMcts(space, evaluator, proposer, budget, {})
        : which == 1 ? runRandomSearch(space, evaluator, budget, {})
                     : runGridSearch(space, evaluator, budget, {});
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    // Evaluations start at 0, 20, ..., 100 ms at the latest: at most 6.
    EXPECT_GE(h.trials.size(), 1u);
    EXPECT_LE(h.trials.size(), 6u);
    EXPECT_EQ(evaluator.calls, static_cast<int>(h.trials.size()));
    // The last evaluation started within the budget.
    EXPECT_LT(seconds, 0.1 + 0.5);
    ASSERT_FALSE(h.trials.empty());
    EXPECT_GE(h.trials.back().elapsedSeconds, 0.02);
    for (size_t i = 1; i < h.trials.size(); ++i)
      EXPECT_GE(h.trials[i].elapsedSeconds, h.trials[i - 1].elapsedSeconds);
  }
}

TEST(SearchTest, FailuresAreRecordedAndTheSearchGoesOn) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer(0.9); // reach ku 1 with pfa 512 often enough
  LandscapeEvaluator evaluator = landscape(space);
  SearchHistory h = runMcts(space, evaluator, proposer, {300, 0}, {});
  ASSERT_EQ(h.trials.size(), 300u);
  int failed = 0;
  for (const Trial &t : h.trials) {
    bool crashes = t.config.kUnroll == 1 && t.config.prefetchA == 512;
    EXPECT_EQ(t.result.ok, !crashes) << t.description;
    if (t.result.ok) {
      EXPECT_GT(t.reward, 0) << t.description;
      EXPECT_LE(t.reward, 1) << t.description;
      EXPECT_DOUBLE_EQ(t.reward, t.result.gflops / 125);
      continue;
    }
    ++failed;
    EXPECT_EQ(t.result.failure, "crashed: Segmentation fault");
    EXPECT_EQ(t.reward, 0);
  }
  EXPECT_GT(failed, 0);

  // A config that does not combine (here mc 70 with mr 6) is pruned, not
  // failed: the evaluator never sees it and no trial records it, and the
  // search goes on with the assignments that do combine.
  SearchSpace broken(GemmDesc::packed(512, 512, 512), GemmConfig{},
                     {{"mc", {"72", "70"}, 0}, {"ku", {"2", "4", "8"}, 0}});
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(which);
    SimpleEvaluator simple;
    SearchHistory b =
        which == 0   ? runMcts(broken, simple, proposer, {100, 0}, {})
        : which == 1 ? runRandomSearch(broken, simple, {100, 0}, {})
                     : runGridSearch(broken, simple, {100, 0}, {});
    ASSERT_EQ(b.trials.size(), 3u);
    for (const Trial &t : b.trials) {
      EXPECT_EQ(t.assignment[0], 0) << t.description;
      EXPECT_TRUE(t.result.ok);
      EXPECT_EQ(t.config.mc, 72);
    }
    expectNoRepeats(b);
    EXPECT_EQ(simple.calls, 3);
  }
}

/// Records every config it is handed; 4x24 with bcast is the fastest, so
/// the search is drawn towards the block whose pipelined order is pruned.
class RecordingEvaluator : public Evaluator {
public:
  Evaluation evaluate(const GemmConfig &c) override {
    seen.push_back(c.str());
    EXPECT_LE(c.vectorRegistersNeeded(Target::vectorBits(c.isa) / 32),
              Target::vectorRegisters(c.isa))
        << "evaluated a pruned config: " << c.str();
    Evaluation e;
    e.ok = true;
    e.gflops = 10.0 * c.kUnroll + (c.nr == 24 ? 50 : 0) +
               (c.order == KStepOrder::Pipelined ? 5 : 0);
    return e;
  }
  double peakGflops() const override { return 100; }
  std::vector<std::string> seen;
};

TEST(SearchTest, PrunedAssignmentsAreNeitherEvaluatedNorRecorded) {
  // 3 blocks x 2 orders x 2 ku = 12 assignments on avx2; the two with 4x24
  // and the pipelined order need 17 of the 16 vector registers.
  SearchSpace space(GemmDesc::packed(512, 512, 512), GemmConfig{},
                    {{"block", {"6x16", "4x24", "8x8"}, 0},
                     {"order", {"bcast", "pipelined"}, 0},
                     {"ku", {"2", "4"}, 1}});
  ASSERT_EQ(space.size(), 12u);
  const std::set<Assignment> prunedSet = {{1, 1, 0}, {1, 1, 1}};
  for (const Assignment &a : prunedSet) {
    auto config = space.configFor(a);
    ASSERT_FALSE(static_cast<bool>(config));
    EXPECT_NE(llvm::toString(config.takeError())
                  .find("needs 17 vector registers; avx2 has 16"),
              std::string::npos);
  }
  ModelPriorProposer proposer;
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(which);
    // Every budget up to and past the ten valid assignments is met
    // exactly, pruned assignments notwithstanding; past ten the search
    // stops when everything has been tried.
    for (int budget = 0; budget <= 13; ++budget) {
      SCOPED_TRACE(budget);
      RecordingEvaluator evaluator;
      int onTrialCalls = 0;
      SearchOptions options = withSeed(11);
      options.onTrial = [&](const Trial &t, const SearchHistory &h) {
        EXPECT_EQ(t.index, onTrialCalls);
        EXPECT_EQ(prunedSet.count(t.assignment), 0u) << t.description;
        EXPECT_EQ(h.trials.size(), static_cast<size_t>(t.index) + 1);
        ++onTrialCalls;
      };
      SearchHistory h =
          which == 0 ? runMcts(space, evaluator, proposer, {budget, 0}, options)
          : which == 1 ? runRandomSearch(space, evaluator, {budget, 0}, options)
                       : runGridSearch(space, evaluator, {budget, 0}, options);
      size_t expected = static_cast<size_t>(std::min(budget, 10));
      ASSERT_EQ(h.trials.size(), expected);
      EXPECT_EQ(evaluator.seen.size(), expected);
      EXPECT_EQ(onTrialCalls, static_cast<int>(expected));
      expectNoRepeats(h);
      std::set<Assignment> tried;
      for (size_t i = 0; i < h.trials.size(); ++i) {
        const Trial &t = h.trials[i];
        EXPECT_EQ(t.index, static_cast<int>(i));
        EXPECT_EQ(prunedSet.count(t.assignment), 0u) << t.description;
        EXPECT_TRUE(t.result.ok) << t.description;
        EXPECT_GT(t.reward, 0) << t.description;
        EXPECT_EQ(t.config.str(), evaluator.seen[i]);
        tried.insert(t.assignment);
      }
      if (budget >= 10) {
        // All ten valid assignments, and the best is 4x24 bcast ku 4.
        EXPECT_EQ(tried.size(), 10u);
        ASSERT_NE(h.best(), nullptr);
        EXPECT_EQ(h.best()->description, "block=4x24,order=bcast,ku=4");
      }
    }
  }
  // The grid walks past the pruned pair without spending trials on it: a
  // budget of 7 reaches 8x8 although 9 assignments came before it.
  RecordingEvaluator evaluator;
  SearchHistory g = runGridSearch(space, evaluator, {7, 0}, {});
  std::vector<std::string> order;
  for (const Trial &t : g.trials)
    order.push_back(t.description);
  EXPECT_EQ(order, (std::vector<std::string>{"block=6x16,order=bcast,ku=2",
                                             "block=6x16,order=bcast,ku=4",
                                             "block=6x16,order=pipelined,ku=2",
                                             "block=6x16,order=pipelined,ku=4",
                                             "block=4x24,order=bcast,ku=2",
                                             "block=4x24,order=bcast,ku=4",
                                             "block=8x8,order=bcast,ku=2"}));

  // A model assignment that is itself pruned is not the first trial: the
  // search moves on and still spends its budget on valid assignments.
  SearchSpace badModel(GemmDesc::packed(512, 512, 512), GemmConfig{},
                       {{"block", {"6x16", "4x24", "8x8"}, 1},
                        {"order", {"bcast", "pipelined"}, 1},
                        {"ku", {"2", "4"}, 1}});
  ASSERT_EQ(badModel.modelAssignment(), Assignment({1, 1, 1}));
  RecordingEvaluator modelEvaluator;
  SearchHistory m = runMcts(badModel, modelEvaluator, proposer, {5, 0}, {});
  ASSERT_EQ(m.trials.size(), 5u);
  EXPECT_EQ(modelEvaluator.seen.size(), 5u);
  for (const Trial &t : m.trials)
    EXPECT_EQ(prunedSet.count(t.assignment), 0u) << t.description;
}

TEST(SearchTest, AllFailuresAndNoPeakDoNotStopTheSearch) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  FailingEvaluator evaluator;
  SearchHistory h = runMcts(space, evaluator, proposer, {40, 0}, {});
  EXPECT_EQ(h.trials.size(), 40u);
  EXPECT_EQ(h.best(), nullptr);
  expectNoRepeats(h);
  for (const Trial &t : h.trials)
    EXPECT_EQ(t.reward, 0);
}

TEST(SearchTest, ExhaustingASmallSpaceStopsEarly) {
  SearchSpace space = tinySpace();
  ASSERT_EQ(space.size(), 6u);
  ModelPriorProposer proposer;
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(which);
    SimpleEvaluator evaluator;
    SearchHistory h =
        which == 0   ? runMcts(space, evaluator, proposer, {100, 0}, {})
        : which == 1 ? runRandomSearch(space, evaluator, {100, 0}, {})
                     : runGridSearch(space, evaluator, {100, 0}, {});
    EXPECT_EQ(h.trials.size(), 6u);
    EXPECT_EQ(evaluator.calls, 6);
    expectNoRepeats(h);
    ASSERT_NE(h.best(), nullptr);
    EXPECT_EQ(h.best()->description, "ku=4,pfa=512");
  }
  // No assignments at all, and exactly one (no decisions).
  SearchSpace empty(GemmDesc::packed(8, 8, 8), GemmConfig{},
                    {{"ku", {"1", "2"}, 0}, {"pfa", {}, 0}});
  SearchSpace single(GemmDesc::packed(8, 8, 8), GemmConfig{}, {});
  SimpleEvaluator evaluator;
  EXPECT_TRUE(runMcts(empty, evaluator, proposer, {10, 0}, {}).trials.empty());
  EXPECT_TRUE(runRandomSearch(empty, evaluator, {10, 0}, {}).trials.empty());
  EXPECT_TRUE(runGridSearch(empty, evaluator, {10, 0}, {}).trials.empty());
  EXPECT_EQ(evaluator.calls, 0);
  SearchHistory one = runMcts(single, evaluator, proposer, {10, 0}, {});
  ASSERT_EQ(one.trials.size(), 1u);
  EXPECT_EQ(one.trials[0].config, clampToProblem(GemmConfig{}, single.desc()));
  EXPECT_EQ(runRandomSearch(single, evaluator, {10, 0}, {}).trials.size(), 1u);
  EXPECT_EQ(runGridSearch(single, evaluator, {10, 0}, {}).trials.size(), 1u);
}

TEST(SearchTest, BadProposersFallBackToUniformPriors) {
  SearchSpace space = largeSpace();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  UniformProposer uniform;
  LandscapeEvaluator reference = landscape(space);
  SearchHistory expected =
      runMcts(space, reference, uniform, {80, 0}, withSeed(5));
  ASSERT_EQ(expected.trials.size(), 80u);
  for (std::vector<double> reply :
       std::vector<std::vector<double>>{{},
                                        {1, 2, 3, 4, 5, 6, 7},
                                        std::vector<double>(9, 1.0),
                                        {nan, nan, nan, nan},
                                        {1, nan, 1, 1},
                                        {0, 0, 0, 0},
                                        {1, -1, 1, 1},
                                        {inf, 1, 1, 1}}) {
    // Every decision has at most 6 choices, so none of these is valid
    // anywhere: the search must equal the uniform one.
    FixedProposer bad(reply);
    LandscapeEvaluator evaluator = landscape(space);
    SearchHistory h = runMcts(space, evaluator, bad, {80, 0}, withSeed(5));
    EXPECT_GT(bad.calls, 0);
    expectNoRepeats(h);
    expectSameHistory(h, expected);
  }
}

TEST(SearchTest, ProposerIsAskedAboutValidPrefixes) {
  class CheckingProposer : public Proposer {
  public:
    std::vector<double> priors(const SearchSpace &space,
                               const Assignment &prefix,
                               const SearchHistory &history) override {
      EXPECT_LT(prefix.size(), space.decisions().size());
      for (size_t d = 0; d < prefix.size(); ++d) {
        EXPECT_GE(prefix[d], 0);
        EXPECT_LT(prefix[d],
                  static_cast<int>(space.decisions()[d].choices.size()));
      }
      EXPECT_GE(history.trials.size(), lastHistorySize);
      lastHistorySize = history.trials.size();
      ++calls;
      return ModelPriorProposer().priors(space, prefix, history);
    }
    size_t lastHistorySize = 0;
    int calls = 0;
  } proposer;
  SearchSpace space = largeSpace();
  LandscapeEvaluator evaluator = landscape(space);
  SearchHistory h = runMcts(space, evaluator, proposer, {50, 0}, {});
  EXPECT_EQ(h.trials.size(), 50u);
  EXPECT_GT(proposer.calls, 50);
  EXPECT_EQ(proposer.lastHistorySize, 49u);
}

TEST(SearchTest, OnTrialIsCalledOncePerTrialInOrder) {
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  for (int which = 0; which < 3; ++which) {
    std::vector<int> indices;
    SearchOptions options;
    options.onTrial = [&](const Trial &t, const SearchHistory &h) {
      indices.push_back(t.index);
      EXPECT_EQ(h.trials.size(), static_cast<size_t>(t.index) + 1);
      EXPECT_EQ(&h.trials.back(), &t);
    };
    LandscapeEvaluator evaluator = landscape(space);
    SearchHistory h =
        which == 0   ? runMcts(space, evaluator, proposer, {25, 0}, options)
        : which == 1 ? runRandomSearch(space, evaluator, {25, 0}, options)
                     : runGridSearch(space, evaluator, {25, 0}, options);
    ASSERT_EQ(indices.size(), 25u);
    for (int i = 0; i < 25; ++i) {
      EXPECT_EQ(indices[i], i);
      EXPECT_EQ(h.trials[i].index, i);
    }
  }
}

TEST(SearchTest, GridSearchIsLexicographic) {
  SearchSpace space = tinySpace();
  SimpleEvaluator evaluator;
  SearchHistory h = runGridSearch(space, evaluator, {100, 0}, {});
  std::vector<std::string> order;
  for (const Trial &t : h.trials)
    order.push_back(t.description);
  EXPECT_EQ(order, (std::vector<std::string>{"ku=2,pfa=0", "ku=2,pfa=256",
                                             "ku=2,pfa=512", "ku=4,pfa=0",
                                             "ku=4,pfa=256", "ku=4,pfa=512"}));
  SearchSpace large = largeSpace();
  LandscapeEvaluator landscapeEvaluator = landscape(large);
  SearchHistory g = runGridSearch(large, landscapeEvaluator, {3, 0}, {});
  ASSERT_EQ(g.trials.size(), 3u);
  // The A layout (last, two choices) varies fastest, then the loop order.
  EXPECT_EQ(g.trials[0].assignment, Assignment({0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(g.trials[1].assignment, Assignment({0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(g.trials[2].assignment, Assignment({0, 0, 0, 0, 0, 0, 0, 0, 1, 0}));
}

TEST(SearchTest, RandomSearchDoesNotStartAtTheModel) {
  SearchSpace space = largeSpace();
  int atModel = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    LandscapeEvaluator evaluator = landscape(space);
    SearchHistory h = runRandomSearch(space, evaluator, {1, 0}, withSeed(seed));
    ASSERT_EQ(h.trials.size(), 1u);
    atModel += h.trials[0].assignment == space.modelAssignment();
  }
  EXPECT_LT(atModel, 10);
}

TEST(SearchTest, MctsFindsTheOptimumWhereRandomSearchDoesNot) {
  // At 640 trials (a 108th of the space) MCTS gets within 5% of the
  // hidden optimum for every seed; random search, on average, does not.
  SearchSpace space = largeSpace();
  ModelPriorProposer proposer;
  const int budget = 640;
  double mctsMean = 0, randomMean = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    LandscapeEvaluator e1 = landscape(space), e2 = landscape(space);
    double mcts =
        bestGflops(runMcts(space, e1, proposer, {budget, 0}, withSeed(seed)));
    double random =
        bestGflops(runRandomSearch(space, e2, {budget, 0}, withSeed(seed)));
    EXPECT_GE(mcts, 95) << "seed " << seed;
    mctsMean += mcts / 10;
    randomMean += random / 10;
  }
  EXPECT_GE(mctsMean, randomMean);
  EXPECT_GE(mctsMean, 95);
  EXPECT_LT(randomMean, 95);
  // The model's own config is far from the optimum.
  LandscapeEvaluator evaluator = landscape(space);
  auto model = space.configFor(space.modelAssignment());
  ASSERT_TRUE(static_cast<bool>(model));
  EXPECT_LT(evaluator.evaluate(*model).gflops, 50);
}

//===----------------------------------------------------------------------===//
// The LLM proposer, against a scripted chat server
//===----------------------------------------------------------------------===//

TEST(LlmProposerTest, RepliesBecomeMovesAndInvalidOnesAreMasked) {
  SearchSpace space = largeSpace();
  Assignment start = space.modelAssignment();
  std::vector<std::string> rejected;
  QM_ASSERT_EXPECTED(
      moves,
      LlmProposer::parseReply(
          "Here you go:\n```json\n{\"candidates\": "
          "[\"kc=288,order=pipelined\", "
          "{\"block\": \"14x32\", \"ku\": 8}, \"kc=7\", \"colour=blue\", "
          "{\"order\": [1]}, 42, \"nonsense\"]}\n```",
          space, start, rejected));
  ASSERT_EQ(moves.size(), 2u);
  QM_ASSERT_EXPECTED(first, space.configFor(moves[0]));
  EXPECT_EQ(first.kc, 288);
  EXPECT_EQ(first.order, KStepOrder::Pipelined);
  EXPECT_EQ(first.mr, 6); // the rest is the starting point's
  QM_ASSERT_EXPECTED(second, space.configFor(moves[1]));
  EXPECT_EQ(second.mr, 14);
  EXPECT_EQ(second.kUnroll, 8);
  EXPECT_EQ(rejected, (std::vector<std::string>{
                          "kc=7: not a choice of kc",
                          "colour=blue: no decision named colour",
                          "order: value is not a string or an integer",
                          "a move is neither a string nor an object",
                          "nonsense: not key=value"}));
  QM_ASSERT_FAILS_WITH(LlmProposer::parseReply("I think kc should be larger.",
                                               space, start, rejected)
                           .takeError(),
                       "the reply holds no JSON object");
  QM_ASSERT_FAILS_WITH(
      LlmProposer::parseReply("{\"moves\": []}", space, start, rejected)
          .takeError(),
      "no \"candidates\" array");
}

TEST(LlmProposerTest, GoodMovesReachTheOptimumSoonerThanTheBuiltInPriors) {
  SearchSpace space = largeSpace();
  // The LLM names the hidden optimum's distinctive choices.
  std::string move = "{\"candidates\": [{\"block\": \"14x32\", \"ku\": \"8\", "
                     "\"kc\": \"288\", \"mc\": \"x1/2\", \"pfa\": \"256\", "
                     "\"order\": \"pipelined\", \"loop\": \"ir-jr\"}]}";
  ScriptedChat chat;
  for (int i = 0; i < 10; ++i)
    chat.replies.push_back(move);
  ChatClient client(scriptedChatConfig(), chat, [](double) {});
  ModelPriorProposer builtin;
  LlmProposer llm(client, builtin, /*batch=*/4);
  const int budget = 24;
  LandscapeEvaluator e1 = landscape(space), e2 = landscape(space);
  SearchHistory withLlm = runMcts(space, e1, llm, {budget, 0}, withSeed(3));
  SearchHistory without = runMcts(space, e2, builtin, {budget, 0}, withSeed(3));
  EXPECT_EQ(bestGflops(withLlm), 100);
  EXPECT_LT(bestGflops(without), 100);
  ASSERT_FALSE(llm.rounds().empty());
  EXPECT_EQ(llm.rounds()[0].accepted.size(), 1u);
  // Later prompts carry the history: configs and measured GFLOPS.
  ASSERT_GE(chat.lastMessages.size(), 2u);
  EXPECT_NE(chat.lastMessages[1].find("GFLOPS"), std::string::npos);
  EXPECT_NE(chat.lastMessages[1].find("block=6x64,ku=4"), std::string::npos);
}

TEST(LlmProposerTest, UnusableRepliesLeaveTheBuiltInSearchUnchanged) {
  SearchSpace space = largeSpace();
  ModelPriorProposer builtin;
  LandscapeEvaluator reference = landscape(space);
  SearchHistory expected =
      runMcts(space, reference, builtin, {30, 0}, withSeed(5));
  for (const char *reply :
       {"no JSON here", "{\"candidates\": [\"kc=3\", \"block=99x99\"]}",
        "{\"candidates\": 5}"}) {
    SCOPED_TRACE(reply);
    ScriptedChat chat;
    for (int i = 0; i < 10; ++i)
      chat.replies.push_back(reply);
    ChatClient client(scriptedChatConfig(), chat, [](double) {});
    LlmProposer llm(client, builtin, 4);
    LandscapeEvaluator e = landscape(space);
    SearchHistory h = runMcts(space, e, llm, {30, 0}, withSeed(5));
    ASSERT_EQ(h.trials.size(), expected.trials.size());
    for (size_t i = 0; i < h.trials.size(); ++i)
      EXPECT_EQ(h.trials[i].description, expected.trials[i].description);
  }
  // A server that is down: every round records the error, the search is
  // the built-in one.
  ScriptedChat down;
  ChatClient client(scriptedChatConfig(), down, [](double) {});
  LlmProposer llm(client, builtin, 4);
  LandscapeEvaluator e = landscape(space);
  SearchHistory h = runMcts(space, e, llm, {30, 0}, withSeed(5));
  EXPECT_EQ(h.trials.size(), expected.trials.size());
  ASSERT_FALSE(llm.rounds().empty());
  EXPECT_NE(llm.rounds()[0].error.find("no more replies"), std::string::npos);
}

} // namespace

//===----------------------------------------------------------------------===//
// The finalists' re-measurement
//===----------------------------------------------------------------------===//

namespace {
/// Answers each config's evaluations from its own script, in order.
class ScriptedEvaluator : public Evaluator {
public:
  std::map<std::string, std::vector<Evaluation>> scripts;
  std::vector<std::string> calls;
  Evaluation evaluate(const GemmConfig &c) override {
    calls.push_back(c.str());
    std::vector<Evaluation> &script = scripts[c.str()];
    if (script.empty())
      return Evaluation{false, 0, 0, 0, "script exhausted"};
    Evaluation e = script.front();
    script.erase(script.begin());
    return e;
  }
  double peakGflops() const override { return 200; }
};

Trial trialWith(int kUnroll, double gflops, bool ok = true) {
  Trial t;
  t.config.kUnroll = kUnroll;
  t.description = "ku=" + std::to_string(kUnroll);
  t.result.ok = ok;
  t.result.gflops = gflops;
  return t;
}

Evaluation measured(double gflops) {
  return Evaluation{true, gflops, 0, 0, ""};
}
} // namespace

TEST(SearchTest, FinalistsMeasuredAgainPickTheBestMedian) {
  SearchHistory h;
  h.trials = {trialWith(1, 90), trialWith(2, 150), trialWith(4, 120),
              trialWith(8, 130), trialWith(16, 10, false)};
  for (size_t i = 0; i < h.trials.size(); ++i)
    h.trials[i].index = int(i);
  ScriptedEvaluator ev;
  // ku=2 was a lucky draw; ku=4 is steadily faster.
  ev.scripts[h.trials[1].config.str()] = {measured(100), measured(105)};
  ev.scripts[h.trials[2].config.str()] = {measured(125), measured(128)};
  ev.scripts[h.trials[3].config.str()] = {measured(110), measured(112)};
  FinalistResult r = remeasureFinalists(h, ev, 3, 2);
  EXPECT_EQ(r.finalists, 3);
  EXPECT_EQ(r.reevaluations, 6);
  EXPECT_EQ(r.trialIndex, 2);
  EXPECT_DOUBLE_EQ(r.medianGflops, 125);
  EXPECT_EQ(r.samples, (std::vector<double>{120, 125, 128}));
  // Interleaved: all three once, then again; the slowest (90) and the
  // failed trial are not finalists.
  ASSERT_EQ(ev.calls.size(), 6u);
  EXPECT_EQ(ev.calls[0], h.trials[1].config.str());
  EXPECT_EQ(ev.calls[1], h.trials[3].config.str());
  EXPECT_EQ(ev.calls[2], h.trials[2].config.str());
  EXPECT_EQ(ev.calls[3], h.trials[1].config.str());
}

TEST(SearchTest, AFinalistThatFailsAgainIsOut) {
  SearchHistory h;
  h.trials = {trialWith(2, 150), trialWith(4, 120)};
  ScriptedEvaluator ev;
  ev.scripts[h.trials[0].config.str()] = {
      measured(160), Evaluation{false, 0, 0, 0, "validation: C[3] = 7"}};
  ev.scripts[h.trials[1].config.str()] = {measured(119), measured(121)};
  FinalistResult r = remeasureFinalists(h, ev, 3, 2);
  EXPECT_EQ(r.trialIndex, 1);
  ASSERT_EQ(r.dropped.size(), 1u);
  EXPECT_EQ(r.dropped[0], "ku=2: validation: C[3] = 7");
  // Every finalist failing leaves no winner.
  ScriptedEvaluator failing;
  FinalistResult none = remeasureFinalists(h, failing, 2, 1);
  EXPECT_EQ(none.trialIndex, -1);
  EXPECT_EQ(none.dropped.size(), 2u);
  // No successful trial: nothing to measure.
  SearchHistory empty;
  empty.trials = {trialWith(1, 0, false)};
  EXPECT_EQ(remeasureFinalists(empty, failing, 3, 2).trialIndex, -1);
  EXPECT_EQ(remeasureFinalists(empty, failing, 3, 2).reevaluations, 0);
}

namespace {
/// ScriptedEvaluator that also times side by side: each config's speed is
/// `speeds[config]`, its speedup that over the first config's.
class ComparingEvaluator : public ScriptedEvaluator {
public:
  std::map<std::string, double> speeds;
  std::set<std::string> failing;
  std::vector<std::vector<std::string>> comparisons;
  std::optional<std::vector<SideBySide>>
  compare(const std::vector<GemmConfig> &configs, int rounds) override {
    EXPECT_EQ(rounds, 15);
    comparisons.emplace_back();
    std::vector<SideBySide> out;
    for (const GemmConfig &c : configs) {
      comparisons.back().push_back(c.str());
      SideBySide s;
      s.ok = !failing.count(c.str());
      s.failure = s.ok ? "" : "validation: C[0] = 1";
      s.gflops = speeds[c.str()];
      s.speedup = s.gflops / speeds[configs.front().str()];
      out.push_back(s);
    }
    return out;
  }
};
} // namespace

TEST(SearchTest, FinalistsSideBySideMustBeatTheBaseline) {
  SearchHistory h;
  // The model's config (ku=4) measured slow in its trial; ku=2 and ku=8
  // were lucky draws.
  h.trials = {trialWith(4, 100), trialWith(2, 150), trialWith(8, 140),
              trialWith(1, 90), trialWith(16, 10, false)};
  for (size_t i = 0; i < h.trials.size(); ++i)
    h.trials[i].index = int(i);
  const GemmConfig baseline = h.trials[0].config;
  ComparingEvaluator ev;
  ev.speeds = {{h.trials[0].config.str(), 130},
               {h.trials[1].config.str(), 125},
               {h.trials[2].config.str(), 130},
               {h.trials[3].config.str(), 95}};
  FinalistResult r = remeasureFinalists(h, ev, 2, 2, &baseline, 15);
  // The baseline first, then the two fastest others; nothing evaluated
  // one by one.
  ASSERT_EQ(ev.comparisons.size(), 1u);
  EXPECT_EQ(ev.comparisons[0],
            (std::vector<std::string>{h.trials[0].config.str(),
                                      h.trials[1].config.str(),
                                      h.trials[2].config.str()}));
  EXPECT_TRUE(ev.calls.empty());
  EXPECT_TRUE(r.sideBySide);
  EXPECT_EQ(r.finalists, 3);
  // ku=8 ties with the baseline: the baseline stays.
  EXPECT_EQ(r.trialIndex, 0);
  EXPECT_DOUBLE_EQ(r.medianGflops, 130);
  EXPECT_DOUBLE_EQ(r.speedup, 1.0);
  // Faster than the baseline in the same rounds: it wins.
  ev.speeds[h.trials[2].config.str()] = 136.5;
  r = remeasureFinalists(h, ev, 2, 2, &baseline, 15);
  EXPECT_EQ(r.trialIndex, 2);
  EXPECT_DOUBLE_EQ(r.speedup, 1.05);
  // A finalist that fails its validation there is out.
  ev.failing = {h.trials[2].config.str()};
  r = remeasureFinalists(h, ev, 2, 2, &baseline, 15);
  EXPECT_EQ(r.trialIndex, 0);
  ASSERT_EQ(r.dropped.size(), 1u);
  EXPECT_EQ(r.dropped[0], "ku=8: validation: C[0] = 1");
  // An evaluator that cannot compare: each finalist is measured again.
  ScriptedEvaluator plain;
  for (int i = 0; i < 3; ++i)
    plain.scripts[h.trials[i].config.str()] = {measured(120 + i),
                                               measured(121 + i)};
  r = remeasureFinalists(h, plain, 2, 2, &baseline, 15);
  EXPECT_FALSE(r.sideBySide);
  EXPECT_EQ(r.reevaluations, 6);
  EXPECT_EQ(plain.calls.front(), h.trials[0].config.str());
}
