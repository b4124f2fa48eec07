//===- AssemblerTest.cpp - LLVM MC in process and ORC loading -------------===//
#include "qimeng/Emit/Assembler.h"
#include "ErrorHelpers.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/JitKernel.h"
#include "llvm/ADT/StringRef.h"
#include <gtest/gtest.h>

using namespace qimeng;

namespace {

/// An x86-64 target with AVX2 and FMA, pinned so that assembling does not
/// depend on the machine.
Target pinnedAvx2() {
  auto t = Target::parse("x86_64-unknown-linux-gnu:haswell:+avx,+avx2,+fma");
  if (!t) {
    ADD_FAILURE() << llvm::toString(t.takeError());
    return Target();
  }
  return *t;
}

Target pinnedAvx512() {
  auto t = Target::parse(
      "x86_64-unknown-linux-gnu:skylake-avx512:+avx,+avx2,+fma,+avx512f");
  if (!t) {
    ADD_FAILURE() << llvm::toString(t.takeError());
    return Target();
  }
  return *t;
}

/// `int qm_test_answer(void) { return 42; }`
constexpr const char *kAnswer = "\t.text\n"
                                "\t.globl\tqm_test_answer\n"
                                "\t.type\tqm_test_answer,@function\n"
                                "qm_test_answer:\n"
                                "\tmovl\t$42, %eax\n"
                                "\tretq\n"
                                "\t.size\tqm_test_answer, .-qm_test_answer\n";

bool isElf(const llvm::MemoryBuffer &buf) {
  return buf.getBufferSize() > 4 && buf.getBuffer().starts_with("\x7f"
                                                                "ELF");
}

TEST(AssemblerTest, TinyFunctionGivesElf) {
  QM_ASSERT_EXPECTED(obj, assembleToObject(kAnswer, pinnedAvx2()));
  ASSERT_TRUE(obj);
  EXPECT_GT(obj->getBufferSize(), 0u);
  EXPECT_TRUE(isElf(*obj));
  // 64-bit little-endian relocatable.
  llvm::StringRef bytes = obj->getBuffer();
  EXPECT_EQ(bytes[4], 2);  // ELFCLASS64
  EXPECT_EQ(bytes[5], 1);  // ELFDATA2LSB
  EXPECT_EQ(bytes[16], 1); // ET_REL
}

TEST(AssemblerTest, EmptyTextIsAValidObject) {
  QM_ASSERT_EXPECTED(obj, assembleToObject("", pinnedAvx2()));
  EXPECT_TRUE(isElf(*obj));
}

TEST(AssemblerTest, InvalidMnemonicNamesLineAndColumn) {
  const char *text = "\t.text\n"
                     "f:\n"
                     "\tvfrobnicateps %ymm0, %ymm1, %ymm2\n"
                     "\tretq\n";
  std::string msg = ::qimeng::testing::takeMessage(
      assembleToObject(text, pinnedAvx2()).takeError());
  ASSERT_FALSE(msg.empty());
  // The mnemonic starts after the tab: column 2.
  EXPECT_NE(msg.find("kernel.s:3:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("error:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("vfrobnicateps"), std::string::npos) << msg;
}

TEST(AssemblerTest, DiagnosticUsesTheBufferName) {
  const char *text = "\t.text\n"
                     "\tnot_an_instruction\n";
  std::string msg = ::qimeng::testing::takeMessage(
      assembleToObject(text, pinnedAvx2(), "my_kernel.s").takeError());
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg.find("my_kernel.s:2:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not_an_instruction"), std::string::npos) << msg;
}

TEST(AssemblerTest, EveryErrorIsReported) {
  const char *text = "\t.text\n"
                     "\tbogusone\n"
                     "\tretq\n"
                     "\tbogustwo\n";
  std::string msg = ::qimeng::testing::takeMessage(
      assembleToObject(text, pinnedAvx2()).takeError());
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg.find("kernel.s:2:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("kernel.s:4:2:"), std::string::npos) << msg;
}

TEST(AssemblerTest, BadOperandIsAnError) {
  const char *text = "\t.text\n"
                     "\tmovq %rax\n";
  std::string msg = ::qimeng::testing::takeMessage(
      assembleToObject(text, pinnedAvx2()).takeError());
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg.find("kernel.s:2:"), std::string::npos) << msg;
}

TEST(AssemblerTest, UnknownTripleIsAnError) {
  Target t;
  t.triple = "nonsense-unknown-none";
  t.cpu = "generic";
  std::string msg =
      ::qimeng::testing::takeMessage(assembleToObject(kAnswer, t).takeError());
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg.find("nonsense-unknown-none"), std::string::npos) << msg;
}

