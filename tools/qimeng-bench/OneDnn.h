//===- OneDnnConv.h - oneDNN's convolution, loaded at run time --*- C++ -*-===//
//
// The oneDNN column of `qimeng-bench --op conv2d`: libdnnl.so.2 (Debian's
// libdnnl-dev) opened with dlopen like BLIS (so that the tool builds and
// runs without it, and its GNU OpenMP runtime stays bound to it), its C API
// called through pointers typed from its own header. The convolution is
// oneDNN's forward-inference `convolution_auto` on f32 NHWC source and
// destination, the weights reordered once into the layout oneDNN prefers,
// and a sum post-op so that it accumulates (dst += conv) like our kernels.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TOOLS_QIMENG_BENCH_ONEDNNCONV_H
#define QIMENG_TOOLS_QIMENG_BENCH_ONEDNNCONV_H

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

class OneDnnConv {
public:
  /// Loads libdnnl and sets its OpenMP runtime to `threads` threads.
  static llvm::Expected<std::unique_ptr<OneDnnConv>> load(int threads);
  virtual ~OneDnnConv() = default;

  /// "oneDNN 2.6.3: <file>, <threads> thread(s) (GNU OpenMP)".
  virtual std::string describe() const = 0;

  /// The primitive for `desc`: nhwc_hwcf with a dense input, padding 0
  /// (the input is the padded buffer, as for our kernels).
  virtual llvm::Expected<std::unique_ptr<OneDnnConvPrimitive>>
  prepare(const ConvDesc &desc) = 0;
};

} // namespace qimeng

#endif // QIMENG_TOOLS_QIMENG_BENCH_ONEDNNCONV_H
