//===- ChatClientTest.cpp - The LLM client, its transports, no network ----===//
//
// A fake transport scripts the server for the retry, parsing and key rules;
// a recording and its replay must give the same replies; libcurl is tested
// against a loopback server (loopback_server.py) that the test starts
// itself: a good reply, a 429 with Retry-After, a reply slower than the
// timeout, one larger than the cap, and a refused connection.
//
//===----------------------------------------------------------------------===//
#include "qimeng/LLM/ChatClient.h"
#include "ErrorHelpers.h"
#include "ScriptedChat.h"
#include "qimeng/Config.h"
#include "qimeng/LLM/HardwareComprehension.h"
#include "qimeng/LLM/HttpTransport.h"
#include "qimeng/LLM/TaskPrompt.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cstdlib>
#include <deque>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <thread>

using namespace qimeng;

namespace {

/// Plays scripted outcomes and keeps the requests it was given.
class FakeTransport : public HttpTransport {
public:
  std::deque<HttpOutcome> script;
  std::vector<HttpRequest> requests;

  HttpOutcome post(const HttpRequest &request, const HttpLimits &) override {
    requests.push_back(request);
    if (script.empty())
      return HttpOutcome::fail(HttpOutcome::Failure::Other, "script ended");
    HttpOutcome next = script.front();
    script.pop_front();
    return next;
  }
};

HttpOutcome reply(long status, std::string body,
                  std::map<std::string, std::string> headers = {}) {
  HttpOutcome o;
  o.response.status = status;
  o.response.body = std::move(body);
  o.response.headers = std::move(headers);
  return o;
}

ChatConfig testConfig() {
  ChatConfig c;
  c.baseUrl = "http://127.0.0.1:9/v1/";
  c.model = "test-model";
  c.apiKeyEnv = "QIMENG_TEST_LLM_KEY";
  return c;
}

struct Sleeps {
  std::vector<double> seconds;
  ChatClient::Sleeper sleeper() {
    return [this](double s) { seconds.push_back(s); };
  }
};

TEST(ChatClientTest, SendsTheOpenAiRequestAndReadsTheReply) {
  setenv("QIMENG_TEST_LLM_KEY", "sk-test-secret", 1);
  FakeTransport t;
  t.script.push_back(reply(200, chatReply("hello")));
  Sleeps sleeps;
  ChatClient client(testConfig(), t, sleeps.sleeper());
  QM_ASSERT_EXPECTED(text, client.complete({{"user", "hi"}}));
  EXPECT_EQ(text, "hello");
  ASSERT_EQ(t.requests.size(), 1u);
  EXPECT_EQ(t.requests[0].url, "http://127.0.0.1:9/v1/chat/completions");
  nlohmann::json body = nlohmann::json::parse(t.requests[0].body);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["messages"][0]["role"], "user");
  EXPECT_EQ(body["messages"][0]["content"], "hi");
  bool sawKey = false;
  for (auto &[name, value] : t.requests[0].headers)
    if (name == "Authorization")
      sawKey = value == "Bearer sk-test-secret";
  EXPECT_TRUE(sawKey);
  EXPECT_TRUE(sleeps.seconds.empty());
}

TEST(ChatClientTest, RetriesWithBackoffAndHonoursRetryAfter) {
  FakeTransport t;
  t.script.push_back(HttpOutcome::fail(HttpOutcome::Failure::Timeout, "slow"));
  t.script.push_back(reply(503, "busy"));
  t.script.push_back(reply(429, "rate", {{"retry-after", "2"}}));
  t.script.push_back(
      HttpOutcome::fail(HttpOutcome::Failure::Connect, "refused"));
  t.script.push_back(reply(200, chatReply("done")));
  Sleeps sleeps;
  ChatConfig c = testConfig();
  c.maxAttempts = 5;
  ChatClient client(c, t, sleeps.sleeper());
  QM_ASSERT_EXPECTED(text, client.complete({{"user", "x"}}));
  EXPECT_EQ(text, "done");
  EXPECT_EQ(client.lastAttempts(), 5);
  ASSERT_EQ(sleeps.seconds.size(), 4u);
  // Backoff 0.5 * 2^i jittered into [0.5, 1) of it; Retry-After exactly.
  EXPECT_GE(sleeps.seconds[0], 0.25);
  EXPECT_LT(sleeps.seconds[0], 0.5);
  EXPECT_GE(sleeps.seconds[1], 0.5);
  EXPECT_LT(sleeps.seconds[1], 1.0);
  EXPECT_DOUBLE_EQ(sleeps.seconds[2], 2.0);
  EXPECT_GE(sleeps.seconds[3], 2.0);
  EXPECT_LT(sleeps.seconds[3], 4.0);
}

