//===- LlmEmitter.cpp - The LLM writes an emitter -------------------------===//
#include "qimeng/Tune/LlmEmitter.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include <nlohmann/json.hpp>
#include <optional>

using namespace qimeng;

llvm::Expected<std::string> qimeng::extractCode(llvm::StringRef reply) {
  for (llvm::StringRef fence : {"```python", "```py", "```"}) {
    size_t open = reply.find(fence);
    if (open == llvm::StringRef::npos)
      continue;
    size_t start = reply.find('\n', open);
    if (start == llvm::StringRef::npos)
      continue;
    size_t close = reply.find("```", start + 1);
    if (close == llvm::StringRef::npos)
      continue;
    return reply.slice(start + 1, close).str();
  }
  return llvm::createStringError(
      "the reply holds no code: send the emitter in one ```python block");
}

/// The sketch in a reply's ```json block ({"config": "mr=..,nr=.."}):
/// nothing when there is none, else the config or why it is invalid.
static std::optional<llvm::Expected<GemmConfig>>
sketchConfig(llvm::StringRef reply, const GemmConfig &base,
             const GemmDesc &desc) {
  size_t open = reply.find("```json");
  if (open == llvm::StringRef::npos)
    return std::nullopt;
  size_t start = reply.find('\n', open);
  size_t close = start == llvm::StringRef::npos ? llvm::StringRef::npos
                                                : reply.find("```", start + 1);
  if (close == llvm::StringRef::npos)
    return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(reply.slice(start + 1, close).str(),
                                           nullptr, false);
  auto field = j.is_object() ? j.find("config") : j.end();
  if (!j.is_object() || field == j.end() || !field->is_string())
    return llvm::Expected<GemmConfig>(llvm::createStringError(
        "the ```json block must be {\"config\": \"key=value,...\"}"));
  auto parsed = GemmConfig::parse(field->get<std::string>(), base);
  if (!parsed)
    return llvm::Expected<GemmConfig>(
        llvm::createStringError("the sketch is not a kernel config: " +
                                llvm::toString(parsed.takeError())));
  GemmConfig c = clampToProblem(*parsed, desc);
  c.threads = 1;
  return llvm::Expected<GemmConfig>(c);
}

/// The prompt: the protocol and the request; the hints and our emitter for
/// the ISA as the options say.
static std::string authoringPrompt(const EmitterOptions &emitter,
                                   const std::string &request,
                                   const AuthoringOptions &options, bool conv) {
  using P = AuthoringOptions::Prompting;
  std::string example;
  if (options.prompting == P::FewShot)
    for (const char *file : {"sgemm.py", "conv2d.py"}) {
      if (!conv && llvm::StringRef(file) == "conv2d.py")
        continue;
      if (auto buf = llvm::MemoryBuffer::getFile(emitter.packageDir +
                                                 "/qimeng_emitters/" + file))
        example += "# " + std::string(file) + "\n" + (*buf)->getBuffer().str();
    }
  std::string hints;
  if (options.prompting != P::Vanilla && !options.hints.empty()) {
    hints = "\n\nWhat we know of this machine, hint by hint:\n";
    for (const auto &[name, text] : options.hints)
      hints += "- " + name + ": " + text + "\n";
  }
  std::string tail =
      example.empty()
          ? std::string("\n")
          : "\n\nOur own emitter for this kind, as an example of the "
            "protocol and of a fast kernel:\n```python\n" +
                example + "\n```\n";
  return "Write a Python 3 module (standard library only, self-contained: it "
         "cannot import anything outside the standard library) that defines "
         "emit(request) -> str for QiMeng-TensorOp's emitter protocol. The "
         "request is a JSON object like the one below (kind sgemm: C += A * "
         "B, row-major, M x N x K with leading dimensions lda, ldb, ldc in "
         "elements, C already holds values to accumulate into; kind sconv2d: "
         "output += conv2d(input, filter) in the layout the request names, "
         "arguments (input, filter, output, workspace)). emit returns "
         "AT&T x86-64 assembly: header comment lines '# qm.symbol: NAME', "
         "'# qm.workspace_bytes: BYTES', '# qm.clobbers: rax,rbx,...' (every "
         "register the body writes besides rdi, rsi, rdx, rcx), then a "
         "function NAME(A, B, C, workspace) taking the pointers in rdi, rsi, "
         "rdx and rcx, saving the callee-saved registers it uses, whose body "
         "lies between the lines '# qm.body.begin' and '# qm.body.end'. Use "
         "only instructions the target's features allow. Answer with the "
         "whole module in one ```python block. You may also choose the "
         "sketch (register block and cache blocking) the request will carry: "
         "add a ```json block such as {\"config\": \"mr=12,nr=32,ku=4,"
         "kc=256,mc=96,nc=512\"} (keys isa, mr, nr, ku, kc, mc, nc, pfa, "
         "pfb, order, loop, alayout); without it the request below is "
         "used.\n\nThe request:\n" +
         request + hints + tail;
}

