//===- LlmSession.cpp -----------------------------------------------------===//
#include "qimeng/LLM/LlmSession.h"

using namespace qimeng;

ChatConfig qimeng::chatConfigFrom(llvm::StringRef endpoint,
                                  llvm::StringRef model,
                                  llvm::StringRef apiKeyEnv) {
  ChatConfig c = ChatConfig::fromEnvironment();
  if (!endpoint.empty())
    c.baseUrl = endpoint.str();
  if (!model.empty())
    c.model = model.str();
  if (!apiKeyEnv.empty())
    c.apiKeyEnv = apiKeyEnv.str();
  return c;
}

llvm::Expected<std::unique_ptr<LlmSession>>
LlmSession::open(const ChatConfig &config, llvm::StringRef transcriptPath,
                 llvm::StringRef replayPath,
                 ReplayTransport::Matching matching) {
  if (auto err = config.verify())
    return std::move(err);
  std::unique_ptr<LlmSession> s(new LlmSession());
  if (!replayPath.empty()) {
    auto replay = ReplayTransport::open(replayPath, matching);
    if (!replay)
      return replay.takeError();
    s->network = std::move(*replay);
  } else {
    auto curl = CurlTransport::create();
    if (!curl)
      return curl.takeError();
    s->network = std::move(*curl);
  }
  HttpTransport *transport = s->network.get();
  if (!transcriptPath.empty()) {
    s->recorder =
        std::make_unique<RecordingTransport>(*s->network, transcriptPath.str());
    transport = s->recorder.get();
  }
  s->chat = std::make_unique<ChatClient>(config, *transport);
  return s;
}
