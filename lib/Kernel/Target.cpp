//===- Target.cpp - The hardware factors of a machine ---------------------===//
//
// Host detection from LLVM (triple, CPU name, features) and Linux sysfs
// (caches), and the textual form tests use to pin a target.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Kernel/Target.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace qimeng;
using llvm::StringRef;

static constexpr int64_t kib = 1024;
static constexpr int64_t mib = 1024 * 1024;
static constexpr int64_t gib = 1024 * 1024 * 1024;

static constexpr StringRef specSyntax = "TRIPLE[:CPU[:FEATURES[:CACHES]]]";

//===----------------------------------------------------------------------===//
// Vector ISAs
//===----------------------------------------------------------------------===//

StringRef qimeng::isaName(VectorIsa isa) {
  switch (isa) {
  case VectorIsa::None:
    return "none";
  case VectorIsa::Avx2:
    return "avx2";
  case VectorIsa::Avx512:
    return "avx512";
  case VectorIsa::Neon:
    return "neon";
  case VectorIsa::Sve:
    return "sve";
  case VectorIsa::Rvv:
    return "rvv";
  case VectorIsa::Amx:
    return "amx";
  }
  llvm_unreachable("unknown VectorIsa");
}

bool qimeng::isSketchIsa(VectorIsa isa) {
  return isa == VectorIsa::Neon || isa == VectorIsa::Sve ||
         isa == VectorIsa::Rvv;
}

bool qimeng::isaAppliesEpilogues(VectorIsa isa) {
  // amx.py's kernels store C as it is.
  return isa != VectorIsa::None && isa != VectorIsa::Amx;
}

bool qimeng::isaAppliesSmoothActivations(VectorIsa isa) {
  return isa == VectorIsa::Avx2 || isa == VectorIsa::Avx512 || isSketchIsa(isa);
}

bool qimeng::isaReadsConvStridesAtRunTime(VectorIsa isa) {
  return isa == VectorIsa::Avx2 || isa == VectorIsa::Avx512;
}

bool qimeng::isaWritesStridedConvOutput(VectorIsa isa) {
  return isa == VectorIsa::Avx2 || isa == VectorIsa::Avx512 || isSketchIsa(isa);
}

llvm::Expected<VectorIsa> qimeng::parseIsa(StringRef name) {
  for (VectorIsa isa :
       {VectorIsa::None, VectorIsa::Avx2, VectorIsa::Avx512, VectorIsa::Neon,
        VectorIsa::Sve, VectorIsa::Rvv, VectorIsa::Amx})
    if (name == isaName(isa))
      return isa;
  return llvm::createStringError(
      "unknown vector isa '" + name +
      "'; expected avx2, avx512, neon, sve, rvv or amx");
}

//===----------------------------------------------------------------------===//
// Architectures and CPUs: one row each
//===----------------------------------------------------------------------===//

