//===- EmitterRunner.h - Run the Python emitters ----------------*- C++ -*-===//
//
// The emitters (python_emitters/qimeng_emitters) are the only source of
// kernel instructions. This runs one as a subprocess: versioned JSON request
// on stdin, assembly on stdout, one `error: ...` line on stderr on failure
// (docs/EmitterProtocol.md).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_EMIT_EMITTERRUNNER_H
#define QIMENG_EMIT_EMITTERRUNNER_H

#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/Kernel/PrepackedB.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>
#include <vector>

namespace qimeng {

/// Where the emitters live and how to run them.
struct EmitterOptions {
  std::string python;     ///< python3 executable
  std::string packageDir; ///< directory holding the qimeng_emitters package
  unsigned timeoutSeconds = 60;
  size_t outputCap = 16u << 20;

  /// Configure-time defaults, overridden by QIMENG_PYTHON and
  /// QIMENG_EMITTER_DIR when set.
  static EmitterOptions defaults();
};

/// One emitted kernel: the assembly text and what its header says.
struct EmittedKernel {
  std::string text;            ///< complete assembly file (function form)
  std::string symbol;          ///< qm_sgemm_..._x86_64_avx2
  uint64_t workspaceBytes = 0; ///< bytes of 64-byte aligned workspace
  std::string generatorVersion;
  /// Registers in which the body expects A, B, C and the workspace (its
  /// calling convention's first four integer arguments, qm.args).
  std::vector<std::string> argRegisters;
  std::vector<std::string> clobbers; ///< registers the body overwrites
  std::vector<std::string> features; ///< LLVM features the code needs
  uint64_t flopsPerIteration = 0;    ///< fma_peak probes only
  /// Flops of one iteration of the marked inner loop (qm.inner_loop_flops);
  /// 0 when the kernel marks none.
  uint64_t innerLoopFlops = 0;
  /// The vector length the kernel was built for (qm.vector_bits: RVV);
  /// 0 for fixed-width ISAs.
  uint64_t vectorBits = 0;
  /// The kernel reads lda, ldb and ldc from its workspace header
  /// (qm.leading_dims: runtime) instead of holding them as immediates.
  bool runtimeLeadingDims = false;
  /// A convolution kernel that reads its input's strides from its
  /// workspace header (qm.input_strides: runtime; ConvDesc::runtimeStrides).
  bool runtimeInputStrides = false;
  /// Which sizes the kernel reads from its workspace header at each call
  /// (qm.runtime_sizes: m, n, k; GemmDesc::dynamicM/N/K).
  bool runtimeM = false, runtimeN = false, runtimeK = false;
  /// The layout in which the kernel takes B packed by its caller
  /// (qm.b_prepacked; GemmDesc::bPrepacked); none for a kernel that reads
  /// B as stored.
  std::optional<PrepackedB> prepackedB;

  /// The instructions between `# qm.body.begin` and `# qm.body.end`: what
  /// the pass embeds as inline asm. Same lines as in `text`, byte for byte.
  llvm::Expected<std::string> body() const;

