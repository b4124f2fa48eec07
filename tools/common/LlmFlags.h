//===- LlmFlags.h - The LLM flags our tools share ---------------*- C++ -*-===//
//
// Included by one source file per tool (qimeng-tune, qimeng-tensorop): the
// flags live in that tool only, under their own category, so the pass and
// qimeng-opt never see them.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TOOLS_COMMON_LLMFLAGS_H
#define QIMENG_TOOLS_COMMON_LLMFLAGS_H

#include "qimeng/LLM/LlmSession.h"
#include "llvm/Support/CommandLine.h"

namespace qimeng {
namespace llmflags {

static llvm::cl::OptionCategory category("LLM options (docs/LLM.md)");
static llvm::cl::opt<std::string> endpoint(
    "llm-endpoint",
    llvm::cl::desc("OpenAI-compatible API base such as "
                   "http://127.0.0.1:8000/v1 (default QIMENG_LLM_ENDPOINT; "
                   "none: offline, the built-in policy)"),
    llvm::cl::init(""), llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    model("llm-model", llvm::cl::desc("Model name (default QIMENG_LLM_MODEL)"),
          llvm::cl::init(""), llvm::cl::cat(category));
static llvm::cl::opt<std::string> apiKeyEnv(
    "llm-api-key-env",
    llvm::cl::desc("Environment variable holding the API key (default "
                   "QIMENG_LLM_API_KEY_ENV; none: no key); the key is never "
                   "printed or recorded"),
    llvm::cl::init(""), llvm::cl::cat(category));
static llvm::cl::opt<std::string> transcript(
    "llm-transcript",
    llvm::cl::desc("Append every LLM exchange to this JSON-lines file"),
    llvm::cl::init(""), llvm::cl::cat(category));

/// The configuration the flags and the environment give.
inline ChatConfig config() {
  return chatConfigFrom(endpoint, model, apiKeyEnv);
}

} // namespace llmflags
} // namespace qimeng

#endif // QIMENG_TOOLS_COMMON_LLMFLAGS_H