namespace {

/// What the generator knows of an architecture.
struct ArchRow {
  llvm::Triple::ArchType arch;
  /// Its vector ISAs of the sketch-driven generator and the features that
  /// enable them, preferred first (x86's are chosen below, by features).
  std::vector<std::pair<VectorIsa, const char *>> isas;
  /// Machine state inline asm changes (LLVM clobber names).
  std::vector<const char *> asmState;
  /// qemu-user program for it.
  const char *qemu;
};

const ArchRow archRows[] = {
    {llvm::Triple::x86_64, {}, {"dirflag", "fpsr", "flags"}, "qemu-x86_64"},
    {llvm::Triple::aarch64,
     {{VectorIsa::Sve, "sve"}, {VectorIsa::Neon, "neon"}},
     {"nzcv"},
     "qemu-aarch64"},
    {llvm::Triple::riscv64, {{VectorIsa::Rvv, "v"}}, {}, "qemu-riscv64"},
};

const ArchRow *archRowOf(const std::string &triple) {
  llvm::Triple::ArchType arch = llvm::Triple(triple).getArch();
  for (const ArchRow &row : archRows)
    if (row.arch == arch)
      return &row;
  return nullptr;
}

/// CPUs the generator knows beyond LLVM's name: the vector length the
/// target string need not repeat (0: not RISC-V), the static model's
/// llvm-mca CPU and fp32 FMA lanes a cycle (0: no model), and the core
/// whose kernels OpenBLAS's DYNAMIC_ARCH build runs there (its symbols'
/// suffix; none: no peer in the model's side by side).
struct CpuRow {
  const char *cpu;
  int vlen;
  const char *mcaCpu;
  int fmaLanesPerCycle;
  const char *openBlasCore = nullptr;
};
const CpuRow cpuRows[] = {
    // SpacemiT K1's core: RVV 1.0 at VLEN 256, one LMUL-1 vfmacc a cycle.
    {"spacemit-x60", 256, "spacemit-x60", 8},
    {"sifive-x280", 512, nullptr, 0},
    {"sifive-p670", 128, nullptr, 0},
    // Two 128-bit FMA pipes; LLVM's cortex-a76 is the A57 model.
    {"neoverse-n1", 0, "neoverse-n1", 8, "NEOVERSEN1"},
    {"cortex-a76", 0, "neoverse-n1", 8, "NEOVERSEN1"},
    // SVE vector lengths; Neoverse-V1 (Graviton3): two 256-bit SVE FMA
    // pipes.
    {"a64fx", 512, nullptr, 0},
    {"neoverse-v1", 256, "neoverse-v1", 16, "NEOVERSEV1"},
    {"neoverse-n2", 128, nullptr, 0},
};

/// The paper's machines by the names people use for them.
struct MachineRow {
  std::vector<const char *> names;
  const char *spec;
};
const CpuRow *cpuRowOf(const std::string &cpu) {
  for (const CpuRow &row : cpuRows)
    if (cpu == row.cpu)
      return &row;
  return nullptr;
}

const MachineRow machineRows[] = {
    {{"spacemit k1", "spacemit-k1", "k1", "spacemit x60", "spacemit-x60",
      "bananapi bpi-f3"},
     "riscv64-unknown-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v,+zvl256b:"
     "l1d=32K,l2=512K,l3=512K,cores=8"},
    {{"cortex-a76", "cortex a76", "a76", "raspberry pi 5"},
     "aarch64-unknown-linux-gnu:cortex-a76:+neon:l1d=64K,l2=512K,l3=2M,"
     "cores=4"},
    {{"neoverse-n1", "neoverse n1", "n1", "graviton2", "ampere altra"},
     "aarch64-unknown-linux-gnu:neoverse-n1:+neon:l1d=64K,l2=1M,l3=32M,"
     "cores=1"},
    {{"neoverse-v1", "neoverse v1", "v1", "graviton3"},
     "aarch64-unknown-linux-gnu:neoverse-v1:+neon,+sve:l1d=64K,l2=1M,"
     "l3=32M,cores=1"},
};

/// The qemu -cpu model for an AArch64 LLVM CPU name: the same name where
/// qemu has the model (its Cortex-A76 and Neoverse-N1 refuse SVE, which
/// catches code newer than the core), else "max".
std::string qemuAArch64Cpu(StringRef cpu) {
  for (const char *model : {"cortex-a53", "cortex-a57", "cortex-a72",
                            "cortex-a76", "neoverse-n1", "a64fx"})
    if (cpu == model)
      return model;
  return "max";
}

} // namespace

//===----------------------------------------------------------------------===//
// Sizes and sysfs
//===----------------------------------------------------------------------===//

llvm::Expected<int64_t> qimeng::parseByteSize(StringRef text) {
  StringRef digits = text.trim();
  int64_t scale = 1;
  if (digits.consume_back_insensitive("k"))
    scale = kib;
  else if (digits.consume_back_insensitive("m"))
    scale = mib;
  else if (digits.consume_back_insensitive("g"))
    scale = gib;
  uint64_t value = 0;
  if (digits.empty() || digits.getAsInteger(10, value))
    return llvm::createStringError(
        "invalid size '" + text +
        "'; expected a number of bytes with an optional K, M or G suffix");
  if (value == 0)
    return llvm::createStringError("invalid size '" + text +
                                   "'; it must be positive");
  if (value >
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / scale))
    return llvm::createStringError("invalid size '" + text + "'; too large");
  return static_cast<int64_t>(value) * scale;
}

