//===- IsolatedValidation.cpp ---------------------------------------------===//
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Config.h"
#include "qimeng/Emit/Assembler.h"
#include "qimeng/Kernel/KernelJson.h"
#include "qimeng/Runtime/Benchmark.h"
#include "qimeng/Runtime/JitKernel.h"
#include "qimeng/Support/JsonFieldReader.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include <algorithm>
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

/// A request's problem fields: what is validated, for which target.
static json problemRequest(const KernelProblem &problem, const Target &target) {
  json r = problem.conv() ? toJson(*problem.conv()) : toJson(problem.gemm());
  r["version"] = 1;
  r["op"] = problem.opName().str();
  r["target"] = target.str();
  return r;
}

/// Sets `r`'s "kernel" and, when there are any, its "parts".
static void setKernel(json &r, const EmittedKernel &kernel,
                      const std::vector<GemmRange> &parts) {
  r["kernel"] = kernel.text;
  if (!parts.empty()) {
    json list = json::array();
    for (const GemmRange &p : parts)
      list.push_back({p.mBegin, p.mEnd, p.nBegin, p.nEnd});
    r["parts"] = list;
  }
}

static std::string dumpRequest(const json &r) {
  return r.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string qimeng::validationRequestJson(const KernelProblem &problem,
                                          const Target &target,
                                          const EmittedKernel &kernel,
                                          const std::vector<GemmRange> &parts) {
  json r = problemRequest(problem, target);
  setKernel(r, kernel, parts);
  return dumpRequest(r);
}

namespace {
/// What one qimeng-runner run gave: its JSON answer, or why the kernel
/// failed (crash, timeout) with `answer` empty.
struct RunnerOutcome {
  json answer;
  std::string failure;
};
} // namespace

/// `what` names what a timeout stopped.
static llvm::Expected<RunnerOutcome>
runRunner(const std::string &request, const IsolatedValidationOptions &options,
          llvm::StringRef what = "kernel") {
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
    outcome.failure = llvm::formatv("{0} did not finish within {1} s", what,
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
  JsonFieldReader fields(r, "qimeng-runner answer");
  if (auto err = fields.boolean("passed", report.passed))
    return std::move(err);
  if (auto err = fields.string("failure", report.failure))
    return std::move(err);
  if (auto err = fields.number("max_rel_error", report.maxRelError))
    return std::move(err);
  if (auto err =
          fields.number("openblas_max_rel_error", report.openBlasMaxRelError))
    return std::move(err);
  return report;
}

llvm::Expected<ValidationReport>
qimeng::validateIsolated(const KernelProblem &problem, const Target &target,
                         const EmittedKernel &kernel,
                         const IsolatedValidationOptions &options,
                         const std::vector<GemmRange> &parts) {
  auto outcome =
      runRunner(validationRequestJson(problem, target, kernel, parts), options);
  if (!outcome)
    return outcome.takeError();
  return reportFromAnswer(*outcome);
}

llvm::Expected<MeasuredKernel>
qimeng::measureIsolated(const KernelProblem &problem, const Target &target,
                        const EmittedKernel &kernel, int runs,
                        const IsolatedValidationOptions &options,
                        const std::vector<GemmRange> &parts) {
  json request = problemRequest(problem, target);
  setKernel(request, kernel, parts);
  request["measure_runs"] = runs;
  auto outcome = runRunner(dumpRequest(request), options);
  if (!outcome)
    return outcome.takeError();
  auto report = reportFromAnswer(*outcome);
  if (!report)
    return report.takeError();
  MeasuredKernel m;
  m.validation = *report;
  if (report->passed) {
    JsonFieldReader fields(outcome->answer, "qimeng-runner answer");
    if (auto err = fields.number("gflops", m.gflops))
      return std::move(err);
    if (auto err = fields.number("spread", m.spread))
      return std::move(err);
  }
  return m;
}

llvm::Expected<std::vector<ComparedKernel>> qimeng::compareIsolated(
    const KernelProblem &problem, const Target &target,
    const std::vector<std::pair<EmittedKernel, std::vector<GemmRange>>>
        &kernels,
    int rounds, const IsolatedValidationOptions &options) {
  if (kernels.empty())
    return std::vector<ComparedKernel>{};
  json request = problemRequest(problem, target);
  request["measure_runs"] = rounds;
  json list = json::array();
  for (const auto &[kernel, parts] : kernels) {
    json entry = json::object();
    setKernel(entry, kernel, parts);
    list.push_back(entry);
  }
  request["compare"] = list;
  // One runner validates every kernel (at several sizes where they are
  // run-time) and times them all: each kernel's limit, added up.
  IsolatedValidationOptions all = options;
  all.timeoutSeconds = options.timeoutSeconds * unsigned(kernels.size());
  auto outcome = runRunner(
      dumpRequest(request), all,
      llvm::formatv("the validation and timing of {0} kernels", kernels.size())
          .str());
  if (!outcome)
    return outcome.takeError();
  if (!outcome->failure.empty())
    return llvm::createStringError("side-by-side timing failed: " +
                                   outcome->failure);
  auto compared = outcome->answer.find("compared");
  if (compared == outcome->answer.end() || !compared->is_array() ||
      compared->size() != kernels.size())
    return llvm::createStringError(
        "qimeng-runner's comparison answer is invalid");
  std::vector<ComparedKernel> out;
  for (const json &e : *compared) {
    ComparedKernel k;
    JsonFieldReader fields(e, "qimeng-runner comparison");
    if (auto err = fields.boolean("passed", k.passed))
      return std::move(err);
    if (auto err = fields.string("failure", k.failure))
      return std::move(err);
    if (k.passed) {
      if (auto err = fields.number("gflops", k.gflops))
        return std::move(err);
      if (auto err = fields.number("speedup", k.speedup))
        return std::move(err);
    }
    out.push_back(std::move(k));
  }
  return out;
}

llvm::Expected<ValidationReport>
qimeng::validateGemmIsolated(const GemmDesc &desc, const Target &target,
                             const EmittedKernel &kernel,
                             const IsolatedValidationOptions &options,
                             const std::vector<GemmRange> &parts) {
  return validateIsolated(desc, target, kernel, options, parts);
}

llvm::Expected<MeasuredKernel>
qimeng::measureGemmIsolated(const GemmDesc &desc, const Target &target,
                            const EmittedKernel &kernel, int runs,
                            const IsolatedValidationOptions &options,
                            const std::vector<GemmRange> &parts) {
  return measureIsolated(desc, target, kernel, runs, options, parts);
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
