//===- LlmProposer.cpp - An LLM proposes the tuner's moves ----------------===//
#include "qimeng/Tune/LlmProposer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <nlohmann/json.hpp>

using namespace qimeng;
using json = nlohmann::json;

std::string LlmProposer::prompt(const SearchSpace &space,
                                const SearchHistory &history) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const GemmDesc &d = space.desc();
  os << "You tune a generated x86-64 SGEMM kernel (C += A * B, row-major, M="
     << d.m << " N=" << d.n << " K=" << d.k << ") on the machine it runs on. "
     << (space.product() == Product::Transposed
             ? "It computes C^T = B^T * A^T for a caller's C with M and N "
               "swapped: the blocking is this problem's. "
             : "")
     << "Each candidate is one choice per decision:\n";
  for (const Decision &dec : space.decisions()) {
    os << "- " << dec.key << ": ";
    for (size_t i = 0; i < dec.choices.size(); ++i)
      os << (i ? ", " : "") << dec.choices[i];
    os << " (model's choice " << dec.choices[dec.modelChoice] << ")\n";
  }
  os << "Measured so far (description: result):\n";
  size_t from = history.trials.size() > 40 ? history.trials.size() - 40 : 0;
  for (size_t i = from; i < history.trials.size(); ++i) {
    const Trial &t = history.trials[i];
    os << t.description << ": "
       << (t.result.ok ? llvm::formatv("{0:F1} GFLOPS", t.result.gflops).str()
                       : "failed (" + t.result.failure + ")")
       << "\n";
  }
  if (const Trial *best = history.best())
    os << "Best so far: " << best->description << "\n";
  os << "Propose up to 8 moves likely to be faster, each a change to the best "
        "configuration so far, as JSON only: {\"candidates\": [\"kc=384\", "
        "{\"block\": \"14x32\", \"order\": \"pipelined\"}]}. Use only the "
        "decisions and values listed above.\n";
  return text;
}

/// The first '{' to the last '}' of `reply`, which may hold prose or code
/// fences around the JSON.
static llvm::StringRef jsonPart(llvm::StringRef reply) {
  size_t open = reply.find('{');
  size_t close = reply.rfind('}');
  if (open == llvm::StringRef::npos || close == llvm::StringRef::npos ||
      close < open)
    return "";
  return reply.slice(open, close + 1);
}

/// Applies key=value to `a`; a reason when the key or value is not in the
/// space.
static std::optional<std::string> applyMove(const SearchSpace &space,
                                            llvm::StringRef key,
                                            llvm::StringRef value,
                                            Assignment &a) {
  const auto &decisions = space.decisions();
  for (size_t i = 0; i < decisions.size(); ++i) {
    if (decisions[i].key != key)
      continue;
    const auto &choices = decisions[i].choices;
    for (size_t c = 0; c < choices.size(); ++c)
      if (choices[c] == value) {
        a[i] = static_cast<int>(c);
        return std::nullopt;
      }
    return (key + "=" + value + ": not a choice of " + key).str();
  }
  return (key + "=" + value + ": no decision named " + key).str();
}

llvm::Expected<std::vector<Assignment>>
LlmProposer::parseReply(llvm::StringRef reply, const SearchSpace &space,
                        const Assignment &start,
                        std::vector<std::string> &rejected) {
  json j = json::parse(jsonPart(reply).str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return llvm::createStringError("the reply holds no JSON object");
  auto list = j.find("candidates");
  if (list == j.end() || !list->is_array())
    return llvm::createStringError("the reply has no \"candidates\" array");
  std::vector<Assignment> out;
  for (const json &move : *list) {
    Assignment a = start;
    std::optional<std::string> why;
    if (move.is_string()) {
      llvm::SmallVector<llvm::StringRef> items;
      llvm::StringRef(move.get_ref<const std::string &>())
          .split(items, ',', -1, false);
      for (llvm::StringRef item : items) {
        auto [key, value] = item.trim().split('=');
        if (value.empty()) {
          why = (item.trim() + ": not key=value").str();
          break;
        }
        if ((why = applyMove(space, key.trim(), value.trim(), a)))
          break;
      }
    } else if (move.is_object()) {
      for (auto it = move.begin(); it != move.end() && !why; ++it) {
        std::string value;
        if (it->is_string())
          value = it->get<std::string>();
        else if (it->is_number_integer())
          value = std::to_string(it->get<int64_t>());
        else {
          why = it.key() + ": value is not a string or an integer";
          break;
        }
        why = applyMove(space, it.key(), value, a);
      }
    } else {
      why = "a move is neither a string nor an object";
    }
    if (why) {
      rejected.push_back(*why);
      continue;
    }
    // Masked out too: moves whose choices do not combine.
    auto config = space.configFor(a);
    if (!config) {
      rejected.push_back(space.describe(a) + ": " +
                         llvm::toString(config.takeError()));
      continue;
    }
    out.push_back(std::move(a));
  }
  return out;
}

void LlmProposer::ask(const SearchSpace &space, const SearchHistory &history) {
  ProposalRound round;
  round.trialsSeen = static_cast<int>(history.trials.size());
  const Trial *best = history.best();
  Assignment start = best ? best->assignment : space.modelAssignment();
  auto reply = client.complete(
      {{"system", "You are an expert in high-performance GEMM kernels. "
                  "Answer with JSON only."},
       {"user", prompt(space, history)}});
  if (!reply) {
    round.error = llvm::toString(reply.takeError());
  } else {
    round.reply = *reply;
    auto parsed = parseReply(*reply, space, start, round.rejected);
    if (!parsed)
      round.error = llvm::toString(parsed.takeError());
    else
      round.accepted = std::move(*parsed);
  }
  // An unusable round keeps the previous proposals (none at first): the
  // fallback's priors then decide.
  if (round.error.empty())
    proposals = round.accepted;
  rounds_.push_back(std::move(round));
}

std::vector<double> LlmProposer::priors(const SearchSpace &space,
                                        const Assignment &prefix,
                                        const SearchHistory &history) {
  if (history.trials.size() >= nextAsk) {
    ask(space, history);
    nextAsk = history.trials.size() + static_cast<size_t>(batch);
  }
  std::vector<double> base = fallback.priors(space, prefix, history);
  const auto &decisions = space.decisions();
  if (prefix.size() >= decisions.size() || base.empty())
    return base;
  size_t depth = prefix.size();
  std::vector<double> votes(decisions[depth].choices.size(), 0.0);
  double total = 0;
  for (const Assignment &p : proposals) {
    if (!std::equal(prefix.begin(), prefix.end(), p.begin()))
      continue;
    votes[static_cast<size_t>(p[depth])] += 1;
    total += 1;
  }
  if (total == 0 || votes.size() != base.size())
    return base;
  double sum = 0;
  for (double b : base)
    sum += b;
  std::vector<double> mixed(base.size());
  for (size_t i = 0; i < base.size(); ++i)
    mixed[i] = (1 - weight) * (sum > 0 ? base[i] / sum : 0) +
               weight * votes[i] / total;
  return mixed;
}