/// "32K", "2M" or plain bytes: the shortest exact form parseByteSize reads.
static std::string formatByteSize(int64_t bytes) {
  if (bytes != 0 && bytes % gib == 0)
    return std::to_string(bytes / gib) + "G";
  if (bytes != 0 && bytes % mib == 0)
    return std::to_string(bytes / mib) + "M";
  if (bytes != 0 && bytes % kib == 0)
    return std::to_string(bytes / kib) + "K";
  return std::to_string(bytes);
}

/// The trimmed contents of a small sysfs file, or "" if it cannot be read.
/// getFileAsStream reads to end of file: sysfs files claim a size of 4096.
static std::string readSysfsValue(const llvm::Twine &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
      llvm::MemoryBuffer::getFileAsStream(path);
  if (!buf)
    return "";
  return (*buf)->getBuffer().trim().str();
}

CacheSizes qimeng::readCacheSizes(StringRef cacheDir, CacheSizes defaults) {
  CacheSizes caches = defaults;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(cacheDir, ec), end;
       !ec && it != end; it.increment(ec)) {
    StringRef dir = it->path();
    if (!llvm::sys::path::filename(dir).starts_with("index"))
      continue;
    std::string level = readSysfsValue(dir + "/level");
    std::string type = readSysfsValue(dir + "/type");
    llvm::Expected<int64_t> size = parseByteSize(readSysfsValue(dir + "/size"));
    if (!size) {
      llvm::consumeError(size.takeError());
      continue;
    }
    if (level == "1" && type == "Data")
      caches.l1d = *size;
    else if (level == "2" && type == "Unified")
      caches.l2 = *size;
    else if (level == "3" && type == "Unified")
      caches.l3 = *size;
  }
  return caches;
}

//===----------------------------------------------------------------------===//
// Target
//===----------------------------------------------------------------------===//

/// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): true when Linux
/// grants this process AMX's tile data (the kernels ask again themselves).
static bool requestTileData() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long archReqXcompPerm = 0x1023, xfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, archReqXcompPerm, xfeatureXtiledata) == 0;
#else
  return false;
#endif
}

Target Target::detectHost() {
  Target t;
  t.triple = llvm::sys::getProcessTriple();
  StringRef cpu = llvm::sys::getHostCPUName();
  t.cpu = cpu.empty() ? "generic" : cpu.str();
  for (const llvm::StringMapEntry<bool> &feature :
       llvm::sys::getHostCPUFeatures())
    if (feature.getValue())
      t.features.push_back(feature.getKey().str());
  llvm::sort(t.features);
  // Linux grants AMX's tile data only on request: where it refuses, the
  // tiles are not this host's to use (bf16 and int8 then run on
  // AVX512-BF16/VNNI), and the target says so.
  if (t.hasFeature("amx-tile") && !requestTileData()) {
    t = t.withoutAmx();
    t.amxRefused = true;
  }
  t.caches = readCacheSizes("/sys/devices/system/cpu/cpu0/cache");
  // LLVM 22 has llvm::get_physical_cores() (-1 when unknown) in place of
  // the older sys::getHostNumPhysicalCores().
  int cores = llvm::get_physical_cores();
  if (cores < 1)
    cores = static_cast<int>(std::thread::hardware_concurrency());
  t.cores = std::max(cores, 1);
  return t;
}

/// Applies "+a,-b,+c" in order to `features`.
static llvm::Error applyFeatures(StringRef list,
                                 std::set<std::string> &features) {
  llvm::SmallVector<StringRef, 16> items;
  list.split(items, ',');
  for (StringRef item : items) {
    item = item.trim();
    if (item.empty())
      continue;
    char sign = item.front();
    StringRef name = item.drop_front().trim();
    if (sign != '+' && sign != '-')
      return llvm::createStringError("feature '" + item +
                                     "' needs a + or - sign");
    if (name.empty())
      return llvm::createStringError("feature '" + item + "' has no name");
    if (sign == '+')
      features.insert(name.str());
    else
      features.erase(name.str());
  }
  return llvm::Error::success();
}

