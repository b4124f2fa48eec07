//===- qimeng-tune.cpp - Tune shapes ahead of time into the database ------===//
//
// For each shape: Monte Carlo tree search over the kernel's sketch
// parameters from the analytical config, every candidate emitted, validated,
// timed and validated again in qimeng-runner; the winner goes into the
// tuning database, where --qimeng-tensorop and qimeng-bench --tuned find it.
//
//===----------------------------------------------------------------------===//
#include "LlmFlags.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/Partition.h"
#include "qimeng/Support/CommandLine.h"
#include "qimeng/Tune/RunnerEvaluator.h"
#include "qimeng/Tune/Tuner.h"
#include "qimeng/Tune/TuningDatabase.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <chrono>

using namespace qimeng;
namespace cl = llvm::cl;

static cl::OptionCategory tuneCategory("qimeng-tune options");
static cl::opt<std::string>
    shapesOpt("shapes", cl::desc("Comma-separated MxNxK shapes to tune"),
              cl::Required, cl::cat(tuneCategory));
static cl::opt<std::string>
    transOpt("transpose", cl::desc("Operand layout: nn, nt, tn or tt"),
             cl::init("nn"), cl::cat(tuneCategory));
static cl::opt<std::string> dtypeOpt(
    "dtype",
    cl::desc("Operand types: f32, bf16 (bf16 A and B, f32 C), f16 (f16 A "
             "and B, f32 C), s8 (s8 A and B, s32 C) or u8s8 (u8 A); bf16 and "
             "8-bit need AVX512-BF16 or AVX512-VNNI (AMX where the host has "
             "it), f16 AVX-512 (AMX-BF16's tiles where the host has them)"),
    cl::init("f32"), cl::cat(tuneCategory));
static cl::opt<bool> bPrepackedOpt(
    "b-prepacked",
    cl::desc("Tune the form that takes B packed once by its caller (_bpre: "
             "what the pass embeds for constant weights, "
             "pack-constant-weights); f32, bf16 and 8-bit, static sizes. The "
             "GEMM's forms share one entry (docs/TuningDatabase.md): the "
             "others take its blocking"),
    cl::init(false), cl::cat(tuneCategory));
static cl::opt<unsigned> budgetOpt("budget",
                                   cl::desc("Candidate trials per shape"),
                                   cl::init(32), cl::cat(tuneCategory));
static cl::opt<unsigned>
    secondsOpt("seconds",
               cl::desc("Wall-clock limit per shape in seconds (0: none)"),
               cl::init(0), cl::cat(tuneCategory));
static cl::opt<unsigned> threadsOpt(
    "thread-count",
    cl::desc("Threads of the tuned kernel (0: all cores; also --threads)"),
    cl::init(1), cl::cat(tuneCategory));
static cl::opt<unsigned> seedOpt("seed", cl::desc("Search seed"), cl::init(1),
                                 cl::cat(tuneCategory));
static cl::opt<std::string> cacheDirOpt(
    "cache-dir",
    cl::desc("Tuning database (default: QIMENG_CACHE_DIR, then "
             "$XDG_CACHE_HOME/qimeng-tensorop, then ~/.cache/qimeng-tensorop)"),
    cl::init(""), cl::cat(tuneCategory));
static cl::opt<bool> forceOpt("force",
                              cl::desc("Tune even when the database has an "
                                       "entry, and replace it"),
                              cl::init(false), cl::cat(tuneCategory));
static cl::opt<bool> quietOpt("quiet", cl::desc("No per-trial progress"),
                              cl::init(false), cl::cat(tuneCategory));
static cl::opt<bool> ablationOpt(
    "ablation",
    cl::desc("Instead of tuning into the database, run MCTS, random search "
             "and grid search with the same budget and evaluator and print "
             "the best GFLOPS found after each trial (nothing is stored)"),
    cl::init(false), cl::cat(tuneCategory));

static cl::opt<std::string> llmReplayOpt(
    "llm-replay",
    cl::desc("Play a recorded transcript's replies back in order instead of "
             "calling the endpoint (no network; prompts may differ, as they "
             "hold this run's measurements)"),
    cl::init(""), cl::cat(llmflags::category));

/// Best GFLOPS found after each trial of a history (0 before any success).
static std::vector<double> bestCurve(const SearchHistory &h, size_t length) {
  std::vector<double> curve;
  double best = 0;
  for (size_t i = 0; i < length; ++i) {
    if (i < h.trials.size() && h.trials[i].result.ok)
      best = std::max(best, h.trials[i].result.gflops);
    curve.push_back(best);
  }
  return curve;
}

