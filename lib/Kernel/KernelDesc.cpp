//===- KernelDesc.cpp -----------------------------------------------------===//
#include "qimeng/Kernel/KernelDesc.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

using namespace qimeng;

/// The activation's own checks (Activation::problem). Every
/// floating-point kernel takes relu, its clamp, leaky relu and the smooth
/// ones (on its f32 sums, before a 16-bit output's rounding); the 8-bit
/// ones take none (GemmDesc::verify and ConvDesc::verify say so first).
static llvm::Error verifyActivation(const Activation &activation,
                                    GemmPrecision precision) {
  if (auto problem = activation.problem())
    return llvm::createStringError(*problem);
  if (!activation.exact() && isIntegerPrecision(precision))
    return llvm::createStringError(
        llvm::formatv("{0} needs floating-point operands (f32, bf16 or "
                      "f16), not {1}",
                      Activation::smoothName(activation.smooth),
                      precisionName(precision))
            .str());
  return llvm::Error::success();
}

GemmDesc GemmDesc::transposedProduct() const {
  GemmDesc t = *this;
  std::swap(t.m, t.n);
  std::swap(t.lda, t.ldb);
  t.transA = !transB;
  t.transB = !transA;
  std::swap(t.dynamicM, t.dynamicN);
  t.bias = bias == GemmBias::Rows      ? GemmBias::Columns
           : bias == GemmBias::Columns ? GemmBias::Rows
                                       : bias;
  return t;
}

GemmDesc GemmDesc::packed(int64_t m, int64_t n, int64_t k, bool transA,
                          bool transB) {
  GemmDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.transA = transA;
  d.transB = transB;
  d.lda = transA ? m : k;
  d.ldb = transB ? k : n;
  d.ldc = n;
  return d;
}

llvm::Error GemmDesc::verify() const {
  // A run-time K may be 0 at a call (C = epilogue(C or 0)).
  if (m < 1 || n < 1 || k < (dynamicK ? 0 : 1))
    return llvm::createStringError(
        llvm::formatv("invalid gemm shape {0}x{1}x{2}: sizes must be >= 1 "
                      "(K >= 0 when run-time)",
                      m, n, k)
            .str());
  if (lda < aCols())
    return llvm::createStringError(
        llvm::formatv("lda {0} is smaller than the {1} columns of A as stored",
                      lda, aCols())
            .str());
  if (ldb < bCols())
    return llvm::createStringError(
        llvm::formatv("ldb {0} is smaller than the {1} columns of B as stored",
                      ldb, bCols())
            .str());
  if (ldc < n)
    return llvm::createStringError(
        llvm::formatv("ldc {0} is smaller than the {1} columns of C", ldc, n)
            .str());
  if (dynamicN && !runtimeLd)
    return llvm::createStringError(
        "a run-time N needs run-time leading dimensions (a dense C's ldc "
        "is N)");
  if (dynamicK && !runtimeLd)
    return llvm::createStringError(
        "a run-time K needs run-time leading dimensions (a dense A's lda "
        "is K)");
  if (hasEpilogue() && isIntegerPrecision(precision))
    return llvm::createStringError("8-bit operands take no epilogue yet");
  if (halfOutput) {
    if (!isHalfPrecision(precision))
      return llvm::createStringError(
          "a bf16 or f16 output needs operands of its type (an sbgemm or "
          "shgemm)");
    if (dynamicK)
      return llvm::createStringError("a 16-bit output takes no run-time K");
    if (ldd < n)
      return llvm::createStringError(
          llvm::formatv("ldd {0} is smaller than the {1} columns of D", ldd, n)
              .str());
  }
  if (precision == GemmPrecision::F16 && (transA || bPrepacked))
    return llvm::createStringError(
        "f16 operands are split into bf16 parts (AMX tiles) or widened to "
        "f32 (AVX-512) where they are packed or loaded: A as stored, B as "
        "stored or transposed (not prepacked)");
  if (bPrepacked && (dynamicN || dynamicK))
    return llvm::createStringError(
        "a prepacked B needs N and K static (the layout spans them)");
  return verifyActivation(activation, precision);
}

