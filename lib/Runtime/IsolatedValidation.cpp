//===- IsolatedValidation.cpp ---------------------------------------------===//
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Config.h"
#include "qimeng/Emit/Assembler.h"
#include "qimeng/Kernel/KernelJson.h"
#include "qimeng/Runtime/Benchmark.h"
#include "qimeng/Runtime/JitKernel.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include <algorithm>
#include <thread>
#include <nlohmann/json.hpp>

using namespace qimeng;
using json = nlohmann::json;

IsolatedValidationOptions IsolatedValidationOptions::defaults() {
  IsolatedValidationOptions o;
  o.runnerPath = std::string(QIMENG_BINARY_DIR) + "/qimeng-runner";
  if (auto v = llvm::sys::Process::GetEnv("QIMENG_RUNNER"))
    o.runnerPath = *v;
  return o;
}

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
  std::vector<std::thread> threads;
  for (size_t i = 1; i < parts.size(); ++i)
    threads.emplace_back([&, i] { kernel(a, b, c, slice(i)); });
  kernel(a, b, c, slice(0));
  for (std::thread &t : threads)
    t.join();
}

std::string qimeng::validationRequestJson(const GemmDesc &d,
                                          const Target &target,
                                          const EmittedKernel &kernel,
                                          const std::vector<GemmRange> &parts) {
  json r = toJson(d);
  r["version"] = 1;
  r["op"] = "sgemm";
  r["target"] = target.str();
  r["kernel"] = kernel.text;
  if (!parts.empty()) {
    json list = json::array();
    for (const GemmRange &p : parts)
      list.push_back({p.mBegin, p.mEnd, p.nBegin, p.nEnd});
    r["parts"] = list;
  }
  return r.dump(-1, ' ', false, json::error_handler_t::replace);
}

