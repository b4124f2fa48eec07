//===- Search.cpp - MCTS over a SearchSpace -------------------------------===//
//
// Monte Carlo tree search with PUCT selection (docs/Tuning.md, "The search"),
// and the random and grid baselines. All three share one trial loop: budget
// checks, configFor, the evaluator, the reward and the record.
//
// Every random draw comes from a std::mt19937_64 seeded with the options'
// seed and is turned into a choice by code here (not by a std::
// distribution, whose algorithm differs between standard libraries), so a
// search is reproducible wherever it runs.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Tune/Search.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>

using namespace qimeng;

const Trial *SearchHistory::best() const {
  const Trial *best = nullptr;
  for (const Trial &t : trials)
    if (t.result.ok && (!best || t.result.gflops > best->result.gflops))
      best = &t;
  return best;
}

std::vector<double> ModelPriorProposer::priors(const SearchSpace &space,
                                               const Assignment &prefix,
                                               const SearchHistory &history) {
  (void)history;
  const auto &decisions = space.decisions();
  if (prefix.size() >= decisions.size())
    return {};
  const Decision &d = decisions[prefix.size()];
  size_t n = d.choices.size();
  std::vector<double> weights(n, 1.0);
  if (n == 0 || !(decay_ >= 0) || !std::isfinite(decay_))
    return n ? std::vector<double>(n, 1.0 / n) : weights;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    int distance = std::abs(static_cast<int>(i) - d.modelChoice);
    weights[i] = std::pow(decay_, distance);
    sum += weights[i];
  }
  if (!(sum > 0) || !std::isfinite(sum))
    return std::vector<double>(n, 1.0 / n);
  for (double &w : weights)
    w /= sum;
  return weights;
}

namespace {

using Clock = std::chrono::steady_clock;

/// Normalised priors; uniform when the proposer's reply is unusable (wrong
/// size, a negative, NaN or infinite weight, or all zero).
std::vector<double> sanitizePriors(std::vector<double> weights, size_t n) {
  std::vector<double> uniform(n, n ? 1.0 / n : 0.0);
  if (weights.size() != n)
    return uniform;
  double sum = 0;
  for (double w : weights) {
    if (!std::isfinite(w) || w < 0)
      return uniform;
    sum += w;
  }
  if (!(sum > 0) || !std::isfinite(sum))
    return uniform;
  for (double &w : weights)
    w /= sum;
  return weights;
}

/// A uniform double in [0, 1) from the top 53 bits of one draw.
double unitDraw(std::mt19937_64 &rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/// Index drawn in proportion to `weights` (non-negative); -1 when they sum
/// to zero.
int drawIndex(const std::vector<double> &weights, std::mt19937_64 &rng) {
  double sum = 0;
  for (double w : weights)
    sum += w;
  if (!(sum > 0))
    return -1;
  double target = unitDraw(rng) * sum;
  int last = -1;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0)
      continue;
    last = static_cast<int>(i);
    if (target < weights[i])
      return last;
    target -= weights[i];
  }
  return last; // rounding left a sliver past the end
}

/// The loop shared by the searches: which assignments have been evaluated
/// (counted per prefix, so that a whole subtree can be known exhausted),
/// the budget, and evaluating and recording one trial.
class TrialRunner {
public:
  TrialRunner(const SearchSpace &space, Evaluator &evaluator,
              const SearchBudget &budget, const SearchOptions &options)
      : space_(space), evaluator_(evaluator), budget_(budget),
        options_(options), start_(Clock::now()) {
    size_t depth = space.decisions().size();
    // subtree_[d]: complete assignments below a prefix of length d.
    subtree_.assign(depth + 1, 1);
    for (size_t d = depth; d-- > 0;) {
      uint64_t n = space.decisions()[d].choices.size();
      uint64_t below = subtree_[d + 1];
      subtree_[d] = n && below > std::numeric_limits<uint64_t>::max() / n
                        ? std::numeric_limits<uint64_t>::max()
                        : below * n;
    }
  }

  SearchHistory &history() { return history_; }

  /// Whether another evaluation may start: trials left, time left, and
  /// assignments left.
  bool mayContinue() const {
    if (static_cast<int64_t>(history_.trials.size()) >= budget_.trials)
      return false;
    // A space of nothing but invalid assignments must still end.
    if (pruned_ >= kMaxPruned)
      return false;
    if (budget_.seconds > 0 && elapsed() > budget_.seconds)
      return false;
    return !exhausted({});
  }

