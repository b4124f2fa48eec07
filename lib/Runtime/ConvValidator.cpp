//===- ConvValidator.cpp - Convolution kernels are checked too ------------===//
//
// Same order of checks as GemmValidator.cpp: the output's guards, the input
// (gaps included) and filter unchanged bit for bit, the workspace's guards,
// then every output element against the fp64 reference of the im2col GEMM,
// then against OpenBLAS on that GEMM.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Runtime/ConvValidator.h"
#include "ValidationSupport.h"
#include "qimeng/Kernel/WorkspaceHeader.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

using namespace qimeng;
using namespace qimeng::validation;

/// Offset of input element (n, c, h, w) from the input pointer.
static int64_t inputOffset(const ConvDesc &d, int64_t n, int64_t c, int64_t h,
                           int64_t w) {
  const int64_t *s = d.inputStrides;
  if (d.isNhwc())
    return n * s[0] + h * s[1] + w * s[2] + c;
  return n * s[0] + c * s[1] + h * s[2] + w;
}

void qimeng::convIm2col(const ConvDesc &d, const float *input, int64_t image,
                        std::vector<float> &out) {
  const int64_t oh = d.oh(), ow = d.ow();
  const GemmDesc g = d.gemmView();
  out.resize(size_t(g.k * (d.isNhwc() ? g.m : g.n)));
  if (d.isNhwc()) {
    // Row (n, y, x), column (kh, kw, c): the channels are contiguous.
    float *row = out.data();
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t i = 0; i < d.kh; ++i)
            for (int64_t j = 0; j < d.kw; ++j, row += d.c)
              std::copy_n(input + inputOffset(d, n, 0,
                                              y * d.strideH + i * d.dilationH,
                                              x * d.strideW + j * d.dilationW),
                          d.c, row);
    return;
  }
  // Row (c, kh, kw), column (y, x).
  float *col = out.data();
  for (int64_t c = 0; c < d.c; ++c)
    for (int64_t i = 0; i < d.kh; ++i)
      for (int64_t j = 0; j < d.kw; ++j)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x)
            *col++ =
                input[inputOffset(d, image, c, y * d.strideH + i * d.dilationH,
                                  x * d.strideW + j * d.dilationW)];
}

void qimeng::convIm2colSgemm(const ConvDesc &d, const float *input,
                             const float *filter, float *output,
                             std::vector<float> &scratch) {
  const GemmDesc g = d.gemmView();
  if (d.isNhwc()) {
    convIm2col(d, input, 0, scratch);
    cblas_sgemm(CblasRowMajor, CblasNoTrans,
                g.transB ? CblasTrans : CblasNoTrans, blasint(g.m),
                blasint(g.n), blasint(g.k), 1.0f, scratch.data(), blasint(g.k),
                filter, blasint(g.ldb), 1.0f, output, blasint(g.n));
    return;
  }
  for (int64_t n = 0; n < d.n; ++n) {
    convIm2col(d, input, n, scratch);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(g.m),
                blasint(g.n), blasint(g.k), 1.0f, filter, blasint(g.k),
                scratch.data(), blasint(g.n), 1.0f, output + n * g.m * g.n,
                blasint(g.n));
  }
}

