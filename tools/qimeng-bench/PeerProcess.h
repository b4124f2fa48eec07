//===- PeerProcess.h - Each peer library in a process of its own -*- C++
//-*-===//
//
// qimeng-bench times every peer library in a process of its own, driven
// round by round over pipes (qimeng-bench --peer-worker), as benchdnn-style
// harnesses do. In one process the libraries' OpenMP and pthread runtimes
// (libomp for ours, GNU libgomp for BLIS and oneDNN, OpenBLAS's own thread
// server) meet: on 2 cores and 2 threads oneDNN's 256^3 matmul measured 4.2
// to 103 GFLOPS there from run to run, depending on the wait policy, against
// a steady 200 alone. Apart, each library has the machine to itself during
// its round, and the others' teams sleep in processes that are waiting for
// their next round.
//
// The protocol, one JSON object a line:
//   -> {"peer": "openblas"|"blis"|"libxsmm"|"onednn", "problem": {"op":
//       "sgemm"|"sconv2d", ...GemmDesc or ConvDesc fields}, "threads": N,
//       "as_detected": bool, "describe_only": bool}
//   <- {"loaded": true, "label", "version", "describe", "threads",
//       "validated", "failure", "path"} or {"loaded": false, "error"}
//   -> {"calls": N}   (an untimed call, then N timed ones)
//   <- {"seconds": S} (per call)
// End of input ends the worker.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TOOLS_QIMENG_BENCH_PEERPROCESS_H
#define QIMENG_TOOLS_QIMENG_BENCH_PEERPROCESS_H

#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/Runtime/Benchmark.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "qimeng/Support/Coprocess.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>

namespace qimeng {

/// What a peer process says once it has loaded its library and validated
/// it on the problem.
struct PeerReady {
  std::string label;    ///< "OpenBLAS", "BLIS", "libxsmm", "oneDNN"
  std::string version;  ///< as the library reports it, or ""
  std::string describe; ///< file, kernels and how they were chosen, threads
  int threads = 1;      ///< threads the library computes with
  bool validated = false;
  std::string failure; ///< why validation failed
  std::string path;    ///< ExternalGemm::pathFor, or oneDNN's implementation
};

/// One peer library in its own qimeng-bench --peer-worker process.
class PeerProcess {
public:
  /// Starts the worker for `peer` ("openblas", "blis", "libxsmm",
  /// "onednn") on `problem` with `threads` threads, and waits until it has
  /// loaded the library and validated it (not with `describeOnly`: then it
  /// only loads it, for the header). An error when the library is missing
  /// or the worker fails.
  static llvm::Expected<PeerProcess> start(llvm::StringRef peer,
                                           const KernelProblem &problem,
                                           int threads, bool asDetected,
                                           bool describeOnly = false);

  const PeerReady &ready() const { return ready_; }

  /// One round in the worker: an untimed call, then `calls` timed ones;
  /// seconds per call.
  llvm::Expected<double> round(int calls);

private:
  PeerProcess(Coprocess process, PeerReady ready)
      : process_(std::move(process)), ready_(std::move(ready)) {}
  Coprocess process_;
  PeerReady ready_;
};

/// One problem's outcome for one peer, as the benchmarks report it.
struct PeerResult {
  std::optional<double> gflops; ///< median, set when validated and timed
  std::optional<double> paired; ///< ours' median per-round speedup over it
  std::string failure;          ///< why it was not timed, if it was not
  std::string path;             ///< PeerReady::path

  /// Starts `peer`'s worker on `problem` (PeerProcess::start): the worker
  /// when the library validated; otherwise nothing, and `failure` says why.
  std::optional<PeerProcess> start(llvm::StringRef peer,
                                   const KernelProblem &problem, int threads,
                                   bool asDetected);
  /// Reads candidate `index` of `timing` (ours is candidate 0): its median
  /// rate for `flops` a call and ours' paired speedup over it, or why its
  /// rounds stopped.
  void record(const InterleavedTiming &timing, size_t index, double flops);
  /// A TimedCandidate whose rounds run in `worker`.
  static TimedCandidate candidate(PeerProcess &worker);
};

/// The --peer-worker mode: serves the protocol above on stdin and stdout
/// for this process's life. Returns the exit code.
int servePeerWorker();

/// The timing operands of a GEMM or convolution, the same values in the
/// benchmark and every peer process (seed 42, uniform in [-1, 1)): the
/// first operand's elements, then the second's; for bf16 as bf16 values
/// in the first half of each buffer, for 8-bit types as bytes (times 127)
/// in its first quarter (one element per float of its size).
void fillTimingOperands(GuardedBuffer &a, GuardedBuffer &b,
                        GemmPrecision precision);

} // namespace qimeng

#endif // QIMENG_TOOLS_QIMENG_BENCH_PEERPROCESS_H