TEST(ChatClientTest, GivesUpOnRepeatedServerErrorsAndLongRetryAfter) {
  FakeTransport t;
  for (int i = 0; i < 3; ++i)
    t.script.push_back(reply(500, "internal error"));
  Sleeps sleeps;
  ChatConfig c = testConfig();
  c.maxAttempts = 3;
  ChatClient client(c, t, sleeps.sleeper());
  QM_ASSERT_FAILS_WITH(client.complete({{"user", "x"}}).takeError(),
                       "gave up after 3 attempts: HTTP 500: internal error");
  FakeTransport t2;
  t2.script.push_back(reply(429, "later", {{"retry-after", "3600"}}));
  ChatClient patient(c, t2, sleeps.sleeper());
  QM_ASSERT_FAILS_WITH(patient.complete({{"user", "x"}}).takeError(),
                       "asked to retry after 3600.0 s, more than the limit "
                       "of 30.0 s");
  EXPECT_EQ(t2.requests.size(), 1u);
}

TEST(ChatClientTest, ClientErrorsAndBadRepliesAreErrorsWithoutTheKey) {
  setenv("QIMENG_TEST_LLM_KEY", "sk-test-secret", 1);
  Sleeps sleeps;
  struct Case {
    HttpOutcome outcome;
    const char *message;
  } cases[] = {
      {reply(401, "bad key sk-test-secret"), "HTTP 401: bad key [redacted]"},
      {reply(200, "{not json"), "LLM reply is not a JSON object"},
      {reply(200, "{\"choices\": []}"), "LLM reply has no choices"},
      {reply(200, "{\"choices\": [{\"message\": {\"content\": 7}}]}"),
       "no content string"},
      {reply(200, "{\"choices\": [{\"text\": \"x\"}]}"),
       "choice has no message"},
      {HttpOutcome::fail(HttpOutcome::Failure::TooLarge, "reply larger"),
       "reply larger"},
  };
  for (const Case &c : cases) {
    FakeTransport t;
    t.script.push_back(c.outcome);
    ChatClient client(testConfig(), t, sleeps.sleeper());
    auto result = client.complete({{"user", "x"}});
    ASSERT_FALSE(static_cast<bool>(result)) << c.message;
    std::string message = llvm::toString(result.takeError());
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    EXPECT_EQ(message.find("sk-test-secret"), std::string::npos) << message;
    EXPECT_EQ(t.requests.size(), 1u) << "no retry for " << c.message;
  }
  ChatConfig noModel = testConfig();
  noModel.model.clear();
  FakeTransport t;
  ChatClient client(noModel, t, sleeps.sleeper());
  QM_ASSERT_FAILS_WITH(client.complete({{"user", "x"}}).takeError(),
                       "no LLM model name given");
  EXPECT_TRUE(t.requests.empty());
}

class TranscriptTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("qm-llm", dir));
    root = std::string(dir);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }
  std::string root;
};

TEST_F(TranscriptTest, ReplayGivesTheRecordedSessionWithoutTheKey) {
  setenv("QIMENG_TEST_LLM_KEY", "sk-test-secret", 1);
  std::string path = root + "/session.jsonl";
  Sleeps sleeps;
  FakeTransport server;
  server.script.push_back(reply(429, "slow down", {{"retry-after", "1"}}));
  server.script.push_back(reply(200, chatReply("first")));
  server.script.push_back(reply(200, chatReply("second")));
  RecordingTransport recorder(server, path);
  ChatClient live(testConfig(), recorder, sleeps.sleeper());
  QM_ASSERT_EXPECTED(a, live.complete({{"user", "one"}}));
  QM_ASSERT_EXPECTED(b, live.complete({{"user", "two"}}));
  auto text = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(static_cast<bool>(text));
  EXPECT_EQ((*text)->getBuffer().find("sk-test-secret"), llvm::StringRef::npos);
  EXPECT_EQ((*text)->getBuffer().count('\n'), 3u);

  QM_ASSERT_EXPECTED(replay, ReplayTransport::open(path));
  ChatClient again(testConfig(), *replay, sleeps.sleeper());
  QM_ASSERT_EXPECTED(a2, again.complete({{"user", "one"}}));
  QM_ASSERT_EXPECTED(b2, again.complete({{"user", "two"}}));
  EXPECT_EQ(a2, a);
  EXPECT_EQ(b2, b);
  EXPECT_EQ(replay->remaining(), 0u);
  // Past the end, or a different request: a clear failure.
  QM_ASSERT_FAILS_WITH(again.complete({{"user", "three"}}).takeError(),
                       "past the end of the transcript");
  QM_ASSERT_EXPECTED(other, ReplayTransport::open(path));
  ChatClient differs(testConfig(), *other, sleeps.sleeper());
  QM_ASSERT_FAILS_WITH(differs.complete({{"user", "changed"}}).takeError(),
                       "request 1 differs from the transcript's (body)");
  // In order: the recorded replies whatever the prompts, counted.
  QM_ASSERT_EXPECTED(
      loose, ReplayTransport::open(path, ReplayTransport::Matching::InOrder));
  ChatClient inOrder(testConfig(), *loose, sleeps.sleeper());
  QM_ASSERT_EXPECTED(a3, inOrder.complete({{"user", "changed"}}));
  EXPECT_EQ(a3, a);
  EXPECT_EQ(loose->differing(), 2u); // the 429 and its retry
  // A broken transcript is an error naming the line.
  std::error_code ec;
  llvm::raw_fd_ostream bad(root + "/bad.jsonl", ec);
  bad << "{\"request\": {\"url\": \"u\", \"body\": \"b\"}}\n{oops\n";
  bad.close();
  QM_ASSERT_FAILS_WITH(ReplayTransport::open(root + "/bad.jsonl").takeError(),
                       "line 1");
}

