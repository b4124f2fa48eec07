//===- TargetTest.cpp - Target detection, parsing and printing ------------===//
#include "qimeng/Kernel/Target.h"
#include "ErrorHelpers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace qimeng;

namespace {

constexpr int64_t kib = 1024;
constexpr int64_t mib = 1024 * 1024;

/// The flags of the first processor in /proc/cpuinfo ("" if unreadable).
std::vector<std::string> cpuinfoFlags() {
  auto buf = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo");
  if (!buf)
    return {};
  llvm::SmallVector<llvm::StringRef, 64> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    auto [key, value] = line.split(':');
    if (key.trim() != "flags")
      continue;
    llvm::SmallVector<llvm::StringRef, 128> flags;
    value.split(flags, ' ', -1, /*KeepEmpty=*/false);
    std::vector<std::string> result;
    for (llvm::StringRef flag : flags)
      result.push_back(flag.trim().str());
    return result;
  }
  return {};
}

TEST(TargetTest, DetectHostIsPlausible) {
  Target host = Target::detectHost();
  EXPECT_FALSE(host.triple.empty());
  EXPECT_FALSE(host.cpu.empty());
  EXPECT_GT(host.caches.l1d, 0);
  EXPECT_GT(host.caches.l2, 0);
  EXPECT_GT(host.caches.l3, 0);
  EXPECT_LT(host.caches.l1d, host.caches.l2);
  EXPECT_LE(host.caches.l2, host.caches.l3);
  EXPECT_GE(host.cores, 1);
  EXPECT_TRUE(llvm::is_sorted(host.features));
  // The host's own description parses back to itself.
  QM_ASSERT_EXPECTED(again, Target::parse(host.str()));
  EXPECT_EQ(again.str(), host.str());
}

TEST(TargetTest, DetectHostSeesAvx2WhenCpuinfoDoes) {
  Target host = Target::detectHost();
  if (!host.isX86_64())
    GTEST_SKIP() << "not an x86_64 host";
  std::vector<std::string> flags = cpuinfoFlags();
  if (!llvm::is_contained(flags, "avx2"))
    GTEST_SKIP() << "/proc/cpuinfo lists no avx2";
  EXPECT_TRUE(host.hasFeature("avx2")) << host.featureString();
  if (llvm::is_contained(flags, "fma")) {
    EXPECT_TRUE(host.hasFeature("fma")) << host.featureString();
    EXPECT_NE(host.bestIsa(), VectorIsa::None);
  }
  if (llvm::is_contained(flags, "avx512f") &&
      llvm::is_contained(flags, "fma")) {
    EXPECT_EQ(host.bestIsa(), VectorIsa::Avx512);
  }
}

