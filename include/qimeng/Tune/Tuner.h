//===- Tuner.h - Tune one kernel into the database -----------------*- C++
//-*-===//
//
// Ties the stages together for one GEMM or convolution: the search space around
// the analytical config, MCTS with the built-in priors, the qimeng-runner
// evaluator, and a TuningRecord for the winner. Used by the pass
// (tune-budget=N), qimeng-tune and qimeng-bench --tuned.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TUNE_TUNER_H
#define QIMENG_TUNE_TUNER_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/LLM/ChatClient.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Tune/LlmProposer.h"
#include "qimeng/Tune/Search.h"
#include "qimeng/Tune/TuningDatabase.h"
#include <functional>
#include <string>

namespace qimeng {

struct TuneRequest {
  KernelProblem problem; ///< a GemmDesc or a ConvDesc
  Target target;
  GemmConfig base; ///< the analytical (or pinned) starting point
  SearchBudget budget;
  uint64_t seed = 1;
  int timedRuns = 7;
  /// After the search, the base's config and the `finalists` fastest others
  /// are timed side by side for `sideBySideRounds` rounds in one
  /// qimeng-runner process, and the fastest relative to the base wins (the
  /// base on a tie); where that fails, each is evaluated `finalistRounds`
  /// more times and the best median wins (remeasureFinalists). finalists
  /// 0, or no rounds of either: the search's best as measured.
  int finalists = 3;
  int finalistRounds = 2;
  int sideBySideRounds = 15;
  EmitterOptions emitter;
  IsolatedValidationOptions runner;
  /// One line per trial ("trial 3/16: 121.4 GFLOPS, best 130.2 ..."); may
  /// be empty.
  std::function<void(const std::string &)> progress;
  /// When set, an LlmProposer asks this client for moves every few trials,
  /// on top of the built-in priors (docs/LLM.md); the record's source is
  /// then "llm-assisted".
  ChatClient *llm = nullptr;
};

struct TuneResult {
  TuningRecord record;  ///< the winner, ready to store
  EmittedKernel kernel; ///< its emitted text (record.kernelText)
  SearchHistory history;
  /// The LLM's rounds (replies, accepted and rejected moves), if it was
  /// asked.
  std::vector<ProposalRound> llmRounds;
};

/// Runs the search. Error when the evaluator cannot start (no runner, no
/// peak) or when no candidate validated.
llvm::Expected<TuneResult> tuneKernel(const TuneRequest &request);

/// The database key for `problem` on `target` with the emitters in
/// `emitter` and `threads` threads.
llvm::Expected<TuningKey> tuningKey(const KernelProblem &problem,
                                    const Target &target,
                                    const EmitterOptions &emitter, int threads);

} // namespace qimeng

#endif // QIMENG_TUNE_TUNER_H