namespace {

/// "O(n,f,oh,ow)" or "O(n,oh,ow,f)": output element `i` in its layout.
std::string outputElement(const ConvDesc &d, int64_t i) {
  int64_t dims[4];
  if (d.isNhwc()) {
    int64_t extents[4] = {d.n, d.oh(), d.ow(), d.f};
    for (int k = 3; k >= 0; --k) {
      dims[k] = i % extents[k];
      i /= extents[k];
    }
  } else {
    int64_t extents[4] = {d.n, d.f, d.oh(), d.ow()};
    for (int k = 3; k >= 0; --k) {
      dims[k] = i % extents[k];
      i /= extents[k];
    }
  }
  return llvm::formatv("O({0},{1},{2},{3})", dims[0], dims[1], dims[2], dims[3])
      .str();
}

/// The fp64 reference and magnitudes in the output's order.
void convReference(const ConvDesc &d, const float *input, const float *filter,
                   const float *out0, std::vector<double> &ref,
                   std::vector<double> &mag) {
  std::vector<float> cols;
  const GemmDesc g = d.gemmView();
  if (d.isNhwc()) {
    convIm2col(d, input, 0, cols);
    computeReference(g, cols.data(), filter, out0, ref, mag);
    return;
  }
  ref.clear();
  mag.clear();
  std::vector<double> r, m;
  for (int64_t n = 0; n < d.n; ++n) {
    convIm2col(d, input, n, cols);
    computeReference(g, filter, cols.data(), out0 + n * g.m * g.n, r, m);
    ref.insert(ref.end(), r.begin(), r.end());
    mag.insert(mag.end(), m.begin(), m.end());
  }
}

/// The output channel of element i of the output (in its order).
int64_t channelOf(const ConvDesc &d, int64_t i) {
  return d.isNhwc() ? i % d.f : (i / (d.oh() * d.ow())) % d.f;
}

/// Where offset `off` from data() lies: a guard, a stride gap or an element.
std::string describeInputOffset(const GuardedBuffer &buf, int64_t off,
                                llvm::StringRef name) {
  if (auto guard = guardDamage(name, buf, off))
    return *guard;
  return llvm::formatv("{0} changed at element offset {1}", name, off).str();
}

std::optional<std::string> checkUnchanged(llvm::StringRef name,
                                          const GuardedBuffer &buf,
                                          const std::vector<float> &pristine) {
  if (std::optional<int64_t> off = firstChanged(buf, pristine))
    return describeInputOffset(buf, *off, name);
  return std::nullopt;
}

/// Calls f(offset) for each element of the input (its gaps excluded).
template <typename F> void forEachInputElement(const ConvDesc &d, F f) {
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t c = 0; c < d.c; ++c)
      for (int64_t h = 0; h < d.h; ++h)
        for (int64_t w = 0; w < d.w; ++w)
          f(inputOffset(d, n, c, h, w));
}

/// The bf16 or f16 (and byte) that a stride gap of a narrow input holds: a
/// NaN in either type (the most negative s8) that any read carries into
/// the output.
constexpr uint16_t kGapBf16 = 0x7fc1;
constexpr uint8_t kGapByte = 0x80;

