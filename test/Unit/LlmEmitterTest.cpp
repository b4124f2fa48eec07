//===- LlmEmitterTest.cpp - LLM-written emitters, sandboxed and validated -===//
//
// A scripted chat server answers with emitters: a real one (scalar loops,
// correct for any shape, written here as an LLM might), and ones that raise,
// loop forever, print too much, read the environment, open a socket or a
// file, write assembly that does not assemble, compute wrong results or
// crash. Each bad one is refused with its reason and sent back for repair;
// the real one validates in qimeng-runner.
//
//===----------------------------------------------------------------------===//
#include "ErrorHelpers.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Tune/LlmEmitter.h"
#include <deque>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace qimeng;

namespace {

/// A self-contained emitter: C[i][j] += sum_k A[i][k] * B[k][j] with
/// scalar FMAs, the shape and leading dimensions from the request.
const char *kGoodEmitter = R"PY(
def emit(request):
    m, n, k = request["m"], request["n"], request["k"]
    lda, ldb, ldc = request["lda"], request["ldb"], request["ldc"]
    sym = f"llm_sgemm_{m}x{n}x{k}"
    body = [
        "xorl %r8d, %r8d",
        "1:",
        "xorl %r9d, %r9d",
        "2:",
        f"imulq ${ldc * 4}, %r8, %rax",
        "leaq (%rdx,%rax), %r10",
        "vmovss (%r10,%r9,4), %xmm0",
        f"imulq ${lda * 4}, %r8, %rax",
        "leaq (%rdi,%rax), %r11",
        "leaq (%rsi,%r9,4), %rax",
        "xorl %ecx, %ecx",
        "3:",
        "vmovss (%r11,%rcx,4), %xmm1",
        "vfmadd231ss (%rax), %xmm1, %xmm0",
        f"addq ${ldb * 4}, %rax",
        "incq %rcx",
        f"cmpq ${k}, %rcx",
        "jb 3b",
        "vmovss %xmm0, (%r10,%r9,4)",
        "incq %r9",
        f"cmpq ${n}, %r9",
        "jb 2b",
        "incq %r8",
        f"cmpq ${m}, %r8",
        "jb 1b",
    ]
    lines = [f"# qm.symbol: {sym}", "# qm.workspace_bytes: 64",
             "# qm.clobbers: rax,rcx,r8,r9,r10,r11,xmm0,xmm1",
             "# qm.features: avx,fma", "\t.text", f"\t.globl\t{sym}",
             f"{sym}:", "# qm.body.begin"]
    lines += ["\t" + b if not b.endswith(":") else b for b in body]
    lines += ["# qm.body.end", "\tretq"]
    return "\n".join(lines) + "\n"
)PY";

std::string fenced(const std::string &code) {
  return "Here is the emitter:\n```python\n" + code + "\n```\n";
}

std::string variant(const std::string &from, const std::string &to) {
  std::string code = kGoodEmitter;
  size_t at = code.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    code.replace(at, from.size(), to);
  return code;
}

class ScriptedChat : public HttpTransport {
public:
  std::deque<std::string> replies;
  std::vector<std::string> lastUserMessages;
  HttpOutcome post(const HttpRequest &request, const HttpLimits &) override {
    nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
    if (body.is_object() && body["messages"].is_array())
      lastUserMessages.push_back(
          body["messages"].back()["content"].get<std::string>());
    if (replies.empty())
      return HttpOutcome::fail(HttpOutcome::Failure::Other, "no more replies");
    HttpOutcome o;
    o.response.status = 200;
    nlohmann::json r = {{"choices",
                         {{{"message",
                            {{"role", "assistant"},
                             {"content", replies.front()}}}}}}};
    o.response.body = r.dump();
    replies.pop_front();
    return o;
  }
};

ChatConfig scripted() {
  ChatConfig c;
  c.baseUrl = "http://127.0.0.1:9/v1";
  c.model = "scripted";
  c.maxAttempts = 1;
  return c;
}

class LlmEmitterTest : public ::testing::Test {
protected:
  void SetUp() override {
    host = Target::detectHost();
    if (host.bestIsa() == VectorIsa::None || !host.hasFeature("fma"))
      GTEST_SKIP() << "host has no avx2/fma";
    desc = GemmDesc::packed(13, 21, 17);
    config = *chooseGemmConfig(desc, host);
    options.sandbox.timeoutSeconds = 10;
    options.sandbox.cpuSeconds = 3;
  }
  Target host;
  GemmDesc desc;
  GemmConfig config;
  AuthoringOptions options;
};

