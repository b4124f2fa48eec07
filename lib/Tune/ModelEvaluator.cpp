//===- ModelEvaluator.cpp - Tuning without the hardware -------------------===//
#include "qimeng/Tune/ModelEvaluator.h"
#include "qimeng/Config.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include <algorithm>

using namespace qimeng;

ModelOptions ModelOptions::defaults() {
  ModelOptions o;
  o.llvmMca = QIMENG_LLVM_MCA;
  if (auto path = llvm::sys::Process::GetEnv("QIMENG_LLVM_MCA"))
    o.llvmMca = *path;
  return o;
}

/// The number after `label` in llvm-mca's summary ("Total Cycles:   1234").
static std::optional<double> summaryValue(llvm::StringRef report,
                                          llvm::StringRef label) {
  size_t at = report.find(label);
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest =
      report.substr(at + label.size()).ltrim().take_until([](char c) {
        return c == '\n';
      });
  double value = 0;
  if (rest.trim().getAsDouble(value))
    return std::nullopt;
  return value;
}

/// llvm-mca's prediction for `loop` (one iteration, no back branch) on
/// `target`'s core, with `flops` an iteration; `what` names the loop.
static llvm::Expected<InnerLoopPrediction>
predictLoop(llvm::StringRef loop, double flops, const Target &target,
            const ModelOptions &options, const std::string &what) {
  auto core = target.coreModel();
  if (!core)
    return core.takeError();
  if (!llvm::sys::fs::can_execute(options.llvmMca))
    return llvm::createStringError("cannot run the performance model: no "
                                   "llvm-mca at " +
                                   options.llvmMca +
                                   " (package llvm-22; set QIMENG_LLVM_MCA)");
  std::vector<std::string> args = {
      options.llvmMca, "-mtriple=" + target.triple, "-mcpu=" + core->mcaCpu,
      "-iterations=" + std::to_string(options.iterations)};
  if (!target.features.empty())
    args.push_back("-mattr=" + target.featureString());
  SubprocessOptions sp;
  sp.timeoutSeconds = options.timeoutSeconds;
  auto result = runSubprocess(options.llvmMca, args, loop, sp);
  if (!result)
    return result.takeError();
  if (!result->succeeded())
    return llvm::createStringError(
        "llvm-mca failed on " + what + ": " +
        llvm::StringRef(result->err).trim().take_back(400).str());
  std::optional<double> cycles = summaryValue(result->out, "Total Cycles:");
  std::optional<double> runs = summaryValue(result->out, "Iterations:");
  if (!cycles || !runs || *runs <= 0)
    return llvm::createStringError("llvm-mca's report has no cycle count");
  InnerLoopPrediction p;
  p.mcaCpu = core->mcaCpu;
  p.cyclesPerIteration = *cycles / *runs;
  p.flopsPerIteration = flops;
  p.peakFlopsPerCycle = 2.0 * core->fmaLanesPerCycle;
  return p;
}

llvm::Expected<InnerLoopPrediction>
qimeng::predictInnerLoop(const EmittedKernel &kernel, const Target &target,
                         const ModelOptions &options) {
  auto loop = kernel.innerLoop();
  if (!loop)
    return loop.takeError();
  return predictLoop(*loop, double(kernel.innerLoopFlops), target, options,
                     kernel.symbol + "'s inner loop");
}

namespace {
/// One instruction of a disassembly: its address and text.
struct Disassembled {
  uint64_t address = 0;
  std::string text;
  llvm::StringRef mnemonic() const {
    return llvm::StringRef(text).take_until(
        [](char c) { return c == ' ' || c == '\t'; });
  }
  /// The address a branch goes to (its "0x..." operand), if it is one.
  std::optional<uint64_t> branchTarget() const {
    llvm::StringRef m = mnemonic();
    if (!(m == "b" || m.starts_with("b.") || m == "cbz" || m == "cbnz" ||
          m == "tbz" || m == "tbnz"))
      return std::nullopt;
    size_t at = llvm::StringRef(text).find("0x");
    uint64_t value = 0;
    if (at == llvm::StringRef::npos || llvm::StringRef(text)
                                           .substr(at + 2)
                                           .take_while(llvm::isHexDigit)
                                           .getAsInteger(16, value))
      return std::nullopt;
    return value;
  }
  /// fp32 flops of an AArch64 fmla: 8 on four lanes, 4 on two, 2 scalar.
  double fmlaFlops() const {
    if (mnemonic() != "fmla")
      return 0;
    llvm::StringRef operands = llvm::StringRef(text).drop_front(4).trim();
    llvm::StringRef first =
        operands.take_until([](char c) { return c == ','; });
    if (first.ends_with(".4s"))
      return 8;
    if (first.ends_with(".2s"))
      return 4;
    return first.starts_with("s") ? 2 : 0;
  }
};
} // namespace