GemmDesc GemmDesc::withPaddedLeadingDims(int64_t pad) const {
  GemmDesc d = *this;
  d.lda = aCols() + pad;
  d.ldb = bCols() + pad;
  d.ldc = n + pad;
  if (halfOutput)
    d.ldd = n + pad + 2;
  return d;
}

std::string GemmDesc::str() const {
  std::string lds =
      runtimeLd ? std::string("ldrt")
                : llvm::formatv("lda{0}_ldb{1}_ldc{2}", lda, ldb, ldc).str() +
                      (halfOutput ? llvm::formatv("_ldd{0}", ldd).str() : "");
  return llvm::formatv("{10}_m{0}_n{1}_k{2}_{3}_{4}{5}{6}{7}{8}{9}", m, n, k,
                       lds, transA ? 't' : 'n', transB ? 't' : 'n',
                       std::string(dynamicM ? "_mrt" : "") +
                           (dynamicN ? "_nrt" : "") + (dynamicK ? "_krt" : "") +
                           (bPrepacked ? "_bpre" : ""),
                       std::string(overwrite ? "_b0" : "") +
                           (!halfOutput                       ? ""
                            : precision == GemmPrecision::F16 ? "_of16"
                                                              : "_obf16"),
                       bias != GemmBias::None ? "_bias" : "",
                       activation.suffix(), gemmOpName(precision))
      .str();
}

llvm::StringRef qimeng::gemmOpName(GemmPrecision precision) {
  switch (precision) {
  case GemmPrecision::F32:
    return "sgemm";
  case GemmPrecision::Bf16:
    return "sbgemm";
  case GemmPrecision::S8S8:
    return "s8s8gemm";
  case GemmPrecision::U8S8:
    return "u8s8gemm";
  case GemmPrecision::F16:
    return "shgemm";
  }
  return "sgemm";
}

llvm::StringRef qimeng::convOpName(GemmPrecision precision) {
  switch (precision) {
  case GemmPrecision::F32:
    return "sconv2d";
  case GemmPrecision::Bf16:
    return "sbconv2d";
  case GemmPrecision::S8S8:
    return "s8s8conv2d";
  case GemmPrecision::U8S8:
    return "u8s8conv2d";
  case GemmPrecision::F16:
    return "shconv2d";
  }
  return "sconv2d";
}

llvm::StringRef qimeng::precisionName(GemmPrecision precision) {
  switch (precision) {
  case GemmPrecision::F32:
    return "f32";
  case GemmPrecision::Bf16:
    return "bf16";
  case GemmPrecision::S8S8:
    return "s8s8";
  case GemmPrecision::U8S8:
    return "u8s8";
  case GemmPrecision::F16:
    return "f16";
  }
  return "f32";
}

std::optional<GemmPrecision> qimeng::parsePrecision(llvm::StringRef name) {
  for (GemmPrecision p :
       {GemmPrecision::F32, GemmPrecision::Bf16, GemmPrecision::S8S8,
        GemmPrecision::U8S8, GemmPrecision::F16})
    if (precisionName(p) == name)
      return p;
  return std::nullopt;
}

llvm::StringRef qimeng::convLayoutName(ConvLayout layout) {
  switch (layout) {
  case ConvLayout::NhwcHwcf:
    return "nhwc_hwcf";
  case ConvLayout::NhwcFhwc:
    return "nhwc_fhwc";
  case ConvLayout::NchwFchw:
    return "nchw_fchw";
  }
  return "nhwc_hwcf";
}

ConvDesc ConvDesc::dense(ConvLayout layout, int64_t n, int64_t h, int64_t w,
                         int64_t c, int64_t f, int64_t kh, int64_t kw,
                         int64_t strideH, int64_t strideW, int64_t dilationH,
                         int64_t dilationW) {
  ConvDesc d;
  d.layout = layout;
  d.n = n;
  d.h = h;
  d.w = w;
  d.c = c;
  d.f = f;
  d.kh = kh;
  d.kw = kw;
  d.strideH = strideH;
  d.strideW = strideW;
  d.dilationH = dilationH;
  d.dilationW = dilationW;
  d.denseInputStrides(d.inputStrides);
  return d;
}