/// Applies "l1d=48K,l2=2M,l3=32M,cores=2" to `t`.
static llvm::Error applyCaches(StringRef list, Target &t) {
  llvm::SmallVector<StringRef, 4> items;
  list.split(items, ',');
  for (StringRef item : items) {
    item = item.trim();
    if (item.empty())
      continue;
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (!item.contains('=') || value.empty())
      return llvm::createStringError("expected KEY=VALUE in target caches, "
                                     "got '" +
                                     item + "'");
    int64_t *slot = llvm::StringSwitch<int64_t *>(key)
                        .Case("l1d", &t.caches.l1d)
                        .Case("l2", &t.caches.l2)
                        .Case("l3", &t.caches.l3)
                        .Default(nullptr);
    if (slot) {
      llvm::Expected<int64_t> size = parseByteSize(value);
      if (!size)
        return llvm::createStringError(llvm::toString(size.takeError()) +
                                       " for " + key);
      *slot = *size;
      continue;
    }
    if (key == "vlen" && value == "scalable") {
      t.scalableVectors = true;
      continue;
    }
    if (key == "vlen") {
      unsigned bits = 0;
      if (value.getAsInteger(10, bits) || bits < 128 || bits > 65536 ||
          (bits & (bits - 1)))
        return llvm::createStringError(
            "invalid vlen '" + value +
            "'; expected a power of two from 128 to 65536 bits, or scalable "
            "(SVE)");
      t.vlen = static_cast<int>(bits);
      continue;
    }
    if (key == "cores") {
      unsigned cores = 0;
      if (value.getAsInteger(10, cores) || cores == 0 ||
          cores > static_cast<unsigned>(std::numeric_limits<int>::max()))
        return llvm::createStringError("invalid core count '" + value +
                                       "'; expected a positive integer");
      t.cores = static_cast<int>(cores);
      continue;
    }
    return llvm::createStringError("unknown cache key '" + key +
                                   "'; expected l1d, l2, l3, cores or vlen");
  }
  return llvm::Error::success();
}

llvm::Expected<Target> Target::parse(StringRef spec) {
  llvm::SmallVector<StringRef, 4> fields;
  spec.split(fields, ':');
  if (fields.size() > 4)
    return llvm::createStringError("too many fields in target '" + spec +
                                   "'; expected " + specSyntax);
  Target t;
  t.triple = fields[0].trim().str();
  if (t.triple.empty())
    return llvm::createStringError("empty target triple in '" + spec +
                                   "'; expected " + specSyntax);
  if (llvm::Triple(t.triple).getArch() == llvm::Triple::UnknownArch)
    return llvm::createStringError("unknown architecture in target triple '" +
                                   t.triple + "'");
  StringRef cpu = fields.size() > 1 ? fields[1].trim() : StringRef();
  t.cpu = cpu.empty() ? "generic" : cpu.str();
  if (fields.size() > 2) {
    std::set<std::string> features;
    if (llvm::Error err = applyFeatures(fields[2], features))
      return std::move(err);
    t.features.assign(features.begin(), features.end());
  }
  if (fields.size() > 3)
    if (llvm::Error err = applyCaches(fields[3], t))
      return std::move(err);
  bool riscvVector = llvm::Triple(t.triple).isRISCV() && t.hasFeature("v");
  bool sve = llvm::Triple(t.triple).isAArch64() && t.hasFeature("sve");
  if (t.vlen && !riscvVector && !sve)
    return llvm::createStringError(
        "vlen is the vector length of RVV or SVE kernels; target '" + spec +
        "' is neither RISC-V with +v nor AArch64 with +sve");
  if (t.scalableVectors && !sve)
    return llvm::createStringError(
        "vlen=scalable asks for SVE kernels of any vector length; target '" +
        spec + "' is not AArch64 with +sve");
  if ((riscvVector || sve) && !t.vlen) {
    // RVV: the widest zvlNb feature; else the CPU's row; else the least
    // either ISA allows.
    if (riscvVector)
      for (const std::string &f : t.features) {
        StringRef name(f);
        unsigned bits = 0;
        if (name.consume_front("zvl") && name.consume_back("b") &&
            !name.getAsInteger(10, bits))
          t.vlen = std::max(t.vlen, static_cast<int>(bits));
      }
    if (const CpuRow *row = cpuRowOf(t.cpu); row && !t.vlen)
      t.vlen = row->vlen;
    t.vlen = std::max(t.vlen, 128);
  }
  // The vector length as LLVM's feature too, so that the emitter's check
  // and llc see the same machine.
  if (riscvVector && t.vlen > 128) {
    std::string zvl = "zvl" + std::to_string(t.vlen) + "b";
    if (!t.hasFeature(zvl)) {
      t.features.push_back(zvl);
      llvm::sort(t.features);
    }
  }
  return t;
}