llvm::Expected<PeerLoopPrediction>
qimeng::predictOpenBlasInnerLoop(const Target &target,
                                 const ModelOptions &options) {
  auto core = target.coreModel();
  if (!core)
    return core.takeError();
  if (core->openBlasCore.empty())
    return llvm::createStringError("no OpenBLAS kernel is known for CPU '" +
                                   target.cpu + "'");
  PeerLoopPrediction peer;
  peer.library = options.openBlasLibrary.empty()
                     ? "/usr/lib/" + target.archName() +
                           "-linux-gnu/openblas-pthread/libopenblas.so.0"
                     : options.openBlasLibrary;
  peer.symbol = "sgemm_kernel_" + core->openBlasCore;
  if (!llvm::sys::fs::exists(peer.library))
    return llvm::createStringError(
        "no " + target.archName() + " OpenBLAS at " + peer.library +
        " (scripts/setup.sh installs libopenblas0-pthread:arm64)");
  llvm::SmallString<128> objdump(llvm::sys::path::parent_path(options.llvmMca));
  llvm::sys::path::append(objdump, "llvm-objdump");
  SubprocessOptions sp;
  sp.timeoutSeconds = options.timeoutSeconds;
  sp.outputCap = 64 << 20;
  auto result =
      runSubprocess(objdump.str().str(),
                    {objdump.str().str(), "-d", "--no-show-raw-insn",
                     "--disassemble-symbols=" + peer.symbol, peer.library},
                    "", sp);
  if (!result)
    return result.takeError();
  if (!result->succeeded())
    return llvm::createStringError(
        "llvm-objdump cannot disassemble " + peer.symbol + " in " +
        peer.library + ": " +
        llvm::StringRef(result->err).trim().take_back(300).str());
  // "  6297a0:      \tfmla\tv16.4s, v0.4s, v8.s[0]" -> address and text.
  std::vector<Disassembled> code;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(result->out).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    auto [head, tail] = line.split(':');
    Disassembled d;
    if (tail.empty() || head.trim().getAsInteger(16, d.address))
      continue;
    d.text = tail.split("//").first.trim().str();
    if (!d.text.empty())
      code.push_back(std::move(d));
  }
  // The innermost loop (a backward branch over straight-line code) with
  // the most FMAs: the microkernel's K loop.
  size_t bestBegin = 0, bestEnd = 0;
  double bestFlops = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    std::optional<uint64_t> to = code[i].branchTarget();
    if (!to || *to >= code[i].address)
      continue;
    size_t begin = i;
    while (begin > 0 && code[begin - 1].address >= *to)
      --begin;
    if (code[begin].address != *to)
      continue;
    double flops = 0;
    bool straight = true;
    for (size_t j = begin; j < i && straight; ++j) {
      straight = !code[j].branchTarget();
      flops += code[j].fmlaFlops();
    }
    if (straight && flops > bestFlops) {
      bestFlops = flops;
      bestBegin = begin;
      bestEnd = i;
    }
  }
  if (bestFlops == 0)
    return llvm::createStringError("found no loop of fmla instructions in " +
                                   peer.symbol);
  std::string loop;
  for (size_t j = bestBegin; j < bestEnd; ++j)
    loop += "\t" + code[j].text + "\n";
  peer.instructions = bestEnd - bestBegin;
  auto prediction = predictLoop(loop, bestFlops, target, options,
                                peer.symbol + "'s inner loop");
  if (!prediction)
    return prediction.takeError();
  peer.prediction = *prediction;
  return peer;
}

std::vector<GemmConfig> qimeng::modelSearchSpace(const KernelProblem &problem,
                                                 const Target &target) {
  std::vector<GemmConfig> blocks;
  GemmConfig c;
  c.isa = target.bestIsa();
  if (c.isa == VectorIsa::Neon || c.isa == VectorIsa::Sve) {
    // Rows of q registers (NEON), or of vectors of the target's length, at
    // most three a row (SVE: the writer's B offsets), and A's rows in
    // registers beside them, within 32 registers.
    const bool sve = c.isa == VectorIsa::Sve;
    const int lanes = sve ? std::max(target.vlen, 128) / 32 : 4;
    for (int nv = 1; nv <= (sve ? 3 : 6); ++nv)
      for (int mr = 2; mr <= 8; ++mr)
        if (mr * nv + mr + nv <= 32)
          for (int ku : {4, 8}) {
            c.mr = mr;
            c.nr = lanes * nv;
            c.kUnroll = ku;
            blocks.push_back(c);
          }
  } else if (c.isa == VectorIsa::Rvv) {
    const int vlen = std::max(target.vlen, 128);
    for (int lmul : {1, 2, 4, 8})
      for (int nv = 1; nv <= 4; ++nv)
        for (int mr = 2; mr <= 8; ++mr)
          if ((mr * nv + nv) * lmul <= 32)
            for (int ku : {4, 8}) {
              c.lmul = lmul;
              c.mr = mr;
              c.nr = nv * vlen * lmul / 32;
              c.kUnroll = ku;
              blocks.push_back(c);
            }
  }
  const GemmDesc &desc = problem.gemm();
  const int64_t halfL1 = std::max<int64_t>(target.caches.l1d, 16 * 1024) / 2;
  std::vector<GemmConfig> space;
  for (GemmConfig block : blocks) {
    block.kc = desc.k;
    block.packB = BPacking::InPlace;
    space.push_back(block);
    const int64_t kc =
        std::max<int64_t>(1, halfL1 / (block.nr * 4) / block.kUnroll) *
        block.kUnroll;
    if (!problem.conv() && !desc.dynamicK && kc < desc.k) {
      block.kc = kc;
      block.packB = BPacking::Panels;
      space.push_back(block);
    }
  }
  return space;
}

