//===- KernelProblem.h - A GEMM or a convolution ----------------*- C++ -*-===//
//
// What one generated kernel computes: a GemmDesc or a ConvDesc. Both
// kernels take three float pointers and a workspace and are blocked as a
// GEMM (a convolution through its gemmView), so the tuner, the runner and
// the pass handle them through this one type.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_KERNELPROBLEM_H
#define QIMENG_KERNEL_KERNELPROBLEM_H

#include "qimeng/Kernel/KernelDesc.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace qimeng {

class KernelProblem {
public:
  KernelProblem() = default;
  KernelProblem(const GemmDesc &gemm) : gemm_(gemm) {}
  KernelProblem(const ConvDesc &conv) : gemm_(conv.gemmView()), conv_(conv) {}

  /// The convolution, or null for a GEMM.
  const ConvDesc *conv() const { return conv_ ? &*conv_ : nullptr; }
  /// The GEMM itself, or the convolution's GEMM view: what blocking,
  /// partitioning and the search space work on.
  const GemmDesc &gemm() const { return gemm_; }

  /// "sgemm" or "sconv2d": the emitter kind and the database key's op.
  llvm::StringRef opName() const { return conv_ ? "sconv2d" : "sgemm"; }
  double flops() const { return conv_ ? conv_->flops() : gemm_.flops(); }
  llvm::Error verify() const {
    return conv_ ? conv_->verify() : gemm_.verify();
  }
  /// The descriptor's stable text (GemmDesc::str or ConvDesc::str).
  std::string str() const { return conv_ ? conv_->str() : gemm_.str(); }
  /// Short shape text for messages: "512x512x512" or the conv's str().
  std::string shape() const;
  /// The same problem with B (the convolution's filter) prepacked by the
  /// caller (GemmDesc::bPrepacked, ConvDesc::bPrepacked).
  KernelProblem withPrepackedB() const {
    if (conv_) {
      ConvDesc c = *conv_;
      c.bPrepacked = true;
      return KernelProblem(c);
    }
    GemmDesc g = gemm_;
    g.bPrepacked = true;
    return KernelProblem(g);
  }

private:
  GemmDesc gemm_;
  std::optional<ConvDesc> conv_;
};

} // namespace qimeng

#endif // QIMENG_KERNEL_KERNELPROBLEM_H
