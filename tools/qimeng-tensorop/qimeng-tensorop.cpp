//===- qimeng-tensorop.cpp - One sentence in, a tuned kernel out ----------===//
//
// The paper's interface: "generate a 512x512x512 fp32 GEMM for this CPU".
// The sentence becomes a task (the LLM reads it when one is configured,
// the built-in parser otherwise, and whatever the LLM says is checked like
// the parser's result); the task is tuned on this machine (MCTS, every
// candidate validated and timed in qimeng-runner, the LLM proposing moves
// when configured); the winner is validated again, timed against OpenBLAS
// side by side, and written out as assembly, an object file and a C header.
//
//===----------------------------------------------------------------------===//
#include "GenerateCuda.h"
#include "LlmFlags.h"
#include "qimeng/Emit/Assembler.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/Partition.h"
#include "qimeng/LLM/ChatClient.h"
#include "qimeng/LLM/HardwareComprehension.h"
#include "qimeng/LLM/HttpTransport.h"
#include "qimeng/LLM/TaskPrompt.h"
#include "qimeng/Runtime/Benchmark.h"
#include "qimeng/Runtime/ConvValidator.h"
#include "qimeng/Runtime/CrossValidation.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Runtime/JitKernel.h"
#include "qimeng/Runtime/PeerKernels.h"
#include "qimeng/Runtime/RunnerService.h"
#include "qimeng/Support/CommandLine.h"
#include "qimeng/Tune/LlmEmitter.h"
#include "qimeng/Tune/ModelEvaluator.h"
#include "qimeng/Tune/Tuner.h"
#include "qimeng/Tune/TuningDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include <cblas.h>
#include <nlohmann/json.hpp>
#include <random>

using namespace qimeng;
namespace cl = llvm::cl;

static cl::OptionCategory category("qimeng-tensorop options");
static cl::opt<std::string> promptOpt(cl::Positional, cl::Required,
                                      cl::desc("\"<one-line prompt>\""),
                                      cl::cat(category));
static cl::opt<std::string>
    outOpt("o",
           cl::desc("Directory for the kernel's files (default "
                    "qimeng-out)"),
           cl::value_desc("DIR"), cl::init("qimeng-out"), cl::cat(category));
static cl::opt<bool> jsonOpt("json",
                             cl::desc("Print the report as one JSON "
                                      "object"),
                             cl::init(false), cl::cat(category));
static cl::opt<unsigned> budgetOpt("budget",
                                   cl::desc("Tuning trials (default 24)"),
                                   cl::init(24), cl::cat(category));
static cl::opt<unsigned> secondsOpt("seconds",
                                    cl::desc("Tuning time limit in seconds "
                                             "(default 0: none)"),
                                    cl::init(0), cl::cat(category));
static cl::opt<unsigned>
    threadsOpt("thread-count",
               cl::desc("Threads of the kernel (default 1; also --threads)"),
               cl::init(1), cl::cat(category));