/// The loopback server, started for one test and waited for at the end.
class LoopbackServer {
public:
  LoopbackServer(const std::string &dir, const nlohmann::json &replies)
      : dir(dir) {
    script = dir + "/script.json";
    portFile = dir + "/port";
    std::error_code ec;
    llvm::raw_fd_ostream out(script, ec);
    out << replies.dump();
    out.close();
    std::string server =
        std::string(QIMENG_TEST_SOURCE_DIR) + "/Unit/loopback_server.py";
    std::vector<llvm::StringRef> args = {QIMENG_PYTHON, server, script,
                                         portFile};
    process = llvm::sys::ExecuteNoWait(QIMENG_PYTHON, args, std::nullopt);
    for (int i = 0; i < 500 && !llvm::sys::fs::exists(portFile); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (auto buf = llvm::MemoryBuffer::getFile(portFile))
      port = (*buf)->getBuffer().trim().str();
  }
  ~LoopbackServer() {
    std::string err;
    llvm::sys::ProcessInfo done = llvm::sys::Wait(process, 10u, &err);
    if (done.Pid == 0)
      llvm::sys::Wait(process, std::nullopt, &err);
  }
  std::string url() const { return "http://127.0.0.1:" + port + "/v1"; }
  /// The requests the server saw, as JSON objects.
  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> out;
    auto buf = llvm::MemoryBuffer::getFile(script + ".requests");
    if (!buf)
      return out;
    llvm::SmallVector<llvm::StringRef> lines;
    (*buf)->getBuffer().split(lines, '\n', -1, false);
    for (llvm::StringRef l : lines)
      out.push_back(nlohmann::json::parse(l.str(), nullptr, false));
    return out;
  }
  std::string port;

private:
  std::string dir, script, portFile;
  llvm::sys::ProcessInfo process;
};

/// Runs qimeng-tensorop with `args` (its path is put in front).
llvm::Expected<SubprocessResult> runTensorop(std::vector<std::string> args) {
  std::string tool = std::string(QIMENG_TEST_BINARY_DIR) + "/qimeng-tensorop";
  args.insert(args.begin(), tool);
  SubprocessOptions sp;
  sp.timeoutSeconds = 300;
  return runSubprocess(tool, args, "", sp);
}

/// The scalar emitter, checked to be there.
std::string goodEmitter() {
  std::string source = scalarEmitterSource();
  EXPECT_FALSE(source.empty()) << "test/Unit/Inputs/scalar_emitter.py";
  return source;
}

TEST_F(TranscriptTest, CurlTalksToALoopbackServer) {
  setenv("QIMENG_TEST_LLM_KEY", "sk-test-secret", 1);
  QM_ASSERT_EXPECTED(curl, CurlTransport::create());
  nlohmann::json replies = nlohmann::json::array(
      {{{"status", 429}, {"headers", {{"Retry-After", "0"}}}, {"body", "wait"}},
       {{"status", 200}, {"body", chatReply("from the server")}},
       {{"status", 200}, {"body", chatReply("late")}, {"delay", 1.5}},
       {{"status", 200}, {"body", "x"}, {"repeat_body", 100000}}});
  LoopbackServer server(root, replies);
  ASSERT_FALSE(server.port.empty()) << "the loopback server did not start";
  ChatConfig c = testConfig();
  c.baseUrl = server.url();
  Sleeps sleeps;
  ChatClient client(c, *curl, sleeps.sleeper());
  QM_ASSERT_EXPECTED(text, client.complete({{"user", "hi"}}));
  EXPECT_EQ(text, "from the server");
  EXPECT_EQ(client.lastAttempts(), 2);
  ASSERT_EQ(sleeps.seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(sleeps.seconds[0], 0.0);
  // Slower than the timeout: a timeout, retried until the attempts run out.
  c.limits.totalTimeoutMs = 300;
  c.maxAttempts = 1;
  ChatClient impatient(c, *curl, sleeps.sleeper());
  QM_ASSERT_FAILS_WITH(impatient.complete({{"user", "slow"}}).takeError(),
                       "gave up after 1 attempts");
  // Larger than the cap.
  c.limits.totalTimeoutMs = 10000;
  c.limits.maxResponseBytes = 1000;
  ChatClient capped(c, *curl, sleeps.sleeper());
  QM_ASSERT_FAILS_WITH(capped.complete({{"user", "big"}}).takeError(),
                       "reply larger than 1000 bytes");
  std::vector<nlohmann::json> seen = server.requests();
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(seen[0]["headers"]["Authorization"], "Bearer sk-test-secret");
  EXPECT_EQ(nlohmann::json::parse(seen[0]["body"].get<std::string>())["model"],
            "test-model");
}

TEST(CurlTransportTest, ARefusedConnectionIsAConnectFailure) {
  QM_ASSERT_EXPECTED(curl, CurlTransport::create());
  HttpRequest request;
  request.url = "http://127.0.0.1:9/v1/chat/completions"; // discard: closed
  request.body = "{}";
  HttpLimits limits;
  limits.connectTimeoutMs = 2000;
  HttpOutcome outcome = curl->post(request, limits);
  EXPECT_EQ(outcome.failure, HttpOutcome::Failure::Connect) << outcome.message;
}

} // namespace

