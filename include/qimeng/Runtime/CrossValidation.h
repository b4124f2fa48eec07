//===- CrossValidation.h - Run a kernel for another architecture -*- C++
//-*-===//
//
// A kernel for AArch64 or RISC-V cannot run on the x86 host. It is
// assembled here with LLVM MC for its target and its code bytes go to the
// target's cross runner (tools/qimeng-cross-runner, built statically with
// the cross compiler), which runs and checks it with the same
// distributions, guards and bounds as the host validator
// (ValidationNumerics.h). Two execution backends: qemu-user here, with the
// target's CPU model or vector length, or a real board over ssh (the
// paper's setup), where the runner's timings are the hardware's.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_CROSSVALIDATION_H
#define QIMENG_RUNTIME_CROSSVALIDATION_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/Partition.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>
#include <vector>

namespace qimeng {

struct CrossValidationOptions {
  /// Directory holding qimeng-cross-runner-<arch>.
  std::string runnerDir;
  /// Limit of one run of the runner, plus a second per 4e6 multiply-adds
  /// of the GEMM.
  unsigned timeoutSeconds = 120;
  uint64_t seed = 0x5eed;
  /// Timed calls after the checks (under qemu emulated time, not the
  /// hardware's; on a board real time): 0 skips them.
  int timedRuns = 0;
  /// A board to run on instead of the emulator: an ssh destination
  /// ("user@k1"); empty: qemu-user here. The code goes over ssh's stdin.
  std::string remoteHost;
  /// Extra ssh arguments ("-p", "2222", "-i", KEY, ...).
  std::vector<std::string> sshOptions;
  /// The runner's command on the board (default qimeng-cross-runner-<arch>
  /// on its PATH; copy build/bin/qimeng-cross-runner-<arch> there).
  std::string remoteRunner;

  /// QIMENG_CROSS_RUNNER_DIR when set, else the build's bin/.
  static CrossValidationOptions defaults();
};

/// A kernel's machine code: the object's .text section and the byte
/// offset of the kernel's symbol in it.
struct KernelCode {
  std::string bytes;
  uint64_t entry = 0;
};

/// Assembles `kernel` for `target` and returns its code; an error when it
/// does not assemble, lacks its symbol or needs a relocation (the code is
/// loaded as raw bytes).
llvm::Expected<KernelCode> kernelCode(const EmittedKernel &kernel,
                                      const Target &target);

/// What one run of a GEMM kernel gave.
struct CrossRun {
  ValidationReport report;
  /// Median time of one call with timedRuns: emulated under qemu, the
  /// board's own on a board.
  double medianNs = 0;
};

/// Where `options` run `target`'s kernels, for reports: "qemu-aarch64 -cpu
/// neoverse-n1" or "ssh user@board".
std::string crossBackendName(const Target &target,
                             const CrossValidationOptions &options);

/// Runs `kernel` (a GEMM for `desc`, leading dimensions at run time) in
/// the target's cross runner, under its emulator or on the board: the three
/// distributions on the dense leading dimensions, the exact one on padded
/// ones, and for a run-time M (desc.dynamicM) the exact one at 1, M/3 and
/// 1.5M+1 rows too. A parallel kernel runs as `parts`, one call each in a
/// workspace of its own (the parts its callers run on their threads). A
/// wrong result, crash or timeout is a report with passed = false and the
/// reason; an llvm::Error means the runner or the emulator could not be run
/// (missing tools name the package).
llvm::Expected<CrossRun> validateGemmCross(
    const GemmDesc &desc, const Target &target, const EmittedKernel &kernel,
    const std::vector<GemmRange> &parts = {},
    const CrossValidationOptions &options = CrossValidationOptions::defaults());

/// Runs `kernel` (a convolution without epilogue, for `desc`) in the
/// target's cross runner: the three distributions on the descriptor's input
/// strides (the kernel holds them as immediates), the gaps in the input
/// NaN; a parallel kernel as `parts` of its GEMM view (ConvDesc::gemmView:
/// output pixels x filters for nhwc, filters x an image's pixels for
/// nchw), one call each. Errors and reports as validateGemmCross.
llvm::Expected<CrossRun> validateConvCross(
    const ConvDesc &desc, const Target &target, const EmittedKernel &kernel,
    const std::vector<GemmRange> &parts = {},
    const CrossValidationOptions &options = CrossValidationOptions::defaults());

} // namespace qimeng

#endif // QIMENG_RUNTIME_CROSSVALIDATION_H