void ConvDesc::denseInputStrides(int64_t out[3]) const {
  if (isNhwc()) {
    out[0] = h * w * c;
    out[1] = w * c;
    out[2] = c;
  } else {
    out[0] = c * h * w;
    out[1] = h * w;
    out[2] = w;
  }
}

bool ConvDesc::inputIsDense() const {
  int64_t d[3];
  denseInputStrides(d);
  return d[0] == inputStrides[0] && d[1] == inputStrides[1] &&
         d[2] == inputStrides[2];
}

int64_t ConvDesc::contiguousRun() const {
  // The GEMM view's k dimensions, outer first, as (count, input step).
  const int64_t *s = inputStrides;
  // A step read at run time: never a known multiple of the run (the emitter
  // does the same, conv2d.py).
  const int64_t atRunTime = -1;
  auto step = [&](int64_t factor, int index) {
    return runtimeStrides ? atRunTime : factor * s[index];
  };
  std::pair<int64_t, int64_t> dims[3];
  if (isNhwc()) {
    dims[0] = {kh, step(dilationH, 1)};
    dims[1] = {kw, dilationW * s[2]}; // the pixel stride is an immediate
    dims[2] = {c, 1};
  } else {
    dims[0] = {c, step(1, 1)};
    dims[1] = {kh, step(dilationH, 2)};
    dims[2] = {kw, dilationW};
  }
  int64_t run = 1;
  for (int i = 2; i >= 0; --i) {
    if (dims[i].first != 1 && dims[i].second != run)
      break;
    run *= dims[i].first;
  }
  return run;
}

int64_t ConvDesc::largestRunDivisorAtMost(int64_t limit) const {
  const int64_t run = contiguousRun();
  int64_t d = std::max<int64_t>(1, std::min(limit, run));
  while (run % d != 0)
    --d;
  return d;
}

GemmDesc ConvDesc::gemmView() const {
  GemmDesc g = isNhwc()
                   ? GemmDesc::packed(n * oh() * ow(), f, kh * kw * c, false,
                                      layout == ConvLayout::NhwcFhwc)
                   : GemmDesc::packed(f, oh() * ow(), c * kh * kw);
  g.overwrite = overwrite;
  if (bias)
    g.bias = isNhwc() ? GemmBias::Columns : GemmBias::Rows;
  g.activation = activation;
  g.precision = precision;
  g.bPrepacked = bPrepacked;
  g.halfOutput = halfOutput;
  if (halfOutput)
    g.ldd = g.n; // dense: F a pixel (nhwc), OH*OW a channel (nchw)
  return g;
}

ConvDesc ConvDesc::withPaddedInputStrides() const {
  ConvDesc d = *this;
  if (!runtimeStrides)
    return d;
  int64_t *s = d.inputStrides;
  // Uneven pads, so that no stride is a multiple of another by accident.
  if (isNhwc()) {
    s[1] += 3 * c;
    s[0] = h * s[1] + 5;
  } else {
    s[2] += 3;
    s[1] = h * s[2] + 7;
    s[0] = c * s[1] + 5;
  }
  return d;
}

int64_t ConvDesc::inputSpan() const {
  const int64_t *s = inputStrides;
  if (isNhwc())
    return (n - 1) * s[0] + (h - 1) * s[1] + (w - 1) * s[2] + c;
  return (n - 1) * s[0] + (c - 1) * s[1] + (h - 1) * s[2] + w;
}

