//===- HttpTransport.h - One HTTP POST, behind an interface -----*- C++ -*-===//
//
// The chat client talks to the network only through HttpTransport, so that
// tests script the server (a fake), a recorded session replays byte for
// byte with no network (ReplayTransport), and production uses libcurl
// (CurlTransport). Failures that are not HTTP statuses (timeouts, refused
// connections, oversized replies) are results, not errors, because the
// client retries some of them.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LLM_HTTPTRANSPORT_H
#define QIMENG_LLM_HTTPTRANSPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qimeng {

struct HttpRequest {
  std::string url;
  /// Header lines as (name, value); "Authorization" carries the API key and
  /// is never recorded or printed.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpResponse {
  long status = 0;
  /// Header names in lower case; the last value of a repeated header.
  std::map<std::string, std::string> headers;
  std::string body;
};

struct HttpLimits {
  unsigned connectTimeoutMs = 10000;
  unsigned totalTimeoutMs = 120000;
  size_t maxResponseBytes = 4u << 20;
};

/// What a POST gave: a response, or why there is none.
struct HttpOutcome {
  enum class Failure {
    None,     ///< `response` holds the server's answer (any status)
    Timeout,  ///< no complete answer within the limits
    Connect,  ///< could not connect (refused, unreachable, DNS, TLS)
    TooLarge, ///< the answer exceeded maxResponseBytes
    Other,    ///< anything else (the message says what)
  };
  Failure failure = Failure::None;
  std::string message; ///< when failure != None; never holds the API key
  HttpResponse response;

  static HttpOutcome fail(Failure f, std::string message) {
    HttpOutcome o;
    o.failure = f;
    o.message = std::move(message);
    return o;
  }
};

/// "timeout", "connect", "too-large", "other", "none".
llvm::StringRef failureName(HttpOutcome::Failure failure);

class HttpTransport {
public:
  virtual ~HttpTransport() = default;
  virtual HttpOutcome post(const HttpRequest &request,
                           const HttpLimits &limits) = 0;
};

/// libcurl: TLS verification on, http and https only, no signals, the
/// limits as connect and total timeouts and a cap on the body kept.
class CurlTransport final : public HttpTransport {
public:
  static llvm::Expected<std::unique_ptr<CurlTransport>> create();
  HttpOutcome post(const HttpRequest &request,
                   const HttpLimits &limits) override;

private:
  CurlTransport() = default;
};

/// Records every exchange of `inner` as one JSON line (request URL, headers
/// without Authorization, body; response status, headers, body; or the
/// failure) appended to `path`.
class RecordingTransport final : public HttpTransport {
public:
  RecordingTransport(HttpTransport &inner, std::string path)
      : inner(inner), path(std::move(path)) {}
  HttpOutcome post(const HttpRequest &request,
                   const HttpLimits &limits) override;

private:
  HttpTransport &inner;
  std::string path;
};

/// Plays a RecordingTransport's transcript back in order, with no network.
/// With Exact matching, a request whose URL or body differs from the
/// recorded one is an Other failure naming the exchange; with InOrder, the
/// recorded answer is given anyway and the difference counted (a tuning
/// session's prompts hold measurements, which differ run to run). A request
/// past the end of the transcript is always a failure.
class ReplayTransport final : public HttpTransport {
public:
  enum class Matching { Exact, InOrder };

  /// Reads the transcript; an error for a file that is missing or has a
  /// line that is not a recorded exchange.
  static llvm::Expected<std::unique_ptr<ReplayTransport>>
  open(llvm::StringRef path, Matching matching = Matching::Exact);
  /// Requests that differed from the transcript (InOrder matching).
  size_t differing() const { return differed; }
  HttpOutcome post(const HttpRequest &request,
                   const HttpLimits &limits) override;
  /// Exchanges not played yet.
  size_t remaining() const { return exchanges.size() - next; }

private:
  struct Exchange {
    std::string url, body;
    HttpOutcome outcome;
  };
  std::vector<Exchange> exchanges;
  size_t next = 0;
  size_t differed = 0;
  Matching matching = Matching::Exact;
};

} // namespace qimeng

#endif // QIMENG_LLM_HTTPTRANSPORT_H