  /// Evaluated complete assignments starting with `prefix`.
  uint64_t evaluatedBelow(const Assignment &prefix) const {
    auto it = evaluated_.find(prefix);
    return it == evaluated_.end() ? 0 : it->second;
  }
  /// Complete assignments starting with a prefix of this length.
  uint64_t subtreeSize(size_t depth) const { return subtree_[depth]; }
  /// Whether every assignment starting with `prefix` has been evaluated.
  /// A saturated (astronomical) subtree never is.
  bool exhausted(const Assignment &prefix) const {
    uint64_t size = subtree_[prefix.size()];
    return size != std::numeric_limits<uint64_t>::max() &&
           evaluatedBelow(prefix) >= size;
  }

  /// Evaluates a complete, not yet evaluated assignment; returns the reward.
  double run(const Assignment &a) {
    Assignment prefix;
    for (size_t d = 0;; ++d) {
      ++evaluated_[prefix];
      if (d == a.size())
        break;
      prefix.push_back(a[d]);
    }
    // An assignment whose choices do not combine (a block without the
    // registers for an order, ...) is pruned: marked as tried, reward 0,
    // but no trial is spent and none recorded.
    auto config = space_.configFor(a);
    if (!config) {
      llvm::consumeError(config.takeError());
      ++pruned_;
      return 0;
    }
    Trial trial;
    trial.index = static_cast<int>(history_.trials.size());
    trial.assignment = a;
    trial.description = space_.describe(a);
    trial.config = *config;
    trial.result = evaluator_.evaluate(trial.config);
    trial.reward = reward(trial.result);
    trial.elapsedSeconds = elapsed();
    history_.trials.push_back(std::move(trial));
    if (options_.onTrial)
      options_.onTrial(history_.trials.back(), history_);
    return history_.trials.back().reward;
  }

private:
  double elapsed() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }

  double reward(const Evaluation &e) const {
    if (!e.ok)
      return 0;
    double r = e.gflops / evaluator_.peakGflops();
    if (!std::isfinite(r) || r < 0)
      return 0;
    return std::min(r, 1.0);
  }

  static constexpr uint64_t kMaxPruned = 1000000;
  uint64_t pruned_ = 0;
  const SearchSpace &space_;
  Evaluator &evaluator_;
  SearchBudget budget_;
  const SearchOptions &options_;
  Clock::time_point start_;
  SearchHistory history_;
  std::vector<uint64_t> subtree_;
  std::map<Assignment, uint64_t> evaluated_;
};

/// Completes `prefix` to an unevaluated assignment, drawing each remaining
/// choice from `weightsAt(partial)` among the choices whose subtree still
/// has an unevaluated assignment (so no draw is ever wasted on a repeat).
/// When the weights leave nothing among those, the first of them in index
/// order is taken. `prefix` must not be exhausted.
template <typename WeightsAt>
Assignment complete(const TrialRunner &runner, const SearchSpace &space,
                    Assignment prefix, std::mt19937_64 &rng,
                    WeightsAt weightsAt) {
  const auto &decisions = space.decisions();
  while (prefix.size() < decisions.size()) {
    size_t n = decisions[prefix.size()].choices.size();
    std::vector<double> weights = weightsAt(prefix);
    int firstOpen = -1;
    Assignment child = prefix;
    child.push_back(0);
    for (size_t i = 0; i < n; ++i) {
      child.back() = static_cast<int>(i);
      if (runner.exhausted(child))
        weights[i] = 0;
      else if (firstOpen < 0)
        firstOpen = static_cast<int>(i);
    }
    int pick = drawIndex(weights, rng);
    prefix.push_back(pick >= 0 ? pick : firstOpen);
  }
  return prefix;
}

/// One node of the MCTS tree: a prefix of an assignment.
struct Node {
  std::vector<double> priors;                  ///< over the children
  std::vector<std::unique_ptr<Node>> children; ///< null: not expanded
  uint64_t visits = 0;
  double totalReward = 0;

  double meanReward() const { return visits ? totalReward / visits : 0.0; }
};

} // namespace