namespace {

TEST(TaskPromptTest, TheBuiltInParserReadsCommonPhrasings) {
  QM_ASSERT_EXPECTED(
      gemm, parseTaskPrompt("generate a 512x512x512 fp32 GEMM for this CPU"));
  ASSERT_EQ(gemm.problem.conv(), nullptr);
  EXPECT_EQ(gemm.problem.gemm(), GemmDesc::packed(512, 512, 512));
  EXPECT_EQ(gemm.shape, "512x512x512");
  QM_ASSERT_EXPECTED(tb, parseTaskPrompt("Matmul 128 x 3072 x 768 with B "
                                         "transposed, float"));
  EXPECT_EQ(tb.problem.gemm(), GemmDesc::packed(128, 3072, 768, false, true));
  QM_ASSERT_EXPECTED(
      conv, parseTaskPrompt("a conv2d on a 1x58x58x64 input to 64 filters "
                            "3x3 stride 1"));
  ASSERT_NE(conv.problem.conv(), nullptr);
  EXPECT_EQ(*conv.problem.conv(),
            ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 58, 58, 64, 64, 3, 3));
  QM_ASSERT_EXPECTED(nchw,
                     parseTaskPrompt("NCHW convolution 2x3x230x230 -> 64, 7x7, "
                                     "stride 2"));
  EXPECT_EQ(*nchw.problem.conv(), ConvDesc::dense(ConvLayout::NchwFchw, 2, 230,
                                                  230, 3, 64, 7, 7, 2, 2));
}

TEST(TaskPromptTest, WhatCannotBeReadIsAClearError) {
  QM_ASSERT_FAILS_WITH(parseTaskPrompt("make it fast").takeError(),
                       "cannot tell the operation");
  QM_ASSERT_FAILS_WITH(parseTaskPrompt("a big GEMM please").takeError(),
                       "cannot read the GEMM's shape");
  QM_ASSERT_FAILS_WITH(parseTaskPrompt("fp16 gemm 64x64x64").takeError(),
                       "only fp32 kernels can be generated; the prompt asks "
                       "for fp16");
  QM_ASSERT_FAILS_WITH(parseTaskPrompt("bf16 gemm 64x64x64").takeError(),
                       "for bf16 (bf16 and int8 GEMMs: the pass, qimeng-tune "
                       "--dtype and qimeng-bench --dtype)");
  QM_ASSERT_FAILS_WITH(
      parseTaskPrompt("gemm 64x64x64 for the znver4 cpu").takeError(),
      "a machine it knows (spacemit k1, ");
  QM_ASSERT_FAILS_WITH(
      parseTaskPrompt("gemm 64x64x64 for the znver4 cpu").takeError(),
      "); the prompt asks for 'znver4'");
  QM_ASSERT_FAILS_WITH(parseTaskPrompt("gemm 64x64x64 on a GPU").takeError(),
                       "asks for 'gpu'");
  QM_ASSERT_FAILS_WITH(parseTaskPrompt("conv 1x8x8x3 3x3").takeError(),
                       "cannot read the number of filters");
  QM_ASSERT_FAILS_WITH(parseTaskPrompt("conv 1x4x4x3 to 8 5x5").takeError(),
                       "spans 5x5, more than the 4x4 input");
}

