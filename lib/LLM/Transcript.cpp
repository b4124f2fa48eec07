//===- Transcript.cpp - Record and replay HTTP exchanges ------------------===//
//
// One JSON object per line:
//   {"request": {"url", "headers", "body"},
//    "response": {"status", "headers", "body"}}   or
//   {"request": {...}, "failure": "timeout", "message": "..."}
// The Authorization header (the API key) is never written. Reading is
// no-throw: a malformed line is an error naming it.
//
//===----------------------------------------------------------------------===//
#include "qimeng/LLM/HttpTransport.h"
#include "qimeng/Support/JsonFieldReader.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

using namespace qimeng;
using json = nlohmann::json;

static json
headersJson(const std::vector<std::pair<std::string, std::string>> &headers) {
  json out = json::object();
  for (const auto &[name, value] : headers)
    if (!llvm::StringRef(name).equals_insensitive("authorization"))
      out[name] = value;
  return out;
}

HttpOutcome RecordingTransport::post(const HttpRequest &request,
                                     const HttpLimits &limits) {
  HttpOutcome outcome = inner.post(request, limits);
  json line = {{"request",
                {{"url", request.url},
                 {"headers", headersJson(request.headers)},
                 {"body", request.body}}}};
  if (outcome.failure == HttpOutcome::Failure::None) {
    json headers = json::object();
    for (const auto &[name, value] : outcome.response.headers)
      headers[name] = value;
    line["response"] = {{"status", outcome.response.status},
                        {"headers", headers},
                        {"body", outcome.response.body}};
  } else {
    line["failure"] = failureName(outcome.failure).str();
    line["message"] = outcome.message;
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Append);
  if (!ec)
    out << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  return outcome;
}

static std::optional<HttpOutcome::Failure> parseFailure(llvm::StringRef s) {
  using F = HttpOutcome::Failure;
  for (F f : {F::Timeout, F::Connect, F::TooLarge, F::Other})
    if (failureName(f) == s)
      return f;
  return std::nullopt;
}

llvm::Expected<std::unique_ptr<ReplayTransport>>
ReplayTransport::open(llvm::StringRef path, Matching matching) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot read transcript " + path.str() +
                                   ": " + buffer.getError().message());
  std::unique_ptr<ReplayTransport> replay(new ReplayTransport());
  replay->matching = matching;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (size_t i = 0; i < lines.size(); ++i) {
    auto bad = [&](llvm::StringRef why) {
      return llvm::createStringError(
          llvm::formatv("transcript {0} line {1}: {2}", path, i + 1, why)
              .str());
    };
    json j = json::parse(lines[i].begin(), lines[i].end(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return bad("not a JSON object");
    auto req = j.find("request");
    if (req == j.end() || !req->is_object())
      return bad("no request object");
    Exchange e;
    JsonFieldReader r(*req, "transcript request");
    if (auto err = r.string("url", e.url))
      return bad(llvm::toString(std::move(err)));
    if (auto err = r.string("body", e.body))
      return bad(llvm::toString(std::move(err)));
    auto resp = j.find("response");
    if (resp != j.end()) {
      if (!resp->is_object())
        return bad("response is not an object");
      JsonFieldReader f(*resp, "transcript response");
      int64_t status = 0;
      if (auto err = f.integer64("status", status))
        return bad(llvm::toString(std::move(err)));
      e.outcome.response.status = status;
      if (auto err = f.string("body", e.outcome.response.body))
        return bad(llvm::toString(std::move(err)));
      auto headers = resp->find("headers");
      if (headers != resp->end() && headers->is_object())
        for (auto it = headers->begin(); it != headers->end(); ++it)
          if (it->is_string())
            e.outcome.response.headers[it.key()] = it->get<std::string>();
    } else {
      JsonFieldReader f(j, "transcript exchange");
      std::string failure;
      if (auto err = f.string("failure", failure))
        return bad(llvm::toString(std::move(err)));
      auto kind = parseFailure(failure);
      if (!kind)
        return bad("unknown failure '" + failure + "'");
      e.outcome.failure = *kind;
      if (auto err = f.string("message", e.outcome.message))
        return bad(llvm::toString(std::move(err)));
    }
    replay->exchanges.push_back(std::move(e));
  }
  return replay;
}

HttpOutcome ReplayTransport::post(const HttpRequest &request,
                                  const HttpLimits &) {
  using Failure = HttpOutcome::Failure;
  if (next >= exchanges.size())
    return HttpOutcome::fail(
        Failure::Other,
        llvm::formatv("replay: request {0} is past the end of the transcript "
                      "({1} exchanges)",
                      next + 1, exchanges.size())
            .str());
  const Exchange &e = exchanges[next];
  bool same = e.url == request.url && e.body == request.body;
  if (!same && matching == Matching::InOrder)
    ++differed;
  else if (!same)
    return HttpOutcome::fail(
        Failure::Other,
        llvm::formatv("replay: request {0} differs from the transcript's "
                      "({1})",
                      next + 1, e.url != request.url ? "url" : "body")
            .str());
  ++next;
  return e.outcome;
}