/// The ablation of the paper's search: MCTS against random and grid search
/// at equal budgets, on the same space and evaluator.
static void runAblation(const GemmDesc &desc, const Target &host,
                        const GemmConfig &base, const EmitterOptions &emitter,
                        llvm::ExitOnError &exitOnErr) {
  auto evaluator = exitOnErr(RunnerEvaluator::create(
      desc, host, emitter, IsolatedValidationOptions::defaults()));
  SearchSpace space = SearchSpace::forGemm(desc, host, base);
  SearchBudget budget;
  budget.trials = budgetOpt;
  budget.seconds = secondsOpt;
  SearchOptions options;
  options.seed = seedOpt;
  ModelPriorProposer proposer;
  auto timed = [&](const char *name, auto &&run) {
    auto t0 = std::chrono::steady_clock::now();
    SearchHistory h = run();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    llvm::errs() << llvm::formatv("qimeng-tune: ablation {0}: {1} trials in "
                                  "{2:F1} s\n",
                                  name, h.trials.size(), s);
    return h;
  };
  SearchHistory mcts = timed("mcts", [&] {
    return runMcts(space, *evaluator, proposer, budget, options);
  });
  SearchHistory random = timed("random", [&] {
    return runRandomSearch(space, *evaluator, budget, options);
  });
  SearchHistory grid = timed("grid", [&] {
    return runGridSearch(space, *evaluator, budget, options);
  });
  size_t length =
      std::max({mcts.trials.size(), random.trials.size(), grid.trials.size()});
  std::vector<double> m = bestCurve(mcts, length),
                      r = bestCurve(random, length),
                      g = bestCurve(grid, length);
  llvm::outs() << llvm::formatv(
      "ablation sgemm {0}x{1}x{2}: best GFLOPS found after each trial (space "
      "of {3} assignments, seed {4})\n",
      desc.m, desc.n, desc.k, space.size(), unsigned(seedOpt));
  llvm::outs() << llvm::formatv("{0,6} {1,10} {2,10} {3,10}\n", "trial", "mcts",
                                "random", "grid");
  for (size_t i = 0; i < length; ++i)
    llvm::outs() << llvm::formatv("{0,6} {1,10:F1} {2,10:F1} {3,10:F1}\n",
                                  i + 1, m[i], r[i], g[i]);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  RenamedArgs renamed(argc, argv, "threads", "thread-count");
  argc = renamed.argc();
  argv = renamed.argv();
  cl::HideUnrelatedOptions({&tuneCategory, &llmflags::category});
  cl::ParseCommandLineOptions(
      argc, argv,
      "qimeng-tune: tunes SGEMM shapes ahead of time into the tuning "
      "database\n\nProgress (trials done, best so far) goes to stderr; one "
      "summary line per shape to\nstdout.\n");
  llvm::ExitOnError exitOnErr("qimeng-tune: ");
  std::string trans = transOpt;
  if (trans != "nn" && trans != "nt" && trans != "tn" && trans != "tt")
    exitOnErr(llvm::createStringError("--transpose must be nn, nt, tn or tt"));
  if (budgetOpt == 0)
    exitOnErr(llvm::createStringError("--budget must be at least 1"));
  std::optional<GemmPrecision> precision = parsePrecision(
      dtypeOpt == "s8" ? std::string("s8s8") : std::string(dtypeOpt));
  if (!precision)
    exitOnErr(llvm::createStringError("unsupported --dtype '" + dtypeOpt +
                                      "'; expected f32, bf16, f16, s8 or "
                                      "u8s8"));
  TuningDatabase db =
      exitOnErr(TuningDatabase::open(resolveCacheDir(cacheDirOpt)));

  // The LLM, when configured (flags over QIMENG_LLM_*). A tuning
  // session's prompts hold its measurements: a replay plays the recorded
  // replies in order.
  ChatConfig llmConfig = llmflags::config();
  std::unique_ptr<LlmSession> session;
  if (!llmConfig.baseUrl.empty() || !llmReplayOpt.empty())
    session = exitOnErr(
        LlmSession::open(llmConfig, llmflags::transcript, llmReplayOpt));
  ChatClient *llm = session ? &session->client() : nullptr;
  Target host = Target::detectHost();
  EmitterOptions emitter = EmitterOptions::defaults();

  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(shapesOpt).split(items, ',', -1, false);
  for (llvm::StringRef item : items) {
    llvm::SmallVector<llvm::StringRef> dims;
    item.trim().split(dims, 'x');
    int64_t m = 0, n = 0, k = 0;
    if (dims.size() != 3 || dims[0].getAsInteger(10, m) ||
        dims[1].getAsInteger(10, n) || dims[2].getAsInteger(10, k))
      exitOnErr(llvm::createStringError("bad shape '" + item.str() +
                                        "'; expected MxNxK"));
    GemmDesc desc = GemmDesc::packed(m, n, k, trans[0] == 't', trans[1] == 't');
    desc.precision = *precision;
    desc.bPrepacked = bPrepackedOpt;
    const int threads = threadsOpt == 0 ? host.cores : int(threadsOpt);
    GemmConfig base = exitOnErr(chooseGemmConfig(desc, host, threads));
    base.threads = partitionedThreads(desc, base, threads);
    TuningKey key = exitOnErr(tuningKey(desc, host, emitter, base.threads));
    if (ablationOpt) {
      runAblation(desc, host, base, emitter, exitOnErr);
      continue;
    }
    std::vector<std::string> warnings;
    std::optional<TuningRecord> existing = db.lookup(key, warnings);
    for (const std::string &w : warnings)
      llvm::WithColor::warning(llvm::errs(), "qimeng-tune") << w << "\n";
    if (existing && !forceOpt) {
      llvm::outs() << llvm::formatv(
          "{0}: in the database ({1:F1} GFLOPS, {2} trials, {3}); --force "
          "retunes\n",
          item.trim(), existing->medianGflops, existing->trials,
          existing->config.str());
      continue;
    }
    TuneRequest request;
    request.problem = desc;
    request.target = host;
    request.base = base;
    request.budget.trials = budgetOpt;
    request.budget.seconds = secondsOpt;
    request.seed = seedOpt;
    request.emitter = emitter;
    request.runner = IsolatedValidationOptions::defaults();
    request.llm = llm;
    if (!quietOpt)
      request.progress = [](const std::string &line) {
        llvm::errs() << "qimeng-tune: " << line << "\n";
      };
    TuneResult result = exitOnErr(tuneKernel(request));
    exitOnErr(db.store(result.record));
    // The session's transcript so far, beside the record it produced.
    if (llm && !llmflags::transcript.empty())
      if (auto text = llvm::MemoryBuffer::getFile(llmflags::transcript))
        exitOnErr(db.storeTranscript(result.record.key, (*text)->getBuffer()));
    if (llm) {
      size_t accepted = 0, rejected = 0, unusable = 0;
      std::string firstError;
      for (const ProposalRound &r : result.llmRounds) {
        accepted += r.accepted.size();
        rejected += r.rejected.size();
        if (!r.error.empty()) {
          ++unusable;
          if (firstError.empty())
            firstError = r.error;
        }
      }
      llvm::errs() << llvm::formatv(
          "qimeng-tune: LLM: {0} round(s), {1} move(s) used, {2} masked, {3} "
          "unusable round(s){4}\n",
          result.llmRounds.size(), accepted, rejected, unusable,
          firstError.empty() ? std::string() : " (first: " + firstError + ")");
    }
    const Trial *first = result.history.trials.empty()
                             ? nullptr
                             : &result.history.trials.front();
    // How soon the search came within 5% of what it found: the first
    // trial at or above 95% of the best, and the seconds it had taken.
    const Trial *near = nullptr;
    for (const Trial &t : result.history.trials)
      if (t.result.ok && t.result.gflops >= 0.95 * result.record.medianGflops) {
        near = &t;
        break;
      }
    llvm::outs() << llvm::formatv(
        "{0}: {1:F1} GFLOPS ({2:F1}% of {3:F1} peak) after {4} trials ({8:F1} "
        "s; within 5% of it at trial {9}, {10:F1} s); the analytical config "
        "gave {5}; stored {6} ({7})\n",
        item.trim(), result.record.medianGflops,
        100 * result.record.fractionOfPeak, result.record.peakGflops,
        result.record.trials,
        first && first->result.ok
            ? llvm::formatv("{0:F1}", first->result.gflops).str()
            : std::string("no result"),
        key.hash().substr(0, 12), result.record.config.str(),
        result.history.trials.empty()
            ? 0.0
            : result.history.trials.back().elapsedSeconds,
        near ? near->index + 1 : 0, near ? near->elapsedSeconds : 0.0);
  }
  return 0;
}
