//===- RunnerService.cpp - qimeng-runner's side of the protocol -----------===//
//
// What runs inside qimeng-runner: load a kernel's text for this host, run it
// (once, or once per part of C on an OpenMP team), validate, time. Kept
// apart from IsolatedValidation.cpp (the compiler's side) so that the
// compiler and the plugin never link OpenMP or run generated code.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Runtime/RunnerService.h"
#include "qimeng/Emit/Assembler.h"
#include "qimeng/Kernel/KernelJson.h"
#include "qimeng/Runtime/Benchmark.h"
#include "qimeng/Runtime/ConvValidator.h"
#include "qimeng/Runtime/JitKernel.h"
#include "qimeng/Support/JsonFieldReader.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

using namespace qimeng;
using json = nlohmann::json;

void qimeng::runGemmParts(GemmKernelFn kernel, const GemmDesc &desc,
                          const std::vector<GemmRange> &parts,
                          uint64_t workspaceBytes, const float *a,
                          const float *b, float *c, void *workspace) {
  if (parts.empty()) {
    writeLeadingDims(workspace, desc);
    if (desc.dynamicM || desc.dynamicN)
      writeRange(workspace, GemmRange{0, desc.m, 0, desc.n});
    writeRuntimeK(workspace, desc);
    kernel(a, b, c, workspace);
    return;
  }
  auto slice = [&](size_t i) {
    return static_cast<char *>(workspace) + i * workspaceBytes;
  };
  // The caller's epilogue operands and 16-bit output are in the first
  // slice's header.
  const float *bias = desc.hasEpilogue() ? readBias(workspace) : nullptr;
  void *out = desc.halfOutput ? readHalfOutput(workspace) : nullptr;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (bias)
      writeBias(slice(i), bias);
    if (out)
      writeHalfOutput(slice(i), out);
    GemmRange range = parts[i];
    if (desc.dynamicM) // columns of the partition, all the call's rows
      range.mBegin = 0, range.mEnd = desc.m;
    if (desc.dynamicN) // rows of the partition, all the call's columns
      range.nBegin = 0, range.nEnd = desc.n;
    writeRange(slice(i), range);
    writeLeadingDims(slice(i), desc);
    writeRuntimeK(slice(i), desc);
  }
  // OpenMP, as in the compiled module (omp.parallel + omp.wsloop): a
  // persistent team, one part per iteration, static schedule.
  const int64_t n = static_cast<int64_t>(parts.size());
#pragma omp parallel for num_threads(n) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    kernel(a, b, c, slice(i));
}

/// `x` as JSON can hold it: an infinite or NaN error (a kernel that
/// computed inf or read a NaN) as the largest double, which no bound
/// admits, rather than the null JSON would make of it.
static double jsonNumber(double x) {
  return std::isfinite(x) ? x : std::numeric_limits<double>::max();
}

// No-throw field access: a wrong-typed field is an error, never an abort.
static llvm::Expected<std::string> stringField(const json &j,
                                               const char *name) {
  std::string value;
  if (auto err = JsonFieldReader(j, "validation request").string(name, value))
    return std::move(err);
  return value;
}

/// Loads a kernel's text for this host.
static llvm::Expected<std::pair<EmittedKernel, std::unique_ptr<JitKernel>>>
loadHere(const std::string &text) {
  auto kernel = parseEmitterOutput(text);
  if (!kernel)
    return kernel.takeError();
  Target host = Target::detectHost();
  auto object = assembleToObject(kernel->text, host, kernel->symbol + ".s");
  if (!object)
    return object.takeError();
  auto jit = JitKernel::load(std::move(*object), kernel->symbol);
  if (!jit)
    return jit.takeError();
  return std::make_pair(std::move(*kernel), std::move(*jit));
}