bool Target::hasFeature(StringRef name) const {
  return llvm::is_contained(features, name);
}

bool Target::isX86_64() const {
  return llvm::Triple(triple).getArch() == llvm::Triple::x86_64;
}

bool Target::fusedPackingAcrossKBlocksPays() const {
  return !(isX86_64() && cpu == "znver1");
}

bool Target::fmaFromMemoryBlocksPay() const {
  static constexpr llvm::StringLiteral kIntelAvx512[] = {"skylake-avx512",
                                                         "cascadelake",
                                                         "cooperlake",
                                                         "cannonlake",
                                                         "icelake-client",
                                                         "icelake-server",
                                                         "tigerlake",
                                                         "rocketlake",
                                                         "sapphirerapids",
                                                         "emeraldrapids",
                                                         "graniterapids",
                                                         "graniterapids-d",
                                                         "diamondrapids",
                                                         "knl",
                                                         "knm"};
  return !isX86_64() || !llvm::is_contained(kIntelAvx512, cpu);
}

std::string Target::archName() const {
  return llvm::Triple(triple).getArchName().str();
}

bool Target::sameArchAsHost() const {
  return llvm::Triple(triple).getArch() ==
         llvm::Triple(llvm::sys::getProcessTriple()).getArch();
}

std::vector<std::string> Target::inlineAsmStateClobbers() const {
  std::vector<std::string> state;
  if (const ArchRow *row = archRowOf(triple))
    state.assign(row->asmState.begin(), row->asmState.end());
  return state;
}

llvm::Expected<Target::CoreModel> Target::coreModel() const {
  if (const CpuRow *row = cpuRowOf(cpu); row && row->mcaCpu) {
    CoreModel m;
    m.mcaCpu = row->mcaCpu;
    m.fmaLanesPerCycle = row->fmaLanesPerCycle;
    if (row->openBlasCore)
      m.openBlasCore = row->openBlasCore;
    return m;
  }
  return llvm::createStringError(
      "no performance model for CPU '" + cpu +
      "'; the static model knows spacemit-x60, neoverse-n1, cortex-a76 and "
      "neoverse-v1");
}

std::optional<std::string> Target::specOfMachine(StringRef name) {
  std::string lower = name.trim().lower();
  for (const MachineRow &row : machineRows)
    for (const char *n : row.names)
      if (lower == n)
        return std::string(row.spec);
  return std::nullopt;
}

std::vector<std::string> Target::machineNames() {
  std::vector<std::string> names;
  for (const MachineRow &row : machineRows)
    for (const char *n : row.names)
      names.push_back(n);
  llvm::stable_sort(names, [](const std::string &a, const std::string &b) {
    return a.size() > b.size();
  });
  return names;
}

std::vector<std::string> Target::machineTitles() {
  std::vector<std::string> titles;
  for (const MachineRow &row : machineRows)
    titles.push_back(row.names.front());
  return titles;
}

llvm::Expected<Target::Emulation> Target::emulation() const {
  const ArchRow *row = archRowOf(triple);
  if (!row)
    return llvm::createStringError("no emulator for target triple '" + triple +
                                   "'");
  Emulation e;
  e.program = row->qemu;
  llvm::Triple t(triple);
  if (t.isAArch64() && hasFeature("sve"))
    e.args = {"-cpu", "max,sve" + std::to_string(std::max(vlen, 128)) + "=on"};
  else if (t.isAArch64())
    e.args = {"-cpu", qemuAArch64Cpu(cpu)};
  else if (t.isRISCV64())
    e.args = {"-cpu",
              "rv64,v=" + std::string(hasFeature("v") ? "true" : "false") +
                  ",vext_spec=v1.0,vlen=" +
                  std::to_string(std::max(vlen, 128)) + ",elen=64"};
  return e;
}

