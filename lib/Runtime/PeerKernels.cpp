//===- PeerKernels.cpp - Each baseline library at its best ----------------===//
#include "qimeng/Runtime/PeerKernels.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include <cblas.h>
#include <cstdlib>
#include <unistd.h>

extern "C" {
char *openblas_get_corename(void);
char *openblas_get_config(void);
}

using namespace qimeng;

static bool hasAvx512Core(const Target &cpu) {
  return cpu.hasFeature("avx512f") && cpu.hasFeature("avx512bw") &&
         cpu.hasFeature("avx512dq") && cpu.hasFeature("avx512vl");
}

static bool isAmd(const Target &cpu) {
  return llvm::StringRef(cpu.cpu).starts_with("znver");
}

std::string qimeng::bestOpenBlasCore(const Target &cpu) {
  if (!cpu.isX86_64())
    return "";
  if (hasAvx512Core(cpu))
    return cpu.hasFeature("avx512bf16") ? "Cooperlake" : "SkylakeX";
  if (cpu.hasFeature("avx2") && cpu.hasFeature("fma"))
    return isAmd(cpu) ? "Zen" : "Haswell";
  if (cpu.hasFeature("avx"))
    return "Sandybridge";
  return "";
}

int qimeng::openBlasCoreRank(llvm::StringRef core) {
  return llvm::StringSwitch<int>(core.lower())
      .Case("sandybridge", 1)
      .Cases({"haswell", "zen"}, 2)
      .Case("skylakex", 3)
      .Case("cooperlake", 4)
      .Case("sapphirerapids", 5)
      .Default(0);
}

std::string qimeng::bestBlisArch(const Target &cpu) {
  if (!cpu.isX86_64())
    return "";
  if (hasAvx512Core(cpu))
    return "skx";
  if (cpu.hasFeature("avx2") && cpu.hasFeature("fma"))
    return isAmd(cpu) ? "zen3" : "haswell";
  if (cpu.hasFeature("avx"))
    return "sandybridge";
  return "";
}

int qimeng::blisArchRank(llvm::StringRef arch) {
  return llvm::StringSwitch<int>(arch.lower())
      .Cases({"sandybridge", "penryn", "bulldozer", "piledriver", "steamroller",
              "excavator"},
             1)
      .Cases({"haswell", "zen", "zen2", "zen3"}, 2)
      .Cases({"skx", "zen4", "zen5"}, 3)
      .Default(0);
}

std::string qimeng::kernelsToForce(llvm::StringRef detected,
                                   llvm::StringRef best,
                                   int (*rank)(llvm::StringRef)) {
  if (best.empty() || rank(best) <= rank(detected))
    return "";
  return best.str();
}

bool qimeng::hasFlag(int argc, char **argv, llvm::StringRef name) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a == "--" + name.str() || a == "-" + name.str())
      return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// The re-execution chain
//===----------------------------------------------------------------------===//

// What the machine had set (and we unset); OpenBLAS's own choice; what we
// asked for ("" for nothing); whether --baseline-as-detected was given.
static const char *kMachineEnv = "QIMENG_BENCH_OPENBLAS_ENV";
static const char *kDetected = "QIMENG_BENCH_OPENBLAS_DETECTED";
static const char *kRequested = "QIMENG_BENCH_OPENBLAS_REQUESTED";
static const char *kAsDetected = "QIMENG_BENCH_OPENBLAS_AS_DETECTED";

static std::string envOr(const char *name, const char *fallback = "") {
  const char *v = getenv(name);
  return v ? v : fallback;
}

static void reexec(char **argv) {
  execv("/proc/self/exe", argv);
  // execv failed: this process goes on with OpenBLAS as loaded; the report
  // says what is running.
}