SearchHistory qimeng::runMcts(const SearchSpace &space, Evaluator &evaluator,
                              Proposer &proposer, const SearchBudget &budget,
                              const SearchOptions &options) {
  TrialRunner runner(space, evaluator, budget, options);
  std::mt19937_64 rng(options.seed);
  const auto &decisions = space.decisions();
  const size_t depth = decisions.size();

  // A node's priors come from the proposer once, when the node is created.
  auto makeNode = [&](const Assignment &prefix) {
    auto node = std::make_unique<Node>();
    if (prefix.size() < depth) {
      size_t n = decisions[prefix.size()].choices.size();
      node->priors =
          sanitizePriors(proposer.priors(space, prefix, runner.history()), n);
      node->children.resize(n);
    }
    return node;
  };
  std::unique_ptr<Node> root = makeNode({});
  // A usable PUCT constant keeps every score finite.
  const double exploration =
      std::isfinite(options.exploration) && options.exploration >= 0
          ? options.exploration
          : 0.0;

  bool first = true;
  while (runner.mayContinue()) {
    // Selection and expansion: PUCT down the tree, skipping exhausted
    // subtrees, until a node with an unexpanded child; expand that child.
    std::vector<Node *> path = {root.get()};
    Assignment prefix;
    Assignment modelAssignment = space.modelAssignment();
    while (prefix.size() < depth) {
      Node &node = *path.back();
      Assignment child = prefix;
      child.push_back(0);
      int pick = -1;
      bool expand = false;
      if (first) {
        // The first trial is the model's assignment; its path in the tree
        // is the root's child for the model's first choice.
        pick = modelAssignment[prefix.size()];
        expand = true;
      } else {
        // Unexpanded children come first: the one with the highest PUCT
        // score among them (the highest prior) is expanded. Once every open
        // child is expanded, the highest PUCT score among them is followed.
        // Exhausted subtrees are skipped; ties go to the lowest index.
        double sqrtParent = std::sqrt(static_cast<double>(node.visits));
        for (bool unexpandedPass : {true, false}) {
          double bestScore = -std::numeric_limits<double>::infinity();
          for (size_t i = 0; i < node.children.size(); ++i) {
            child.back() = static_cast<int>(i);
            const Node *c = node.children[i].get();
            if ((c == nullptr) != unexpandedPass || runner.exhausted(child))
              continue;
            double visits = c ? static_cast<double>(c->visits) : 0.0;
            double q = c ? c->meanReward() : 0.0;
            double score =
                q + exploration * node.priors[i] * sqrtParent / (1.0 + visits);
            if (score > bestScore) {
              bestScore = score;
              pick = static_cast<int>(i);
            }
          }
          if (pick >= 0) {
            expand = unexpandedPass;
            break;
          }
        }
      }
      // The node is not exhausted, so some child is open.
      assert(pick >= 0 && "selection reached an exhausted node");
      prefix.push_back(pick);
      if (expand) {
        node.children[pick] = makeNode(prefix);
        path.push_back(node.children[pick].get());
        break;
      }
      path.push_back(node.children[pick].get());
    }

    // Simulation: the model's assignment first, afterwards the rest of the
    // assignment drawn from the proposer's priors (the new node's own, then
    // one reply per deeper decision, asked once per prefix).
    Assignment a;
    if (first) {
      a = modelAssignment;
    } else {
      Node *leaf = path.back();
      a = complete(runner, space, prefix, rng, [&](const Assignment &p) {
        if (p.size() == prefix.size())
          return leaf->priors;
        return sanitizePriors(proposer.priors(space, p, runner.history()),
                              decisions[p.size()].choices.size());
      });
    }
    first = false;

    // Evaluation and back-propagation along the tree path.
    double reward = runner.run(a);
    for (Node *node : path) {
      ++node->visits;
      node->totalReward += reward;
    }
  }
  return std::move(runner.history());
}

SearchHistory qimeng::runRandomSearch(const SearchSpace &space,
                                      Evaluator &evaluator,
                                      const SearchBudget &budget,
                                      const SearchOptions &options) {
  TrialRunner runner(space, evaluator, budget, options);
  std::mt19937_64 rng(options.seed);
  const auto &decisions = space.decisions();
  while (runner.mayContinue()) {
    // Each choice in proportion to the unevaluated assignments below it:
    // uniform over all unevaluated assignments.
    Assignment a =
        complete(runner, space, {}, rng, [&](const Assignment &prefix) {
          size_t n = decisions[prefix.size()].choices.size();
          std::vector<double> weights(n);
          Assignment child = prefix;
          child.push_back(0);
          for (size_t i = 0; i < n; ++i) {
            child.back() = static_cast<int>(i);
            weights[i] = static_cast<double>(runner.subtreeSize(child.size()) -
                                             runner.evaluatedBelow(child));
          }
          return weights;
        });
    runner.run(a);
  }
  return std::move(runner.history());
}

