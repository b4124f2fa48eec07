//===- ChatClient.cpp - OpenAI-compatible chat completions ----------------===//
#include "qimeng/LLM/ChatClient.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

using namespace qimeng;
using json = nlohmann::json;

ChatConfig ChatConfig::fromEnvironment() {
  ChatConfig c;
  if (auto v = llvm::sys::Process::GetEnv("QIMENG_LLM_ENDPOINT"))
    c.baseUrl = *v;
  if (auto v = llvm::sys::Process::GetEnv("QIMENG_LLM_MODEL"))
    c.model = *v;
  if (auto v = llvm::sys::Process::GetEnv("QIMENG_LLM_API_KEY_ENV"))
    c.apiKeyEnv = *v;
  return c;
}

llvm::Error ChatConfig::verify() const {
  llvm::StringRef url(baseUrl);
  if (url.empty())
    return llvm::createStringError(
        "no LLM endpoint: give a base URL such as http://127.0.0.1:8000/v1");
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    return llvm::createStringError("LLM endpoint '" + baseUrl +
                                   "' is not an http:// or https:// URL");
  if (model.empty())
    return llvm::createStringError("no LLM model name given");
  if (maxAttempts < 1)
    return llvm::createStringError("LLM client needs at least one attempt");
  return llvm::Error::success();
}

ChatClient::ChatClient(ChatConfig config, HttpTransport &transport,
                       Sleeper sleeper)
    : config(std::move(config)), transport(transport),
      sleeper(std::move(sleeper)), rng(this->config.jitterSeed | 1) {
  if (!this->sleeper)
    this->sleeper = [](double seconds) {
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    };
  if (!this->config.apiKeyEnv.empty())
    if (auto key = llvm::sys::Process::GetEnv(this->config.apiKeyEnv))
      apiKey = *key;
}

std::string ChatClient::url() const {
  llvm::StringRef base(config.baseUrl);
  while (base.ends_with("/"))
    base = base.drop_back();
  return (base + "/chat/completions").str();
}

std::string
ChatClient::requestBody(const std::vector<ChatMessage> &messages) const {
  json list = json::array();
  for (const ChatMessage &m : messages)
    list.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", config.model},
               {"messages", list},
               {"temperature", config.temperature},
               {"stream", false}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ChatClient::redact(std::string text) const {
  if (apiKey.empty())
    return text;
  size_t at;
  while ((at = text.find(apiKey)) != std::string::npos)
    text.replace(at, apiKey.size(), "[redacted]");
  return text;
}

double ChatClient::backoff(int retry) {
  double delay = std::min(config.backoffMaxSeconds,
                          config.backoffBaseSeconds * std::ldexp(1.0, retry));
  // xorshift64: deterministic jitter in [0.5, 1) of the delay.
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  double unit = double(rng >> 11) * std::ldexp(1.0, -53);
  return delay * (0.5 + 0.5 * unit);
}

/// Retry-After as seconds (the delta-seconds form); nullopt otherwise.
static std::optional<double> retryAfter(const HttpResponse &r) {
  auto it = r.headers.find("retry-after");
  if (it == r.headers.end())
    return std::nullopt;
  double seconds = 0;
  if (llvm::StringRef(it->second).trim().getAsDouble(seconds) || seconds < 0)
    return std::nullopt;
  return seconds;
}

static bool retryableStatus(long status) {
  return status == 408 || status == 409 || status == 429 ||
         (status >= 500 && status <= 599);
}

/// At most `limit` bytes of `body` on one line, for an error message.
static std::string excerpt(llvm::StringRef body, size_t limit = 200) {
  std::string out;
  for (char c : body.take_front(limit))
    out += (c == '\n' || c == '\r') ? ' ' : c;
  if (body.size() > limit)
    out += "...";
  return out;
}

llvm::Expected<std::string>
ChatClient::complete(const std::vector<ChatMessage> &messages) {
  if (auto err = config.verify())
    return std::move(err);
  HttpRequest request;
  request.url = url();
  request.headers = {{"Content-Type", "application/json"},
                     {"Accept", "application/json"}};
  if (!apiKey.empty())
    request.headers.push_back({"Authorization", "Bearer " + apiKey});
  request.body = requestBody(messages);
  std::string lastProblem;
  attempts = 0;
  // The wait before the next attempt: the server's Retry-After when it
  // gave one, else exponential backoff with jitter.
  std::optional<double> serverWait;
  for (int attempt = 0; attempt < config.maxAttempts; ++attempt) {
    if (attempt > 0) {
      sleeper(serverWait ? *serverWait : backoff(attempt - 1));
      serverWait.reset();
    }
    ++attempts;
    HttpOutcome outcome = transport.post(request, config.limits);
    if (outcome.failure != HttpOutcome::Failure::None) {
      lastProblem = redact(outcome.message);
      if (outcome.failure == HttpOutcome::Failure::Timeout ||
          outcome.failure == HttpOutcome::Failure::Connect)
        continue;
      return llvm::createStringError("LLM endpoint " + request.url + ": " +
                                     lastProblem);
    }
    const HttpResponse &r = outcome.response;
    if (retryableStatus(r.status)) {
      lastProblem =
          llvm::formatv("HTTP {0}: {1}", r.status, redact(excerpt(r.body)))
              .str();
      serverWait = retryAfter(r);
      if (serverWait && *serverWait > config.maxRetryAfterSeconds)
        return llvm::createStringError(
            llvm::formatv("LLM endpoint {0} asked to retry after {1:F1} s, "
                          "more than the limit of {2:F1} s ({3})",
                          request.url, *serverWait, config.maxRetryAfterSeconds,
                          lastProblem)
                .str());
      continue;
    }
    const HttpResponse &ok = outcome.response;
    if (ok.status < 200 || ok.status > 299)
      return llvm::createStringError(
          llvm::formatv("LLM endpoint {0}: HTTP {1}: {2}", request.url,
                        ok.status, redact(excerpt(ok.body)))
              .str());
    json reply = json::parse(ok.body, nullptr, false);
    if (reply.is_discarded() || !reply.is_object())
      return llvm::createStringError("LLM reply is not a JSON object: " +
                                     redact(excerpt(ok.body)));
    auto choices = reply.find("choices");
    if (choices == reply.end() || !choices->is_array() || choices->empty() ||
        !(*choices)[0].is_object())
      return llvm::createStringError("LLM reply has no choices");
    const json &first = (*choices)[0];
    auto message = first.find("message");
    if (message == first.end() || !message->is_object())
      return llvm::createStringError("LLM reply's choice has no message");
    auto content = message->find("content");
    if (content == message->end() || !content->is_string())
      return llvm::createStringError(
          "LLM reply's message has no content string");
    return content->get<std::string>();
  }
  return llvm::createStringError(
      llvm::formatv("LLM endpoint {0}: gave up after {1} attempts: {2}",
                    request.url, attempts, lastProblem)
          .str());
}