TEST(TargetTest, ParseFullSpec) {
  QM_ASSERT_EXPECTED(
      t, Target::parse("x86_64-unknown-linux-gnu:znver3:+avx2,+fma,+avx:"
                       "l1d=32K,l2=512K,l3=32M,cores=8"));
  EXPECT_EQ(t.triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(t.cpu, "znver3");
  EXPECT_EQ(t.features, (std::vector<std::string>{"avx", "avx2", "fma"}));
  EXPECT_EQ(t.caches.l1d, 32 * kib);
  EXPECT_EQ(t.caches.l2, 512 * kib);
  EXPECT_EQ(t.caches.l3, 32 * mib);
  EXPECT_EQ(t.cores, 8);
  EXPECT_TRUE(t.isX86_64());
  EXPECT_EQ(t.featureString(), "+avx,+avx2,+fma");
  EXPECT_EQ(t.str(), "x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:"
                     "l1d=32K,l2=512K,l3=32M,cores=8");

  QM_ASSERT_EXPECTED(again, Target::parse(t.str()));
  EXPECT_EQ(again.triple, t.triple);
  EXPECT_EQ(again.cpu, t.cpu);
  EXPECT_EQ(again.features, t.features);
  EXPECT_EQ(again.caches.l1d, t.caches.l1d);
  EXPECT_EQ(again.caches.l2, t.caches.l2);
  EXPECT_EQ(again.caches.l3, t.caches.l3);
  EXPECT_EQ(again.cores, t.cores);
  EXPECT_EQ(again.str(), t.str());
}

TEST(TargetTest, ParseTripleOnlyKeepsDefaults) {
  QM_ASSERT_EXPECTED(t, Target::parse("x86_64-unknown-linux-gnu"));
  CacheSizes defaults;
  EXPECT_EQ(t.cpu, "generic");
  EXPECT_TRUE(t.features.empty());
  EXPECT_EQ(t.caches.l1d, defaults.l1d);
  EXPECT_EQ(t.caches.l2, defaults.l2);
  EXPECT_EQ(t.caches.l3, defaults.l3);
  EXPECT_EQ(t.cores, 1);
  EXPECT_EQ(t.bestIsa(), VectorIsa::None);
  QM_ASSERT_EXPECTED(again, Target::parse(t.str()));
  EXPECT_EQ(again.str(), t.str());
}

TEST(TargetTest, ParseAppliesFeaturesInOrder) {
  QM_ASSERT_EXPECTED(
      t, Target::parse("x86_64-unknown-linux-gnu::+avx512f,+avx2,-avx512f, "
                       "+fma,+fma"));
  EXPECT_EQ(t.cpu, "generic");
  EXPECT_EQ(t.features, (std::vector<std::string>{"avx2", "fma"}));
}

TEST(TargetTest, ParsePartialCaches) {
  QM_ASSERT_EXPECTED(t, Target::parse("x86_64-unknown-linux-gnu:sapphirerapids"
                                      "::l2=2048K,l3=260M"));
  CacheSizes defaults;
  EXPECT_EQ(t.caches.l1d, defaults.l1d);
  EXPECT_EQ(t.caches.l2, 2 * mib);
  EXPECT_EQ(t.caches.l3, 260 * mib);
  EXPECT_EQ(t.cores, 1);
}

TEST(TargetTest, ParseErrors) {
  QM_ASSERT_FAILS_WITH(Target::parse("").takeError(), "empty target triple");
  QM_ASSERT_FAILS_WITH(Target::parse(":znver3").takeError(),
                       "empty target triple");
  QM_ASSERT_FAILS_WITH(
      Target::parse("x86_64-unknown-linux-gnu:znver3:avx2").takeError(),
      "feature 'avx2' needs a + or - sign");
  QM_ASSERT_FAILS_WITH(
      Target::parse("x86_64-unknown-linux-gnu:znver3:+").takeError(),
      "has no name");
  QM_ASSERT_FAILS_WITH(
      Target::parse("x86_64-unknown-linux-gnu:znver3:+avx2:l4=1M").takeError(),
      "unknown cache key 'l4'");
  QM_ASSERT_FAILS_WITH(
      Target::parse("x86_64-unknown-linux-gnu:znver3:+avx2:l2=big").takeError(),
      "invalid size 'big'");
  QM_ASSERT_FAILS_WITH(
      Target::parse("x86_64-unknown-linux-gnu:znver3:+avx2:l2=12Q").takeError(),
      "for l2");
  QM_ASSERT_FAILS_WITH(
      Target::parse("x86_64-unknown-linux-gnu:znver3:+avx2:l2=0").takeError(),
      "must be positive");
  QM_ASSERT_FAILS_WITH(
      Target::parse("x86_64-unknown-linux-gnu:znver3:+avx2:l2").takeError(),
      "expected KEY=VALUE");
  QM_ASSERT_FAILS_WITH(
      Target::parse("x86_64-unknown-linux-gnu:znver3:+avx2:cores=0")
          .takeError(),
      "invalid core count '0'");
  QM_ASSERT_FAILS_WITH(
      Target::parse("x86_64-unknown-linux-gnu:a:b:c:d").takeError(),
      "too many fields");
  QM_ASSERT_FAILS_WITH(Target::parse("nosucharch-unknown-linux").takeError(),
                       "unknown architecture in target triple "
                       "'nosucharch-unknown-linux'");
}

TEST(TargetTest, ParseByteSize) {
  QM_ASSERT_EXPECTED(plain, parseByteSize("4096"));
  EXPECT_EQ(plain, 4096);
  QM_ASSERT_EXPECTED(k, parseByteSize("48K"));
  EXPECT_EQ(k, 48 * kib);
  QM_ASSERT_EXPECTED(lowerK, parseByteSize("48k"));
  EXPECT_EQ(lowerK, 48 * kib);
  QM_ASSERT_EXPECTED(m, parseByteSize("260M"));
  EXPECT_EQ(m, 260 * mib);
  QM_ASSERT_EXPECTED(g, parseByteSize("1G"));
  EXPECT_EQ(g, 1024 * mib);
  QM_ASSERT_FAILS_WITH(parseByteSize("").takeError(), "invalid size");
  QM_ASSERT_FAILS_WITH(parseByteSize("K").takeError(), "invalid size");
  QM_ASSERT_FAILS_WITH(parseByteSize("-5K").takeError(), "invalid size");
  QM_ASSERT_FAILS_WITH(parseByteSize("99999999999999999999").takeError(),
                       "invalid size");
  QM_ASSERT_FAILS_WITH(parseByteSize("9999999999999G").takeError(),
                       "too large");
}

TEST(TargetTest, BestIsa) {
  auto isaOf = [](llvm::StringRef features) {
    auto t =
        Target::parse(("x86_64-unknown-linux-gnu:generic:" + features).str());
    EXPECT_TRUE(static_cast<bool>(t));
    if (!t) {
      llvm::consumeError(t.takeError());
      return VectorIsa::None;
    }
    return t->bestIsa();
  };
  EXPECT_EQ(isaOf("+avx2,+fma"), VectorIsa::Avx2);
  EXPECT_EQ(isaOf("+avx512f,+avx2,+fma"), VectorIsa::Avx512);
  EXPECT_EQ(isaOf("+avx512f,+avx2"), VectorIsa::None);
  EXPECT_EQ(isaOf("+avx2"), VectorIsa::None);
  EXPECT_EQ(isaOf(""), VectorIsa::None);

  QM_ASSERT_EXPECTED(arm, Target::parse("aarch64-unknown-linux-gnu:generic:"
                                        "+avx2,+fma"));
  EXPECT_FALSE(arm.isX86_64());
  EXPECT_EQ(arm.bestIsa(), VectorIsa::None);
  QM_ASSERT_EXPECTED(neon,
                     Target::parse("aarch64-linux-gnu:neoverse-n1:+neon"));
  EXPECT_EQ(neon.bestIsa(), VectorIsa::Neon);
  QM_ASSERT_EXPECTED(sve, Target::parse("aarch64-linux-gnu:a64fx:+neon,+sve"));
  EXPECT_EQ(sve.bestIsa(), VectorIsa::Sve);
  EXPECT_EQ(sve.vlen, 512);
  QM_ASSERT_EXPECTED(sveEmu, sve.emulation());
  EXPECT_EQ(sveEmu.args, (std::vector<std::string>{"-cpu", "max,sve512=on"}));
  QM_ASSERT_EXPECTED(sve256, Target::parse("aarch64-linux-gnu::+sve:vlen=256"));
  EXPECT_EQ(sve256.vlen, 256);
  // Kernels for any SVE length, validated at the least.
  QM_ASSERT_EXPECTED(scalable,
                     Target::parse("aarch64-linux-gnu::+sve:vlen=scalable"));
  EXPECT_TRUE(scalable.scalableVectors);
  EXPECT_EQ(scalable.vlen, 128);
  EXPECT_NE(scalable.str().find(",vlen=scalable"), std::string::npos);
  QM_ASSERT_EXPECTED(again, Target::parse(scalable.str()));
  EXPECT_TRUE(again.scalableVectors);
  auto notSve = Target::parse("riscv64-linux-gnu:generic:+m,+v:vlen=scalable");
  ASSERT_FALSE(static_cast<bool>(notSve));
  EXPECT_NE(llvm::toString(notSve.takeError()).find("not AArch64 with +sve"),
            std::string::npos);
  QM_ASSERT_EXPECTED(rvv, Target::parse("riscv64-linux-gnu:generic:+m,+v"));
  EXPECT_EQ(rvv.bestIsa(), VectorIsa::Rvv);
  QM_ASSERT_EXPECTED(scalar, Target::parse("riscv64-linux-gnu:generic:+m"));
  EXPECT_EQ(scalar.bestIsa(), VectorIsa::None);
  EXPECT_TRUE(isSketchIsa(VectorIsa::Neon));
  EXPECT_TRUE(isSketchIsa(VectorIsa::Rvv));
  EXPECT_FALSE(isSketchIsa(VectorIsa::Avx512));
}

TEST(TargetTest, RiscvVectorLength) {
  // RVV 1.0's least, a zvl feature, the CPU's row, the vlen key: the
  // vector length also becomes LLVM's zvl feature.
  QM_ASSERT_EXPECTED(least, Target::parse("riscv64-linux-gnu:generic:+v"));
  EXPECT_EQ(least.vlen, 128);
  QM_ASSERT_EXPECTED(zvl,
                     Target::parse("riscv64-linux-gnu:generic:+v,+zvl512b"));
  EXPECT_EQ(zvl.vlen, 512);
  QM_ASSERT_EXPECTED(k1, Target::parse("riscv64-linux-gnu:spacemit-x60:+v"));
  EXPECT_EQ(k1.vlen, 256);
  EXPECT_TRUE(k1.hasFeature("zvl256b"));
  QM_ASSERT_EXPECTED(
      given, Target::parse("riscv64-linux-gnu:spacemit-x60:+v:vlen=1024"));
  EXPECT_EQ(given.vlen, 1024);
  EXPECT_NE(given.str().find(",vlen=1024"), std::string::npos);
  QM_ASSERT_EXPECTED(back, Target::parse(given.str()));
  EXPECT_EQ(back.str(), given.str());
  QM_ASSERT_EXPECTED(x86, Target::parse("x86_64-unknown-linux-gnu"));
  EXPECT_EQ(x86.vlen, 0);
  QM_ASSERT_FAILS_WITH(
      Target::parse("riscv64-linux-gnu:generic:+v:vlen=96").takeError(),
      "invalid vlen '96'");
  QM_ASSERT_FAILS_WITH(
      Target::parse("aarch64-linux-gnu:generic:+neon:vlen=256").takeError(),
      "vlen is the vector length of RVV or SVE kernels");
}

TEST(TargetTest, InlineAsmStateAndEmulationAreTargetData) {
  QM_ASSERT_EXPECTED(x86, Target::parse("x86_64-unknown-linux-gnu"));
  EXPECT_EQ(x86.inlineAsmStateClobbers(),
            (std::vector<std::string>{"dirflag", "fpsr", "flags"}));
  QM_ASSERT_EXPECTED(a76, Target::parse("aarch64-linux-gnu:cortex-a76:+neon"));
  EXPECT_EQ(a76.inlineAsmStateClobbers(), (std::vector<std::string>{"nzcv"}));
  QM_ASSERT_EXPECTED(a76Emu, a76.emulation());
  EXPECT_EQ(a76Emu.program, "qemu-aarch64");
  EXPECT_EQ(a76Emu.args, (std::vector<std::string>{"-cpu", "cortex-a76"}));
  QM_ASSERT_EXPECTED(generic, Target::parse("aarch64-linux-gnu::+neon"));
  QM_ASSERT_EXPECTED(genericEmu, generic.emulation());
  EXPECT_EQ(genericEmu.args, (std::vector<std::string>{"-cpu", "max"}));
  QM_ASSERT_EXPECTED(k1, Target::parse("riscv64-linux-gnu:spacemit-x60:+v"));
  EXPECT_TRUE(k1.inlineAsmStateClobbers().empty());
  QM_ASSERT_EXPECTED(k1Emu, k1.emulation());
  EXPECT_EQ(k1Emu.program, "qemu-riscv64");
  EXPECT_EQ(k1Emu.args,
            (std::vector<std::string>{
                "-cpu", "rv64,v=true,vext_spec=v1.0,vlen=256,elen=64"}));
  QM_ASSERT_EXPECTED(ppc, Target::parse("powerpc64le-linux-gnu"));
  QM_ASSERT_FAILS_WITH(ppc.emulation().takeError(), "no emulator");
}

TEST(TargetTest, VectorShapes) {
  EXPECT_EQ(Target::vectorBits(VectorIsa::Avx512), 512);
  EXPECT_EQ(Target::vectorBits(VectorIsa::Avx2), 256);
  EXPECT_EQ(Target::vectorBits(VectorIsa::None), 0);
  EXPECT_EQ(Target::vectorRegisters(VectorIsa::Avx512), 32);
  EXPECT_EQ(Target::vectorRegisters(VectorIsa::Avx2), 16);
  EXPECT_EQ(Target::vectorRegisters(VectorIsa::None), 0);
}

TEST(TargetTest, IsaNames) {
  for (VectorIsa isa :
       {VectorIsa::None, VectorIsa::Avx2, VectorIsa::Avx512, VectorIsa::Neon,
        VectorIsa::Sve, VectorIsa::Rvv, VectorIsa::Amx}) {
    QM_ASSERT_EXPECTED(back, parseIsa(isaName(isa)));
    EXPECT_EQ(back, isa);
  }
  EXPECT_EQ(isaName(VectorIsa::Avx2), "avx2");
  EXPECT_EQ(isaName(VectorIsa::Avx512), "avx512");
  EXPECT_EQ(isaName(VectorIsa::None), "none");
  EXPECT_EQ(isaName(VectorIsa::Amx), "amx");
  QM_ASSERT_FAILS_WITH(parseIsa("sse").takeError(),
                       "unknown vector isa 'sse'; expected avx2, avx512, "
                       "neon, sve, rvv or amx");
}

TEST(TargetTest, ToJsonParsesBack) {
  QM_ASSERT_EXPECTED(
      t, Target::parse("x86_64-unknown-linux-gnu:znver3:+avx2,+fma,+avx:"
                       "l1d=32K,l2=512K,l3=32M,cores=8"));
  nlohmann::json j = nlohmann::json::parse(t.toJson(), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << t.toJson();
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["triple"], "x86_64-unknown-linux-gnu");
  EXPECT_EQ(j["cpu"], "znver3");
  EXPECT_EQ(j["features"], nlohmann::json::array({"avx", "avx2", "fma"}));
  EXPECT_EQ(j["isa"], "avx2");
  EXPECT_EQ(j["vector_bits"], 256);
  EXPECT_EQ(j["vector_registers"], 16);
  ASSERT_TRUE(j["caches"].is_object());
  EXPECT_EQ(j["caches"]["l1d"], 32 * kib);
  EXPECT_EQ(j["caches"]["l2"], 512 * kib);
  EXPECT_EQ(j["caches"]["l3"], 32 * mib);
  EXPECT_EQ(j["cores"], 8);

  // The host's JSON is valid too, whatever the host is.
  nlohmann::json host =
      nlohmann::json::parse(Target::detectHost().toJson(), nullptr, false);
  ASSERT_FALSE(host.is_discarded());
  EXPECT_TRUE(host["features"].is_array());
}

TEST(TargetTest, ToJsonSurvivesInvalidUtf8) {
  QM_ASSERT_EXPECTED(t, Target::parse("x86_64-unknown-linux-gnu:bad\xff"));
  nlohmann::json j = nlohmann::json::parse(t.toJson(), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["cpu"].is_string());
}

/// Writes `dir`/`name`/{level,type,size} the way sysfs lays them out.
void writeCacheIndex(llvm::StringRef dir, llvm::StringRef name,
                     llvm::StringRef level, llvm::StringRef type,
                     llvm::StringRef size) {
  llvm::SmallString<128> index(dir);
  llvm::sys::path::append(index, name);
  ASSERT_FALSE(llvm::sys::fs::create_directories(index));
  for (auto [file, text] : {std::pair{"level", level}, std::pair{"type", type},
                            std::pair{"size", size}}) {
    llvm::SmallString<128> path(index);
    llvm::sys::path::append(path, file);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec) << ec.message();
    os << text << "\n";
  }
}