TEST(TaskPromptTest, MachinesOfThePaperByName) {
  QM_ASSERT_EXPECTED(k1, parseTaskPrompt("generate a 1024x1024x1024 fp32 "
                                         "GEMM for the SpacemiT K1"));
  EXPECT_EQ(k1.problem.gemm(), GemmDesc::packed(1024, 1024, 1024));
  QM_ASSERT_EXPECTED(k1Target, Target::parse(k1.target));
  EXPECT_EQ(k1Target.cpu, "spacemit-x60");
  EXPECT_EQ(k1Target.vlen, 256);
  EXPECT_EQ(k1Target.bestIsa(), VectorIsa::Rvv);
  QM_ASSERT_EXPECTED(a76, parseTaskPrompt("sgemm 512x512x512 for a "
                                          "Cortex-A76"));
  QM_ASSERT_EXPECTED(a76Target, Target::parse(a76.target));
  EXPECT_EQ(a76Target.cpu, "cortex-a76");
  EXPECT_EQ(a76Target.bestIsa(), VectorIsa::Neon);
  QM_ASSERT_EXPECTED(host, parseTaskPrompt("gemm 64x64x64 for this cpu"));
  EXPECT_EQ(host.target, "host");
}

TEST(TaskPromptTest, TheLlmExtractsTheTaskAndItIsCheckedToo) {
  FakeTransport t;
  t.script.push_back(reply(
      200, chatReply("```json\n{\"op\": \"sgemm\", \"m\": 256, \"n\": 128, "
                     "\"k\": 64, \"dtype\": \"f32\", \"target\": "
                     "\"host\"}\n```")));
  t.script.push_back(
      reply(200, chatReply("{\"op\": \"sgemm\", \"m\": \"big\"}")));
  t.script.push_back(reply(200, chatReply("{\"op\": \"conv2d\", \"n\": 1, "
                                          "\"h\": 9, \"w\": 9, \"c\": 3, "
                                          "\"f\": 8, \"kh\": 3, \"kw\": 3, "
                                          "\"target\": \"tpu v5\"}")));
  t.script.push_back(
      reply(200, chatReply("{\"op\": \"gemm\", \"m\": 8192, \"n\": 8192, "
                           "\"k\": 8192, \"dtype\": \"bf16\", \"target\": "
                           "\"NVIDIA H100\"}")));
  t.script.push_back(reply(
      200, chatReply("{\"op\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, "
                     "\"dtype\": \"int8\", \"target\": \"a100\"}")));
  Sleeps sleeps;
  ChatClient client(testConfig(), t, sleeps.sleeper());
  QM_ASSERT_EXPECTED(task, extractTaskWithLlm("a GEMM of 256 rows...", client));
  EXPECT_EQ(task.problem.gemm(), GemmDesc::packed(256, 128, 64));
  QM_ASSERT_FAILS_WITH(extractTaskWithLlm("x", client).takeError(),
                       "field 'm' must be an integer");
  QM_ASSERT_FAILS_WITH(extractTaskWithLlm("x", client).takeError(),
                       "the LLM read the target as 'tpu v5'");
  QM_ASSERT_EXPECTED(gpu, extractTaskWithLlm("x", client));
  EXPECT_EQ(gpu.target, "nvptx64-nvidia-cuda:sm_90a");
  ASSERT_TRUE(gpu.gpu.has_value());
  EXPECT_EQ(gpu.gpu->title, "NVIDIA H100");
  EXPECT_EQ(gpu.dtype, "bf16");
  QM_ASSERT_FAILS_WITH(extractTaskWithLlm("x", client).takeError(),
                       "GPU kernels are generated in bf16, f16, tf32 and "
                       "f32; the LLM read the type as int8");
}

TEST(TaskPromptTest, NvidiaGpusByName) {
  // The architecture NVRTC compiles for and the multiprocessors the grid is
  // sized by; the type bf16, f16, tf32 or f32 (the default).
  QM_ASSERT_EXPECTED(h200, parseTaskPrompt("generate a 8192x8192x8192 bf16 "
                                           "GEMM for the H200"));
  ASSERT_TRUE(h200.gpu.has_value());
  EXPECT_EQ(h200.target, "nvptx64-nvidia-cuda:sm_90a");
  EXPECT_EQ(h200.gpu->title, "NVIDIA H200");
  EXPECT_EQ(h200.gpu->arch, "sm_90a");
  EXPECT_EQ(h200.gpu->sms, 132u);
  EXPECT_EQ(h200.dtype, "bf16");
  EXPECT_EQ(h200.problem.gemm(), GemmDesc::packed(8192, 8192, 8192));
  QM_ASSERT_EXPECTED(a100, parseTaskPrompt("a 512x512x512 fp16 matmul on an "
                                           "A100"));
  EXPECT_EQ(a100.target, "nvptx64-nvidia-cuda:sm_80");
  EXPECT_EQ(a100.dtype, "f16");
  ASSERT_TRUE(a100.gpu.has_value());
  EXPECT_EQ(a100.gpu->sms, 108u);
  QM_ASSERT_EXPECTED(rtx, parseTaskPrompt("gemm 256x256x256 for the RTX 4090"));
  EXPECT_EQ(rtx.target, "nvptx64-nvidia-cuda:sm_89");
  EXPECT_EQ(rtx.dtype, "f32");
  QM_ASSERT_EXPECTED(tf32, parseTaskPrompt("a 8192x8192x8192 tf32 gemm with b "
                                           "transposed for the H200"));
  EXPECT_EQ(tf32.dtype, "tf32");
  EXPECT_TRUE(tf32.problem.gemm().transB);
  QM_ASSERT_FAILS_WITH(
      parseTaskPrompt("int8 gemm 64x64x64 for the H100").takeError(),
      "the prompt asks for int8");
  QM_ASSERT_EXPECTED(cpu, parseTaskPrompt("gemm 64x64x64 for this cpu"));
  EXPECT_FALSE(cpu.gpu.has_value());
}

} // namespace