TEST(AssemblerTest, EmittedAvx2KernelAssembles) {
  GemmConfig c;
  c.kc = 16;
  c.mc = 12;
  c.nc = 32;
  QM_ASSERT_EXPECTED(k, emitGemmKernel(GemmDesc::packed(7, 17, 5), c,
                                       EmitterOptions::defaults()));
  QM_ASSERT_EXPECTED(obj,
                     assembleToObject(k.text, pinnedAvx2(), k.symbol + ".s"));
  EXPECT_TRUE(isElf(*obj));
  // The symbol name is in the object's string table.
  EXPECT_TRUE(obj->getBuffer().contains(k.symbol));
}

TEST(AssemblerTest, EmittedAvx512KernelAssembles) {
  GemmConfig c;
  c.isa = VectorIsa::Avx512;
  c.mr = 12;
  c.nr = 32;
  c.kc = 16;
  c.mc = 24;
  c.nc = 64;
  QM_ASSERT_EXPECTED(k, emitGemmKernel(GemmDesc::packed(13, 33, 5), c,
                                       EmitterOptions::defaults()));
  QM_ASSERT_EXPECTED(obj, assembleToObject(k.text, pinnedAvx512()));
  EXPECT_TRUE(isElf(*obj));
}

/// The JIT loads objects for the host only.
#define QM_SKIP_UNLESS_X86_64_HOST()                                           \
  do {                                                                         \
    if (!Target::detectHost().isX86_64())                                      \
      GTEST_SKIP() << "host is not x86_64";                                    \
  } while (0)

TEST(AssemblerTest, ObjectLoadsAndRuns) {
  QM_SKIP_UNLESS_X86_64_HOST();
  QM_ASSERT_EXPECTED(obj, assembleToObject(kAnswer, pinnedAvx2()));
  QM_ASSERT_EXPECTED(jit, JitKernel::load(std::move(obj), "qm_test_answer"));
  ASSERT_NE(jit->address(), nullptr);
  // Base x86-64 code: safe to call on any x86-64 host.
  auto fn = reinterpret_cast<int (*)()>(jit->address());
  EXPECT_EQ(fn(), 42);
}

TEST(AssemblerTest, MissingSymbolIsNamed) {
  QM_SKIP_UNLESS_X86_64_HOST();
  QM_ASSERT_EXPECTED(obj, assembleToObject(kAnswer, pinnedAvx2()));
  QM_ASSERT_FAILS_WITH(
      JitKernel::load(std::move(obj), "qm_no_such_kernel").takeError(),
      "qm_no_such_kernel");
}

TEST(AssemblerTest, TwoLoadsAreIndependent) {
  QM_SKIP_UNLESS_X86_64_HOST();
  QM_ASSERT_EXPECTED(obj1, assembleToObject(kAnswer, pinnedAvx2()));
  QM_ASSERT_EXPECTED(obj2, assembleToObject(kAnswer, pinnedAvx2()));
  QM_ASSERT_EXPECTED(jit1, JitKernel::load(std::move(obj1), "qm_test_answer"));
  QM_ASSERT_EXPECTED(jit2, JitKernel::load(std::move(obj2), "qm_test_answer"));
  EXPECT_NE(jit1->address(), jit2->address());
}

} // namespace
