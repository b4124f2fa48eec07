//===- ConvBench.cpp - qimeng-bench --op conv2d ---------------------------===//
//
// Every layer is run on its padded input (H + 2p, W + 2p), as our kernel
// takes it from linalg (padding is a separate op there); oneDNN gets the
// same padded buffer with padding 0, so all three compute the same outputs
// from the same bytes, and the checker validates each.
//
//===----------------------------------------------------------------------===//
#include "ConvBench.h"
#include "PeerProcess.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Runtime/Benchmark.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "qimeng/Runtime/JitKernel.h"
#include "qimeng/Runtime/RunnerService.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

using namespace qimeng;

namespace {

/// One layer: an unpadded input of h x w x c, f filters k x k, stride s,
/// padding p on every side.
struct Layer {
  const char *name;
  int64_t h, w, c, f, k, stride, pad;

  ConvDesc desc(GemmPrecision precision, ConvLayout layout) const {
    ConvDesc d = ConvDesc::dense(layout, 1, h + 2 * pad, w + 2 * pad, c, f, k,
                                 k, stride, stride);
    d.precision = precision;
    return d;
  }
};

/// ResNet-50 (batch 1): the four 3x3 stages, a 1x1 reduction and the 7x7
/// stride-2 stem.
const Layer kResNet50[] = {
    {"res2_3x3", 56, 56, 64, 64, 3, 1, 1},
    {"res3_3x3", 28, 28, 128, 128, 3, 1, 1},
    {"res4_3x3", 14, 14, 256, 256, 3, 1, 1},
    {"res5_3x3", 7, 7, 512, 512, 3, 1, 1},
    {"res2_1x1_256to64", 56, 56, 256, 64, 1, 1, 0},
    {"conv1_7x7_s2", 224, 224, 3, 64, 7, 2, 3},
};

std::string cell(std::optional<double> v) {
  return v ? llvm::formatv("{0:F1}", *v).str() : "n/a";
}

} // namespace