namespace {

Target fixedTarget() {
  auto t = Target::parse("x86_64-unknown-linux-gnu:sapphirerapids:+avx,+avx2,"
                         "+fma,+avx512f:l1d=48K,l2=2M,l3=105M,cores=2");
  EXPECT_TRUE(static_cast<bool>(t));
  return t ? *t : Target{};
}

TEST(HardwareComprehensionTest, ThePromptTiesHintsToFactorsAndTheTarget) {
  std::string p = hardwarePrompt(fixedTarget(), "Section 2.1: two FMA units");
  for (const char *word :
       {"tiling", "reordering", "vectorization", "layout", "pipelining",
        "registers", "memory hierarchy", "load/compute/store", "cores",
        "sapphirerapids", "two FMA units", "\"l2_bytes\""})
    EXPECT_NE(p.find(word), std::string::npos) << word;
}

TEST(HardwareComprehensionTest, DetectedFactsWinAndConflictsAreReported) {
  Target t = fixedTarget();
  QM_ASSERT_EXPECTED(
      r, mergeHardwareReply(
             "```json\n{\"registers\": {\"vector_registers\": 32, "
             "\"vector_bits\": 512}, \"memory\": {\"l1d_bytes\": 49152, "
             "\"l2_bytes\": 1048576}, \"instructions\": {\"fma\": true}, "
             "\"cores\": 56, \"hints\": {\"tiling\": \"12x32 fits 32 zmm\", "
             "\"layout\": \"pack B in L1\"}}\n```",
             t));
  EXPECT_EQ(r.merged.l2, 2 * 1024 * 1024);
  EXPECT_EQ(r.merged.cores, 2);
  EXPECT_EQ(r.merged.vectorRegisters, 32);
  EXPECT_EQ(r.conflicts,
            (std::vector<std::string>{
                "l2: the LLM says 1048576, detection 2097152; kept the "
                "detected value",
                "cores: the LLM says 56, detection 2; kept the detected "
                "value"}));
  EXPECT_EQ(r.merged.hints.at("tiling"), "12x32 fits 32 zmm");
  EXPECT_EQ(r.merged.hints.count("pipelining"), 0u);
  QM_ASSERT_FAILS_WITH(mergeHardwareReply("no idea", t).takeError(),
                       "holds no JSON object");
  QM_ASSERT_FAILS_WITH(
      mergeHardwareReply("{\"memory\": {\"l2_bytes\": \"2M\"}}", t).takeError(),
      "field 'memory.l2_bytes' must be a non-negative integer");
  QM_ASSERT_FAILS_WITH(
      mergeHardwareReply("{\"instructions\": {\"fma\": 1}}", t).takeError(),
      "'instructions.fma' must be true or false");
}

TEST(HardwareComprehensionTest, TheClientAsksOnce) {
  FakeTransport fake;
  fake.script.push_back(reply(200, chatReply("{\"cores\": 2}")));
  Sleeps sleeps;
  ChatClient client(testConfig(), fake, sleeps.sleeper());
  QM_ASSERT_EXPECTED(r, comprehendHardware(client, fixedTarget()));
  EXPECT_TRUE(r.conflicts.empty());
  ASSERT_EQ(fake.requests.size(), 1u);
  EXPECT_NE(fake.requests[0].body.find("pipelining"), std::string::npos);
}

} // namespace