  /// One iteration of the K loop of a full register block, without its
  /// back branch: the lines between `qm.inner_loop.begin` and
  /// `qm.inner_loop.end` (comment lines of the ISA's syntax), what the
  /// static performance model runs through llvm-mca.
  llvm::Expected<std::string> innerLoop() const;
};

/// Parses an emitter's output header (symbol, workspace, clobbers, ...).
llvm::Expected<EmittedKernel> parseEmitterOutput(std::string text);

/// The JSON request for a GEMM kernel. `fault` is test-only ("drop-k",
/// "write-past-edge", "segfault", "hang" make a deliberately broken kernel;
/// "" a real one). With a `target`, its features go along and the emitter
/// refuses an isa the target lacks.
std::string gemmRequestJson(const GemmDesc &desc, const GemmConfig &config,
                            llvm::StringRef fault = "",
                            const Target *target = nullptr);

/// The JSON request for a convolution kernel (kind "sconv2d"); `config`
/// blocks the GEMM of desc.gemmView(). Arguments as gemmRequestJson's.
std::string convRequestJson(const ConvDesc &desc, const GemmConfig &config,
                            llvm::StringRef fault = "",
                            const Target *target = nullptr);

/// Runs the emitter on a raw JSON request.
llvm::Expected<EmittedKernel> runEmitter(llvm::StringRef requestJson,
                                         const EmitterOptions &options);

/// Runs the emitter on a raw JSON request and returns what it wrote, not
/// parsed (kinds whose output is not x86 assembly: cuda_gemm's CUDA C++).
llvm::Expected<std::string> runEmitterText(llvm::StringRef requestJson,
                                           const EmitterOptions &options);

/// The emitters' GENERATOR_VERSION: the configure-time value when
/// `options` use the configure-time package, else asked of the emitter
/// (kind "version").
llvm::Expected<std::string>
emitterGeneratorVersion(const EmitterOptions &options);

/// Emits the fma_peak probe for `isa` (docs/EmitterProtocol.md): FMAs, or
/// for bf16 the VDPBF16PS chains the bf16 kernels run on.
/// The instruction emitFmaPeakProbe times: "FMA", "VDPBF16PS", "VPDPBUSD",
/// "TDPBF16PS (AMX)" or "TDPBUSD (AMX)".
std::string peakInstructionName(VectorIsa isa, GemmPrecision precision);

llvm::Expected<EmittedKernel>
emitFmaPeakProbe(VectorIsa isa, const EmitterOptions &options,
                 GemmPrecision precision = GemmPrecision::F32);

/// Emits the GEMM kernel for `desc` with `config`.
llvm::Expected<EmittedKernel> emitGemmKernel(const GemmDesc &desc,
                                             const GemmConfig &config,
                                             const EmitterOptions &options,
                                             llvm::StringRef fault = "",
                                             const Target *target = nullptr);

/// Emits the convolution kernel for `desc` with `config`: called as
/// kernel(input, filter, output, workspace).
llvm::Expected<EmittedKernel> emitConvKernel(const ConvDesc &desc,
                                             const GemmConfig &config,
                                             const EmitterOptions &options,
                                             llvm::StringRef fault = "",
                                             const Target *target = nullptr);

/// emitGemmKernel or emitConvKernel, as `problem` is.
llvm::Expected<EmittedKernel> emitKernel(const KernelProblem &problem,
                                         const GemmConfig &config,
                                         const EmitterOptions &options,
                                         llvm::StringRef fault = "",
                                         const Target *target = nullptr);

/// Limits of an untrusted emitter's run (runSandboxedEmitter).
struct SandboxLimits {
  unsigned timeoutSeconds = 30; ///< wall clock
  unsigned cpuSeconds = 20;     ///< RLIMIT_CPU
  unsigned memoryMB = 1024;     ///< RLIMIT_AS
  unsigned fileSizeKB = 1024;   ///< RLIMIT_FSIZE
  size_t outputCap = 4u << 20;  ///< stdout bytes kept; more is a failure
};

/// Runs emitter `source` (Python defining emit(request), as an LLM wrote
/// it) on `requestJson` in python_emitters/qimeng_sandbox.py: its own
/// process with an empty environment, a fresh temporary directory as its
/// only writable place, the limits above, no network where the kernel
/// allows a network namespace (`networkIsolated` says), and an audit hook
/// refusing sockets, subprocesses and native code. The kernel text it
/// prints goes through parseEmitterOutput. Every failure (a traceback's
/// last line, a timeout, a kill, too much output, a malformed header) is
/// an llvm::Error whose message says which.
llvm::Expected<EmittedKernel>
runSandboxedEmitter(llvm::StringRef source, llvm::StringRef requestJson,
                    const EmitterOptions &options,
                    const SandboxLimits &limits = {},
                    bool *networkIsolated = nullptr);

} // namespace qimeng

#endif // QIMENG_EMIT_EMITTERRUNNER_H