llvm::Expected<AuthoredKernel> qimeng::authorKernel(
    ChatClient &client, const KernelProblem &problem, const GemmConfig &config,
    const Target &target, const EmitterOptions &emitter,
    const IsolatedValidationOptions &runner, const AuthoringOptions &options) {
  const ConvDesc *conv = problem.conv();
  const GemmDesc &desc = problem.gemm();
  auto requestFor = [&](const GemmConfig &c) {
    return conv ? convRequestJson(*conv, c, "", &target)
                : gemmRequestJson(desc, c, "", &target);
  };
  std::string request = requestFor(config);
  std::vector<ChatMessage> conversation = {
      {"system", "You write x86-64 assembly emitters for GEMM and "
                 "convolution kernels."},
      {"user", authoringPrompt(emitter, request, options, conv != nullptr)}};
  AuthoredKernel result;
  for (int round = 0; round < std::max(1, options.maxRounds); ++round) {
    auto reply = client.complete(conversation);
    if (!reply)
      return llvm::createStringError("the LLM did not answer: " +
                                     llvm::toString(reply.takeError()));
    conversation.push_back({"assistant", *reply});
    AuthoringRound r;
    auto fail = [&](std::string why) {
      r.failure = std::move(why);
      result.rounds.push_back(r);
      conversation.push_back(
          {"user", "That failed: " + r.failure +
                       "\nFix it and send the whole module again in one "
                       "```python block."});
    };
    auto code = extractCode(*reply);
    if (!code) {
      fail(llvm::toString(code.takeError()));
      continue;
    }
    r.code = *code;
    // The sketch the LLM chose, if it chose one: checked like a pinned
    // kernel-config, clamped to the problem.
    std::string roundRequest = request;
    GemmConfig roundConfig = config;
    if (auto sketch = sketchConfig(*reply, config, desc)) {
      if (!*sketch) {
        fail(llvm::toString(sketch->takeError()));
        continue;
      }
      roundConfig = **sketch;
      roundRequest = requestFor(roundConfig);
    }
    r.config = roundConfig;
    bool isolated = false;
    auto kernel = runSandboxedEmitter(*code, roundRequest, emitter,
                                      options.sandbox, &isolated);
    result.networkIsolated = isolated;
    if (!kernel) {
      fail(llvm::toString(kernel.takeError()));
      continue;
    }
    // Assembled and run in qimeng-runner, like any kernel.
    auto report = validateIsolated(problem, target, *kernel, runner);
    if (!report) {
      fail("the kernel could not be assembled or loaded: " +
           llvm::toString(report.takeError()));
      continue;
    }
    if (!report->passed) {
      fail("the kernel failed validation: " + report->failure);
      continue;
    }
    result.rounds.push_back(r);
    result.emitterSource = *code;
    result.kernel = std::move(*kernel);
    result.validation = *report;
    result.config = roundConfig;
    return result;
  }
  std::string all;
  for (size_t i = 0; i < result.rounds.size(); ++i)
    all += llvm::formatv("{0}round {1}: {2}", i ? "; " : "", i + 1,
                         result.rounds[i].failure)
               .str();
  return llvm::createStringError(
      llvm::formatv("no LLM-written emitter validated in {0} round(s): {1}",
                    result.rounds.size(), all)
          .str());
}