/// Median seconds per call of `fn` over `runs` timed rounds of at least
/// ~10 ms each, and the spread (max - min) / median.
static std::pair<double, double> timeCalls(const std::function<void()> &fn,
                                           int runs) {
  InterleavedTiming t = timeInterleaved({{"kernel", fn}}, runs, 0.01);
  const std::vector<double> &s = t.secondsPerCall[0];
  double med = median(s);
  double lo = *std::min_element(s.begin(), s.end());
  double hi = *std::max_element(s.begin(), s.end());
  return {med, med > 0 ? (hi - lo) / med : 0};
}

static llvm::Expected<std::string> servePeakRequest(const json &r) {
  auto kernelText = stringField(r, "kernel");
  if (!kernelText)
    return kernelText.takeError();
  auto loaded = loadHere(*kernelText);
  if (!loaded)
    return loaded.takeError();
  uint64_t flopsPerIteration = loaded->first.flopsPerIteration;
  if (flopsPerIteration == 0)
    return llvm::createStringError("fma_peak probe lacks its flop count");
  auto probe = reinterpret_cast<void (*)(uint64_t)>(loaded->second->address());
  const uint64_t iterations = 2'000'000;
  // The machine can only slow the probe down: its fastest round is the
  // truest reading of the peak.
  InterleavedTiming t =
      timeInterleaved({{"probe", [&] { probe(iterations); }}}, 7, 0.01);
  const std::vector<double> &s = t.secondsPerCall[0];
  double fastest = *std::min_element(s.begin(), s.end());
  double slowest = *std::max_element(s.begin(), s.end());
  json out = {
      {"peak_gflops", double(iterations) * flopsPerIteration / fastest * 1e-9},
      {"spread", fastest > 0 ? (slowest - fastest) / fastest : 0}};
  return out.dump();
}

/// The "parts" of a request (or of one of its "compare" entries): none
/// when absent, else each [m_begin, m_end, n_begin, n_end] inside C.
static llvm::Expected<std::vector<GemmRange>> partsField(const json &r,
                                                         const GemmDesc &d) {
  std::vector<GemmRange> parts;
  auto partsIt = r.find("parts");
  if (partsIt == r.end())
    return parts;
  if (!partsIt->is_array() || partsIt->empty() || partsIt->size() > 1024)
    return llvm::createStringError(
        "validation request field 'parts' must be a non-empty array");
  for (const json &p : *partsIt) {
    if (!p.is_array() || p.size() != 4 || !p[0].is_number_integer() ||
        !p[1].is_number_integer() || !p[2].is_number_integer() ||
        !p[3].is_number_integer())
      return llvm::createStringError(
          "validation request part must be [m_begin, m_end, n_begin, "
          "n_end]");
    GemmRange g{p[0].get<int64_t>(), p[1].get<int64_t>(), p[2].get<int64_t>(),
                p[3].get<int64_t>()};
    if (g.mBegin < 0 || g.mEnd > d.m || g.mBegin > g.mEnd || g.nBegin < 0 ||
        g.nEnd > d.n || g.nBegin > g.nEnd)
      return llvm::createStringError("validation request part lies outside C");
    parts.push_back(g);
  }
  return parts;
}

namespace {
/// A kernel assembled and loaded here, with the parts of C it runs on.
struct RunnableKernel {
  EmittedKernel kernel;
  std::unique_ptr<JitKernel> jit;
  std::vector<GemmRange> parts;