llvm::Expected<ModelRanking>
qimeng::rankByModel(const KernelProblem &problem, const Target &target,
                    const EmitterOptions &emitter,
                    const CrossValidationOptions &emulation,
                    const ModelOptions &model,
                    const std::function<void(const std::string &)> &progress,
                    size_t validateBest) {
  // A convolution's figures are its GEMM view's (pixels x filters x taps
  // times channels).
  const GemmDesc &desc = problem.gemm();
  std::vector<GemmConfig> space = modelSearchSpace(problem, target);
  if (space.empty())
    return llvm::createStringError(
        "no model search space for " + isaName(target.bestIsa()) +
        " targets; the model ranks neon, sve and rvv kernels");
  if (auto core = target.coreModel(); !core)
    return core.takeError();
  auto describe = [&](const GemmConfig &c) {
    return llvm::formatv(
               "mr={0} nr={1} ku={2}{3}{4}", c.mr, c.nr, c.kUnroll,
               c.isa == VectorIsa::Rvv ? " lmul=" + std::to_string(c.lmul)
                                       : std::string(),
               c.kc < desc.k ? " kc=" + std::to_string(c.kc) + " B packed"
                             : std::string())
        .str();
  };
  auto say = [&](const std::string &line) {
    if (progress)
      progress(line);
  };
  ModelRanking ranking;
  size_t index = 0;
  for (const GemmConfig &config : space) {
    ++index;
    std::string head = llvm::formatv("model {0}/{1} {2}: ", index, space.size(),
                                     describe(config))
                           .str();
    auto kernel = emitKernel(problem, config, emitter, "", &target);
    if (!kernel) {
      say(head + "not generated: " + llvm::toString(kernel.takeError()));
      continue;
    }
    auto prediction = predictInnerLoop(*kernel, target, model);
    if (!prediction) {
      say(head + "no prediction: " + llvm::toString(prediction.takeError()));
      continue;
    }
    auto padded = [](int64_t v, int64_t b) { return (v + b - 1) / b * b; };
    double flops = 2.0 * double(padded(desc.m, config.mr)) *
                   double(padded(desc.n, config.nr)) * double(desc.k);
    ModelCandidate c;
    c.config = config;
    c.kernel = std::move(*kernel);
    c.prediction = *prediction;
    c.predictedCycles =
        flops * prediction->cyclesPerIteration / prediction->flopsPerIteration;
    say(head + llvm::formatv("inner loop {0:F1}% of peak, {1:E3} cycles "
                             "(model)",
                             100 * prediction->fractionOfPeak(),
                             c.predictedCycles)
                   .str());
    ranking.predicted.push_back(std::move(c));
  }
  std::stable_sort(ranking.predicted.begin(), ranking.predicted.end(),
                   [](const ModelCandidate &a, const ModelCandidate &b) {
                     return a.predictedCycles < b.predictedCycles;
                   });
  for (const ModelCandidate &c : ranking.predicted) {
    if (ranking.validated.size() >= validateBest)
      break;
    say("validating " + c.kernel.symbol + " on " +
        crossBackendName(target, emulation));
    auto run = problem.conv()
                   ? validateConvCross(*problem.conv(), target, c.kernel, {},
                                       emulation)
                   : validateGemmCross(desc, target, c.kernel, {}, emulation);
    if (!run)
      return run.takeError();
    if (!run->report.passed) {
      ranking.failures.push_back(c.kernel.symbol + ": " + run->report.failure);
      say("  failed: " + run->report.failure);
      continue;
    }
    ranking.validated.push_back(c);
    if (!emulation.remoteHost.empty())
      ranking.validated.back().measuredNs = run->medianNs;
  }
  return ranking;
}
