//===- qimeng-hostinfo.cpp - Print the hardware factors of a target -------===//
//
// Describes the host (or a target given as a spec) the way QiMeng sees it:
// triple, CPU, ISA features, vector ISA, caches and cores. lit uses
// --has-feature to set features such as host-avx2.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Kernel/Target.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

using namespace qimeng;

static llvm::cl::OptionCategory hostInfoCategory("qimeng-hostinfo options");

static llvm::cl::opt<bool> printJson("json",
                                     llvm::cl::desc("Print one JSON object"),
                                     llvm::cl::cat(hostInfoCategory));

static llvm::cl::opt<std::string>
    targetSpec("target",
               llvm::cl::desc("Describe this target instead of the host: "
                              "TRIPLE[:CPU[:FEATURES[:CACHES]]], e.g. "
                              "x86_64-unknown-linux-gnu:znver3:+avx2,+fma:"
                              "l1d=32K,l2=512K,l3=32M,cores=8"),
               llvm::cl::value_desc("spec"), llvm::cl::cat(hostInfoCategory));

static llvm::cl::opt<bool>
    printFeatures("features",
                  llvm::cl::desc("Print the enabled features, one per line"),
                  llvm::cl::cat(hostInfoCategory));

static llvm::cl::opt<std::string> hasFeature(
    "has-feature",
    llvm::cl::desc("Print nothing; exit with 0 if the feature is enabled and "
                   "1 if not"),
    llvm::cl::value_desc("name"), llvm::cl::cat(hostInfoCategory));

/// "48 KiB", "260 MiB": MiB from 8 MiB up when exact, else KiB or bytes.
static std::string formatCache(int64_t bytes) {
  constexpr int64_t kib = 1024, mib = 1024 * 1024;
  if (bytes >= 8 * mib && bytes % mib == 0)
    return std::to_string(bytes / mib) + " MiB";
  if (bytes >= kib && bytes % kib == 0)
    return std::to_string(bytes / kib) + " KiB";
  return std::to_string(bytes) + " B";
}

static void printReadable(const Target &t, llvm::raw_ostream &os) {
  VectorIsa isa = t.bestIsa();
  os << "triple: " << t.triple << "\n";
  os << "cpu: " << t.cpu << "\n";
  os << "isa: " << isaName(isa);
  if (isa != VectorIsa::None)
    os << " (" << Target::vectorBits(isa) << "-bit, "
       << Target::vectorRegisters(isa) << " registers)";
  os << "\n";
  os << "caches: L1d " << formatCache(t.caches.l1d) << ", L2 "
     << formatCache(t.caches.l2) << ", L3 " << formatCache(t.caches.l3) << "\n";
  os << "cores: " << t.cores << "\n";
  os << "features: " << t.featureString() << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::ExitOnError exitOnErr("qimeng-hostinfo: ");
  llvm::cl::HideUnrelatedOptions(hostInfoCategory);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "describe the hardware factors QiMeng-TensorOp tunes kernels for\n\n"
      "Prints the target triple, LLVM CPU name, enabled ISA features, the\n"
      "widest vector ISA the emitters support (avx2 or avx512), cache sizes\n"
      "and core count of this host, or of a target given with --target.\n"
      "Caches come from Linux sysfs; the rest from LLVM's host detection.\n");

  Target target = targetSpec.getNumOccurrences()
                      ? exitOnErr(Target::parse(targetSpec))
                      : Target::detectHost();

  if (hasFeature.getNumOccurrences())
    return target.hasFeature(hasFeature) ? 0 : 1;
  if (printFeatures) {
    for (const std::string &feature : target.features)
      llvm::outs() << feature << "\n";
    return 0;
  }
  if (printJson) {
    llvm::outs() << target.toJson() << "\n";
    return 0;
  }
  printReadable(target, llvm::outs());
  return 0;
}
