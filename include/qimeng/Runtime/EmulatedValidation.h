//===- EmulatedValidation.h - Validate a kernel for another architecture -===//
//
// A kernel for AArch64 or RISC-V cannot run on the x86 host. It is
// assembled here with LLVM MC for its target, its code bytes are written to
// a file, and the target's cross runner (tools/qimeng-cross-runner, built
// statically with the cross compiler) runs and checks it under qemu-user
// with the target's CPU model or vector length: the same distributions,
// guards and bounds as the host validator (ValidationNumerics.h). A real
// board runs the same runner.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_EMULATEDVALIDATION_H
#define QIMENG_RUNTIME_EMULATEDVALIDATION_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>

namespace qimeng {

struct EmulatedValidationOptions {
  /// Directory holding qimeng-cross-runner-<arch>.
  std::string runnerDir;
  /// Limit of one run of the runner, plus a second per 4e6 multiply-adds
  /// of the GEMM.
  unsigned timeoutSeconds = 120;
  uint64_t seed = 0x5eed;
  /// Timed calls after the checks (emulated time, not the hardware's: 0
  /// skips them).
  int timedRuns = 0;

  /// QIMENG_CROSS_RUNNER_DIR when set, else the build's bin/.
  static EmulatedValidationOptions defaults();
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

/// What one emulated run of a GEMM kernel gave.
struct EmulatedRun {
  ValidationReport report;
  double medianNs = 0; ///< emulated time of one call (not the hardware's)
};

/// Runs `kernel` (a GEMM for `desc`, leading dimensions at run time) in
/// the target's cross runner under its emulator: the three distributions on
/// the dense leading dimensions, the exact one on padded ones. A wrong result,
/// crash or timeout is a report with passed = false and the reason; an
/// llvm::Error means the runner or the emulator could not be run (missing tools
/// name the package).
llvm::Expected<EmulatedRun>
validateGemmUnderEmulation(const GemmDesc &desc, const Target &target,
                           const EmittedKernel &kernel,
                           const EmulatedValidationOptions &options =
                               EmulatedValidationOptions::defaults());

} // namespace qimeng

#endif // QIMENG_RUNTIME_EMULATEDVALIDATION_H
