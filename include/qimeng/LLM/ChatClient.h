//===- ChatClient.h - OpenAI-compatible chat completions --------*- C++ -*-===//
//
// POST {base}/chat/completions as vLLM, llama.cpp's server, Ollama, OpenAI
// and DeepSeek accept it, through an HttpTransport. Retries timeouts,
// connection failures and HTTP 408, 409, 429 and 5xx with exponential
// backoff and jitter, honouring Retry-After up to a limit. The API key is
// read from the environment variable the configuration names, sent only in
// the Authorization header, and never appears in an error message.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LLM_CHATCLIENT_H
#define QIMENG_LLM_CHATCLIENT_H

#include "qimeng/LLM/HttpTransport.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace qimeng {

struct ChatConfig {
  /// API base, e.g. "http://127.0.0.1:8000/v1"; "/chat/completions" is
  /// appended (a trailing '/' is dropped first).
  std::string baseUrl;
  std::string model;
  /// Name of the environment variable holding the API key; empty or unset:
  /// no Authorization header (local servers).
  std::string apiKeyEnv;
  HttpLimits limits;
  int maxAttempts = 5;              ///< first try included
  double backoffBaseSeconds = 0.5;  ///< delay before retry i: base * 2^i
  double backoffMaxSeconds = 8;     ///< ... at most this, then jittered
  double maxRetryAfterSeconds = 30; ///< a longer Retry-After gives up
  double temperature = 0;
  uint64_t jitterSeed = 1;

  /// QIMENG_LLM_ENDPOINT, QIMENG_LLM_MODEL and QIMENG_LLM_API_KEY_ENV when
  /// set (empty strings otherwise).
  static ChatConfig fromEnvironment();
  /// Errors for a missing base URL or model, or a base URL that is not
  /// http:// or https://.
  llvm::Error verify() const;
};

struct ChatMessage {
  std::string role; ///< "system", "user", "assistant"
  std::string content;
};

class ChatClient {
public:
  /// How the client waits between attempts (tests record instead).
  using Sleeper = std::function<void(double seconds)>;

  ChatClient(ChatConfig config, HttpTransport &transport,
             Sleeper sleeper = nullptr);

  /// The assistant's reply text (choices[0].message.content). Errors name
  /// what failed: "LLM endpoint ...: HTTP 401: ...", "gave up after 5
  /// attempts: ...", "LLM reply is not JSON", ...
  llvm::Expected<std::string>
  complete(const std::vector<ChatMessage> &messages);

  /// The request body complete() sends (tests, transcripts).
  std::string requestBody(const std::vector<ChatMessage> &messages) const;
  std::string url() const;
  /// Attempts made by the last complete().
  int lastAttempts() const { return attempts; }

private:
  std::string redact(std::string text) const;
  double backoff(int retry);

  ChatConfig config;
  HttpTransport &transport;
  Sleeper sleeper;
  std::string apiKey;
  uint64_t rng;
  int attempts = 0;
};

} // namespace qimeng

#endif // QIMENG_LLM_CHATCLIENT_H