namespace {

/// qimeng-tensorop end to end against the loopback server: the LLM reads
/// the prompt (stage 0), the machine (stage 1), proposes tuning moves
/// (stage 3) and writes an emitter (stage 2); the report says what came of
/// each, and a server that has gone away leaves a correct offline run.
TEST_F(TranscriptTest, QimengTensoropTalksToAnLlm) {
  setenv("QIMENG_TEST_LLM_KEY", "sk-test-secret", 1);
  std::string emitter =
      "def emit(request):\n    raise RuntimeError('first draft')\n";
  nlohmann::json replies = nlohmann::json::array(
      {{{"body", chatReply("{\"op\": \"sgemm\", \"m\": 24, \"n\": 40, \"k\": "
                           "16, \"dtype\": \"f32\", \"target\": \"host\"}")}},
       {{"body", chatReply("{\"cores\": 64, \"hints\": {\"tiling\": \"x\"}}")}},
       {{"body", chatReply("{\"candidates\": [\"ku=2\"]}")}},
       {{"body", chatReply("```python\n" + emitter + "```")}},
       {{"body", chatReply("no code this time")}},
       {{"body", chatReply("still none")}}});
  LoopbackServer server(root, replies);
  ASSERT_FALSE(server.port.empty());
  QM_ASSERT_EXPECTED(
      run,
      runTensorop({"--json", "-o", root + "/out", "--budget", "4",
                   "--cache-dir", root + "/db", "--llm-endpoint", server.url(),
                   "--llm-model", "m", "--llm-api-key-env",
                   "QIMENG_TEST_LLM_KEY", "make me a small matrix multiply"}));
  ASSERT_EQ(run.exitCode, 0) << run.err;
  nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out;
  EXPECT_EQ(report["prompt_parsed_by"], "llm");
  EXPECT_EQ(report["shape"], "24x40x16");
  EXPECT_EQ(report["validated"], true);
  EXPECT_EQ(report["source"], "llm-assisted");
  EXPECT_NE(report["hardware_notes"][0].get<std::string>().find(
                "cores: the LLM says 64"),
            std::string::npos);
  EXPECT_NE(report["llm_emitter"].get<std::string>().find(
                "no LLM-written emitter validated in 3 round(s)"),
            std::string::npos)
      << report["llm_emitter"];
  // The transcript holds every exchange and never the key.
  auto transcript =
      llvm::MemoryBuffer::getFile(root + "/out/llm-transcript.jsonl");
  ASSERT_TRUE(static_cast<bool>(transcript));
  EXPECT_EQ((*transcript)->getBuffer().count('\n'), 6u);
  EXPECT_EQ((*transcript)->getBuffer().find("sk-test-secret"),
            llvm::StringRef::npos);
  EXPECT_EQ(run.err.find("sk-test-secret"), std::string::npos);
  // ... and it is kept beside the tuning record it produced.
  std::error_code ec;
  int kept = 0;
  for (llvm::sys::fs::directory_iterator it(root + "/db/v1", ec), end;
       it != end && !ec; it.increment(ec))
    kept += llvm::StringRef(it->path()).ends_with(".llm.jsonl");
  EXPECT_EQ(kept, 1);
}

TEST_F(TranscriptTest, QimengTensoropWithAnUnreachableLlmRunsOffline) {
  QM_ASSERT_EXPECTED(
      run, runTensorop({"--json", "-o", root + "/out", "--budget", "2",
                        "--cache-dir", root + "/db", "--llm-endpoint",
                        "http://127.0.0.1:9/v1", "--llm-model", "m",
                        "generate a 24x40x16 fp32 GEMM for this CPU"}));
  ASSERT_EQ(run.exitCode, 0) << run.err;
  nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out;
  EXPECT_EQ(report["prompt_parsed_by"], "builtin");
  EXPECT_EQ(report["validated"], true);
  EXPECT_NE(run.err.find("reading the prompt with the built-in parser"),
            std::string::npos)
      << run.err;
}

} // namespace

namespace {

/// The ablation against the scripted server: vanilla (a real scalar
/// emitter, validated), hints only (no code: failed), the full pipeline.
TEST_F(TranscriptTest, QimengTensoropAblation) {
  std::string emitter = goodEmitter();
  ASSERT_FALSE(emitter.empty());
  nlohmann::json replies = nlohmann::json::array(
      {{{"body", chatReply("{\"op\": \"sgemm\", \"m\": 13, \"n\": 21, "
                           "\"k\": 17}")}},
       {{"body", chatReply("```python\n" + emitter + "```")}},
       {{"body", chatReply("{\"hints\": {\"tiling\": \"12x32 blocks\"}}")}},
       {{"body", chatReply("Use bigger tiles.")}},
       {{"body", chatReply("{\"candidates\": [\"ku=2\"]}")}},
       {{"body", chatReply("```python\n" + emitter + "```")}}});
  LoopbackServer server(root, replies);
  ASSERT_FALSE(server.port.empty());
  QM_ASSERT_EXPECTED(
      run,
      runTensorop({"--json", "--ablation", "-o", root + "/out", "--budget", "2",
                   "--cache-dir", root + "/db", "--llm-endpoint", server.url(),
                   "--llm-model", "m", "a 13x21x17 matmul"}));
  ASSERT_EQ(run.exitCode, 0) << run.err;
  nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out;
  const nlohmann::json &rows = report["ablation"];
  ASSERT_EQ(rows.size(), 3u) << run.out;
  EXPECT_EQ(rows[0]["variant"], "vanilla");
  EXPECT_EQ(rows[0]["validated"], true) << rows[0];
  EXPECT_EQ(rows[1]["variant"], "hints-only");
  EXPECT_EQ(rows[1]["validated"], false);
  EXPECT_NE(rows[1]["failure"].get<std::string>().find("holds no code"),
            std::string::npos);
  EXPECT_EQ(rows[2]["variant"], "full-pipeline");
  EXPECT_EQ(rows[2]["validated"], true);
  EXPECT_GT(rows[2]["gflops"].get<double>(), 0);
  // The hints reached the hints-only prompt; the vanilla one has none.
  std::vector<nlohmann::json> seen = server.requests();
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen[1]["body"].get<std::string>().find("12x32 blocks"),
            std::string::npos);
  EXPECT_NE(seen[3]["body"].get<std::string>().find("12x32 blocks"),
            std::string::npos);
}

} // namespace