llvm::Error ConvDesc::verify() const {
  if (n < 1 || h < 1 || w < 1 || c < 1 || f < 1 || kh < 1 || kw < 1 ||
      strideH < 1 || strideW < 1 || dilationH < 1 || dilationW < 1)
    return llvm::createStringError(
        llvm::formatv("invalid conv2d {0}: sizes, strides and dilations must "
                      "be >= 1",
                      str())
            .str());
  int64_t spanH = dilationH * (kh - 1) + 1, spanW = dilationW * (kw - 1) + 1;
  if (spanH > h || spanW > w)
    return llvm::createStringError(
        llvm::formatv("a {0}x{1} filter with dilation {2}x{3} spans {4}x{5}, "
                      "more than the {6}x{7} input",
                      kh, kw, dilationH, dilationW, spanH, spanW, h, w)
            .str());
  const int64_t *s = inputStrides;
  bool nhwc = isNhwc();
  int64_t inner = nhwc ? c : w;
  if (s[2] < inner || s[1] < (nhwc ? w : h) * s[2] ||
      s[0] < (nhwc ? h : c) * s[1])
    return llvm::createStringError(
        llvm::formatv("input strides {0}x{1}x{2} overlap for a {3} input", s[0],
                      s[1], s[2], str())
            .str());
  if (!outputIsDense() &&
      (!nhwc || precision != GemmPrecision::F32 || outputPixelStride < f))
    return llvm::createStringError(
        llvm::formatv("{0}: an output pixel stride ({1}) is for an nhwc f32 "
                      "output, at least F ({2})",
                      str(), outputPixelStride, f)
            .str());
  if (runtimeStrides && nhwc && s[2] != c)
    return llvm::createStringError(
        llvm::formatv("{0}: with run-time strides the input's w stride is "
                      "the kernel's immediate C ({1}), not {2}",
                      str(), c, s[2])
            .str());
  if (precision == GemmPrecision::F16 && bPrepacked)
    return llvm::createStringError(
        llvm::formatv("{0}: an f16 filter is packed at each call (split on "
                      "the tiles, widened on the dot kernels)",
                      str())
            .str());
  if (precision != GemmPrecision::F32) {
    if (!isNhwc() && precision == GemmPrecision::U8S8)
      return llvm::createStringError(
          llvm::formatv("{0}: in nchw_fchw the filter is the GEMM's A, "
                        "VPDPBUSD's unsigned operand: s8 inputs only",
                        str())
              .str());
    if (isIntegerPrecision(precision) && (bias || activation.any()))
      return llvm::createStringError(
          llvm::formatv("{0}: 8-bit convolutions take no bias or relu", str())
              .str());
    if (bPrepacked && !filterMayBePrepacked())
      return llvm::createStringError(
          llvm::formatv("{0}: a prepacked filter holds whole groups of k, "
                        "which blocks of a run of {1} k do not",
                        str(), contiguousRun())
              .str());
  }
  if (!isNhwc() && bPrepacked)
    return llvm::createStringError(
        llvm::formatv("{0}: in nchw_fchw the filter is the GEMM's A, not "
                      "a prepacked B",
                      str())
            .str());
  if (halfOutput && !isHalfPrecision(precision))
    return llvm::createStringError(
        llvm::formatv("{0}: a bf16 or f16 output needs operands of its type",
                      str())
            .str());
  return verifyActivation(activation, precision);
}

std::string ConvDesc::str() const {
  std::string strides = runtimeStrides
                            ? std::string("rt")
                            : llvm::formatv("{0}x{1}x{2}", inputStrides[0],
                                            inputStrides[1], inputStrides[2])
                                  .str();
  return llvm::formatv("{13}_{0}_n{1}_h{2}_w{3}_c{4}_f{5}_k{6}x{7}_s{8}x{9}_"
                       "d{10}x{11}_is{12}",
                       convLayoutName(layout), n, h, w, c, f, kh, kw, strideH,
                       strideW, dilationH, dilationW, strides,
                       convOpName(precision))
             .str() +
         (outputIsDense() ? std::string()
                          : "_ldo" + std::to_string(outputPixelStride)) +
         (bPrepacked ? "_bpre" : "") + (overwrite ? "_b0" : "") +
         (!halfOutput                       ? ""
          : precision == GemmPrecision::F16 ? "_of16"
                                            : "_obf16") +
         (bias ? "_bias" : "") + activation.suffix();
}