// No-throw field access: a wrong-typed field is an error, never an abort.
static llvm::Expected<std::string> stringField(const json &j,
                                               const char *name) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_string())
    return llvm::createStringError(
        llvm::formatv("validation request field '{0}' must be a string", name)
            .str());
  return it->get<std::string>();
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
  auto desc = gemmDescFromJson(r, "validation request");
  if (!desc)
    return desc.takeError();
  GemmDesc d = *desc;
  auto kernelText = stringField(r, "kernel");
  if (!kernelText)
    return kernelText.takeError();
  if (auto err = d.verify())
    return std::move(err);
  std::vector<GemmRange> parts;
  auto partsIt = r.find("parts");
  if (partsIt != r.end()) {
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
      GemmRange g{p[0].get<int64_t>(), p[1].get<int64_t>(),
                  p[2].get<int64_t>(), p[3].get<int64_t>()};
      if (g.mBegin < 0 || g.mEnd > d.m || g.mBegin > g.mEnd || g.nBegin < 0 ||
          g.nEnd > d.n || g.nBegin > g.nEnd)
        return llvm::createStringError(
            "validation request part lies outside C");
      parts.push_back(g);
    }
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

  // The kernel runs here, on this machine: assemble for the host.
  auto loaded = loadHere(*kernelText);
  if (!loaded)
    return loaded.takeError();
  const EmittedKernel &kernel = loaded->first;
  GemmKernelFn fn = loaded->second->gemm();
  uint64_t wsBytes = kernel.workspaceBytes;
  uint64_t totalWs = wsBytes * std::max<size_t>(1, parts.size());
  auto call = [&](const float *a, const float *b, float *c, void *ws) {
    runGemmParts(fn, parts, wsBytes, a, b, c, ws);
  };
  auto report = validateGemm(d, call, totalWs);
  if (!report)
    return report.takeError();
  json out = {{"passed", report->passed},
              {"failure", report->failure},
              {"max_rel_error", report->maxRelError},
              {"openblas_max_rel_error", report->openBlasMaxRelError},
              {"symbol", kernel.symbol}};
  if (runs > 0 && report->passed) {
    // Validated: time it on fresh buffers, then validate it again.
    auto a = GuardedBuffer::allocate(d.aSpan(), 0);
    auto b = GuardedBuffer::allocate(d.bSpan(), 0);
    auto c = GuardedBuffer::allocate(d.cSpan(), 0);
    auto ws = GuardedBuffer::allocate(int64_t(totalWs / sizeof(float) + 16), 0);
    if (!a || !b || !c || !ws)
      return llvm::createStringError("cannot allocate timing buffers");
    for (GuardedBuffer *buf : {&*a, &*b, &*c})
      for (int64_t i = 0; i < buf->size(); ++i)
        buf->data()[i] = float((i * 7) % 13) / 13.0f - 0.5f;
    auto [seconds, spread] = timeCalls(
        [&] { call(a->data(), b->data(), c->data(), ws->data()); }, runs);
    auto again = validateGemm(d, call, totalWs);
    if (!again)
      return again.takeError();
    out["gflops"] = d.flops() / seconds * 1e-9;
    out["spread"] = spread;
    if (!again->passed) {
      out["passed"] = false;
      out["failure"] = "after timing: " + again->failure;
    }
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {
/// What one qimeng-runner run gave: its JSON answer, or why the kernel
/// failed (crash, timeout) with `answer` empty.
struct RunnerOutcome {
  json answer;
  std::string failure;
};
} // namespace

static llvm::Expected<RunnerOutcome>
runRunner(const std::string &request,
          const IsolatedValidationOptions &options) {
  SubprocessOptions sp;
  sp.timeoutSeconds = options.timeoutSeconds;
  sp.memoryLimitMB = options.memoryLimitMB;
  sp.outputCap = 1u << 20;
  std::vector<std::string> args = {options.runnerPath, "--validate-gemm"};
  auto result = runSubprocess(options.runnerPath, args, request, sp);
  if (!result)
    return result.takeError();
  RunnerOutcome outcome;
  if (result->timedOut) {
    outcome.failure = llvm::formatv("kernel did not finish within {0} s",
                                    options.timeoutSeconds)
                          .str();
    return outcome;
  }
  if (result->crashed) {
    outcome.failure = "kernel crashed the runner: " + result->statusMessage;
    return outcome;
  }
  if (result->exitCode != 0) {
    llvm::StringRef err = llvm::StringRef(result->err).trim();
    return llvm::createStringError(
        llvm::formatv("qimeng-runner failed (exit {0}): {1}", result->exitCode,
                      err.empty() ? "no message" : err)
            .str());
  }
  outcome.answer = json::parse(result->out, nullptr, false);
  if (outcome.answer.is_discarded() || !outcome.answer.is_object())
    return llvm::createStringError("qimeng-runner answered something that is "
                                   "not a JSON object");
  return outcome;
}

static llvm::Expected<ValidationReport>
reportFromAnswer(const RunnerOutcome &outcome) {
  ValidationReport report;
  if (!outcome.failure.empty()) {
    report.failure = outcome.failure;
    return report;
  }
  const json &r = outcome.answer;
  auto passed = r.find("passed");
  auto failure = r.find("failure");
  auto maxRel = r.find("max_rel_error");
  auto blasRel = r.find("openblas_max_rel_error");
  if (passed == r.end() || !passed->is_boolean() || failure == r.end() ||
      !failure->is_string() || maxRel == r.end() || !maxRel->is_number() ||
      blasRel == r.end() || !blasRel->is_number())
    return llvm::createStringError("qimeng-runner's answer lacks fields");
  report.passed = passed->get<bool>();
  report.failure = failure->get<std::string>();
  report.maxRelError = maxRel->get<double>();
  report.openBlasMaxRelError = blasRel->get<double>();
  return report;
}

llvm::Expected<ValidationReport>
qimeng::validateGemmIsolated(const GemmDesc &desc, const Target &target,
                             const EmittedKernel &kernel,
                             const IsolatedValidationOptions &options,
                             const std::vector<GemmRange> &parts) {
  auto outcome =
      runRunner(validationRequestJson(desc, target, kernel, parts), options);
  if (!outcome)
    return outcome.takeError();
  return reportFromAnswer(*outcome);
}

llvm::Expected<MeasuredKernel>
qimeng::measureGemmIsolated(const GemmDesc &desc, const Target &target,
                            const EmittedKernel &kernel, int runs,
                            const IsolatedValidationOptions &options,
                            const std::vector<GemmRange> &parts) {
  json request =
      json::parse(validationRequestJson(desc, target, kernel, parts));
  request["measure_runs"] = runs;
  auto outcome = runRunner(
      request.dump(-1, ' ', false, json::error_handler_t::replace), options);
  if (!outcome)
    return outcome.takeError();
  auto report = reportFromAnswer(*outcome);
  if (!report)
    return report.takeError();
  MeasuredKernel m;
  m.validation = *report;
  if (report->passed) {
    auto gflops = outcome->answer.find("gflops");
    auto spread = outcome->answer.find("spread");
    if (gflops == outcome->answer.end() || !gflops->is_number() ||
        spread == outcome->answer.end() || !spread->is_number())
      return llvm::createStringError("qimeng-runner's answer lacks its timing");
    m.gflops = gflops->get<double>();
    m.spread = spread->get<double>();
  }
  return m;
}

llvm::Expected<double>
qimeng::measurePeakIsolated(const EmittedKernel &probe,
                            const IsolatedValidationOptions &options) {
  json request = {{"version", 1}, {"op", "fma_peak"}, {"kernel", probe.text}};
  auto outcome = runRunner(request.dump(), options);
  if (!outcome)
    return outcome.takeError();
  if (!outcome->failure.empty())
    return llvm::createStringError("fma_peak probe failed: " +
                                   outcome->failure);
  auto peak = outcome->answer.find("peak_gflops");
  if (peak == outcome->answer.end() || !peak->is_number() ||
      !(peak->get<double>() > 0))
    return llvm::createStringError("qimeng-runner's peak answer is invalid");
  return peak->get<double>();
}
