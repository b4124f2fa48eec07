//===- CurlTransport.cpp - HttpTransport over libcurl ---------------------===//
//
// One easy handle per request, owned by a move-only wrapper, as the header
// list is; libcurl's status codes become HttpOutcome failures at the
// wrapper. TLS peer and host verification stay at libcurl's defaults (on).
//
//===----------------------------------------------------------------------===//
#include "qimeng/LLM/HttpTransport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <curl/curl.h>
#include <mutex>

using namespace qimeng;

llvm::StringRef qimeng::failureName(HttpOutcome::Failure failure) {
  switch (failure) {
  case HttpOutcome::Failure::None:
    return "none";
  case HttpOutcome::Failure::Timeout:
    return "timeout";
  case HttpOutcome::Failure::Connect:
    return "connect";
  case HttpOutcome::Failure::TooLarge:
    return "too-large";
  case HttpOutcome::Failure::Other:
    return "other";
  }
  return "other";
}

namespace {

struct EasyHandle {
  CURL *handle = curl_easy_init();
  EasyHandle() = default;
  EasyHandle(const EasyHandle &) = delete;
  EasyHandle &operator=(const EasyHandle &) = delete;
  ~EasyHandle() {
    if (handle)
      curl_easy_cleanup(handle);
  }
};

struct HeaderList {
  curl_slist *list = nullptr;
  HeaderList() = default;
  HeaderList(const HeaderList &) = delete;
  HeaderList &operator=(const HeaderList &) = delete;
  ~HeaderList() { curl_slist_free_all(list); }
  bool append(const std::string &line) {
    curl_slist *grown = curl_slist_append(list, line.c_str());
    if (!grown)
      return false;
    list = grown;
    return true;
  }
};

/// Where the body and headers go while libcurl reads them.
struct Sink {
  size_t cap = 0;
  bool overflow = false;
  HttpResponse *response = nullptr;
};

size_t onBody(char *data, size_t size, size_t count, void *user) {
  Sink &sink = *static_cast<Sink *>(user);
  size_t bytes = size * count;
  if (sink.response->body.size() + bytes > sink.cap) {
    sink.overflow = true;
    return 0; // libcurl aborts the transfer with CURLE_WRITE_ERROR
  }
  sink.response->body.append(data, bytes);
  return bytes;
}

size_t onHeader(char *data, size_t size, size_t count, void *user) {
  Sink &sink = *static_cast<Sink *>(user);
  size_t bytes = size * count;
  llvm::StringRef line(data, bytes);
  auto [name, value] = line.split(':');
  if (!value.empty() || line.contains(':'))
    sink.response->headers[name.trim().lower()] = value.trim().str();
  return bytes;
}

std::once_flag globalInit;

} // namespace

llvm::Expected<std::unique_ptr<CurlTransport>> CurlTransport::create() {
  CURLcode code = CURLE_OK;
  std::call_once(globalInit, [&] { code = curl_global_init(CURL_GLOBAL_ALL); });
  if (code != CURLE_OK)
    return llvm::createStringError(std::string("libcurl initialisation "
                                               "failed: ") +
                                   curl_easy_strerror(code));
  return std::unique_ptr<CurlTransport>(new CurlTransport());
}

HttpOutcome CurlTransport::post(const HttpRequest &request,
                                const HttpLimits &limits) {
  using Failure = HttpOutcome::Failure;
  EasyHandle easy;
  if (!easy.handle)
    return HttpOutcome::fail(Failure::Other, "cannot create a libcurl handle");
  HeaderList headers;
  for (const auto &[name, value] : request.headers)
    if (!headers.append(name + ": " + value))
      return HttpOutcome::fail(Failure::Other, "cannot build the headers");
  HttpOutcome outcome;
  Sink sink{limits.maxResponseBytes, false, &outcome.response};
  CURL *h = easy.handle;
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(limits.connectTimeoutMs));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(limits.totalTimeoutMs));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &sink);
  CURLcode code = curl_easy_perform(h);
  if (sink.overflow)
    return HttpOutcome::fail(
        Failure::TooLarge,
        llvm::formatv("reply larger than {0} bytes", limits.maxResponseBytes)
            .str());
  switch (code) {
  case CURLE_OK:
    break;
  case CURLE_OPERATION_TIMEDOUT:
    return HttpOutcome::fail(Failure::Timeout, curl_easy_strerror(code));
  case CURLE_COULDNT_CONNECT:
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
    return HttpOutcome::fail(Failure::Connect, curl_easy_strerror(code));
  default:
    return HttpOutcome::fail(Failure::Other, curl_easy_strerror(code));
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  outcome.response.status = status;
  return outcome;
}