static cl::opt<std::string> cacheDirOpt(
    "cache-dir",
    cl::desc("Tuning database (default: QIMENG_CACHE_DIR, then the XDG cache "
             "directory)"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> remoteOpt(
    "remote",
    cl::desc("For a machine named in the prompt: run the cross runner on "
             "this board over ssh (user@host) instead of qemu, time the "
             "model's three best there and keep the fastest"),
    cl::value_desc("DEST"), cl::init(""), cl::cat(category));
static cl::list<std::string>
    sshOptionOpt("ssh-option",
                 cl::desc("An argument for ssh with --remote (repeat: "
                          "--ssh-option=-p --ssh-option=2222)"),
                 cl::cat(category));
static cl::opt<std::string>
    remoteRunnerOpt("remote-runner",
                    cl::desc("The runner's command on the board (default "
                             "qimeng-cross-runner-<arch> on its PATH)"),
                    cl::init(""), cl::cat(category));
static cl::opt<std::string> manualOpt(
    "manual",
    cl::desc("A text file with an excerpt of the CPU's manual, given to the "
             "LLM with the detected target (stage 1)"),
    cl::init(""), cl::cat(category));

// Read before llvm::cl parses (selectOpenBlasCore runs first).
static cl::opt<bool> baselineAsDetectedOpt(
    "baseline-as-detected",
    cl::desc("Time OpenBLAS with the kernels it picks by itself, even where "
             "this CPU's features allow better ones (by default its best, "
             "set with OPENBLAS_CORETYPE in this tool's own environment)"),
    cl::init(false), cl::cat(category));

static cl::opt<bool> ablationOpt(
    "ablation",
    cl::desc("With an LLM: the paper's ablation for a GEMM. A vanilla "
             "prompt (the kernel asked for directly, one round), hints only "
             "(stage 1's hints, one round) and the full pipeline (stage 1, "
             "the LLM's emitter with repair rounds, and tuning with the "
             "LLM's moves), each validated and timed the same way"),
    cl::init(false), cl::cat(category));

/// The C header for a kernel: its signature, workspace and contract.
static std::string headerText(const Task &task, const EmittedKernel &k,
                              const GemmConfig &config,
                              llvm::StringRef validatedWhere) {
  std::string guard = llvm::StringRef(k.symbol).upper() + "_H";
  std::string wsName = llvm::StringRef(k.symbol).upper() + "_WORKSPACE_BYTES";
  bool conv = task.problem.conv() != nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* " << k.symbol << ": generated by QiMeng-TensorOp for " << task.shape
     << " (" << (conv ? "conv2d" : "sgemm") << ", f32), validated "
     << validatedWhere << ".\n"
     << " * Config: " << config.str() << "\n"
     << (conv ? " * out += conv(in, filter); arguments (input, filter, "
                "output, workspace).\n"
         : k.runtimeLeadingDims
             ? " * C += A * B, row-major; arguments (A, B, C, workspace), "
               "lda, ldb, ldc\n * (elements, int64) at workspace byte offset "
               "64.\n"
             : " * C += A * B, row-major, leading dimensions baked in; "
               "arguments (A, B, C, workspace).\n")
     << " * The workspace is 64-byte aligned and at least " << wsName
     << " bytes long; docs/KernelContract.md.";
  if (config.threads > 1)
    os << "\n * Parallel form: call once per part of C with its range at "
          "workspace offset 24 (docs/KernelContract.md, Parallel form).";
  os << " */\n#ifndef " << guard << "\n#define " << guard
     << "\n#include <stddef.h>\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
     << "enum { " << wsName << " = " << k.workspaceBytes << " };\n"
     << "void " << k.symbol
     << (conv ? "(const float *input, const float *filter, float *output, "
                "void *workspace);\n"
              : "(const float *a, const float *b, float *c, "
                "void *workspace);\n")
     << "#ifdef __cplusplus\n}\n#endif\n#endif\n";
  return text;
}

llvm::Error qimeng::writeFile(const std::string &path, llvm::StringRef data) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec)
    return llvm::createStringError("cannot write " + path + ": " +
                                   ec.message());
  out << data;
  return llvm::Error::success();
}

/// The kernel's files in the output directory: <symbol>.s, the object
/// assembled for `target`, and the C header with `header`.
struct KernelFiles {
  std::string assembly, object, header;
};
static llvm::Expected<KernelFiles> writeKernelFiles(const EmittedKernel &kernel,
                                                    const Target &target,
                                                    llvm::StringRef header) {
  std::string stem = outOpt + "/" + kernel.symbol;
  KernelFiles files{stem + ".s", stem + ".o", stem + ".h"};
  if (auto err = writeFile(files.assembly, kernel.text))
    return std::move(err);
  auto object = assembleToObject(kernel.text, target, kernel.symbol + ".s");
  if (!object)
    return object.takeError();
  if (auto err = writeFile(files.object, (*object)->getBuffer()))
    return std::move(err);
  if (auto err = writeFile(files.header, header))
    return std::move(err);
  return files;
}

/// Tuning as the flags say (--budget, --seconds), with `llm` proposing
/// moves when not null.
static TuneRequest tuneRequest(const KernelProblem &problem, const Target &host,
                               const GemmConfig &base,
                               const EmitterOptions &emitter,
                               const IsolatedValidationOptions &runner,
                               ChatClient *llm) {
  TuneRequest request;
  request.problem = problem;
  request.target = host;
  request.base = base;
  request.budget.trials = budgetOpt;
  request.budget.seconds = secondsOpt;
  request.emitter = emitter;
  request.runner = runner;
  request.llm = llm;
  return request;
}

/// One row of the ablation.
struct AblationRow {
  std::string variant;
  bool validated = false;
  double gflops = 0;
  int rounds = 0;
  std::string failure;
};