TEST(LlmEmitterCodeTest, CodeComesFromTheFirstFencedBlock) {
  QM_ASSERT_EXPECTED(a, extractCode("x\n```python\nprint(1)\n```\n```\n2\n```"));
  EXPECT_EQ(a, "print(1)\n");
  QM_ASSERT_EXPECTED(b, extractCode("```\ndef emit(r): pass\n```"));
  EXPECT_EQ(b, "def emit(r): pass\n");
  QM_ASSERT_FAILS_WITH(extractCode("def emit(r): pass").takeError(),
                       "the reply holds no code");
}

TEST_F(LlmEmitterTest, AGoodEmitterValidatesAfterARepair) {
  setenv("QIMENG_TEST_LLM_KEY", "sk-sandbox-secret", 1);
  ScriptedChat chat;
  chat.replies.push_back("I would use a blocked loop nest.");
  chat.replies.push_back(fenced(kGoodEmitter));
  ChatClient client(scripted(), chat, [](double) {});
  QM_ASSERT_EXPECTED(authored,
                     authorGemmKernel(client, desc, config, host,
                                      EmitterOptions::defaults(),
                                      IsolatedValidationOptions::defaults(),
                                      options));
  ASSERT_EQ(authored.rounds.size(), 2u);
  EXPECT_NE(authored.rounds[0].failure.find("holds no code"),
            std::string::npos);
  EXPECT_TRUE(authored.rounds[1].failure.empty());
  EXPECT_TRUE(authored.validation.passed);
  EXPECT_EQ(authored.kernel.symbol, "llm_sgemm_13x21x17");
  EXPECT_EQ(authored.emitterSource, authored.rounds[1].code);
  // The repair request carried the failure back.
  ASSERT_EQ(chat.lastUserMessages.size(), 2u);
  EXPECT_NE(chat.lastUserMessages[1].find("That failed: the reply holds no "
                                          "code"),
            std::string::npos);
  // The first prompt holds the request and our emitter as the example.
  EXPECT_NE(chat.lastUserMessages[0].find("\"kind\":\"sgemm\""),
            std::string::npos);
  EXPECT_NE(chat.lastUserMessages[0].find("def _emit_compute"),
            std::string::npos);
}

TEST_F(LlmEmitterTest, EveryBadEmitterIsRefusedWithItsReason) {
  setenv("QIMENG_TEST_LLM_KEY", "sk-sandbox-secret", 1);
  struct Case {
    const char *name;
    std::string code;
    const char *reason;
  } cases[] = {
      {"raises", "def emit(request):\n    raise ValueError('no idea')\n",
       "ValueError: no idea"},
      {"loops", "def emit(request):\n    while True:\n        pass\n",
       "the emitter was killed"},
      {"prints too much",
       "def emit(request):\n    return 'x' * (8 << 20)\n",
       "printed more than"},
      {"reads the environment",
       "import os\ndef emit(request):\n    return "
       "os.environ['QIMENG_TEST_LLM_KEY']\n",
       "KeyError: 'QIMENG_TEST_LLM_KEY'"},
      {"opens a socket",
       "import socket\ndef emit(request):\n    socket.create_connection(("
       "'127.0.0.1', 80))\n    return ''\n",
       "sandbox: socket"},
      {"reads a file", "def emit(request):\n    return "
                       "open('/etc/hostname').read()\n",
       "sandbox: reading /etc/hostname is not allowed"},
      {"does not assemble",
       variant("vfmadd231ss (%rax), %xmm1, %xmm0",
               "vfmadd231ss (%rax), %xmm99, %xmm0"),
       "could not be assembled or loaded"},
      {"computes wrong results",
       variant("vfmadd231ss (%rax), %xmm1, %xmm0",
               "vaddss (%rax), %xmm1, %xmm1"),
       "failed validation"},
      {"crashes", variant("\"xorl %r8d, %r8d\",",
                          "\"xorl %eax, %eax\", \"movl %eax, (%rax)\", "
                          "\"xorl %r8d, %r8d\","),
       "crashed"},
      {"no header", "def emit(request):\n    return 'nop'\n",
       "lacks its header"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    ScriptedChat chat;
    chat.replies.push_back(fenced(c.code));
    ChatClient client(scripted(), chat, [](double) {});
    AuthoringOptions one = options;
    one.maxRounds = 1;
    auto authored = authorGemmKernel(client, desc, config, host,
                                     EmitterOptions::defaults(),
                                     IsolatedValidationOptions::defaults(),
                                     one);
    ASSERT_FALSE(static_cast<bool>(authored));
    std::string message = llvm::toString(authored.takeError());
    EXPECT_NE(message.find("no LLM-written emitter validated in 1 round"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(c.reason), std::string::npos) << message;
    EXPECT_EQ(message.find("sk-sandbox-secret"), std::string::npos);
  }
}

} // namespace
