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
#include "qimeng/Tune/LlmEmitter.h"
#include "ErrorHelpers.h"
#include "ScriptedChat.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include <gtest/gtest.h>

using namespace qimeng;

namespace {

/// The scalar emitter, checked to be there.
std::string goodEmitter() {
  std::string source = scalarEmitterSource();
  EXPECT_FALSE(source.empty()) << "test/Unit/Inputs/scalar_emitter.py";
  return source;
}

std::string fenced(const std::string &code) {
  return "Here is the emitter:\n```python\n" + code + "\n```\n";
}

std::string variant(const std::string &from, const std::string &to) {
  std::string code = goodEmitter();
  size_t at = code.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    code.replace(at, from.size(), to);
  return code;
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
  QM_ASSERT_EXPECTED(a,
                     extractCode("x\n```python\nprint(1)\n```\n```\n2\n```"));
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
  chat.replies.push_back(fenced(goodEmitter()));
  ChatClient client(scriptedChatConfig(), chat, [](double) {});
  QM_ASSERT_EXPECTED(
      authored,
      authorGemmKernel(client, desc, config, host, EmitterOptions::defaults(),
                       IsolatedValidationOptions::defaults(), options));
  ASSERT_EQ(authored.rounds.size(), 2u);
  EXPECT_NE(authored.rounds[0].failure.find("holds no code"),
            std::string::npos);
  EXPECT_TRUE(authored.rounds[1].failure.empty());
  EXPECT_TRUE(authored.validation.passed);
  EXPECT_EQ(authored.kernel.symbol, "llm_sgemm_13x21x17");
  EXPECT_EQ(authored.emitterSource, authored.rounds[1].code);
  // The repair request carried the failure back.
  ASSERT_EQ(chat.lastMessages.size(), 2u);
  EXPECT_NE(chat.lastMessages[1].find("That failed: the reply holds no "
                                      "code"),
            std::string::npos);
  // The first prompt holds the request and our emitter as the example.
  EXPECT_NE(chat.lastMessages[0].find("\"kind\":\"sgemm\""), std::string::npos);
  EXPECT_NE(chat.lastMessages[0].find("def _emit_compute"), std::string::npos);
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
      {"prints too much", "def emit(request):\n    return 'x' * (8 << 20)\n",
       "printed more than"},
      {"reads the environment",
       "import os\ndef emit(request):\n    return "
       "os.environ['QIMENG_TEST_LLM_KEY']\n",
       "KeyError: 'QIMENG_TEST_LLM_KEY'"},
      {"opens a socket",
       "import socket\ndef emit(request):\n    socket.create_connection(("
       "'127.0.0.1', 80))\n    return ''\n",
       "sandbox: socket"},
      {"reads a file",
       "def emit(request):\n    return "
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
      {"crashes",
       variant("\"xorl %r8d, %r8d\",",
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
    ChatClient client(scriptedChatConfig(), chat, [](double) {});
    AuthoringOptions one = options;
    one.maxRounds = 1;
    auto authored =
        authorGemmKernel(client, desc, config, host, EmitterOptions::defaults(),
                         IsolatedValidationOptions::defaults(), one);
    ASSERT_FALSE(static_cast<bool>(authored));
    std::string message = llvm::toString(authored.takeError());
    EXPECT_NE(message.find("no LLM-written emitter validated in 1 round"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(c.reason), std::string::npos) << message;
    EXPECT_EQ(message.find("sk-sandbox-secret"), std::string::npos);
  }
}

TEST_F(LlmEmitterTest, ReplayingTheTranscriptGivesTheSameKernel) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("qm-replay", dir));
  std::string path = std::string(dir) + "/authoring.jsonl";
  ScriptedChat chat;
  chat.replies.push_back(fenced("def emit(request):\n    return 1\n"));
  chat.replies.push_back(fenced(goodEmitter()));
  RecordingTransport recorder(chat, path);
  ChatClient live(scriptedChatConfig(), recorder, [](double) {});
  QM_ASSERT_EXPECTED(
      first,
      authorGemmKernel(live, desc, config, host, EmitterOptions::defaults(),
                       IsolatedValidationOptions::defaults(), options));
  QM_ASSERT_EXPECTED(replay, ReplayTransport::open(path));
  ChatClient again(scriptedChatConfig(), *replay, [](double) {});
  QM_ASSERT_EXPECTED(
      second,
      authorGemmKernel(again, desc, config, host, EmitterOptions::defaults(),
                       IsolatedValidationOptions::defaults(), options));
  EXPECT_EQ(second.kernel.text, first.kernel.text);
  EXPECT_EQ(second.emitterSource, first.emitterSource);
  EXPECT_EQ(second.rounds.size(), 2u);
  EXPECT_EQ(replay->remaining(), 0u);
  llvm::sys::fs::remove_directories(dir);
}

TEST_F(LlmEmitterTest, TheLlmMayChooseTheSketchAndABadOneIsRepaired) {
  ScriptedChat chat;
  chat.replies.push_back(fenced(goodEmitter()) +
                         "```json\n{\"config\": \"mr=99,kc=abc\"}\n```\n");
  chat.replies.push_back(fenced(goodEmitter()) +
                         "```json\n{\"config\": \"kc=8,ku=2\"}\n```\n");
  ChatClient client(scriptedChatConfig(), chat, [](double) {});
  QM_ASSERT_EXPECTED(
      authored,
      authorGemmKernel(client, desc, config, host, EmitterOptions::defaults(),
                       IsolatedValidationOptions::defaults(), options));
  ASSERT_EQ(authored.rounds.size(), 2u);
  EXPECT_NE(authored.rounds[0].failure.find("the sketch is not a kernel "
                                            "config"),
            std::string::npos)
      << authored.rounds[0].failure;
  EXPECT_EQ(authored.config.kc, 8);
  EXPECT_EQ(authored.config.kUnroll, 2);
  EXPECT_EQ(authored.config.mr, config.mr);
  EXPECT_TRUE(authored.validation.passed);
}

TEST_F(LlmEmitterTest, AConvolutionGetsItsOwnRequestAndExamples) {
  ConvDesc conv = ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 8, 8, 3, 16, 3, 3);
  GemmConfig base = *chooseKernelConfig(conv, host);
  ScriptedChat chat;
  chat.replies.push_back("no code");
  chat.replies.push_back(fenced(goodEmitter())); // a GEMM emitter: wrong
  ChatClient client(scriptedChatConfig(), chat, [](double) {});
  AuthoringOptions two = options;
  two.maxRounds = 2;
  auto authored =
      authorKernel(client, conv, base, host, EmitterOptions::defaults(),
                   IsolatedValidationOptions::defaults(), two);
  ASSERT_FALSE(static_cast<bool>(authored));
  std::string message = llvm::toString(authored.takeError());
  EXPECT_NE(message.find("round 2: the emitter failed"), std::string::npos)
      << message;
  ASSERT_FALSE(chat.lastMessages.empty());
  EXPECT_NE(chat.lastMessages[0].find("\"kind\":\"sconv2d\""),
            std::string::npos);
  EXPECT_NE(chat.lastMessages[0].find("# conv2d.py"), std::string::npos);
}

} // namespace