/// The ablation (docs/LLM.md): the same validator and timing for each way
/// of asking.
static int runAblation(ChatClient &llm, const Task &task, const Target &host,
                       const GemmConfig &base, const EmitterOptions &emitter,
                       const IsolatedValidationOptions &runner, bool json) {
  const GemmDesc &desc = task.problem.gemm();
  std::vector<AblationRow> rows;
  auto timeAuthored = [&](AblationRow &row,
                          llvm::Expected<AuthoredKernel> authored) {
    if (!authored) {
      row.failure = llvm::toString(authored.takeError());
      return;
    }
    row.rounds = static_cast<int>(authored->rounds.size());
    auto timed = measureGemmIsolated(desc, host, authored->kernel, 7, runner);
    if (!timed) {
      row.failure = llvm::toString(timed.takeError());
      return;
    }
    row.validated = timed->validation.passed;
    row.gflops = timed->gflops;
    if (!row.validated)
      row.failure = timed->validation.failure;
  };
  // 1. Vanilla: the kernel asked for directly, one round.
  AuthoringOptions vanilla;
  vanilla.prompting = AuthoringOptions::Prompting::Vanilla;
  vanilla.maxRounds = 1;
  rows.push_back({"vanilla"});
  timeAuthored(rows.back(), authorGemmKernel(llm, desc, base, host, emitter,
                                             runner, vanilla));
  // 2. Hints only: stage 1's hints, one round.
  std::map<std::string, std::string> hints;
  if (auto hw = comprehendHardware(llm, host))
    hints = hw->merged.hints;
  else
    llvm::consumeError(hw.takeError());
  AuthoringOptions hinted;
  hinted.prompting = AuthoringOptions::Prompting::HintsOnly;
  hinted.maxRounds = 1;
  hinted.hints = hints;
  rows.push_back({"hints-only"});
  timeAuthored(rows.back(), authorGemmKernel(llm, desc, base, host, emitter,
                                             runner, hinted));
  // 3. The full pipeline: tuning with the LLM's moves, the LLM's emitter
  // with repair rounds; the faster validated kernel counts.
  rows.push_back({"full-pipeline"});
  AblationRow &full = rows.back();
  TuneRequest request = tuneRequest(desc, host, base, emitter, runner, &llm);
  if (auto tuned = tuneKernel(request)) {
    full.validated = true;
    full.gflops = tuned->record.medianGflops;
  } else {
    full.failure = llvm::toString(tuned.takeError());
  }
  AuthoringOptions piped;
  piped.hints = hints;
  AblationRow authoredRow;
  timeAuthored(authoredRow,
               authorGemmKernel(llm, desc, base, host, emitter, runner, piped));
  full.rounds = authoredRow.rounds;
  if (authoredRow.validated && authoredRow.gflops > full.gflops) {
    full.validated = true;
    full.gflops = authoredRow.gflops;
  }
  if (json) {
    nlohmann::json out = {{"op", "sgemm"},
                          {"shape", task.shape},
                          {"ablation", nlohmann::json::array()}};
    for (const AblationRow &r : rows) {
      nlohmann::json row = {{"variant", r.variant},
                            {"validated", r.validated},
                            {"gflops", r.gflops},
                            {"rounds", r.rounds}};
      if (!r.failure.empty())
        row["failure"] = r.failure;
      out["ablation"].push_back(row);
    }
    llvm::outs() << out.dump(2, ' ', false,
                             nlohmann::json::error_handler_t::replace)
                 << "\n";
  } else {
    llvm::outs() << "ablation, sgemm " << task.shape
                 << " (each kernel validated and timed in qimeng-runner):\n";
    for (const AblationRow &r : rows)
      llvm::outs() << llvm::formatv(
          "  {0,-14} {1,-9} {2,8:F1} GFLOPS  {3} round(s){4}\n", r.variant,
          r.validated ? "validated" : "failed", r.gflops, r.rounds,
          r.failure.empty() ? std::string() : "  (" + r.failure + ")");
  }
  return 0;
}