  /// The workspace of all its parts.
  uint64_t workspaceBytes() const {
    return kernel.workspaceBytes * std::max<size_t>(1, parts.size());
  }
  /// Runs it on `desc`'s operands as the compiled module does
  /// (runGemmParts). A kernel that takes B prepacked (qm.b_prepacked) gets
  /// `b` packed at this call, unless `bPacked` says the caller packed it
  /// (packBOnce: the timed calls).
  void run(const GemmDesc &desc, const float *a, const float *b, float *c,
           void *ws, bool bPacked = false) const {
    std::optional<GuardedBuffer> packed;
    if (kernel.prepackedB && !bPacked) {
      packed = packBOnce(desc, b);
      b = packed->data();
    }
    runGemmParts(jit->gemm(), desc, parts, kernel.workspaceBytes, a, b, c, ws);
  }
  /// Runs it on a convolution's operands (input, filter, output): with
  /// run-time strides, `conv`'s written into every part's header first.
  void run(const ConvDesc &conv, const float *in, const float *flt, float *out,
           void *ws, bool bPacked = false) const {
    for (size_t i = 0; i < std::max<size_t>(1, parts.size()); ++i)
      writeInputStrides(static_cast<char *>(ws) + i * kernel.workspaceBytes,
                        conv);
    run(conv.gemmView(), in, flt, out, ws, bPacked);
  }
  /// B of `desc` in the kernel's prepacked layout, in a buffer whose end
  /// meets a page with no access (a kernel reading past its panels faults,
  /// as past an operand: GemmValidator.cpp).
  GuardedBuffer packBOnce(const GemmDesc &desc, const float *b) const {
    const int64_t bytes = kernel.prepackedB->bytes(desc.n);
    auto buf = GuardedBuffer::allocateBeforeUnmapped(
        (bytes + int64_t(sizeof(float)) - 1) / int64_t(sizeof(float)), 0);
    if (!buf)
      llvm::report_fatal_error(buf.takeError());
    packB(*kernel.prepackedB, desc, b, buf->data());
    return std::move(*buf);
  }
};

/// Several validations of one kernel as one report: the largest errors,
/// the first failure, named by `where` when there are several.
struct ReportsOfOneKernel {
  ValidationReport all;
  explicit ReportsOfOneKernel() { all.passed = true; }
  /// Adds `report`; false once one has failed (stop there).
  bool add(const ValidationReport &report, bool several,
           const std::function<std::string()> &where) {
    all.maxRelError = std::max(all.maxRelError, report.maxRelError);
    all.openBlasMaxRelError =
        std::max(all.openBlasMaxRelError, report.openBlasMaxRelError);
    if (report.passed)
      return true;
    all.passed = false;
    all.failure = several ? where() + ": " + report.failure : report.failure;
    return false;
  }
};

/// What a validation request is about: a GEMM, or a convolution and its
/// GEMM view.
struct RequestProblem {
  GemmDesc gemm;
  std::optional<ConvDesc> conv;

  double flops() const { return conv ? conv->flops() : gemm.flops(); }

  /// The GEMM `kernel` is called on: this one, with its leading dimensions
  /// written to the header when the problem or the kernel
  /// (qm.leading_dims) says they are run-time values.
  GemmDesc callDesc(const RunnableKernel &kernel) const {
    GemmDesc d = gemm;
    d.runtimeLd = d.runtimeLd || kernel.kernel.runtimeLeadingDims;
    d.dynamicM = d.dynamicM || kernel.kernel.runtimeM;
    d.dynamicN = d.dynamicN || kernel.kernel.runtimeN;
    d.dynamicK = d.dynamicK || kernel.kernel.runtimeK;
    return d;
  }

  /// Validates `kernel` on this problem; a run-time-ld GEMM on padded
  /// leading dimensions, which its code must read from the header; a
  /// run-time M or N at its representative size and at smaller and larger
  /// ones (sizesToCheck); a run-time-strides convolution on its input and
  /// on a view of a larger one; the first failure reported.
  llvm::Expected<ValidationReport>
  validate(const RunnableKernel &kernel,
           const ValidationOptions &options) const {
    if (conv)
      return validateConvViews(kernel, options);
    ReportsOfOneKernel reports;
    const GemmDesc base = callDesc(kernel);
    for (auto [m, n, k] : sizesToCheck(base)) {
      GemmDesc call = base;
      call.m = m;
      call.n = n;
      call.k = k;
      if (call.transA && !call.runtimeLd)
        call.lda = m; // A stored K x M
      GemmDesc checked = call.runtimeLd ? call.withPaddedLeadingDims() : call;
      auto report = validateGemm(
          checked,
          [&](const float *a, const float *b, float *c, void *ws) {
            kernel.run(checked, a, b, c, ws);
          },
          kernel.workspaceBytes(), options);
      if (!report)
        return report.takeError();
      if (!reports.add(
              *report, base.dynamicM || base.dynamicN || base.dynamicK, [&] {
                return llvm::formatv("M = {0}, N = {1}, K = {2}", m, n, k)
                    .str();
              }))
        break;
    }
    return reports.all;
  }