SearchHistory qimeng::runGridSearch(const SearchSpace &space,
                                    Evaluator &evaluator,
                                    const SearchBudget &budget,
                                    const SearchOptions &options) {
  TrialRunner runner(space, evaluator, budget, options);
  const auto &decisions = space.decisions();
  Assignment a(decisions.size(), 0);
  while (runner.mayContinue()) {
    runner.run(a);
    // Next in lexicographic order: the last decision varies fastest.
    for (size_t d = decisions.size(); d-- > 0;) {
      if (++a[d] < static_cast<int>(decisions[d].choices.size()))
        break;
      a[d] = 0;
    }
  }
  return std::move(runner.history());
}

FinalistResult qimeng::remeasureFinalists(const SearchHistory &history,
                                          Evaluator &evaluator, int count,
                                          int rounds,
                                          const GemmConfig *baseline,
                                          int sideBySideRounds) {
  // The fastest successful trials, one per config, fastest first.
  std::vector<const Trial *> finalists;
  for (const Trial &t : history.trials)
    if (t.result.ok)
      finalists.push_back(&t);
  std::stable_sort(finalists.begin(), finalists.end(),
                   [](const Trial *a, const Trial *b) {
                     return a->result.gflops > b->result.gflops;
                   });
  // The baseline's trial first, then up to `count` others.
  std::vector<const Trial *> distinct;
  if (baseline)
    for (const Trial *t : finalists)
      if (t->config == *baseline) {
        distinct.push_back(t);
        break;
      }
  const size_t limit = distinct.size() + size_t(std::max(count, 1));
  for (const Trial *t : finalists)
    if (distinct.size() < limit &&
        std::none_of(distinct.begin(), distinct.end(),
                     [&](const Trial *d) { return d->config == t->config; }))
      distinct.push_back(t);
  FinalistResult out;
  out.finalists = static_cast<int>(distinct.size());
  if (distinct.empty())
    return out;
  if (sideBySideRounds > 0 && distinct.size() > 1) {
    std::vector<GemmConfig> configs;
    for (const Trial *t : distinct)
      configs.push_back(t->config);
    auto compared = evaluator.compare(configs, sideBySideRounds);
    if (compared && compared->size() == distinct.size()) {
      out.sideBySide = true;
      out.reevaluations = 1;
      int winner = -1;
      for (size_t i = 0; i < distinct.size(); ++i) {
        const SideBySide &s = (*compared)[i];
        if (!s.ok) {
          out.dropped.push_back(distinct[i]->description + ": " + s.failure);
          continue;
        }
        if (winner < 0 || s.speedup > (*compared)[winner].speedup)
          winner = static_cast<int>(i);
      }
      if (winner >= 0) {
        const SideBySide &w = (*compared)[winner];
        out.trialIndex =
            static_cast<int>(distinct[winner] - history.trials.data());
        out.medianGflops = w.gflops;
        out.samples = {distinct[winner]->result.gflops, w.gflops};
        out.speedup = w.speedup;
      }
      return out;
    }
  }
  std::vector<std::vector<double>> samples(distinct.size());
  std::vector<bool> alive(distinct.size(), true);
  for (size_t i = 0; i < distinct.size(); ++i)
    samples[i].push_back(distinct[i]->result.gflops);
  if (distinct.size() > 1)
    for (int r = 0; r < rounds; ++r)
      for (size_t i = 0; i < distinct.size(); ++i) {
        if (!alive[i])
          continue;
        Evaluation e = evaluator.evaluate(distinct[i]->config);
        ++out.reevaluations;
        if (!e.ok) {
          alive[i] = false;
          out.dropped.push_back(distinct[i]->description + ": " + e.failure);
          continue;
        }
        samples[i].push_back(e.gflops);
      }
  double bestMedian = -1;
  for (size_t i = 0; i < distinct.size(); ++i) {
    if (!alive[i])
      continue;
    std::vector<double> sorted = samples[i];
    std::sort(sorted.begin(), sorted.end());
    size_t n = sorted.size();
    double med =
        n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    if (med > bestMedian) {
      bestMedian = med;
      out.trialIndex = static_cast<int>(distinct[i] - history.trials.data());
      out.medianGflops = med;
      out.samples = samples[i];
    }
  }
  return out;
}
