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
#include <nlohmann/json.hpp>
#include <optional>

using namespace qimeng;
using json = nlohmann::json;

void qimeng::runGemmParts(GemmKernelFn kernel,
                          const std::vector<GemmRange> &parts,
                          uint64_t workspaceBytes, const float *a,
                          const float *b, float *c, void *workspace) {
  if (parts.empty()) {
    kernel(a, b, c, workspace);
    return;
  }
  auto slice = [&](size_t i) {
    return static_cast<char *>(workspace) + i * workspaceBytes;
  };
  for (size_t i = 0; i < parts.size(); ++i)
    writeRange(slice(i), parts[i]);
  // OpenMP, as in the compiled module (omp.parallel + omp.wsloop): a
  // persistent team, one part per iteration, static schedule.
  const int64_t n = static_cast<int64_t>(parts.size());
#pragma omp parallel for num_threads(n) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    kernel(a, b, c, slice(i));
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
  auto [seconds, spread] = timeCalls([&] { probe(iterations); }, 7);
  json out = {
      {"peak_gflops", double(iterations) * flopsPerIteration / seconds * 1e-9},
      {"spread", spread}};
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

/// Fills timing buffers with the same values for every kernel timed.
static void fillForTiming(GuardedBuffer &buf) {
  for (int64_t i = 0; i < buf.size(); ++i)
    buf.data()[i] = float((i * 7) % 13) / 13.0f - 0.5f;
}

/// "compare": several kernels for one problem, each validated, then timed
/// side by side (interleaved round by round, timeInterleaved) for `runs`
/// rounds on the same inputs. Each answer entry has the kernel's median
/// GFLOPS and its speed relative to the first kernel (the median over the
/// rounds of the first's time over its own); one that fails validation is
/// not timed.
static llvm::Expected<std::string>
serveCompareRequest(const json &list, const GemmDesc &d,
                    const std::optional<ConvDesc> &conv, int runs) {
  if (!list.is_array() || list.empty() || list.size() > 16)
    return llvm::createStringError(
        "validation request field 'compare' must be an array of 1 to 16 "
        "kernels");
  struct Entry {
    EmittedKernel kernel;
    std::unique_ptr<JitKernel> jit;
    std::vector<GemmRange> parts;
    uint64_t totalWs = 0;
    GuardedBuffer ws;
    bool passed = false;
    std::string failure;
  };
  std::vector<Entry> entries;
  ReferenceCache references;
  ValidationOptions options;
  options.referenceCache = &references;
  for (const json &e : list) {
    if (!e.is_object())
      return llvm::createStringError(
          "validation request 'compare' entries must be objects");
    auto text = stringField(e, "kernel");
    if (!text)
      return text.takeError();
    auto parts = partsField(e, d);
    if (!parts)
      return parts.takeError();
    auto loaded = loadHere(*text);
    if (!loaded)
      return loaded.takeError();
    Entry entry;
    entry.kernel = std::move(loaded->first);
    entry.jit = std::move(loaded->second);
    entry.parts = std::move(*parts);
    entry.totalWs =
        entry.kernel.workspaceBytes * std::max<size_t>(1, entry.parts.size());
    entries.push_back(std::move(entry));
  }
  auto caller = [](const Entry &e) {
    GemmKernelFn fn = e.jit->gemm();
    uint64_t wsBytes = e.kernel.workspaceBytes;
    const std::vector<GemmRange> *parts = &e.parts;
    return [fn, wsBytes, parts](const float *a, const float *b, float *c,
                                void *ws) {
      runGemmParts(fn, *parts, wsBytes, a, b, c, ws);
    };
  };
  auto a = GuardedBuffer::allocate(conv ? conv->inputSpan() : d.aSpan(), 0);
  auto b =
      GuardedBuffer::allocate(conv ? conv->filterElements() : d.bSpan(), 0);
  auto c =
      GuardedBuffer::allocate(conv ? conv->outputElements() : d.cSpan(), 0);
  if (!a || !b || !c)
    return llvm::createStringError("cannot allocate timing buffers");
  for (GuardedBuffer *buf : {&*a, &*b, &*c})
    fillForTiming(*buf);
  std::vector<TimedCandidate> cands;
  std::vector<size_t> timed;
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry &e = entries[i];
    auto call = caller(e);
    auto report = conv ? validateConv(*conv, call, e.totalWs, options)
                       : validateGemm(d, call, e.totalWs, options);
    if (!report)
      return report.takeError();
    e.passed = report->passed;
    e.failure = report->failure;
    if (!e.passed)
      continue;
    auto ws =
        GuardedBuffer::allocate(int64_t(e.totalWs / sizeof(float) + 16), 0);
    if (!ws)
      return llvm::createStringError("cannot allocate timing buffers");
    e.ws = std::move(*ws);
    float *pa = a->data(), *pb = b->data(), *pc = c->data();
    void *pws = e.ws.data();
    cands.push_back({e.kernel.symbol, [=] { call(pa, pb, pc, pws); }});
    timed.push_back(i);
  }
  json answer = json::array();
  InterleavedTiming t;
  if (!cands.empty())
    t = timeInterleaved(cands, runs, 0.02);
  const double flops = conv ? conv->flops() : d.flops();
  for (size_t i = 0, k = 0; i < entries.size(); ++i) {
    const Entry &e = entries[i];
    json out = {{"symbol", e.kernel.symbol},
                {"passed", e.passed},
                {"failure", e.failure}};
    if (e.passed) {
      const std::vector<double> &s = t.secondsPerCall[k];
      out["gflops"] = flops / median(s) * 1e-9;
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
  GemmDesc d;
  std::optional<ConvDesc> conv;
  if (opName == "sconv2d") {
    auto desc = convDescFromJson(r, "validation request");
    if (!desc)
      return desc.takeError();
    if (auto err = desc->verify())
      return std::move(err);
    conv = *desc;
    d = desc->gemmView();
  } else if (opName == "sgemm") {
    auto desc = gemmDescFromJson(r, "validation request");
    if (!desc)
      return desc.takeError();
    d = *desc;
    if (auto err = d.verify())
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
    return serveCompareRequest(*compare, d, conv, runs > 0 ? runs : 11);
  auto kernelText = stringField(r, "kernel");
  if (!kernelText)
    return kernelText.takeError();
  auto parts = partsField(r, d);
  if (!parts)
    return parts.takeError();

  // The kernel runs here, on this machine: assemble for the host.
  auto loaded = loadHere(*kernelText);
  if (!loaded)
    return loaded.takeError();
  const EmittedKernel &kernel = loaded->first;
  GemmKernelFn fn = loaded->second->gemm();
  uint64_t wsBytes = kernel.workspaceBytes;
  uint64_t totalWs = wsBytes * std::max<size_t>(1, parts->size());
  auto call = [&](const float *a, const float *b, float *c, void *ws) {
    runGemmParts(fn, *parts, wsBytes, a, b, c, ws);
  };
  // Both validations (before and after timing) use the same inputs: the
  // second reuses the first's fp64 references.
  ReferenceCache references;
  ValidationOptions options;
  options.referenceCache = &references;
  auto validate = [&]() {
    return conv ? validateConv(*conv, call, totalWs, options)
                : validateGemm(d, call, totalWs, options);
  };
  auto report = validate();
  if (!report)
    return report.takeError();
  json out = {{"passed", report->passed},
              {"failure", report->failure},
              {"max_rel_error", report->maxRelError},
              {"openblas_max_rel_error", report->openBlasMaxRelError},
              {"symbol", kernel.symbol}};
  if (runs > 0 && report->passed) {
    // Validated: time it on fresh buffers, then validate it again.
    auto a = GuardedBuffer::allocate(conv ? conv->inputSpan() : d.aSpan(), 0);
    auto b =
        GuardedBuffer::allocate(conv ? conv->filterElements() : d.bSpan(), 0);
    auto c =
        GuardedBuffer::allocate(conv ? conv->outputElements() : d.cSpan(), 0);
    auto ws = GuardedBuffer::allocate(int64_t(totalWs / sizeof(float) + 16), 0);
    if (!a || !b || !c || !ws)
      return llvm::createStringError("cannot allocate timing buffers");
    for (GuardedBuffer *buf : {&*a, &*b, &*c})
      fillForTiming(*buf);
    auto [seconds, spread] = timeCalls(
        [&] { call(a->data(), b->data(), c->data(), ws->data()); }, runs);
    auto again = validate();
    if (!again)
      return again.takeError();
    out["gflops"] = (conv ? conv->flops() : d.flops()) / seconds * 1e-9;
    out["spread"] = spread;
    if (!again->passed) {
      out["passed"] = false;
      out["failure"] = "after timing: " + again->failure;
    }
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}
