//===- LlmEmitter.h - The LLM writes an emitter -----------------*- C++ -*-===//
//
// The paper's second stage: the LLM writes a Python emitter for the
// requested kernel (few-shot: the emitter protocol and our own emitter for
// the ISA), which runs sandboxed (runSandboxedEmitter); its output is
// assembled and validated in qimeng-runner exactly like a built-in kernel.
// A Python error, a sandbox refusal, an assembler message or a validation
// failure goes back to the LLM for a bounded number of repair rounds.
// Nothing it writes is trusted: a kernel comes back only after it
// validated.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TUNE_LLMEMITTER_H
#define QIMENG_TUNE_LLMEMITTER_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/LLM/ChatClient.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include <map>
#include <string>
#include <vector>

namespace qimeng {

struct AuthoringOptions {
  int maxRounds = 3; ///< the first attempt and up to two repairs
  SandboxLimits sandbox;
  /// What the prompt holds, for the ablation (docs/LLM.md): Vanilla asks
  /// for the kernel with the protocol only; HintsOnly adds stage 1's
  /// hints; FewShot (the pipeline) adds the hints, when given, and our own
  /// emitter as the example.
  enum class Prompting { Vanilla, HintsOnly, FewShot };
  Prompting prompting = Prompting::FewShot;
  /// Stage 1's text per hint ("tiling", ...), put in the prompt when not
  /// Vanilla.
  std::map<std::string, std::string> hints;
};

/// One round: what the LLM wrote and what became of it.
struct AuthoringRound {
  std::string code;    ///< the emitter extracted from the reply, if any
  GemmConfig config;   ///< the sketch its request carried
  std::string failure; ///< empty for the round that validated
};

struct AuthoredKernel {
  std::string emitterSource; ///< the emitter that produced `kernel`
  /// The sketch: the caller's config, or the one the LLM chose in a
  /// ```json block ({"config": "mr=12,nr=32,..."}).
  GemmConfig config;
  EmittedKernel kernel;
  ValidationReport validation;
  std::vector<AuthoringRound> rounds;
  bool networkIsolated = false;
};

/// The first ```python (or ```) block of `reply`, or an error "the reply
/// holds no code".
llvm::Expected<std::string> extractCode(llvm::StringRef reply);

/// Asks the LLM for an emitter of `problem` (a GEMM, kind sgemm, or a
/// convolution, kind sconv2d) with `config` on `target`, runs and
/// validates its kernel, and repairs. An error, holding every round's
/// failure, when no round gave a kernel that validated; the caller then
/// keeps the built-in kernel.
llvm::Expected<AuthoredKernel>
authorKernel(ChatClient &client, const KernelProblem &problem,
             const GemmConfig &config, const Target &target,
             const EmitterOptions &emitter,
             const IsolatedValidationOptions &runner,
             const AuthoringOptions &options = {});

/// authorKernel for a GEMM.
inline llvm::Expected<AuthoredKernel>
authorGemmKernel(ChatClient &client, const GemmDesc &desc,
                 const GemmConfig &config, const Target &target,
                 const EmitterOptions &emitter,
                 const IsolatedValidationOptions &runner,
                 const AuthoringOptions &options = {}) {
  return authorKernel(client, desc, config, target, emitter, runner, options);
}

} // namespace qimeng

#endif // QIMENG_TUNE_LLMEMITTER_H
