//===- JitKernel.h - Load an in-memory object and call it -------*- C++ -*-===//
#ifndef QIMENG_RUNTIME_JITKERNEL_H
#define QIMENG_RUNTIME_JITKERNEL_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include <memory>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace qimeng {

/// An object file loaded into this process with ORC; owns the code.
class JitKernel {
public:
  ~JitKernel();
  JitKernel(JitKernel &&) = delete;

  /// Links `object` into a fresh LLJIT and looks `symbol` up.
  static llvm::Expected<std::unique_ptr<JitKernel>>
  load(std::unique_ptr<llvm::MemoryBuffer> object, llvm::StringRef symbol);

  void *address() const { return address_; }
  GemmKernelFn gemm() const { return reinterpret_cast<GemmKernelFn>(address_); }

private:
  JitKernel() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  void *address_ = nullptr;
};

/// An emitted, assembled and loaded kernel (GEMM or convolution: both take
/// three float pointers and a workspace).
struct LoadedKernel {
  EmittedKernel emitted;
  std::unique_ptr<JitKernel> jit;
};

/// Emit -> assemble (LLVM MC) -> load (ORC) for the host.
llvm::Expected<LoadedKernel> buildGemmKernel(const GemmDesc &desc,
                                             const GemmConfig &config,
                                             const Target &target,
                                             const EmitterOptions &options,
                                             llvm::StringRef fault = "");

/// Emit -> assemble -> load for a convolution kernel.
llvm::Expected<LoadedKernel> buildConvKernel(const ConvDesc &desc,
                                             const GemmConfig &config,
                                             const Target &target,
                                             const EmitterOptions &options,
                                             llvm::StringRef fault = "");

/// Assemble -> load for an emitted kernel's text.
llvm::Expected<LoadedKernel> loadEmittedKernel(EmittedKernel emitted,
                                               const Target &target);

} // namespace qimeng

#endif // QIMENG_RUNTIME_JITKERNEL_H
