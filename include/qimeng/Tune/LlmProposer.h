//===- LlmProposer.h - An LLM proposes the tuner's moves --------*- C++ -*-===//
//
// The paper's third stage: LLM-assisted MCTS. Every `batch` trials the
// proposer shows the LLM the search space and the history (configs,
// measured GFLOPS, failure reasons) and asks for candidate moves: changes
// to the best configuration so far ("kc=384", {"block": "14x32", "order":
// "pipelined"}). Moves that name an unknown decision or a value the space
// does not hold are masked out (with the reason kept); the valid ones turn
// into priors for MCTS, mixed with the fallback proposer's. A reply that
// cannot be used (no JSON, no candidates, a transport error) leaves the
// fallback's priors unchanged for that batch: the LLM can steer the search
// but never break it.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TUNE_LLMPROPOSER_H
#define QIMENG_TUNE_LLMPROPOSER_H

#include "qimeng/LLM/ChatClient.h"
#include "qimeng/Tune/Search.h"
#include <string>
#include <vector>

namespace qimeng {

/// One exchange with the LLM, for the record (transcripts, reports).
struct ProposalRound {
  int trialsSeen = 0;                ///< history length when asked
  std::string reply;                 ///< the reply text, or empty
  std::string error;                 ///< why the reply was unusable
  std::vector<Assignment> accepted;  ///< moves turned into assignments
  std::vector<std::string> rejected; ///< "kc=7: not a choice of kc"
};

class LlmProposer : public Proposer {
public:
  /// `weight`: the share of the priors the LLM's moves get (0..1).
  LlmProposer(ChatClient &client, Proposer &fallback, int batch = 8,
              double weight = 0.5)
      : client(client), fallback(fallback), batch(batch < 1 ? 1 : batch),
        weight(weight) {}

  std::vector<double> priors(const SearchSpace &space, const Assignment &prefix,
                             const SearchHistory &history) override;

  const std::vector<ProposalRound> &rounds() const { return rounds_; }

  /// The prompt for `space` and `history` (tests, transcripts).
  static std::string prompt(const SearchSpace &space,
                            const SearchHistory &history);

  /// Parses a reply into assignments: moves applied to `start`, each move
  /// an object {"key": "value"} or a string "key=value,key=value" inside
  /// {"candidates": [...]} (a JSON object anywhere in the text, code fences
  /// allowed). Invalid moves go to `rejected`. An error when the reply has
  /// no such object.
  static llvm::Expected<std::vector<Assignment>>
  parseReply(llvm::StringRef reply, const SearchSpace &space,
             const Assignment &start, std::vector<std::string> &rejected);

private:
  void ask(const SearchSpace &space, const SearchHistory &history);

  ChatClient &client;
  Proposer &fallback;
  int batch;
  double weight;
  size_t nextAsk = 0;
  std::vector<Assignment> proposals;
  std::vector<ProposalRound> rounds_;
};

} // namespace qimeng

#endif // QIMENG_TUNE_LLMPROPOSER_H
