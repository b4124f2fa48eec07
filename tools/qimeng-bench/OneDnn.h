//===- OneDnn.h - oneDNN matmul and convolution at run time -----*- C++ -*-===//
//
// The oneDNN columns of qimeng-bench: libdnnl.so.2 (Debian's libdnnl-dev)
// opened with dlopen like BLIS (so that the tool builds and runs without it,
// and its GNU OpenMP runtime stays bound to it), its C API called through
// pointers typed from its own header. Both primitives are created once,
// outside the timing, with a sum post-op so that they accumulate (dst +=)
// like our kernels:
// - matmul: fp32 on the row-major operands as they lie (leading dimensions
//   and transposes as strides), like every other column, which packs its
//   operands in each call too;
// - convolution: forward-inference `convolution_auto` on f32 NHWC source and
//   destination, the weights reordered once into the layout oneDNN prefers.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TOOLS_QIMENG_BENCH_ONEDNN_H
#define QIMENG_TOOLS_QIMENG_BENCH_ONEDNN_H

#include "ExternalGemm.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <string>

namespace qimeng {

/// One convolution, ready to run: out += conv(in, filter) for the NHWC
/// input and output of `desc` (dense), the filter in HWCF.
class OneDnnConvPrimitive {
public:
  virtual ~OneDnnConvPrimitive() = default;
  /// Reorders `filter` (HWCF) into oneDNN's weights layout; call before
  /// run() and again whenever the filter changes.
  virtual llvm::Error setFilter(const float *filter) = 0;
  /// out += conv(in, filter).
  virtual llvm::Error run(const float *in, float *out) = 0;
  /// oneDNN's implementation name, such as "jit:avx512_core".
  virtual std::string implementation() const = 0;
};

/// One matmul, ready to run: C += A * B with GemmDesc's semantics.
class OneDnnMatmulPrimitive {
public:
  virtual ~OneDnnMatmulPrimitive() = default;
  virtual llvm::Error run(const float *a, const float *b, float *c) = 0;
  /// oneDNN's implementation name, such as "brg:avx512_core".
  virtual std::string implementation() const = 0;
};

class OneDnn {
public:
  /// Loads libdnnl and sets its OpenMP runtime to `threads` threads.
  static llvm::Expected<std::unique_ptr<OneDnn>> load(int threads);
  virtual ~OneDnn() = default;

  /// "2.6.3".
  virtual std::string version() const = 0;
  /// "<file>, <threads> thread(s) (its own OpenMP runtime)".
  virtual std::string describe() const = 0;

  /// The convolution for `desc`: nhwc_hwcf with a dense input, padding 0
  /// (the input is the padded buffer, as for our kernels).
  virtual llvm::Expected<std::unique_ptr<OneDnnConvPrimitive>>
  prepareConv(const ConvDesc &desc) = 0;

  /// The matmul for `desc` (any leading dimensions and transposes).
  virtual llvm::Expected<std::unique_ptr<OneDnnMatmulPrimitive>>
  prepareMatmul(const GemmDesc &desc) = 0;
};

/// oneDNN's matmul as a GEMM column: prepare() creates the primitive for a
/// shape, gemm() runs it, pathFor() names its implementation.
class OneDnnGemm final : public ExternalGemm {
public:
  static llvm::Expected<std::unique_ptr<ExternalGemm>> load(int threads);

  llvm::StringRef name() const override { return "oneDNN"; }
  std::string version() const override;
  std::string describe() const override;
  int threads() const override { return numThreads; }
  llvm::Error prepare(const GemmDesc &desc) override;
  /// Runs the primitive prepare() made for `desc`; a call that fails leaves
  /// C as it was (validation then fails) and the reason in pathFor().
  void gemm(const GemmDesc &desc, const float *a, const float *b,
            float *c) const override;
  std::string pathFor(const GemmDesc &desc) const override;

private:
  OneDnnGemm(std::unique_ptr<OneDnn> lib, int numThreads)
      : lib(std::move(lib)), numThreads(numThreads) {}

  std::unique_ptr<OneDnn> lib;
  int numThreads;
  std::string preparedFor; ///< GemmDesc::str() of the primitive's shape
  std::unique_ptr<OneDnnMatmulPrimitive> primitive;
  mutable std::string callError;
};

} // namespace qimeng

#endif // QIMENG_TOOLS_QIMENG_BENCH_ONEDNN_H