  llvm::Expected<ValidationReport>
  validateConvViews(const RunnableKernel &kernel,
                    const ValidationOptions &options) const {
    ConvDesc base = *conv;
    base.runtimeStrides =
        base.runtimeStrides || kernel.kernel.runtimeInputStrides;
    std::vector<ConvDesc> views = {base};
    if (base.runtimeStrides)
      views.push_back(base.withPaddedInputStrides());
    ReportsOfOneKernel reports;
    for (const ConvDesc &view : views) {
      auto report = validateConv(
          view,
          [&](const float *in, const float *flt, float *out, void *ws) {
            kernel.run(view, in, flt, out, ws);
          },
          kernel.workspaceBytes(), options);
      if (!report)
        return report.takeError();
      if (!reports.add(*report, views.size() > 1, [&] {
            return llvm::formatv("input strides {0}x{1}x{2}",
                                 view.inputStrides[0], view.inputStrides[1],
                                 view.inputStrides[2])
                .str();
          }))
        break;
    }
    return reports.all;
  }

  /// Runs `kernel` on this problem's operands, as the module calls it
  /// (`bPacked`: b is already in the kernel's prepacked layout).
  void run(const RunnableKernel &kernel, const float *a, const float *b,
           float *c, void *ws, bool bPacked = false) const {
    if (conv) {
      ConvDesc call = *conv;
      call.runtimeStrides =
          call.runtimeStrides || kernel.kernel.runtimeInputStrides;
      kernel.run(call, a, b, c, ws, bPacked);
      return;
    }
    kernel.run(callDesc(kernel), a, b, c, ws, bPacked);
  }

  /// B as the timed calls of `kernel` take it: `b`, or packed once into
  /// `storage` for a kernel that takes it prepacked (outside the timing,
  /// as a module packs constant weights once).
  const float *timedB(const RunnableKernel &kernel, const float *b,
                      std::optional<GuardedBuffer> &storage) const {
    if (!kernel.kernel.prepackedB)
      return b;
    storage = kernel.packBOnce(gemm, b);
    return storage->data();
  }

  /// The (M, N, K) a kernel is validated at: the problem's, and for a
  /// run-time size also one, a third of it and one and a half times it
  /// (edges and more blocks than it was blocked for), the run-time sizes
  /// moving together; an f32 run-time K at 0 too, last (C =
  /// epilogue(C or 0); GemmDesc::runtimeKStoresC).
  static std::vector<std::tuple<int64_t, int64_t, int64_t>>
  sizesToCheck(const GemmDesc &gemm) {
    auto values = [](int64_t v, bool dynamic) {
      return dynamic ? std::vector<int64_t>{1, std::max<int64_t>(1, v / 3), v,
                                            v + v / 2 + 1}
                     : std::vector<int64_t>{v, v, v, v};
    };
    std::vector<int64_t> ms = values(gemm.m, gemm.dynamicM),
                         ns = values(gemm.n, gemm.dynamicN),
                         ks = values(gemm.k, gemm.dynamicK);
    std::vector<std::tuple<int64_t, int64_t, int64_t>> sizes;
    for (size_t i = 0; i < ms.size(); ++i)
      sizes.emplace_back(ms[i], ns[i], ks[i]);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    if (gemm.dynamicK && gemm.runtimeKStoresC())
      sizes.emplace_back(gemm.m, gemm.n, 0);
    return sizes;
  }
};

/// Operands to time kernels on: the same values for every kernel timed.
struct TimingOperands {
  GuardedBuffer a, b, c;
  /// An epilogue's bias and a 16-bit output, when the problem has them.
  GuardedBuffer bias, out;

