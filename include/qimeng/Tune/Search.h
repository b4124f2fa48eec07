//===- Search.h - MCTS over a SearchSpace -----------------------*- C++ -*-===//
//
// The paper's third stage. The search is a pure function of (space, seed,
// evaluator, proposer, budget): measuring sits behind Evaluator, move
// proposals behind Proposer (the built-in analytical priors now, an LLM
// later), so it unit-tests with fakes.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TUNE_SEARCH_H
#define QIMENG_TUNE_SEARCH_H

#include "qimeng/Tune/SearchSpace.h"
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace qimeng {

/// What measuring one candidate gave.
struct Evaluation {
  bool ok = false;   ///< validated before and after timing, plausible
  double gflops = 0; ///< median
  double spread = 0; ///< (max - min) / median over the timed runs
  double maxRelError = 0;
  std::string failure; ///< why not ok: "crashed: Segmentation fault", ...
};

/// One config of a side-by-side timing (Evaluator::compare).
struct SideBySide {
  bool ok = false;
  double gflops = 0;  ///< median over the rounds
  double speedup = 0; ///< over the first config: median of per-round ratios
  std::string failure;
};

/// Emits, validates and measures a configuration (in production: in a
/// qimeng-runner process).
class Evaluator {
public:
  virtual ~Evaluator() = default;
  virtual Evaluation evaluate(const GemmConfig &config) = 0;
  /// Reward scale: performance is normalised by this (the machine's peak).
  virtual double peakGflops() const = 0;
  /// Times `configs` (each evaluated ok before) side by side: in one
  /// process, interleaved round by round for `rounds` rounds, each one's
  /// speedup over configs[0]. nullopt where this evaluator cannot (the
  /// default) or the comparison failed as a whole.
  virtual std::optional<std::vector<SideBySide>>
  compare(const std::vector<GemmConfig> &configs, int rounds) {
    (void)configs;
    (void)rounds;
    return std::nullopt;
  }
};

/// One trial of the search, kept for the record (and for an LLM to read).
struct Trial {
  int index = 0; ///< 0-based, in evaluation order
  Assignment assignment;
  std::string description;   ///< SearchSpace::describe
  GemmConfig config;         ///< what was evaluated
  Evaluation result;         ///< the evaluator's answer
  double reward = 0;         ///< gflops / peak clamped to [0, 1], 0 on failure
  double elapsedSeconds = 0; ///< since the search started
};

struct SearchHistory {
  std::vector<Trial> trials;
  /// Best successful trial so far, if any.
  const Trial *best() const;
};

/// Move proposals: prior probabilities over the choices of the decision at
/// depth `prefix.size()`, given the choices made above it and the history.
/// Must return one non-negative weight per choice (not all zero); invalid
/// replies are replaced by uniform priors.
class Proposer {
public:
  virtual ~Proposer() = default;
  virtual std::vector<double> priors(const SearchSpace &space,
                                     const Assignment &prefix,
                                     const SearchHistory &history) = 0;
};

/// The built-in policy: weights fall off geometrically with the distance
/// from the analytical model's choice.
class ModelPriorProposer : public Proposer {
public:
  explicit ModelPriorProposer(double decay = 0.5) : decay_(decay) {}
  std::vector<double> priors(const SearchSpace &space, const Assignment &prefix,
                             const SearchHistory &history) override;

private:
  double decay_;
};

struct SearchBudget {
  int trials = 32;    ///< evaluations at most
  double seconds = 0; ///< wall-clock limit; 0: none
};

/// Called after every trial (progress on stderr in the tools).
using TrialCallback = std::function<void(const Trial &, const SearchHistory &)>;

struct SearchOptions {
  uint64_t seed = 1;
  double exploration = 1.4; ///< PUCT constant
  TrialCallback onTrial;
};

/// Monte Carlo tree search: selection by PUCT over visit counts, mean
/// reward and the proposer's priors; expansion of one child; simulation =
/// completing the assignment by sampling the priors and evaluating it (the
/// model's assignment first); back-propagation of the reward. An assignment
/// is evaluated at most once. Deterministic for a fixed seed when the
/// evaluator is.
///
/// In detail (docs/Tuning.md): from the root, a node with an unexpanded
/// child that still has unevaluated assignments below it expands the one
/// with the highest PUCT score (its highest prior); otherwise the search
/// follows argmax Q + c * P * sqrt(N(parent)) / (1 + N(child)) among
/// children with unevaluated assignments, lowest index on ties. The
/// proposer is asked once per tree node (when it is created) and once per
/// deeper decision of a simulation; rollouts draw only among choices with
/// unevaluated assignments below them. Stops at budget.trials, when
/// budget.seconds > 0 has passed (checked before each evaluation), or when
/// every assignment has been evaluated.
SearchHistory runMcts(const SearchSpace &space, Evaluator &evaluator,
                      Proposer &proposer, const SearchBudget &budget,
                      const SearchOptions &options);

/// Baselines for the ablation: uniform random assignments, and the grid in
/// lexicographic order, both without repeats and with the same budget.
SearchHistory runRandomSearch(const SearchSpace &space, Evaluator &evaluator,
                              const SearchBudget &budget,
                              const SearchOptions &options);
SearchHistory runGridSearch(const SearchSpace &space, Evaluator &evaluator,
                            const SearchBudget &budget,
                            const SearchOptions &options);

/// The finalists' re-measurement: one measurement per trial is at the
/// mercy of the machine's noise (±10-30% on a shared VM), so the search's
/// best is often a lucky draw. The finalists are the `baseline`'s trial
/// (the model's config; when given and it succeeded) and the `count`
/// fastest other successful trials, one per config.
///
/// With `sideBySideRounds` > 0 they are first timed side by side
/// (Evaluator::compare, the baseline first): the one with the highest
/// median speedup over the first wins, the first on a tie, so a config
/// must beat the model's in the same rounds to replace it. Where the
/// evaluator cannot compare, they are evaluated `rounds` more times each,
/// interleaved (all of them once, then again); a finalist that fails any
/// re-evaluation is out, and the highest median over its measurements
/// (the trial's and the re-measurements) wins.
struct FinalistResult {
  int trialIndex = -1;              ///< into history.trials; -1: none succeeded
  double medianGflops = 0;          ///< the winner's median
  std::vector<double> samples;      ///< the winner's measurements, trial first
  int finalists = 0;                ///< distinct configs measured again
  int reevaluations = 0;            ///< evaluator calls made
  std::vector<std::string> dropped; ///< "config: failure" per finalist out
  bool sideBySide = false;          ///< decided by Evaluator::compare
  double speedup = 1; ///< side by side: the winner's over the first
};
FinalistResult remeasureFinalists(const SearchHistory &history,
                                  Evaluator &evaluator, int count, int rounds,
                                  const GemmConfig *baseline = nullptr,
                                  int sideBySideRounds = 0);

} // namespace qimeng

#endif // QIMENG_TUNE_SEARCH_H