namespace {

/// Over HTTP, end to end: whatever the LLM's emitter does wrong, the
/// command ends with a clear message and the built-in kernel, validated,
/// in place; a 429 with Retry-After and a 503 are retried on the way.
TEST_F(TranscriptTest, QimengTensoropKeepsTheBuiltInKernelForBadEmitters) {
  std::string good = goodEmitter();
  ASSERT_FALSE(good.empty());
  auto swap = [&](const std::string &from, const std::string &to) {
    std::string code = good;
    size_t at = code.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      code.replace(at, from.size(), to);
    return code;
  };
  struct Case {
    const char *name;
    std::string code;
    const char *reason;
  } cases[] = {
      {"raises", "def emit(request):\n    raise ValueError('oops')\n",
       "ValueError: oops"},
      {"prints too much", "def emit(request):\n    return 'x' * (8 << 20)\n",
       "printed more than"},
      {"reads the key",
       "import os\ndef emit(request):\n    return "
       "os.environ['QIMENG_TEST_LLM_KEY']\n",
       "KeyError"},
      {"opens a socket",
       "import socket\ndef emit(request):\n    socket.socket()\n    return "
       "''\n",
       "sandbox: socket"},
      {"does not assemble",
       swap("vfmadd231ss (%rax), %xmm1, %xmm0",
            "vfmadd231ss (%rax), %xmm77, %xmm0"),
       "could not be assembled"},
      {"wrong results",
       swap("vfmadd231ss (%rax), %xmm1, %xmm0", "vaddss (%rax), %xmm1, %xmm1"),
       "failed validation"},
      {"segfaults",
       swap("\"xorl %r8d, %r8d\",",
            "\"xorl %eax, %eax\", \"movl %eax, (%rax)\", \"xorl %r8d, %r8d\","),
       "crashed"},
  };
  setenv("QIMENG_TEST_LLM_KEY", "sk-test-secret", 1);
  int index = 0;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    std::string dir = root + "/case" + std::to_string(index++);
    ASSERT_FALSE(llvm::sys::fs::create_directories(dir));
    std::string emitter = chatReply("```python\n" + c.code + "```");
    nlohmann::json replies = nlohmann::json::array(
        {{{"status", 429}, {"headers", {{"Retry-After", "0"}}}, {"body", "x"}},
         {{"body", chatReply("{\"op\": \"sgemm\", \"m\": 13, \"n\": 21, "
                             "\"k\": 17}")}},
         {{"status", 503}, {"body", "busy"}},
         {{"body", chatReply("{\"cores\": 2}")}},
         {{"body", chatReply("{\"candidates\": []}")}},
         {{"body", emitter}},
         {{"body", emitter}},
         {{"body", emitter}}});
    LoopbackServer server(dir, replies);
    ASSERT_FALSE(server.port.empty());
    QM_ASSERT_EXPECTED(
        run, runTensorop({"--json", "-o", dir + "/out", "--budget", "2",
                          "--cache-dir", dir + "/db", "--llm-endpoint",
                          server.url(), "--llm-model", "m", "--llm-api-key-env",
                          "QIMENG_TEST_LLM_KEY", "a 13x21x17 matmul"}));
    ASSERT_EQ(run.exitCode, 0) << run.err;
    nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
    ASSERT_TRUE(report.is_object()) << run.out;
    EXPECT_EQ(report["prompt_parsed_by"], "llm");
    EXPECT_EQ(report["validated"], true);
    EXPECT_EQ(report["source"], "llm-assisted") << "the built-in kernel";
    std::string why = report["llm_emitter"].get<std::string>();
    EXPECT_NE(why.find("no LLM-written emitter validated in 3 round(s)"),
              std::string::npos)
        << why;
    EXPECT_NE(why.find(c.reason), std::string::npos) << why;
    EXPECT_EQ(run.out.find("sk-test-secret"), std::string::npos);
    EXPECT_EQ(run.err.find("sk-test-secret"), std::string::npos);
  }
}

} // namespace