void qimeng::selectOpenBlasCore(char **argv, const Target &host,
                                bool asDetected) {
  if (getenv(kDetected))
    return; // the process the chain settled on
  if (!getenv(kMachineEnv)) {
    std::string was;
    for (const char *name : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}) {
      if (const char *v = getenv(name)) {
        was += std::string(was.empty() ? "" : " ") + name + "=" + v;
        unsetenv(name);
      }
    }
    setenv(kMachineEnv, was.c_str(), 1);
    if (!was.empty()) {
      reexec(argv); // OpenBLAS loads again, choosing by itself
      setenv(kMachineEnv, ("re-exec failed, still set: " + was).c_str(), 1);
    }
  }
  // OpenBLAS loaded in this process without overrides: its own choice.
  std::string detected = openblas_get_corename();
  setenv(kDetected, detected.c_str(), 1);
  setenv(kAsDetected, asDetected ? "1" : "0", 1);
  std::string force =
      asDetected
          ? ""
          : kernelsToForce(detected, bestOpenBlasCore(host), openBlasCoreRank);
  setenv(kRequested, force.c_str(), 1);
  if (force.empty())
    return;
  setenv("OPENBLAS_CORETYPE", force.c_str(), 1);
  reexec(argv);
  // Could not re-execute: this process runs OpenBLAS's own choice.
  unsetenv("OPENBLAS_CORETYPE");
  setenv(kRequested, "", 1);
}

OpenBlasSelection qimeng::openBlasSelection() {
  OpenBlasSelection s;
  s.running = openblas_get_corename();
  s.detected = envOr(kDetected, s.running.c_str());
  s.requested = envOr(kRequested);
  s.machineEnv = envOr(kMachineEnv);
  s.asDetected = envOr(kAsDetected) == "1";
  s.best = bestOpenBlasCore(Target::detectHost());
  s.config = llvm::StringRef(openblas_get_config()).trim().str();
  return s;
}

std::string OpenBlasSelection::describe() const {
  std::string text = "core " + running;
  if (!requested.empty() && requested == running)
    text += llvm::formatv(" (forced with OPENBLAS_CORETYPE={0}: OpenBLAS "
                          "picks {1} on this CPU, whose features allow {0})",
                          requested, detected)
                .str();
  else if (!requested.empty())
    text += llvm::formatv(" (asked for {0} with OPENBLAS_CORETYPE, but this "
                          "OpenBLAS ran {1}; it picks {2} by itself)",
                          requested, running, detected)
                .str();
  else if (asDetected)
    text += best.empty() || best == running
                ? " (its own choice, --baseline-as-detected)"
                : " (its own choice, kept by --baseline-as-detected; this "
                  "CPU's features allow " +
                      best + ")";
  else if (best.empty())
    text += " (its own choice)";
  else if (best == running)
    text += " (its own choice, the best for this CPU's features)";
  else
    text += " (its own choice, ranked at least as high as " + best +
            ", the best for this CPU's features)";
  if (!machineEnv.empty())
    text += "; the machine's " + machineEnv + " unset for this run";
  return text;
}

llvm::StringRef qimeng::openBlasRoutineFor(const GemmDesc &g) {
  return g.m == 1 || g.n == 1 ? "sgemv" : "sgemm";
}

void qimeng::openBlasSgemm(const GemmDesc &g, const float *a, const float *b,
                           float *c) {
  if (g.m == 1)
    cblas_sgemv(CblasRowMajor, g.transB ? CblasNoTrans : CblasTrans,
                g.transB ? g.n : g.k, g.transB ? g.k : g.n, 1.0f, b, g.ldb, a,
                g.transA ? g.lda : 1, 1.0f, c, 1);
  else if (g.n == 1)
    cblas_sgemv(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
                g.transA ? g.k : g.m, g.transA ? g.m : g.k, 1.0f, a, g.lda, b,
                g.transB ? 1 : g.ldb, 1.0f, c, g.ldc);
  else
    cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
                g.transB ? CblasTrans : CblasNoTrans, g.m, g.n, g.k, 1.0f, a,
                g.lda, b, g.ldb, 1.0f, c, g.ldc);
}
