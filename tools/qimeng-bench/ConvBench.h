//===- ConvBench.h - qimeng-bench --op conv2d -------------------*- C++ -*-===//
//
// ResNet-50's convolution layers (batch 1, NHWC; fp32, or bf16 and 8-bit
// operands): our implicit-GEMM kernel against im2col + OpenBLAS sgemm
// (fp32) and oneDNN, each validated with the convolution checker first,
// then timed interleaved in this process with the same threads and the
// same semantics (out += conv).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TOOLS_QIMENG_BENCH_CONVBENCH_H
#define QIMENG_TOOLS_QIMENG_BENCH_CONVBENCH_H

#include "BenchKernel.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/PeerKernels.h"
#include <string>
#include <vector>

namespace qimeng {

struct ConvBenchSettings {
  std::string suite = "resnet50";
  /// Names of the suite's layers to run; empty: all of them.
  std::vector<std::string> layers;
  /// --kernel-config: settings laid over each layer's model config.
  std::string kernelConfig;
  /// --variant: settings laid over our kernel's config, each timed side by
  /// side with ours (compareVariants).
  std::vector<std::string> variants;
  /// Pause before each candidate's round (timeInterleaved).
  double settleSeconds = 0;
  unsigned threads = 1;
  unsigned runs = 9;
  /// Operand types (--dtype): the input A's, the filter B's, the output C's.
  GemmPrecision precision = GemmPrecision::F32;
  bool json = false;
  bool skipOneDnn = false;
  /// --prepacked-weights: ours take the filter packed once, outside the
  /// timing (ConvDesc::bPrepacked; not f16; nhwc only).
  bool prepackedWeights = false;
  /// The layers' layout: nhwc_hwcf (StableHLO, TOSA) or nchw_fchw (torch).
  ConvLayout layout = ConvLayout::NhwcHwcf;
  bool asDetected = false; ///< --baseline-as-detected
  std::string waitPolicy;  ///< how the OpenMP teams wait, for the header
  BenchKernelOptions kernel;
  // What the caller measured and found.
  Target host;
  EmitterOptions emitter;
  IsolatedValidationOptions runner;
  double corePeak = 0;
  std::string peakNote; ///< PeakGauge::describe
  OpenBlasSelection openBlas;
};

/// Runs the suite; 0 when every kernel validated, 1 otherwise. An error
/// for an unknown suite or a broken setup.
llvm::Expected<int> runConvBench(const ConvBenchSettings &settings);

} // namespace qimeng

#endif // QIMENG_TOOLS_QIMENG_BENCH_CONVBENCH_H
