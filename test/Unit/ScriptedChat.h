//===- ScriptedChat.h - A chat server the tests script ----------*- C++ -*-===//
//
// An HttpTransport that answers chat completions from a list, for the tests
// of the LLM stages that do not need real HTTP (the loopback server tests
// do: ChatClientTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TEST_UNIT_SCRIPTEDCHAT_H
#define QIMENG_TEST_UNIT_SCRIPTEDCHAT_H

#include "qimeng/LLM/ChatClient.h"
#include "qimeng/LLM/HttpTransport.h"
#include "llvm/Support/MemoryBuffer.h"
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace qimeng {

/// A /chat/completions reply body whose first choice says `content`.
inline std::string chatReply(const std::string &content) {
  nlohmann::json r = {
      {"choices",
       {{{"message", {{"role", "assistant"}, {"content", content}}}}}}};
  return r.dump();
}

/// Answers each request with the next of `replies` (HTTP 200), keeping the
/// content of every request's last message; once the replies run out, a
/// failure of kind `whenEmpty` ("no more replies").
class ScriptedChat : public HttpTransport {
public:
  std::deque<std::string> replies;
  std::vector<std::string> lastMessages;
  HttpOutcome::Failure whenEmpty = HttpOutcome::Failure::Other;

  HttpOutcome post(const HttpRequest &request, const HttpLimits &) override {
    nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
    if (body.is_object() && body["messages"].is_array() &&
        !body["messages"].empty())
      lastMessages.push_back(
          body["messages"].back()["content"].get<std::string>());
    if (replies.empty())
      return HttpOutcome::fail(whenEmpty, "no more replies");
    HttpOutcome o;
    o.response.status = 200;
    o.response.body = chatReply(replies.front());
    replies.pop_front();
    return o;
  }
};

#ifdef QIMENG_TEST_SOURCE_DIR
/// A real emitter, as an LLM might write it (scalar FMA loops, correct for
/// any GEMM shape): test/Unit/Inputs/scalar_emitter.py; empty if missing.
inline std::string scalarEmitterSource() {
  auto file = llvm::MemoryBuffer::getFile(std::string(QIMENG_TEST_SOURCE_DIR) +
                                          "/Unit/Inputs/scalar_emitter.py");
  return file ? (*file)->getBuffer().str() : std::string();
}
#endif

/// A client configuration for a ScriptedChat: any URL and model will do.
inline ChatConfig scriptedChatConfig(int maxAttempts = 1) {
  ChatConfig c;
  c.baseUrl = "http://127.0.0.1:9/v1";
  c.model = "scripted";
  c.maxAttempts = maxAttempts;
  return c;
}

} // namespace qimeng

#endif // QIMENG_TEST_UNIT_SCRIPTEDCHAT_H