  /// Writes their pointers into a timed kernel's workspace header, as the
  /// module does before each call (runGemmParts copies them to the parts).
  void writeHeader(const GemmDesc &d, void *ws) const {
    if (d.hasEpilogue())
      writeBias(ws, bias.data());
    if (d.halfOutput)
      writeHalfOutput(ws, out.data());
  }
};
} // namespace

/// Loads the kernel of `r` ("kernel", and "parts" when given) for this host.
static llvm::Expected<RunnableKernel> loadRunnable(const json &r,
                                                   const GemmDesc &d) {
  auto text = stringField(r, "kernel");
  if (!text)
    return text.takeError();
  auto parts = partsField(r, d);
  if (!parts)
    return parts.takeError();
  auto loaded = loadHere(*text);
  if (!loaded)
    return loaded.takeError();
  if (loaded->first.prepackedB)
    if (auto err = loaded->first.prepackedB->check(d))
      return std::move(err);
  return RunnableKernel{std::move(loaded->first), std::move(loaded->second),
                        std::move(*parts)};
}

static llvm::Expected<TimingOperands>
allocateTimingOperands(const RequestProblem &p) {
  const ConvDesc *conv = p.conv ? &*p.conv : nullptr;
  auto a =
      GuardedBuffer::allocate(conv ? conv->inputSpan() : p.gemm.aSpan(), 0);
  auto b = GuardedBuffer::allocate(
      conv ? conv->filterElements() : p.gemm.bSpan(), 0);
  auto c =
      GuardedBuffer::allocate(conv ? conv->outputSpan() : p.gemm.cSpan(), 0);
  if (!a || !b || !c)
    return llvm::createStringError("cannot allocate timing buffers");
  // A bias as long as either side; D in bf16 (half a float each): a
  // convolution's holds every image's output (its GEMM view is one image's).
  const GemmDesc &g = p.gemm;
  auto bias =
      GuardedBuffer::allocate(g.hasEpilogue() ? std::max(g.m, g.n) : 0, 0);
  const int64_t dElements = !g.halfOutput ? 0
                            : conv        ? conv->outputElements()
                                          : g.dSpan();
  auto d = GuardedBuffer::allocate((dElements + 1) / 2, 0);
  if (!bias || !d)
    return llvm::createStringError("cannot allocate timing buffers");
  TimingOperands out{std::move(*a), std::move(*b), std::move(*c),
                     std::move(*bias), std::move(*d)};
  for (GuardedBuffer *buf : {&out.a, &out.b, &out.c, &out.bias})
    for (int64_t i = 0; i < buf->size(); ++i)
      buf->data()[i] = float((i * 7) % 13) / 13.0f - 0.5f;
  // bf16 and f16 operands: the same values as 16-bit floats in the first
  // half (the buffers hold twice what they need), never NaN patterns from
  // float bits; 8-bit ones as bytes over their range, C as small s32.
  if (!conv && isHalfPrecision(p.gemm.precision)) {
    const validation::HalfFloat half =
        validation::halfFloat(p.gemm.precision == GemmPrecision::F16);
    for (GuardedBuffer *buf : {&out.a, &out.b}) {
      auto *bits = reinterpret_cast<uint16_t *>(buf->data());
      for (int64_t i = 0; i < buf->size(); ++i)
        bits[i] = half.bitsOf(float((i * 7) % 13) / 13.0f - 0.5f);
    }
  }
  if (!conv && isIntegerPrecision(p.gemm.precision)) {
    for (GuardedBuffer *buf : {&out.a, &out.b}) {
      auto *bytes = reinterpret_cast<uint8_t *>(buf->data());
      for (int64_t i = 0; i < buf->size(); ++i)
        bytes[i] = uint8_t((i * 37) % 251);
    }
    auto *c = reinterpret_cast<int32_t *>(out.c.data());
    for (int64_t i = 0; i < out.c.size(); ++i)
      c[i] = int32_t(i % 7) - 3;
  }
  return out;
}

