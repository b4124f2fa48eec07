//===- PeerKernels.h - Each baseline library at its best ---------*- C++
//-*-===//
//
// A benchmark that compares our kernels with OpenBLAS and BLIS must run them
// with the best kernels they have for the CPU. Both pick their kernels from
// the CPU's identity, and older releases misjudge newer CPUs: OpenBLAS
// 0.3.21 runs its generic Prescott kernels on Emerald Rapids, and BLIS 0.9
// its haswell ones there and its zen3 (AVX2) ones on Zen 4, although both
// libraries ship AVX-512 kernels these CPUs run. So the choice is made here
// from the CPU's features, the library's own choice is kept when it is as
// good, and what was forced, and why, is reported.
//
// The policy (which kernels a CPU's features allow, how they rank) is pure
// and unit-tested; the mechanism (environment, re-execution) is in the tools'
// start-up, and what ran is confirmed by asking the library afterwards.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_PEERKERNELS_H
#define QIMENG_RUNTIME_PEERKERNELS_H

#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/Target.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace qimeng {

/// The OpenBLAS core (an OPENBLAS_CORETYPE name of a DYNAMIC_ARCH build)
/// with the best fp32 kernels that `cpu` can run, from its features:
/// "Cooperlake" (SkylakeX's kernels plus AVX512-BF16) with avx512bf16 on top
/// of avx512f, avx512bw, avx512dq and avx512vl; "SkylakeX" with those four;
/// "Zen" (an AMD CPU, told by an LLVM CPU name "znver*") or "Haswell" with
/// avx2 and fma; "Sandybridge" with avx; else "" (no opinion).
std::string bestOpenBlasCore(const Target &cpu);

/// How good an OpenBLAS core's fp32 kernels are: 0 for a name not known
/// here (Prescott and older included), 1 Sandybridge, 2 Haswell and Zen,
/// 3 SkylakeX, 4 Cooperlake, 5 SapphireRapids. Case-insensitive.
int openBlasCoreRank(llvm::StringRef core);

/// The BLIS configuration (a bli_arch_string name) with the best fp32
/// kernels that `cpu` can run: "skx" with avx512f, avx512bw, avx512dq and
/// avx512vl; "zen3" (an AMD CPU) or "haswell" with avx2 and fma;
/// "sandybridge" with avx; else "".
std::string bestBlisArch(const Target &cpu);

/// How good a BLIS configuration's fp32 kernels are: 0 unknown or generic,
/// 1 sandybridge and older x86, 2 haswell and zen to zen3, 3 skx, zen4 and
/// zen5.
int blisArchRank(llvm::StringRef arch);

/// The kernels a benchmark should ask for: `best` when it ranks above
/// `detected` (the library's own choice), else "" (keep the library's).
/// `rank` is openBlasCoreRank or blisArchRank.
std::string kernelsToForce(llvm::StringRef detected, llvm::StringRef best,
                           int (*rank)(llvm::StringRef));

/// What a tool did to OpenBLAS's kernel choice (selectOpenBlasCore), for its
/// report.
struct OpenBlasSelection {
  std::string running;     ///< openblas_get_corename() in this process
  std::string detected;    ///< OpenBLAS's own choice on this CPU
  std::string requested;   ///< OPENBLAS_CORETYPE we set, "" when none
  std::string best;        ///< bestOpenBlasCore of this host
  std::string machineEnv;  ///< OPENBLAS_* the machine had set, unset by us
  bool asDetected = false; ///< --baseline-as-detected
  std::string config;      ///< openblas_get_config()

  /// One line: "core SkylakeX (forced with OPENBLAS_CORETYPE=SkylakeX:
  /// OpenBLAS picks Prescott on this CPU, whose features allow SkylakeX)",
  /// "core Cooperlake (its own choice, the best for this CPU's features)",
  /// and whatever else happened (a request the library did not follow, the
  /// machine's variables that were unset).
  std::string describe() const;
  /// True when the library runs the kernels asked for (or was not asked).
  bool confirmed() const { return requested.empty() || requested == running; }
};

/// For tools that time OpenBLAS: makes this process run OpenBLAS on the
/// best core for `host`. OpenBLAS picks its kernels when it loads, so this
/// re-executes the program (/proc/self/exe, same argv) at most twice: once
/// with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, when the machine set
/// them, to learn OpenBLAS's own choice; then, unless `asDetected`, with
/// OPENBLAS_CORETYPE set to bestOpenBlasCore(host) when that ranks above
/// the library's choice. Call first thing in main(); returns in the process
/// that is to run. The choice travels in QIMENG_BENCH_OPENBLAS_* variables.
void selectOpenBlasCore(char **argv, const Target &host, bool asDetected);

/// The selection made for this process (after selectOpenBlasCore).
OpenBlasSelection openBlasSelection();

/// True when argv holds `--NAME` or `-NAME`: for flags that must be read
/// before llvm::cl parses (selectOpenBlasCore runs first).
bool hasFlag(int argc, char **argv, llvm::StringRef name);

/// OpenBLAS's best routine for the f32 GEMM `g` (C += op(A) op(B), row
/// major): "sgemv" where C has one row or one column (a matrix-vector
/// product: 0.3.21's sgemm does not hand such a shape to its gemv
/// kernels), "sgemm" otherwise.
llvm::StringRef openBlasRoutineFor(const GemmDesc &g);

/// Runs `g` with OpenBLAS's routine for it (openBlasRoutineFor): for one
/// row y = op(B)^T x with x A's row, for one column y = op(A) x with x B's
/// column, the vectors' steps their leading dimensions where they lie
/// across them.
void openBlasSgemm(const GemmDesc &g, const float *a, const float *b, float *c);

} // namespace qimeng

#endif // QIMENG_RUNTIME_PEERKERNELS_H