TEST(TargetTest, ReadCacheSizesFromSysfsLayout) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("qimeng-cache", dir));
  writeCacheIndex(dir, "index0", "1", "Data", "48K");
  writeCacheIndex(dir, "index1", "1", "Instruction", "32K");
  writeCacheIndex(dir, "index2", "2", "Unified", "2048K");
  writeCacheIndex(dir, "index3", "3", "Unified", "266240K");
  CacheSizes c = readCacheSizes(dir);
  EXPECT_EQ(c.l1d, 48 * kib);
  EXPECT_EQ(c.l2, 2 * mib);
  EXPECT_EQ(c.l3, 260 * mib);

  // A machine without L3 keeps the default for it.
  llvm::SmallString<128> small;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("qimeng-cache", small));
  writeCacheIndex(small, "index0", "1", "Data", "32K");
  writeCacheIndex(small, "index1", "2", "Unified", "1M");
  CacheSizes defaults;
  defaults.l3 = 123 * kib;
  CacheSizes s = readCacheSizes(small, defaults);
  EXPECT_EQ(s.l1d, 32 * kib);
  EXPECT_EQ(s.l2, mib);
  EXPECT_EQ(s.l3, 123 * kib);

  // No sysfs at all: the defaults.
  CacheSizes none = readCacheSizes("/nonexistent/qimeng-cache");
  EXPECT_EQ(none.l1d, CacheSizes().l1d);

  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::remove_directories(small);
}

} // namespace