llvm::Expected<std::optional<std::string>>
runOne(const ConvDesc &d, const ConvKernel &kernel, size_t workspaceBytes,
       const ValidationOptions &options, Distribution dist,
       ValidationReport &report) {
  const llvm::StringRef name = distributionName(dist);
  const int64_t guard = options.guardElements;
  // The input and filter end against a page with no access, as a GEMM's
  // A and B (GemmValidator.cpp).
  auto in = GuardedBuffer::allocateBeforeUnmapped(d.inputSpan(), guard);
  if (!in)
    return in.takeError();
  auto flt = GuardedBuffer::allocateBeforeUnmapped(d.filterElements(), guard);
  if (!flt)
    return flt.takeError();
  auto out = GuardedBuffer::allocate(d.outputElements(), guard);
  if (!out)
    return out.takeError();
  auto ws = GuardedBuffer::allocate(
      int64_t((workspaceBytes + sizeof(float) - 1) / sizeof(float)), guard);
  if (!ws)
    return ws.takeError();
  ws->fillSentinel();

  // The input's stride gaps keep the sentinel: a kernel that reads one
  // computes with a signalling NaN.
  InputGenerator gen(dist, options.seed);
  in->fillSentinel();
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t c = 0; c < d.c; ++c)
      for (int64_t h = 0; h < d.h; ++h)
        for (int64_t w = 0; w < d.w; ++w)
          in->data()[inputOffset(d, n, c, h, w)] = gen.next();
  // The epilogue's bias per output channel.
  auto bias = GuardedBuffer::allocate(d.bias ? d.f : 0, guard);
  if (!bias)
    return bias.takeError();
  for (GuardedBuffer *buf : {&*flt, &*out, &*bias}) {
    buf->fillSentinel();
    for (int64_t i = 0; i < buf->size(); ++i)
      buf->data()[i] = gen.next();
  }
  // bf16, f16 or 8-bit operands: the input and filter hold values of the
  // type (what the reference reads, as floats), the kernel reads copies in
  // the type; an s32 output holds integers, their bits in its buffer and
  // their values in outInts for the reference.
  const bool half = isHalfPrecision(d.precision);
  const HalfFloat halfType = halfFloat(d.precision == GemmPrecision::F16);
  const bool integer = isIntegerPrecision(d.precision);
  const bool narrow = half || integer;
  auto eachInput = [&](auto f) { forEachInputElement(d, f); };
  auto eachFilter = [&](auto f) {
    for (int64_t i = 0; i < d.filterElements(); ++i)
      f(i);
  };
  std::vector<float> outInts;
  // The input's first element NaN: the outputs it reaches (the first
  // pixel's, every channel) are the activation's of a NaN (a
  // floating-point kernel's: bf16 and f16 keep it through the rounding
  // and the narrow copy below).
  if (!integer && poisonsWithNan(dist, d.activation.any()))
    in->data()[0] = std::numeric_limits<float>::quiet_NaN();
  if (half) {
    eachInput(
        [&](int64_t o) { in->data()[o] = halfType.roundTo(in->data()[o]); });
    eachFilter(
        [&](int64_t o) { flt->data()[o] = halfType.roundTo(flt->data()[o]); });
  }
  if (integer) {
    const bool u8 = d.precision == GemmPrecision::U8S8;
    eachInput(
        [&](int64_t o) { in->data()[o] = int8Value(in->data()[o], dist, u8); });
    eachFilter([&](int64_t o) {
      flt->data()[o] = int8Value(flt->data()[o], dist, false);
    });
    outInts.resize(size_t(out->size()));
    for (int64_t i = 0; i < out->size(); ++i) {
      const int32_t v = int32_t(std::lround(double(out->data()[i]) * 1000));
      outInts[size_t(i)] = float(v);
      std::memcpy(out->data() + i, &v, sizeof(v));
    }
  }
  std::optional<GuardedBuffer> inNarrow, fltNarrow;
  if (narrow) {
    auto toByte = [](float x) { return uint8_t(int32_t(x) & 0xff); };
    auto input = half
                     ? narrowCopy<uint16_t>(*in, d.inputSpan(), guard, kGapBf16,
                                            halfType.bitsOf, eachInput)
                     : narrowCopy<uint8_t>(*in, d.inputSpan(), guard, kGapByte,
                                           toByte, eachInput);
    if (!input)
      return input.takeError();
    auto filter =
        half ? narrowCopy<uint16_t>(*flt, d.filterElements(), guard, kGapBf16,
                                    halfType.bitsOf, eachFilter)
             : narrowCopy<uint8_t>(*flt, d.filterElements(), guard, kGapByte,
                                   toByte, eachFilter);
    if (!filter)
      return filter.takeError();
    inNarrow = std::move(*input);
    fltNarrow = std::move(*filter);
  }
  // An overwriting kernel must not read the output: NaN there would show,
  // and the reference starts from 0.
  std::vector<float> zeros;
  if (d.overwrite) {
    std::fill_n(out->data(), out->size(),
                std::numeric_limits<float>::quiet_NaN());
    zeros.assign(size_t(out->size()), 0.0f);
  }
  const std::vector<float> inPristine = copyRegion(*in);
  const std::vector<float> fltPristine = copyRegion(*flt);
  const std::vector<float> outPristine = copyRegion(*out);
  const std::vector<float> biasPristine = copyRegion(*bias);
  const float *in0 = inPristine.data() + guard;
  const float *flt0 = fltPristine.data() + guard;
  const float *out0 = d.overwrite ? zeros.data()
                      : integer   ? outInts.data()
                                  : outPristine.data() + guard;
  const float *bias0 = biasPristine.data() + guard;
  // What the kernel reads, as it was.
  const GuardedBuffer &inRead = narrow ? *inNarrow : *in;
  const GuardedBuffer &fltRead = narrow ? *fltNarrow : *flt;
  const std::vector<float> inReadPristine =
      narrow ? copyRegion(inRead) : std::vector<float>();
  const std::vector<float> fltReadPristine =
      narrow ? copyRegion(fltRead) : std::vector<float>();

  if (d.bias)
    writeBias(ws->data(), bias->data());
  writeInputStrides(ws->data(), d);
  // A 16-bit output D: the output's elements as a dense matrix (a pixel's
  // F channels a row for nhwc, a channel's OH*OW pixels for nchw), its
  // pointer in the header as the module writes it; the f32 output is then
  // the kernel's scratch.
  GemmDesc dView;
  std::optional<GuardedBuffer> dBuf;
  std::vector<float> dPristine;
  if (d.halfOutput) {
    const int64_t cols = d.isNhwc() ? d.f : d.oh() * d.ow();
    dView = GemmDesc::packed(d.outputElements() / cols, cols, 1);
    dView.precision = d.precision;
    dView.halfOutput = true;
    dView.ldd = cols;
    auto buf = allocateHalfOutput(dView, guard);
    if (!buf)
      return buf.takeError();
    dBuf = std::move(*buf);
    dPristine = copyRegion(*dBuf);
    writeHalfOutput(ws->data(), dBuf->data());
  }
  auto fail = [&](const std::string &why) {
    return std::optional<std::string>((name + ": " + why).str());
  };
  if (d.outputIsDense()) {
    kernel(inRead.data(), fltRead.data(), out->data(), ws->data());
  } else {
    // A channel slice of a wider output (ConvDesc::outputPixelStride): the
    // kernel writes `out`'s elements a pixel stride apart into a buffer
    // whose gaps (the other channels) hold the sentinel and must keep it.
    auto wide = GuardedBuffer::allocate(d.outputSpan(), guard);
    if (!wide)
      return wide.takeError();
    wide->fillSentinel();
    const int64_t pixels = d.n * d.oh() * d.ow();
    for (int64_t px = 0; px < pixels; ++px)
      std::memcpy(wide->data() + d.nhwcOutputOffset(px, 0),
                  out->data() + px * d.f, size_t(d.f) * sizeof(float));
    std::vector<float> gaps = copyRegion(*wide);
    kernel(inRead.data(), fltRead.data(), wide->data(), ws->data());
    if (std::optional<int64_t> off = wide->firstDamagedGuard())
      return fail(describeInputOffset(*wide, *off, "the output"));
    for (int64_t px = 0; px < pixels; ++px) {
      float *row = wide->data() + d.nhwcOutputOffset(px, 0);
      std::memcpy(out->data() + px * d.f, row, size_t(d.f) * sizeof(float));
      // What the kernel wrote, put back: any other change is in a gap.
      std::memcpy(row, gaps.data() + guard + (row - wide->data()),
                  size_t(d.f) * sizeof(float));
    }
    if (std::optional<int64_t> off = firstChanged(*wide, gaps))
      return fail(llvm::formatv("the output's element {0}, between pixels "
                                "{1} channels apart, was written",
                                *off, d.outputPixelStride)
                      .str());
  }
  if (std::optional<int64_t> off = out->firstDamagedGuard())
    return fail(describeInputOffset(*out, *off, "the output"));
  if (auto failure = checkUnchanged("the input", inRead,
                                    narrow ? inReadPristine : inPristine))
    return fail(*failure);
  if (auto failure = checkUnchanged("the filter", fltRead,
                                    narrow ? fltReadPristine : fltPristine))
    return fail(*failure);
  if (auto failure = checkUnchanged("the bias", *bias, biasPristine))
    return fail(*failure);
  if (std::optional<int64_t> off = ws->firstDamagedGuard())
    return fail(describeInputOffset(*ws, *off, "the workspace"));

  const int64_t k = d.gemmView().k;
  // f16: up to four exact partial products a k (GemmValidator's bound).
  const double bound =
      gemmErrorBound(d.precision == GemmPrecision::F16 ? 4 * k : k);
  ReferenceCache::Entry storage;
  const ReferenceCache::Entry &reference = referenceFor(
      options,
      // The strides too: a run-time-strides key does not name them.
      llvm::formatv("{0}/{1}x{2}x{3}/{4}/{5}", d.str(), d.inputStrides[0],
                    d.inputStrides[1], d.inputStrides[2], name, options.seed)
          .str(),
      storage, [&](std::vector<double> &ref, std::vector<double> &mag) {
        convReference(d, in0, flt0, out0, ref, mag);
        // The epilogue: + bias[channel], then the activation (which may
        // scale the error and add its own: activatedMagnitude).
        for (size_t i = 0; i < ref.size(); ++i) {
          if (d.bias) {
            const double b = bias0[channelOf(d, int64_t(i))];
            ref[i] += b;
            mag[i] += std::fabs(b);
          }
          const double sum = ref[i]; // the activation's input
          ref[i] = d.activation.apply(sum);
          mag[i] = activatedMagnitude(d.activation, mag[i], sum, ref[i], bound);
        }
      });
  const std::vector<double> &ref = reference.ref, &mag = reference.mag;
  const bool exact = comparedBitForBit(dist, k, d.activation);
  if (d.halfOutput)
    return checkHalfOutput(dView, *dBuf, dPristine, ref, mag, exact,
                           d.precision == GemmPrecision::F16
                               ? f16OutputErrorBound(k)
                               : bf16OutputErrorBound(k),
                           name, report);
  std::optional<std::string> failure;
  const float *o = out->data();
  // s32: exact, the sum modulo 2^32 as arith.addi.
  if (integer) {
    for (int64_t i = 0; i < out->size() && !failure; ++i) {
      const int32_t got = int32Bits(o + i);
      const int32_t want = int32_t(uint32_t(uint64_t(int64_t(ref[size_t(i)]))));
      if (got != want)
        failure = llvm::formatv("{0}: {1} = {2}, expected {3} (exact)", name,
                                outputElement(d, i), got, want)
                      .str();
    }
    return failure;
  }
  for (int64_t i = 0; i < out->size(); ++i) {
    const double want = ref[size_t(i)], size = mag[size_t(i)];
    const double rel = relativeError(o[i], want, size);
    report.maxRelError = std::max(report.maxRelError, rel);
    if (failure)
      continue;
    std::string why = elementFailure(o[i], want, size, exact, bound);
    if (!why.empty())
      failure = llvm::formatv("{0}: {1} = {2}, expected {3}{4}", name,
                              outputElement(d, i), num(o[i]), num(want), why)
                    .str();
  }
  if (failure || !options.compareOpenBlas)
    return failure;

  // OpenBLAS on the im2col GEMM of the pristine inputs: the cross-check,
  // as for GEMM (ours within twice the bound of it where it is within the
  // bound of fp64).
  std::vector<float> blas(out0, out0 + out->size()), scratch;
  convIm2colSgemm(d, in0, flt0, blas.data(), scratch);
  for (size_t i = 0; i < blas.size(); ++i) {
    if (d.bias)
      blas[i] += bias0[channelOf(d, int64_t(i))];
    blas[i] = d.activation.apply(blas[i]);
  }
  for (int64_t i = 0; i < out->size(); ++i) {
    const double want = ref[size_t(i)], size = mag[size_t(i)];
    if (std::isnan(size))
      continue; // a NaN input's result: checked exactly above
    const double blasRel = relativeError(blas[size_t(i)], want, size);
    report.openBlasMaxRelError = std::max(report.openBlasMaxRelError, blasRel);
    if (failure || !(blasRel <= bound))
      continue;
    const double diff = std::fabs(double(o[i]) - double(blas[size_t(i)]));
    if (!(diff <= 2 * bound * size))
      failure = llvm::formatv("{0}: {1} = {2}, openblas im2col gives {3}, "
                              "difference {4} > twice the bound {5} times "
                              "magnitude {6}",
                              name, outputElement(d, i), num(o[i]),
                              num(blas[size_t(i)]), shortNum(diff),
                              shortNum(bound), shortNum(size))
                    .str();
  }
  return failure;
}

} // namespace

llvm::Expected<ValidationReport>
qimeng::validateConv(const ConvDesc &desc, const ConvKernel &kernel,
                     size_t workspaceBytes, const ValidationOptions &options) {
  if (llvm::Error err = desc.verify())
    return std::move(err);
  if (!kernel)
    return llvm::createStringError("no kernel to validate");
  if (options.distributions.empty())
    return llvm::createStringError("no input distributions to validate with");
  if (options.guardElements < 0)
    return llvm::createStringError(
        llvm::formatv("negative guard size {0}", options.guardElements).str());
  const double elements = double(desc.inputSpan()) + desc.outputElements() +
                          double(desc.gemmView().k) * desc.gemmView().m;
  if (elements > double(int64_t(1) << 34))
    return llvm::createStringError(
        llvm::formatv("{0} is too large to validate", desc.str()).str());
  return validateEachDistribution(
      options, [&](Distribution dist, ValidationReport &report) {
        return runOne(desc, kernel, workspaceBytes, options, dist, report);
      });
}