/// A workspace for `kernel`'s timed calls.
static llvm::Expected<GuardedBuffer>
allocateWorkspace(const RunnableKernel &kernel) {
  auto ws = GuardedBuffer::allocate(
      int64_t(kernel.workspaceBytes() / sizeof(float) + 16), 0);
  if (!ws)
    return llvm::createStringError("cannot allocate timing buffers");
  return ws;
}

/// "compare": several kernels for one problem, each validated, then timed
/// side by side (interleaved round by round, timeInterleaved) for `runs`
/// rounds on the same inputs. Each answer entry has the kernel's median
/// GFLOPS and its speed relative to the first kernel timed (the median over
/// the rounds of the first's time over its own); one that fails validation
/// is not timed.
static llvm::Expected<std::string>
serveCompareRequest(const json &list, const RequestProblem &problem, int runs) {
  if (!list.is_array() || list.empty() || list.size() > 16)
    return llvm::createStringError(
        "validation request field 'compare' must be an array of 1 to 16 "
        "kernels");
  struct Entry {
    RunnableKernel kernel;
    GuardedBuffer ws;
    bool passed = false;
    std::string failure;
    std::optional<GuardedBuffer> packedB; ///< B as the kernel takes it
  };
  std::vector<Entry> entries;
  for (const json &e : list) {
    if (!e.is_object())
      return llvm::createStringError(
          "validation request 'compare' entries must be objects");
    auto kernel = loadRunnable(e, problem.gemm);
    if (!kernel)
      return kernel.takeError();
    entries.push_back(
        {std::move(*kernel), GuardedBuffer(), false, "", std::nullopt});
  }
  auto operands = allocateTimingOperands(problem);
  if (!operands)
    return operands.takeError();
  // All of them validate on the same inputs: one set of fp64 references.
  ReferenceCache references;
  ValidationOptions options;
  options.referenceCache = &references;
  std::vector<TimedCandidate> cands;
  for (Entry &e : entries) {
    auto report = problem.validate(e.kernel, options);
    if (!report)
      return report.takeError();
    e.passed = report->passed;
    e.failure = report->failure;
    if (!e.passed)
      continue;
    auto ws = allocateWorkspace(e.kernel);
    if (!ws)
      return ws.takeError();
    e.ws = std::move(*ws);
    operands->writeHeader(problem.gemm, e.ws.data());
    const RunnableKernel *kernel = &e.kernel;
    const RequestProblem *p = &problem;
    float *a = operands->a.data(), *c = operands->c.data();
    const float *b = problem.timedB(e.kernel, operands->b.data(), e.packedB);
    void *pws = e.ws.data();
    cands.push_back(
        {e.kernel.kernel.symbol, [=] { p->run(*kernel, a, b, c, pws, true); }});
  }
  json answer = json::array();
  InterleavedTiming t;
  if (!cands.empty())
    t = timeInterleaved(cands, runs, 0.02);
  for (size_t i = 0, k = 0; i < entries.size(); ++i) {
    const Entry &e = entries[i];
    json out = {{"symbol", e.kernel.kernel.symbol},
                {"passed", e.passed},
                {"failure", e.failure}};
    if (e.passed) {
      const std::vector<double> &s = t.secondsPerCall[k];
      out["gflops"] = problem.flops() / median(s) * 1e-9;
      // Relative to the first kernel timed (the first entry when it
      // passed).
      out["speedup"] = medianPairedSpeedup(s, t.secondsPerCall[0]);
      ++k;
    }
    answer.push_back(out);
  }
  json out = {{"compared", answer}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

llvm::Expected<std::string>
qimeng::serveValidationRequest(llvm::StringRef text) {
  json r = json::parse(text.begin(), text.end(), nullptr, false);
  if (r.is_discarded() || !r.is_object())
    return llvm::createStringError("validation request is not a JSON object");
  auto version = r.find("version");
  if (version == r.end() || !version->is_number_integer() ||
      version->get<int64_t>() != 1)
    return llvm::createStringError(
        "unsupported validation request version " +
        (version == r.end() ? std::string("(none)") : version->dump()));
  auto op = r.find("op");
  if (op != r.end() && op->is_string() && op->get<std::string>() == "fma_peak")
    return servePeakRequest(r);
  // What is validated: a GEMM, or a convolution ("op": "sconv2d"). Both
  // kernels take three float pointers and a workspace; parts split the
  // GEMM (the convolution's GEMM view).
  std::string opName = "sgemm";
  if (op != r.end() && op->is_string())
    opName = op->get<std::string>();
  RequestProblem problem;
  if (opName == "sconv2d") {
    auto desc = convDescFromJson(r, "validation request");
    if (!desc)
      return desc.takeError();
    if (auto err = desc->verify())
      return std::move(err);
    problem.conv = *desc;
    problem.gemm = desc->gemmView();
  } else if (opName == "sgemm") {
    auto desc = gemmDescFromJson(r, "validation request");
    if (!desc)
      return desc.takeError();
    problem.gemm = *desc;
    if (auto err = problem.gemm.verify())
      return std::move(err);
  } else {
    return llvm::createStringError("unknown validation request op '" + opName +
                                   "'; expected sgemm, sconv2d or fma_peak");
  }
  int runs = 0;
  auto measure = r.find("measure_runs");
  if (measure != r.end()) {
    if (!measure->is_number_integer() || measure->get<int64_t>() < 1 ||
        measure->get<int64_t>() > 1000)
      return llvm::createStringError(
          "validation request field 'measure_runs' must be an integer in "
          "1..1000");
    runs = measure->get<int>();
  }
  auto compare = r.find("compare");
  if (compare != r.end())
    return serveCompareRequest(*compare, problem, runs > 0 ? runs : 11);

  // The kernel runs here, on this machine: assemble for the host.
  auto loaded = loadRunnable(r, problem.gemm);
  if (!loaded)
    return loaded.takeError();
  const RunnableKernel &kernel = *loaded;
  // Both validations (before and after timing) use the same inputs: the
  // second reuses the first's fp64 references.
  ReferenceCache references;
  ValidationOptions options;
  options.referenceCache = &references;
  auto validate = [&]() { return problem.validate(kernel, options); };
  auto report = validate();
  if (!report)
    return report.takeError();
  json out = {
      {"passed", report->passed},
      {"failure", report->failure},
      {"max_rel_error", jsonNumber(report->maxRelError)},
      {"openblas_max_rel_error", jsonNumber(report->openBlasMaxRelError)},
      {"symbol", kernel.kernel.symbol}};
  if (runs > 0 && report->passed) {
    // Validated: time it on fresh buffers, then validate it again.
    auto operands = allocateTimingOperands(problem);
    if (!operands)
      return operands.takeError();
    auto ws = allocateWorkspace(kernel);
    if (!ws)
      return ws.takeError();
    operands->writeHeader(problem.gemm, ws->data());
    std::optional<GuardedBuffer> packedB;
    const float *b = problem.timedB(kernel, operands->b.data(), packedB);
    auto [seconds, spread] = timeCalls(
        [&] {
          problem.run(kernel, operands->a.data(), b, operands->c.data(),
                      ws->data(), true);
        },
        runs);
    auto again = validate();
    if (!again)
      return again.takeError();
    out["gflops"] = problem.flops() / seconds * 1e-9;
    out["spread"] = spread;
    if (!again->passed) {
      out["passed"] = false;
      out["failure"] = "after timing: " + again->failure;
    }
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}
