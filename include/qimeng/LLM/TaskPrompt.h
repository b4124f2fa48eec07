//===- TaskPrompt.h - "generate a 512x512x512 fp32 GEMM for this CPU" -*- C++
//-*-//
//
// The paper's interface is one sentence. A task is what it asks for: the
// operation and its shape, the element type and the machine. The built-in
// parser reads the common phrasings offline; with an LLM configured, the
// LLM extracts the same fields as JSON, which are checked exactly as the
// parser's are.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LLM_TASKPROMPT_H
#define QIMENG_LLM_TASKPROMPT_H

#include "qimeng/Kernel/GpuMachines.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/LLM/ChatClient.h"
#include "llvm/Support/Error.h"
#include <string>

namespace qimeng {

struct Task {
  KernelProblem problem;
  std::string dtype = "f32";
  /// "host" (tuning measures here), the target string of a machine the
  /// static model knows (Target::specOfMachine), or an NVIDIA GPU's
  /// "nvptx64-nvidia-cuda:<arch>" (GpuMachines.h), named in the prompt.
  std::string target = "host";
  /// The GPU named, for a GPU target (whose `target` is gpu->target()).
  std::optional<GpuMachine> gpu;
  std::string shape; ///< as written back to the user: "512x512x512"
};

/// The built-in parser. Understands, case-insensitively:
/// - GEMM: "gemm", "sgemm", "matmul" or "matrix multiply" with "MxNxK"
///   (or "M x N x K"), optionally "transposed A", "transposed B";
/// - convolution: "conv" / "conv2d" / "convolution" with "NxHxWxC" input,
///   "to F" / "-> F" / "F filters", "KHxKW" filter, optional "stride S",
///   "dilation D", "nchw" (default nhwc);
/// - the type: "fp32", "f32", "float32", "float" or "single" (the default);
///   for a GPU also "bf16" and "fp16" ("f16", "half"); others ("int8",
///   ...) are errors;
/// - the machine: "this cpu", "this machine", "host" or nothing (tuned
///   here), one the static model knows by name ("the SpacemiT K1", "a
///   Cortex-A76": Target::specOfMachine), or an NVIDIA GPU by name ("the
///   H200", "an A100": gpuMachineInText); another machine is an error.
/// The error says what could not be read.
llvm::Expected<Task> parseTaskPrompt(llvm::StringRef prompt);

/// Asks the LLM to extract the task as JSON ({"op": "sgemm", "m", "n",
/// "k", ...}, or {"op": "conv2d", "layout", "n", "h", "w", "c", "f", "kh",
/// "kw", "stride", "dilation"}, with "dtype" and "target"), then checks it
/// like the built-in parser's result.
llvm::Expected<Task> extractTaskWithLlm(llvm::StringRef prompt,
                                        ChatClient &client);

} // namespace qimeng

#endif // QIMENG_LLM_TASKPROMPT_H