/// A machine we do not have (Task::target names one the static model
/// knows): every candidate register block generated for its ISA, validated
/// under qemu-user, ranked by llvm-mca's model of its core; the best written
/// out. Every speed figure is the model's and says so.
static int generateForModelledMachine(const Task &task,
                                      const std::string &parsedBy) {
  llvm::ExitOnError exitOnErr("qimeng-tensorop: ");
  Target target = exitOnErr(Target::parse(task.target));
  // A GEMM takes its leading dimensions at run time (the sketch's kernels
  // do); a convolution's geometry is immediate.
  KernelProblem problem = task.problem;
  const bool conv = problem.conv() != nullptr;
  if (!conv) {
    GemmDesc desc = problem.gemm();
    desc.runtimeLd = true;
    problem = KernelProblem(desc);
  }
  auto progress = [](const std::string &line) {
    if (!jsonOpt)
      llvm::errs() << "qimeng-tensorop: " << line << "\n";
  };
  CrossValidationOptions cross = CrossValidationOptions::defaults();
  const bool onBoard = !remoteOpt.empty();
  if (onBoard) {
    cross.remoteHost = remoteOpt;
    cross.sshOptions.assign(sshOptionOpt.begin(), sshOptionOpt.end());
    cross.remoteRunner = remoteRunnerOpt;
    cross.timedRuns = 9;
  }
  ModelRanking ranking = exitOnErr(rankByModel(
      problem, target, EmitterOptions::defaults(), cross,
      ModelOptions::defaults(), progress, /*validateBest=*/onBoard ? 3 : 1));
  if (ranking.validated.empty())
    exitOnErr(llvm::createStringError(
        ranking.predicted.empty()
            ? "no candidate could be generated and predicted (a K below the "
              "K unroll has no inner loop to model)"
            : "no predicted candidate passed validation: " +
                  llvm::join(ranking.failures, "; ")));
  // On a board the stopwatch decides among the model's best; else the
  // model alone.
  if (onBoard)
    std::stable_sort(ranking.validated.begin(), ranking.validated.end(),
                     [](const ModelCandidate &a, const ModelCandidate &b) {
                       return a.measuredNs < b.measuredNs;
                     });
  const ModelCandidate &best = ranking.validated.front();
  const double boardGflops = onBoard && best.measuredNs > 0
                                 ? task.problem.flops() / best.measuredNs
                                 : 0;
  const size_t ranked = ranking.predicted.size();
  const EmittedKernel &kernel = best.kernel;
  std::string where = (onBoard ? "on " : "under ") +
                      crossBackendName(target, cross) +
                      " (fp64 reference, three input distributions, guards)";

  KernelFiles files = exitOnErr(writeKernelFiles(
      kernel, target, headerText(task, kernel, best.config, where)));
  const std::string &asmPath = files.assembly, &objPath = files.object,
                    &hdrPath = files.header;

  const InnerLoopPrediction &p = best.prediction;
  double flopsPerCycle = task.problem.flops() / best.predictedCycles;
  // The same model on OpenBLAS's kernel for this core, where there is one:
  // its inner loop at the rate llvm-mca predicts, for the GEMM's flops.
  auto peer = predictOpenBlasInnerLoop(target);
  nlohmann::json peerJson = nullptr;
  std::string peerLine;
  if (peer) {
    const InnerLoopPrediction &q = peer->prediction;
    const double peerCycles =
        task.problem.flops() * q.cyclesPerIteration / q.flopsPerIteration;
    peerJson = {{"library", peer->library},
                {"symbol", peer->symbol},
                {"inner_loop_instructions", peer->instructions},
                {"inner_loop_cycles", q.cyclesPerIteration},
                {"inner_loop_flops", q.flopsPerIteration},
                {"predicted_pct_peak", 100 * q.fractionOfPeak()},
                {"predicted_cycles", peerCycles},
                {"ours_over_openblas", peerCycles / best.predictedCycles}};
    peerLine = llvm::formatv(
        "  MODEL side by side: OpenBLAS {0} ({1}), its K loop ({2} "
        "instructions) through the same model: {3:F1} cycles for {4:F0} "
        "flops, {5:F1}% of peak; the GEMM {6:E3} cycles at that rate; ours "
        "{7:F2}x (OpenBLAS's packing not modelled either)\n",
        peer->symbol, peer->library, peer->instructions, q.cyclesPerIteration,
        q.flopsPerIteration, 100 * q.fractionOfPeak(), peerCycles,
        peerCycles / best.predictedCycles);
  } else {
    peerLine = "  MODEL side by side: none (" +
               llvm::toString(peer.takeError()) + ")\n";
  }
  if (jsonOpt) {
    nlohmann::json out = {
        {"op", conv ? "conv2d" : "sgemm"},
        {"shape", task.shape},
        {"dtype", task.dtype},
        {"target", target.str()},
        {"validated", true},
        {"validated_under", where},
        {"kernel", kernel.symbol},
        {"config", best.config.str()},
        {"candidates_ranked", ranked},
        {"model",
         {{"kind", "llvm-mca, inner loop"},
          {"mca_cpu", p.mcaCpu},
          {"inner_loop_cycles", p.cyclesPerIteration},
          {"inner_loop_flops", p.flopsPerIteration},
          {"peak_flops_per_cycle", p.peakFlopsPerCycle},
          {"predicted_pct_peak", 100 * p.fractionOfPeak()},
          {"predicted_cycles", best.predictedCycles},
          {"predicted_flops_per_cycle", flopsPerCycle}}},
        {"openblas_model", peerJson},
        {"prompt_parsed_by", parsedBy},
        {"board_gflops", boardGflops},
        {"workspace_bytes", kernel.workspaceBytes},
        {"files",
         {{"assembly", asmPath}, {"object", objPath}, {"header", hdrPath}}}};
    llvm::outs() << out.dump(2, ' ', false,
                             nlohmann::json::error_handler_t::replace)
                 << "\n";
    return 0;
  }
  llvm::outs() << llvm::formatv(
      "{0} {1} (f32) for {2} ({3}), read by the {4} parser\n",
      conv ? "conv2d" : "sgemm", task.shape, target.cpu, target.triple,
      parsedBy == "llm" ? "LLM's" : "built-in");
  llvm::outs() << llvm::formatv("kernel {0}\n  config {1}, best of {2} "
                                "candidates ranked by the model\n",
                                kernel.symbol, best.config.str(), ranked);
  llvm::outs() << "  validated: yes, " << where << "\n";
  llvm::outs() << llvm::formatv(
      "  MODEL (llvm-mca {0}, not measured): inner loop {1:F1} cycles for "
      "{2:F0} flops, {3:F1}% of the core's {4:F0} flops/cycle; the {7} "
      "{5:E3} cycles at that rate ({6:F1} flops/cycle; memory, C updates "
      "and edge code not modelled)\n",
      p.mcaCpu, p.cyclesPerIteration, p.flopsPerIteration,
      100 * p.fractionOfPeak(), p.peakFlopsPerCycle, best.predictedCycles,
      flopsPerCycle, conv ? "convolution" : "GEMM");
  llvm::outs() << peerLine;
  if (onBoard)
    llvm::outs() << llvm::formatv(
        "  MEASURED on {0}: {1:F2} GFLOPS (median of 9 calls; the fastest "
        "of the model's {2} best)\n",
        remoteOpt, boardGflops, ranking.validated.size());
  llvm::outs() << "  files: " << asmPath << ", " << objPath << ", " << hdrPath
               << "\n";
  return 0;
}

