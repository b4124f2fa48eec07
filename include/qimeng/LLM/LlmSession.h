//===- LlmSession.h - A chat client and its transports ----------*- C++ -*-===//
//
// What a tool or the pass builds when an LLM is configured: libcurl (or a
// replayed transcript) under an optional recorder, and the client on top,
// owned together.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LLM_LLMSESSION_H
#define QIMENG_LLM_LLMSESSION_H

#include "qimeng/LLM/ChatClient.h"
#include "qimeng/LLM/HttpTransport.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <string>

namespace qimeng {

/// ChatConfig::fromEnvironment() with each non-empty argument in place of
/// its environment value.
ChatConfig chatConfigFrom(llvm::StringRef endpoint, llvm::StringRef model,
                          llvm::StringRef apiKeyEnv);

class LlmSession {
public:
  /// `config` must verify. With `replayPath` the replies come from that
  /// transcript (no network); with `transcriptPath` every exchange is
  /// appended there.
  static llvm::Expected<std::unique_ptr<LlmSession>>
  open(const ChatConfig &config, llvm::StringRef transcriptPath = "",
       llvm::StringRef replayPath = "",
       ReplayTransport::Matching matching = ReplayTransport::Matching::InOrder);

  ChatClient &client() { return *chat; }

private:
  LlmSession() = default;
  std::unique_ptr<HttpTransport> network, recorder;
  std::unique_ptr<ChatClient> chat;
};

} // namespace qimeng

#endif // QIMENG_LLM_LLMSESSION_H
