//===- IsolatedValidation.cpp ---------------------------------------------===//
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Config.h"
#include "qimeng/Emit/Assembler.h"
#include "qimeng/Kernel/KernelJson.h"
#include "qimeng/Runtime/JitKernel.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
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

std::string qimeng::validationRequestJson(const GemmDesc &d,
                                          const Target &target,
                                          const EmittedKernel &kernel) {
  json r = toJson(d);
  r["version"] = 1;
  r["op"] = "sgemm";
  r["target"] = target.str();
  r["kernel"] = kernel.text;
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
  auto desc = gemmDescFromJson(r, "validation request");
  if (!desc)
    return desc.takeError();
  GemmDesc d = *desc;
  auto targetSpec = stringField(r, "target");
  if (!targetSpec)
    return targetSpec.takeError();
  auto kernelText = stringField(r, "kernel");
  if (!kernelText)
    return kernelText.takeError();
  if (auto err = d.verify())
    return std::move(err);

  // The kernel runs here, on this machine: assemble for the host.
  auto kernel = parseEmitterOutput(*kernelText);
  if (!kernel)
    return kernel.takeError();
  Target host = Target::detectHost();
  auto object = assembleToObject(kernel->text, host, kernel->symbol + ".s");
  if (!object)
    return object.takeError();
  auto jit = JitKernel::load(std::move(*object), kernel->symbol);
  if (!jit)
    return jit.takeError();
  GemmKernelFn fn = (*jit)->gemm();
  auto report = validateGemm(
      d,
      [fn](const float *a, const float *b, float *c, void *ws) {
        fn(a, b, c, ws);
      },
      kernel->workspaceBytes);
  if (!report)
    return report.takeError();
  json out = {{"passed", report->passed},
              {"failure", report->failure},
              {"max_rel_error", report->maxRelError},
              {"openblas_max_rel_error", report->openBlasMaxRelError},
              {"symbol", kernel->symbol}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

llvm::Expected<ValidationReport>
qimeng::validateGemmIsolated(const GemmDesc &desc, const Target &target,
                             const EmittedKernel &kernel,
                             const IsolatedValidationOptions &options) {
  SubprocessOptions sp;
  sp.timeoutSeconds = options.timeoutSeconds;
  sp.memoryLimitMB = options.memoryLimitMB;
  sp.outputCap = 1u << 20;
  std::vector<std::string> args = {options.runnerPath, "--validate-gemm"};
  auto result = runSubprocess(options.runnerPath, args,
                              validationRequestJson(desc, target, kernel), sp);
  if (!result)
    return result.takeError();
  ValidationReport report;
  if (result->timedOut) {
    report.failure = llvm::formatv("kernel did not finish within {0} s",
                                   options.timeoutSeconds)
                         .str();
    return report;
  }
  if (result->crashed) {
    report.failure = "kernel crashed the runner: " + result->statusMessage;
    return report;
  }
  if (result->exitCode != 0) {
    llvm::StringRef err = llvm::StringRef(result->err).trim();
    return llvm::createStringError(
        llvm::formatv("qimeng-runner failed (exit {0}): {1}", result->exitCode,
                      err.empty() ? "no message" : err)
            .str());
  }
  json r = json::parse(result->out, nullptr, false);
  if (r.is_discarded() || !r.is_object())
    return llvm::createStringError("qimeng-runner answered something that is "
                                   "not a JSON object");
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