llvm::Expected<int> qimeng::runConvBench(const ConvBenchSettings &s) {
  if (s.suite != "resnet50")
    return llvm::createStringError("unknown --suite '" + s.suite +
                                   "'; expected resnet50");
  std::vector<const Layer *> layers;
  for (const Layer &layer : kResNet50)
    if (s.layers.empty() || std::find(s.layers.begin(), s.layers.end(),
                                      layer.name) != s.layers.end())
      layers.push_back(&layer);
  for (const std::string &name : s.layers)
    if (std::none_of(std::begin(kResNet50), std::end(kResNet50),
                     [&](const Layer &l) { return name == l.name; })) {
      std::string known;
      for (const Layer &l : kResNet50)
        known += std::string(known.empty() ? "" : ", ") + l.name;
      return llvm::createStringError("unknown --layers name '" + name +
                                     "'; the " + s.suite + " suite has " +
                                     known);
    }
  // Each peer runs in a process of its own (PeerProcess.h): one loads
  // oneDNN here for the header.
  bool haveOneDnn = false;
  std::string onednnNote;
  if (s.skipOneDnn) {
    onednnNote = "oneDNN: skipped (--no-external)";
  } else if (auto w = PeerProcess::start(
                 "onednn",
                 KernelProblem(layers[0]->desc(s.precision, s.layout)),
                 int(s.threads), s.asDetected,
                 /*describeOnly=*/true)) {
    haveOneDnn = true;
    onednnNote = "oneDNN " + w->ready().version + ": " + w->ready().describe;
  } else {
    onednnNote = "oneDNN: " + llvm::toString(w.takeError());
  }
  const double peak = s.corePeak * s.threads;
  const bool narrow = s.precision != GemmPrecision::F32;
  if (s.prepackedWeights && s.precision == GemmPrecision::F16)
    return llvm::createStringError(
        "--prepacked-weights is for the f32, bf16 and 8-bit convolutions: an "
        "f16 filter is widened or split where it is packed");
  const char *unit = isIntegerPrecision(s.precision) ? "GOPS" : "GFLOPS";
  if (!s.json) {
    llvm::outs() << llvm::formatv(
        "qimeng-bench: conv2d suite {0} (batch 1, {5}, {4}), {1} "
        "thread(s), out += conv, median of {2} interleaved rounds (each "
        "after an untimed call{3}); each peer in a process of its own\n",
        s.suite, s.threads, s.runs,
        s.settleSeconds > 0 ? llvm::formatv(" that follows a {0} ms pause",
                                            int(s.settleSeconds * 1000 + 0.5))
                                  .str()
                            : std::string(),
        narrow ? (precisionName(s.precision) + " operands, " +
                  (isIntegerPrecision(s.precision) ? "s32" : "f32") + " output")
                     .str()
               : std::string("fp32"),
        convLayoutName(s.layout));
    llvm::outs() << llvm::formatv(
        "host: {0} ({1}); {7} peak measured: {2:F1} {6} per core ({5}), "
        "{3:F1} for {4} thread(s)\n",
        s.host.cpu, s.host.triple, s.corePeak, peak, s.threads, s.peakNote,
        unit, peakInstructionName(matrixIsa(s.host, s.precision), s.precision));
    if (narrow)
      llvm::outs() << "im2col + OpenBLAS: none (an f32 column; Debian's "
                      "OpenBLAS has no "
                   << precisionName(s.precision) << " GEMM)\n";
    else
      llvm::outs() << "im2col + OpenBLAS sgemm: " << s.openBlas.describe()
                   << ", config '" << s.openBlas.config << "'\n";
    llvm::outs() << onednnNote << "\n";
    if (s.prepackedWeights)
      llvm::outs() << "ours: the filter packed once, outside the timing "
                      "(--prepacked-weights; qm.b_prepacked, kernels _bpre), "
                      "as oneDNN's weights are reordered once; packed at "
                      "each call where blocks end in a partial group of k "
                      "(the 3-channel stem in bf16 and 8 bits) and in "
                      "nchw_fchw (the filter is A)\n";
    llvm::outs() << "OpenMP wait policy: " << s.waitPolicy << "\n";
    llvm::outs() << "inputs are the padded buffers (H + 2p, W + 2p); every "
                    "column computes the same outputs from them\n";
    llvm::outs() << unit
                 << ": medians over the rounds; vs im2col and vs "
                    "oneDNN: the median over rounds of the round's time "
                    "ratio (theirs / ours, run back to back)\n";
    llvm::outs() << llvm::formatv(
        "{0,-18} {1,-22} {2,11} {3,7} {4,15} {5,13} {6,9} {7,9} {8,10}  {9}\n",
        "layer", "shape", "ours " + std::string(unit), "%peak",
        "im2col+OpenBLAS", "oneDNN " + std::string(unit), "vs im2col",
        "vs oneDNN", "validated", "kernel");
  } else {
    llvm::errs() << "qimeng-bench: " << onednnNote << "\n";
  }

  bool allValid = true;
  for (const Layer *layerPtr : layers) {
    const Layer &layer = *layerPtr;
    ConvDesc desc = layer.desc(s.precision, s.layout);
    // (Not where blocks end in a partial group: the 3-channel stem.)
    desc.bPrepacked = s.prepackedWeights && desc.filterMayBePrepacked();
    // A layer these types cannot take (or no kernel of this host: an f16
    // stem, whose run of k is not whole tile steps) says why.
    KernelProblem problem(desc);
    auto base = chooseKernelConfig(problem, s.host, int(s.threads));
    std::string why;
    if (llvm::Error err = desc.verify())
      why = llvm::toString(std::move(err));
    if (!base) {
      std::string noKernel = llvm::toString(base.takeError());
      if (why.empty())
        why = noKernel;
    }
    if (!why.empty()) {
      if (s.json)
        llvm::outs() << nlohmann::json({{"op", "conv2d"},
                                        {"name", layer.name},
                                        {"skipped", why}})
                            .dump()
                     << "\n";
      else
        llvm::outs() << llvm::formatv("{0,-18} skipped: {1}\n", layer.name,
                                      why);
      continue;
    }
    if (!s.kernelConfig.empty()) {
      auto pinned = GemmConfig::parse(s.kernelConfig, *base);
      if (!pinned)
        return pinned.takeError();
      base = clampToProblem(*pinned, problem.gemm());
    }
    base->threads = partitionedThreads(desc.gemmView(), *base, int(s.threads));
    auto kernel =
        benchKernel(problem, *base, s.host, s.emitter, s.runner, s.kernel);
    if (!kernel)
      return kernel.takeError();
    auto ours = validateIsolated(desc, s.host, kernel->emitted, s.runner,
                                 kernel->parts);
    if (!ours)
      return ours.takeError();
    // im2col + OpenBLAS and oneDNN, each in its own process: it validates
    // itself with the convolution checker, then waits for its rounds.
    PeerResult blas, onednn;
    std::optional<PeerProcess> blasWorker =
        blas.start("openblas", problem, int(s.threads), s.asDetected);
    std::optional<PeerProcess> onednnWorker;
    if (haveOneDnn)
      onednnWorker =
          onednn.start("onednn", problem, int(s.threads), s.asDetected);
    // im2col + OpenBLAS is an f32 column (PeerProcess.cpp says why not).
    bool validated = ours->passed && (blasWorker.has_value() || narrow);
    allValid &= validated;

    std::optional<double> oursGflops;
    if (ours->passed) {
      auto loaded = loadEmittedKernel(kernel->emitted, s.host);
      if (!loaded)
        return loaded.takeError();
      GemmKernelFn fn = loaded->jit->gemm();
      auto in = GuardedBuffer::allocate(desc.inputSpan(), 0);
      auto flt = GuardedBuffer::allocate(desc.filterElements(), 0);
      auto out = GuardedBuffer::allocate(desc.outputSpan(), 0);
      uint64_t wsBytes = kernel->emitted.workspaceBytes *
                         std::max<size_t>(1, kernel->parts.size());
      auto ws = GuardedBuffer::allocate(int64_t(wsBytes / 4 + 16), 0);
      for (auto *b : {&in, &flt, &out, &ws})
        if (!*b)
          return b->takeError();
      // The operands every peer process makes too (seed 42).
      fillTimingOperands(*in, *flt, s.precision);
      std::fill_n(out->data(), out->size(), 0.0f);
      // A prepacked filter is packed once, here, outside the timing, into
      // 64-byte aligned memory (its slivers are whole cache lines).
      const float *filter = flt->data();
      std::optional<GuardedBuffer> packedFilter;
      if (const auto &layout = kernel->emitted.prepackedB) {
        auto packed = GuardedBuffer::allocate(layout->bytes(desc.f) / 4, 0);
        if (!packed)
          return packed.takeError();
        packedFilter = std::move(*packed);
        packB(*layout, desc.gemmView(), flt->data(), packedFilter->data());
        filter = packedFilter->data();
      }
      std::vector<TimedCandidate> cands = {
          {"ours", [&] {
             runGemmParts(fn, desc.gemmView(), kernel->parts,
                          kernel->emitted.workspaceBytes, in->data(), filter,
                          out->data(), ws->data());
           }}};
      std::vector<std::pair<PeerResult *, size_t>> timed; // (peer, candidate)
      for (auto [result, worker] :
           {std::pair{&blas, &blasWorker}, std::pair{&onednn, &onednnWorker}})
        if (*worker) {
          timed.push_back({result, cands.size()});
          cands.push_back(PeerResult::candidate(**worker));
        }
      InterleavedTiming t =
          timeInterleaved(cands, int(s.runs), 0.05, s.settleSeconds);
      oursGflops = desc.flops() / median(t.secondsPerCall[0]) * 1e-9;
      for (auto [result, cand] : timed)
        result->record(t, cand, desc.flops());
    }
    blasWorker.reset();
    onednnWorker.reset();
    VariantComparison variantResults;
    if (!s.variants.empty()) {
      auto compared =
          compareVariants(problem, *kernel, ours->passed, s.variants, s.threads,
                          int(s.runs), s.host, s.emitter, s.runner);
      if (!compared)
        return compared.takeError();
      variantResults = std::move(*compared);
    }
    auto ratio = [&](std::optional<double> other) -> std::optional<double> {
      if (!oursGflops || !other || *other <= 0)
        return std::nullopt;
      return *oursGflops / *other;
    };
    std::string shape =
        llvm::formatv("{0}x{1}x{2}->{3} {4}x{4}/{5}", layer.h, layer.w, layer.c,
                      layer.f, layer.k, layer.stride)
            .str();
    if (s.json) {
      nlohmann::json row = {{"op", "conv2d"},
                            {"name", layer.name},
                            {"n", 1},
                            {"h", layer.h},
                            {"w", layer.w},
                            {"c", layer.c},
                            {"f", layer.f},
                            {"kh", layer.k},
                            {"kw", layer.k},
                            {"stride", layer.stride},
                            {"pad", layer.pad},
                            {"threads", s.threads},
                            {"ours_gflops", oursGflops.value_or(0)},
                            {"openblas_gflops", blas.gflops.value_or(0)},
                            {"validated", validated},
                            {"pct_peak", 100 * oursGflops.value_or(0) / peak},
                            {"peak_gflops", peak},
                            {"max_rel_err", ours->maxRelError},
                            {"kernel", kernel->emitted.symbol},
                            {"config", kernel->config.str()},
                            {"tuned", s.kernel.tuned},
                            {"tune_trials", kernel->tunedTrials},
                            {"openblas_core", s.openBlas.running}};
      if (onednn.gflops) {
        row["onednn_gflops"] = *onednn.gflops;
        row["onednn_impl"] = onednn.path;
      } else {
        row["onednn_gflops"] = nullptr;
      }
      if (!onednn.failure.empty())
        row["onednn_failure"] = onednn.failure;
      if (auto r = ratio(blas.gflops))
        row["ratio_openblas"] = *r;
      if (auto r = ratio(onednn.gflops))
        row["ratio_onednn"] = *r;
      if (blas.paired)
        row["paired_ratio_openblas"] = *blas.paired;
      if (onednn.paired)
        row["paired_ratio_onednn"] = *onednn.paired;
      if (!ours->passed)
        row["failure"] = ours->failure;
      if (!s.variants.empty())
        row["variants"] = variantsJson(variantResults);
      llvm::outs() << row.dump(-1, ' ', false,
                               nlohmann::json::error_handler_t::replace)
                   << "\n";
    } else {
      auto r1 = blas.paired, r2 = onednn.paired;
      llvm::outs() << llvm::formatv(
          "{0,-18} {1,-22} {2,11} {3,6:F1}% {4,15} {5,13} {6,9} {7,9} {8,10}  "
          "{9}\n",
          layer.name, shape, cell(oursGflops),
          100 * oursGflops.value_or(0) / peak, cell(blas.gflops),
          cell(onednn.gflops), r1 ? llvm::formatv("{0:F2}", *r1).str() : "n/a",
          r2 ? llvm::formatv("{0:F2}", *r2).str() : "n/a",
          validated ? "yes" : "NO", kernel->emitted.symbol);
      llvm::outs() << formatVariantLines(variantResults);
      if (!ours->passed)
        llvm::outs() << "  ours failed validation: " << ours->failure << "\n";
      if (!blas.failure.empty() && !narrow)
        llvm::outs() << "  im2col + OpenBLAS: " << blas.failure << "\n";
      if (!onednn.failure.empty())
        llvm::outs() << "  oneDNN: " << onednn.failure << "\n";
    }
    llvm::outs().flush();
  }
  if (!s.json && haveOneDnn)
    llvm::outs() << "oneDNN implementation: as reported per layer in --json "
                    "(onednn_impl)\n";
  return allValid ? 0 : 1;
}