VectorIsa Target::bestIsa() const {
  if (const ArchRow *row = archRowOf(triple))
    if (!row->isas.empty()) {
      for (const auto &[isa, feature] : row->isas)
        if (hasFeature(feature))
          return isa;
      return VectorIsa::None;
    }
  if (!isX86_64() || !hasFeature("fma"))
    return VectorIsa::None;
  if (hasFeature("avx512f"))
    return VectorIsa::Avx512;
  if (hasFeature("avx2"))
    return VectorIsa::Avx2;
  return VectorIsa::None;
}

int Target::vectorBits(VectorIsa isa) {
  switch (isa) {
  case VectorIsa::None:
    return 0;
  case VectorIsa::Avx2:
    return 256;
  case VectorIsa::Avx512:
  case VectorIsa::Amx:
    return 512;
  case VectorIsa::Neon:
  case VectorIsa::Sve:
  case VectorIsa::Rvv:
    return 128;
  }
  llvm_unreachable("unknown VectorIsa");
}

int Target::vectorRegisters(VectorIsa isa) {
  switch (isa) {
  case VectorIsa::None:
    return 0;
  case VectorIsa::Avx2:
    return 16;
  case VectorIsa::Avx512:
  case VectorIsa::Amx:
  case VectorIsa::Neon:
  case VectorIsa::Sve:
  case VectorIsa::Rvv:
    return 32;
  }
  llvm_unreachable("unknown VectorIsa");
}

bool Target::hasAmx(bool bf16) const {
  return isX86_64() && hasFeature("amx-tile") &&
         hasFeature(bf16 ? "amx-bf16" : "amx-int8") && hasFeature("avx512bw");
}

Target Target::withoutAmx() const {
  Target t = *this;
  llvm::erase_if(t.features, [](const std::string &f) {
    return StringRef(f).starts_with("amx-");
  });
  return t;
}

int Target::directRowsWithRuntimeLd(VectorIsa isa, bool bPackedAhead) {
  if (isa != VectorIsa::Avx2 && isa != VectorIsa::Avx512)
    return 0;
  return bPackedAhead ? 17 : 9;
}

int Target::dotDirectRowsWithRuntimeLd(VectorIsa isa) {
  return isa == VectorIsa::Avx512 ? 17 : 0;
}

std::string Target::featureString() const {
  std::vector<std::string> sorted = features;
  llvm::sort(sorted);
  std::string result;
  for (const std::string &feature : sorted) {
    if (!result.empty())
      result += ',';
    result += '+';
    result += feature;
  }
  return result;
}

std::string Target::str() const {
  return triple + ":" + cpu + ":" + featureString() +
         ":l1d=" + formatByteSize(caches.l1d) +
         ",l2=" + formatByteSize(caches.l2) +
         ",l3=" + formatByteSize(caches.l3) +
         ",cores=" + std::to_string(cores) +
         (scalableVectors ? std::string(",vlen=scalable")
          : vlen          ? ",vlen=" + std::to_string(vlen)
                          : std::string());
}

std::string Target::toJson() const {
  using Json = nlohmann::ordered_json;
  VectorIsa isa = bestIsa();
  Json caches = Json::object();
  caches["l1d"] = this->caches.l1d;
  caches["l2"] = this->caches.l2;
  caches["l3"] = this->caches.l3;
  Json j = Json::object();
  j["triple"] = triple;
  j["cpu"] = cpu;
  j["features"] = features;
  j["isa"] = isaName(isa).str();
  j["vector_bits"] = vectorBits(isa);
  j["vector_registers"] = vectorRegisters(isa);
  if (scalableVectors)
    j["vlen"] = "scalable";
  else if (vlen)
    j["vlen"] = vlen;
  j["caches"] = std::move(caches);
  j["cores"] = cores;
  // The default error handler throws (here: aborts) on invalid UTF-8, which
  // a parsed triple or CPU name may hold.
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}