int main(int argc, char **argv) {
  selectOpenBlasCore(argv, Target::detectHost(),
                     hasFlag(argc, argv, "baseline-as-detected"));
  llvm::InitLLVM init(argc, argv);
  RenamedArgs renamed(argc, argv, "threads", "thread-count");
  argc = renamed.argc();
  argv = renamed.argv();
  cl::HideUnrelatedOptions({&category, &llmflags::category});
  cl::ParseCommandLineOptions(
      argc, argv,
      "qimeng-tensorop: one sentence in, a tuned and validated kernel out\n\n"
      "  qimeng-tensorop \"generate a 512x512x512 fp32 GEMM for this CPU\"\n"
      "  qimeng-tensorop --json \"conv2d 1x58x58x64 to 64 filters 3x3\"\n\n"
      "The prompt names a GEMM (MxNxK) or a 2-D convolution (NxHxWxC "
      "padded input,\nfilters, KHxKW, stride, dilation, nhwc or nchw), "
      "fp32, for this machine, or for one the static model knows\n(\"for "
      "the SpacemiT K1\", \"for a Cortex-A76\": generated for its ISA, "
      "validated under\nqemu-user, ranked by llvm-mca's model of its core, "
      "figures labelled MODEL),\nor for an NVIDIA GPU (\"a 8192x8192x8192 "
      "bf16 GEMM for the H200\": bf16, f16 or f32;\nthe emitter's kernel "
      "compiled with NVRTC, written as <symbol>.cu, .cubin and .h,\n"
      "validated and timed against cuBLAS where a GPU is present).\n"
      "With --llm-endpoint (or QIMENG_LLM_ENDPOINT) "
      "the LLM reads the prompt and\nproposes tuning moves; otherwise the "
      "built-in parser and policy do. The kernel\nis tuned here, validated "
      "in qimeng-runner, timed against OpenBLAS (im2col +\nsgemm for a "
      "convolution, sgemv for one row or column), and written to DIR as "
      "<symbol>.s, <symbol>.o and\n"
      "<symbol>.h.\n");
  llvm::ExitOnError exitOnErr("qimeng-tensorop: ");
  if (threadsOpt < 1)
    exitOnErr(llvm::createStringError("--threads must be at least 1"));

  // The LLM, when configured (flags over QIMENG_LLM_*); its exchanges go
  // to DIR/llm-transcript.jsonl unless --llm-transcript says elsewhere.
  ChatConfig llmConfig = llmflags::config();
  exitOnErr(llvm::errorCodeToError(llvm::sys::fs::create_directories(outOpt)));
  std::unique_ptr<LlmSession> session;
  std::string transcript;
  if (!llmConfig.baseUrl.empty()) {
    transcript = llmflags::transcript.empty()
                     ? outOpt + "/llm-transcript.jsonl"
                     : std::string(llmflags::transcript);
    session = exitOnErr(LlmSession::open(llmConfig, transcript));
  }
  ChatClient *llm = session ? &session->client() : nullptr;

  // The task: the LLM's reading, checked; the built-in parser otherwise.
  std::string parsedBy = "builtin";
  std::optional<Task> task;
  if (llm) {
    auto fromLlm = extractTaskWithLlm(promptOpt, *llm);
    if (fromLlm) {
      task = *fromLlm;
      parsedBy = "llm";
    } else {
      llvm::WithColor::warning(llvm::errs(), "qimeng-tensorop")
          << "the LLM could not give the task ("
          << llvm::toString(fromLlm.takeError())
          << "); reading the prompt with the built-in parser\n";
    }
  }
  if (!task)
    task = exitOnErr(parseTaskPrompt(promptOpt));
  if (task->gpu)
    return generateForGpu(
        *task, parsedBy, outOpt,
        llvm::sys::path::parent_path(
            llvm::sys::fs::getMainExecutable(argv[0], (void *)&main))
            .str(),
        jsonOpt);
  if (task->target != "host")
    return generateForModelledMachine(*task, parsedBy);
  const KernelProblem &problem = task->problem;

  Target host = Target::detectHost();
  // Stage 1: the LLM reads the machine; detected facts win.
  std::vector<std::string> hardwareNotes;
  if (ablationOpt && !llm)
    exitOnErr(llvm::createStringError(
        "--ablation compares LLM prompting strategies: give --llm-endpoint "
        "and --llm-model (or QIMENG_LLM_ENDPOINT and QIMENG_LLM_MODEL)"));
  if (ablationOpt && problem.conv())
    exitOnErr(llvm::createStringError("--ablation runs on a GEMM prompt"));
  if (llm && !ablationOpt) {
    std::string manual;
    if (!manualOpt.empty()) {
      auto text = llvm::MemoryBuffer::getFile(manualOpt);
      if (!text)
        exitOnErr(llvm::createStringError("cannot read --manual " + manualOpt +
                                          ": " + text.getError().message()));
      manual = (*text)->getBuffer().str();
    }
    if (auto hw = comprehendHardware(*llm, host, manual)) {
      for (const std::string &c : hw->conflicts)
        hardwareNotes.push_back(c);
    } else {
      hardwareNotes.push_back("the LLM's hardware reading was unusable: " +
                              llvm::toString(hw.takeError()));
    }
    for (const std::string &n : hardwareNotes)
      llvm::WithColor::note(llvm::errs(), "qimeng-tensorop") << n << "\n";
  }
  EmitterOptions emitter = EmitterOptions::defaults();
  IsolatedValidationOptions runner = IsolatedValidationOptions::defaults();
  GemmConfig base =
      exitOnErr(chooseKernelConfig(problem, host, int(threadsOpt)));
  if (ablationOpt)
    return runAblation(*llm, *task, host, base, emitter, runner, jsonOpt);
  base.threads = partitionedThreads(problem.gemm(), base, int(threadsOpt));

  TuneRequest request = tuneRequest(problem, host, base, emitter, runner, llm);
  if (!jsonOpt)
    request.progress = [](const std::string &line) {
      llvm::errs() << "qimeng-tensorop: " << line << "\n";
    };
  TuneResult tuned = exitOnErr(tuneKernel(request));
  // Stage 2: the LLM writes an emitter; its kernel, validated, replaces the
  // tuned one only when it is faster.
  std::string authoring;
  if (llm && tuned.record.config.threads == 1) {
    auto authored = authorKernel(*llm, problem, base, host, emitter, runner);
    if (!authored) {
      authoring = llvm::toString(authored.takeError());
    } else {
      auto timed = measureIsolated(problem, host, authored->kernel, 7, runner);
      if (timed && timed->validation.passed &&
          timed->gflops > tuned.record.medianGflops) {
        authoring = llvm::formatv("the LLM's emitter won: {0:F1} against "
                                  "{1:F1} GFLOPS",
                                  timed->gflops, tuned.record.medianGflops)
                        .str();
        TuningRecord &r = tuned.record;
        r.config = authored->config;
        r.symbol = authored->kernel.symbol;
        r.kernelText = authored->kernel.text;
        r.kernelSha256 = sha256Hex(authored->kernel.text);
        r.workspaceBytes = authored->kernel.workspaceBytes;
        r.medianGflops = timed->gflops;
        r.spread = timed->spread;
        r.fractionOfPeak = r.peakGflops > 0 ? r.medianGflops / r.peakGflops : 0;
        r.maxRelError = timed->validation.maxRelError;
        r.source = "llm";
        r.emitterSource = authored->emitterSource;
        tuned.kernel = authored->kernel;
      } else {
        authoring = timed ? llvm::formatv("the LLM's emitter validated but "
                                          "lost: {0:F1} against {1:F1} GFLOPS",
                                          timed ? timed->gflops : 0.0,
                                          tuned.record.medianGflops)
                                .str()
                          : "the LLM's kernel could not be timed: " +
                                llvm::toString(timed.takeError());
      }
    }
    llvm::WithColor::note(llvm::errs(), "qimeng-tensorop")
        << "stage 2: " << authoring << "\n";
  }
  if (auto db = TuningDatabase::open(resolveCacheDir(cacheDirOpt))) {
    if (auto err = db->store(tuned.record))
      llvm::WithColor::warning(llvm::errs(), "qimeng-tensorop")
          << "tuning database: " << llvm::toString(std::move(err)) << "\n";
    // The session's transcript beside the record it produced.
    if (!transcript.empty())
      if (auto text = llvm::MemoryBuffer::getFile(transcript))
        if (auto err =
                db->storeTranscript(tuned.record.key, (*text)->getBuffer()))
          llvm::WithColor::warning(llvm::errs(), "qimeng-tensorop")
              << "tuning database: " << llvm::toString(std::move(err)) << "\n";
  } else {
    llvm::WithColor::warning(llvm::errs(), "qimeng-tensorop")
        << "tuning database: " << llvm::toString(db.takeError()) << "\n";
  }
  const EmittedKernel &kernel = tuned.kernel;
  std::vector<GemmRange> parts =
      kernelParts(problem.gemm(), tuned.record.config);

  // Nothing is trusted: the winner is validated once more before it is
  // written out.
  ValidationReport report =
      exitOnErr(validateIsolated(problem, host, kernel, runner, parts));

  double ours = 0, blas = 0;
  if (report.passed) {
    LoadedKernel loaded = exitOnErr(loadEmittedKernel(kernel, host));
    GemmKernelFn fn = loaded.jit->gemm();
    const ConvDesc *conv = problem.conv();
    const GemmDesc &g = problem.gemm();
    int64_t sizes[3] = {conv ? conv->inputSpan() : g.aSpan(),
                        conv ? conv->filterElements() : g.bSpan(),
                        conv ? conv->outputSpan() : g.cSpan()};
    auto a = exitOnErr(GuardedBuffer::allocate(sizes[0], 0));
    auto b = exitOnErr(GuardedBuffer::allocate(sizes[1], 0));
    auto c1 = exitOnErr(GuardedBuffer::allocate(sizes[2], 0));
    auto c2 = exitOnErr(GuardedBuffer::allocate(sizes[2], 0));
    uint64_t wsBytes =
        kernel.workspaceBytes * std::max<size_t>(1, parts.size());
    auto ws = exitOnErr(GuardedBuffer::allocate(int64_t(wsBytes / 4 + 16), 0));
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (GuardedBuffer *buf : {&a, &b})
      for (int64_t i = 0; i < buf->size(); ++i)
        buf->data()[i] = dist(rng);
    std::fill_n(c1.data(), sizes[2], 0.0f);
    std::fill_n(c2.data(), sizes[2], 0.0f);
    std::vector<float> scratch;
    openblas_set_num_threads(int(threadsOpt));
    std::vector<TimedCandidate> cands = {
        {"ours",
         [&] {
           runGemmParts(fn, g, parts, kernel.workspaceBytes, a.data(), b.data(),
                        c1.data(), ws.data());
         }},
        {"openblas", [&] {
           if (conv)
             convIm2colSgemm(*conv, a.data(), b.data(), c2.data(), scratch);
           else
             openBlasSgemm(g, a.data(), b.data(), c2.data());
         }}};
    // Several threads: a pause before each round, so that neither team is
    // still spinning when the other runs (qimeng-bench --settle-ms).
    InterleavedTiming t =
        timeInterleaved(cands, 9, 0.05, defaultSettleSeconds(int(threadsOpt)));
    ours = problem.flops() / median(t.secondsPerCall[0]) * 1e-9;
    blas = problem.flops() / median(t.secondsPerCall[1]) * 1e-9;
  }

  // The files: assembly, object, C header.
  KernelFiles files = exitOnErr(writeKernelFiles(
      kernel, host,
      headerText(*task, kernel, tuned.record.config, "on this machine")));
  const std::string &asmPath = files.assembly, &objPath = files.object,
                    &hdrPath = files.header;

  double peak = tuned.record.peakGflops;
  std::string source = tuned.record.source;
  if (jsonOpt) {
    nlohmann::json files = {
        {"assembly", asmPath}, {"object", objPath}, {"header", hdrPath}};
    if (!transcript.empty())
      files["llm_transcript"] = transcript;
    nlohmann::json out = {
        {"op", problem.conv() ? "conv2d" : "sgemm"},
        {"shape", task->shape},
        {"dtype", task->dtype},
        {"validated", report.passed},
        {"ours_gflops", ours},
        {"openblas_gflops", blas},
        {"ratio", blas > 0 ? ours / blas : 0},
        {"pct_peak", peak > 0 ? 100 * ours / peak : 0},
        {"peak_gflops", peak},
        {"source", source},
        {"prompt_parsed_by", parsedBy},
        {"kernel", kernel.symbol},
        {"workspace_bytes", kernel.workspaceBytes},
        {"threads", tuned.record.config.threads},
        {"config", tuned.record.config.str()},
        {"trials", tuned.record.trials},
        {"openblas_core", openBlasSelection().running},
        {"openblas_routine", problem.conv()
                                 ? std::string("im2col + sgemm")
                                 : openBlasRoutineFor(problem.gemm()).str()},
        {"openblas_forced", !openBlasSelection().requested.empty()},
        {"files", files}};
    if (!report.passed)
      out["failure"] = report.failure;
    if (llm) {
      out["hardware_notes"] = hardwareNotes;
      out["llm_emitter"] = authoring;
    }
    llvm::outs() << out.dump(2, ' ', false,
                             nlohmann::json::error_handler_t::replace)
                 << "\n";
  } else {
    llvm::outs() << llvm::formatv(
        "{0} {1} (f32, this machine: {2}), read by the {3} parser\n",
        problem.conv() ? "conv2d" : "sgemm", task->shape, host.cpu,
        parsedBy == "llm" ? "LLM's" : "built-in");
    llvm::outs() << llvm::formatv(
        "kernel {0}\n  source {1}, {2} trials, config {3}\n", kernel.symbol,
        source, tuned.record.trials, tuned.record.config.str());
    llvm::outs() << "  validated: "
                 << (report.passed ? "yes (fp64 reference and OpenBLAS, "
                                     "three input distributions)"
                                   : "NO: " + report.failure)
                 << "\n";
    llvm::outs() << llvm::formatv(
        "  {0:F1} GFLOPS ({1:F1}% of the {2:F1} GFLOPS peak measured here) "
        "against OpenBLAS{3} {4:F1}: {5:F2}x (median of 9 interleaved "
        "rounds; OpenBLAS {6})\n",
        ours, peak > 0 ? 100 * ours / peak : 0, peak,
        problem.conv() ? " im2col + sgemm"
                       : " " + openBlasRoutineFor(problem.gemm()).str(),
        blas, blas > 0 ? ours / blas : 0, openBlasSelection().describe());
    llvm::outs() << "  files: " << asmPath << ", " << objPath << ", " << hdrPath
                 << "\n";
    if (!transcript.empty())
      llvm::outs() << "  LLM transcript: " << transcript << "\n";
  }
  return report.passed ? 0 : 1;
}
