//===- qimeng-cross-runner.cpp - Run a kernel for another architecture ----===//
//
// The runner of a cross target: built statically with that target's cross
// compiler (standard C++ only, no LLVM) and run under qemu-user, or copied
// to a real board. The host assembles the kernel and writes its code bytes
// to a file; this program maps them executable, runs the GEMM on guarded
// buffers for each input distribution, checks it against an fp64 reference
// with the host validators' numbers (ValidationNumerics.h), times it, and
// prints one JSON line:
//
//   {"passed":true,"failure":"","max_rel_error":1e-07,"median_ns":1234}
//
// Usage: qimeng-cross-runner CODE ENTRY M N K TRANSPOSES LDA LDB LDC
//                            WORKSPACE OVERWRITE SEED RUNS DISTRIBUTIONS
//                            EPILOGUE [PARTS]
// with ENTRY the kernel's byte offset in CODE, TRANSPOSES nn, nt, tn or tt
// (A stored K x M with lda >= M after a t in first place, B stored N x K
// with ldb >= K after a t in second place), OVERWRITE 0 or 1 (C = A*B:
// C starts as the NaN sentinel and must not be read), RUNS timed calls
// after the checks (0: none) and DISTRIBUTIONS "all" or "small-integers"
// (the exact one alone), EPILOGUE "none" or a comma list of
// "bias=columns" or "bias=rows", "relu", "relu_min=X", "relu_max=X" (the
// floor and bound of relu's clamp), "relu_nan_to_floor", "leaky_relu=X"
// (leaky relu's slope), "activation=NAME" (a smooth one: sigmoid, silu,
// gelu_tanh, gelu_erf, hardswish, tanh, mish, softplus, hardsigmoid) (the
// bias's pointer in the header at 112) and PARTS, for a parallel kernel, its
// parts of C as "m_begin:m_end:n_begin:n_end" each, comma-separated: one call
// a part, each with a workspace of its own. K may be 0. A convolution kernel
// (input, filter, output, workspace) runs with
//
//   qimeng-cross-runner CODE ENTRY conv LAYOUT N H W C F KH KW SH SW DH DW
//                       S0 S1 S2 PIXEL WORKSPACE OVERWRITE SEED RUNS
//                       DISTRIBUTIONS EPILOGUE
//
// LAYOUT nhwc_hwcf, nhwc_fhwc or nchw_fchw, S0 S1 S2 the input's strides
// in elements (nhwc: image, row, pixel, channels unit; nchw: image,
// channel, row, pixels unit), the gaps NaN so that a kernel reading them
// fails; the filter dense; the output dense but, for nhwc, its pixels
// PIXEL elements apart (F: dense; more: a channel slice of a wider
// output, whose other channels must keep their values); EPILOGUE's bias
// ("bias") is one per
// output channel; PARTS as for a GEMM, of the GEMM view (nhwc: output
// pixels x filters; nchw: filters x an image's pixels). Exit 0 when a verdict
// was printed (passed or not), 2 for bad arguments or I/O.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Kernel/Activation.h"
#include "qimeng/Runtime/ValidationNumerics.h"
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <vector>

using namespace qimeng;
using namespace qimeng::validation;

#ifdef QIMENG_CROSS_OPENBLAS
// Debian's arm64 OpenBLAS, linked statically where installed
// (libopenblas-pthread-dev:arm64): a second opinion on the fp64 reference.
extern "C" {
void cblas_sgemm(int order, int transA, int transB, int m, int n, int k,
                 float alpha, const float *a, int lda, const float *b, int ldb,
                 float beta, float *c, int ldc);
void openblas_set_num_threads(int threads);
}
#endif

namespace {

/// The largest relative error of OpenBLAS's result against the fp64
/// reference over the GEMM runs; negative without OpenBLAS.
double openBlasMaxRel = -1;

using KernelFn = void (*)(const float *, const float *, float *, void *);

constexpr int64_t kGuard = 64;

/// `size` floats with kGuard sentinel floats on each side, all sentinel.
struct Guarded {
  std::vector<float> region;
  explicit Guarded(int64_t size) : region(size_t(size + 2 * kGuard)) {
    for (float &f : region)
      std::memcpy(&f, &kGuardSentinelBits, sizeof(f));
  }
  float *data() { return region.data() + kGuard; }
  int64_t size() const { return int64_t(region.size()) - 2 * kGuard; }
};

/// The epilogue a kernel applies where it stores C (EPILOGUE): "none", or a
/// comma list of "bias=columns" or "bias=rows" (a GEMM's), "bias" (a
/// convolution's: one per output channel), "relu", "relu_min=X",
/// "relu_max=X", "relu_nan_to_floor", "leaky_relu=X" (Activation). The
/// bias pointer goes into the workspace header at 112 (kBiasOffset).
struct Epilogue {
  enum Bias { None, Columns, Rows } bias = None;
  qimeng::Activation activation;
  /// The reference after the epilogue, of sum `x` and bias `b`.
  double apply(double x, double b) const { return activation.apply(x + b); }
};

struct Problem {
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, workspace = 0;
  Epilogue epilogue;
  /// The parts of C a parallel kernel computes, one call each (m_begin,
  /// m_end, n_begin, n_end); none: one call on all of C.
  std::vector<std::array<int64_t, 4>> parts;
  bool transA = false, transB = false;
  bool overwrite = false;
  uint64_t seed = 0;
  int runs = 0;
};

std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    if (static_cast<unsigned char>(ch) >= 0x20)
      out += ch;
  }
  return out;
}

[[noreturn]] void usage(const char *why) {
  std::fprintf(
      stderr,
      "qimeng-cross-runner: %s\nusage: qimeng-cross-runner CODE "
      "ENTRY M N K TRANSPOSES LDA LDB LDC WORKSPACE OVERWRITE SEED "
      "RUNS DISTRIBUTIONS EPILOGUE [PARTS]\n       qimeng-cross-runner CODE "
      "ENTRY conv LAYOUT N H W C F KH KW SH SW DH DW S0 S1 S2 PIXEL "
      "WORKSPACE OVERWRITE SEED RUNS DISTRIBUTIONS EPILOGUE [PARTS]\n",
      why);
  std::exit(2);
}

/// EPILOGUE (Epilogue); `conv`: a bias is per output channel.
Epilogue parseEpilogue(const std::string &text, bool conv);

/// PARTS: "m_begin:m_end:n_begin:n_end" for each part, comma-separated.
std::vector<std::array<int64_t, 4>> parseParts(const std::string &text);

int64_t parseInt(const char *text, const char *what) {
  char *end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (!*text || *end || v < 0)
    usage((std::string("invalid ") + what + " '" + text + "'").c_str());
  return v;
}

/// The code bytes mapped read-execute; the entry point.
KernelFn loadCode(const char *path, int64_t entry) {
  FILE *f = std::fopen(path, "rb");
  if (!f)
    usage((std::string("cannot open '") + path + "'").c_str());
  std::vector<unsigned char> bytes;
  unsigned char chunk[4096];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    bytes.insert(bytes.end(), chunk, chunk + got);
  std::fclose(f);
  if (bytes.empty() || entry >= int64_t(bytes.size()))
    usage("entry offset outside the code");
  void *page = mmap(nullptr, bytes.size(), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED)
    usage("cannot map the code");
  std::memcpy(page, bytes.data(), bytes.size());
  if (mprotect(page, bytes.size(), PROT_READ | PROT_EXEC) != 0)
    usage("cannot make the code executable");
  char *begin = static_cast<char *>(page);
  __builtin___clear_cache(begin, begin + bytes.size());
  KernelFn fn;
  void *at = begin + entry;
  std::memcpy(&fn, &at, sizeof(fn));
  return fn;
}

/// A 64-byte aligned workspace whose header holds the part of C at 24
/// (rows 0 .. M, columns 0 .. N: what a run-time-M kernel reads), K at 56
/// (a run-time-K kernel's) and lda, ldb, ldc at 64 (docs/KernelContract.md;
/// zero for a convolution, whose kernel writes them); the rest zero.
struct Workspace {
  std::vector<unsigned char> storage;
  unsigned char *base;
  explicit Workspace(int64_t bytes) : Workspace(bytes, Problem{}) {}
  Workspace(const Workspace &) = delete; // `base` points into `storage`
  Workspace(int64_t bytes, const Problem &p)
      : storage(size_t(std::max<int64_t>(bytes, 128) + 64), 0) {
    uintptr_t addr = reinterpret_cast<uintptr_t>(storage.data());
    base = storage.data() + ((64 - addr % 64) % 64);
    int64_t range[4] = {0, p.m, 0, p.n}, lds[3] = {p.lda, p.ldb, p.ldc};
    std::memcpy(base + 24, range, sizeof(range));
    std::memcpy(base + 56, &p.k, sizeof(p.k));
    std::memcpy(base + 64, lds, sizeof(lds));
  }
};

/// Calls `kernel` on `ws` (its header's range all of C), or once per part
/// of `parts`, each in a workspace of its own with `ws`'s header (leading
/// dimensions, K, the bias pointer) and the part's range, as the threads
/// of a caller run them.
void callKernel(KernelFn kernel, const float *a, const float *b, float *c,
                Workspace &ws, int64_t workspaceBytes,
                const std::vector<std::array<int64_t, 4>> &parts) {
  if (parts.empty())
    kernel(a, b, c, ws.base);
  for (const std::array<int64_t, 4> &part : parts) {
    Workspace slice(workspaceBytes);
    std::memcpy(slice.base, ws.base, 128);
    std::memcpy(slice.base + 24, part.data(), sizeof(part));
    kernel(a, b, c, slice.base);
  }
}

/// The first float of `g` (offset from data(), guards included) whose bits
/// differ from `pristine`, or INT64_MIN.
int64_t firstChanged(Guarded &g, const std::vector<float> &pristine) {
  for (size_t i = 0; i < pristine.size(); ++i)
    if (bitsOf(g.region[i]) != bitsOf(pristine[i]))
      return int64_t(i) - kGuard;
  return INT64_MIN;
}

std::vector<std::array<int64_t, 4>> parseParts(const std::string &text) {
  std::vector<std::array<int64_t, 4>> parts;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos)
      end = text.size();
    std::array<int64_t, 4> part{};
    size_t from = at;
    for (int i = 0; i < 4; ++i) {
      size_t stop = i < 3 ? text.find(':', from) : end;
      if (stop == std::string::npos || stop > end)
        usage("PARTS must be m_begin:m_end:n_begin:n_end, comma-separated");
      part[i] = parseInt(text.substr(from, stop - from).c_str(), "part");
      from = stop + 1;
    }
    parts.push_back(part);
    at = end + 1;
  }
  return parts;
}

Epilogue parseEpilogue(const std::string &text, bool conv) {
  Epilogue e;
  if (text == "none")
    return e;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    const std::string item = text.substr(start, end - start);
    if (item == "relu")
      e.activation.relu = true;
    else if (item == "relu_nan_to_floor")
      e.activation.nanToFloor = true;
    else if (auto smooth = item.compare(0, 11, "activation=") == 0
                               ? Activation::smoothNamed(item.substr(11))
                               : std::nullopt)
      e.activation.smooth = *smooth;
    else if (conv && item == "bias")
      e.bias = Epilogue::Columns; // per output channel
    else if (!conv && item == "bias=columns")
      e.bias = Epilogue::Columns;
    else if (!conv && item == "bias=rows")
      e.bias = Epilogue::Rows;
    else if (const size_t equals = item.find('=');
             equals != std::string::npos &&
             (item.compare(0, equals, "relu_min") == 0 ||
              item.compare(0, equals, "relu_max") == 0 ||
              item.compare(0, equals, "leaky_relu") == 0)) {
      const std::string name = item.substr(0, equals);
      char *tail = nullptr;
      const char *value = item.c_str() + equals + 1;
      const float number = std::strtof(value, &tail);
      if (!*value || *tail || !std::isfinite(number))
        usage(("invalid " + name + " in EPILOGUE '" + text + "'").c_str());
      (name == "relu_min"   ? e.activation.floor
       : name == "relu_max" ? e.activation.bound
                            : e.activation.leakySlope) = number;
    } else
      usage(("invalid EPILOGUE '" + text + "'").c_str());
    start = end + 1;
  }
  return e;
}

/// The epilogue's bias, values from `gen` after the operands', its
/// pointer in the header.
std::vector<float> biasFor(Workspace &ws, int64_t count, InputGenerator &gen) {
  std::vector<float> bias(static_cast<size_t>(count));
  for (float &v : bias)
    v = gen.next();
  const float *at = bias.data();
  std::memcpy(ws.base + 112, &at, sizeof(at));
  return bias;
}

/// The GEMM's bias entries: one a column or a row of C, or none.
int64_t biasCount(const Problem &p) {
  return p.epilogue.bias == Epilogue::Columns ? p.n
         : p.epilogue.bias == Epilogue::Rows  ? p.m
                                              : 0;
}

/// Rows of A and B as stored: A is K x M when transposed, B N x K.
int64_t aRows(const Problem &p) { return p.transA ? p.k : p.m; }
int64_t bRows(const Problem &p) { return p.transB ? p.n : p.k; }

/// Index of A(i, l) and B(l, j) in their storage.
int64_t aAt(const Problem &p, int64_t i, int64_t l) {
  return p.transA ? l * p.lda + i : i * p.lda + l;
}
int64_t bAt(const Problem &p, int64_t l, int64_t j) {
  return p.transB ? j * p.ldb + l : l * p.ldb + j;
}

/// Runs one distribution; the failure, or "" when it passes.
std::string runOne(KernelFn kernel, const Problem &p, Distribution dist,
                   double &maxRel) {
  Guarded a(aRows(p) * p.lda), b(bRows(p) * p.ldb), c(p.m * p.ldc);
  InputGenerator gen(dist, p.seed);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t l = 0; l < p.k; ++l)
      a.data()[aAt(p, i, l)] = gen.next();
  for (int64_t l = 0; l < p.k; ++l)
    for (int64_t j = 0; j < p.n; ++j)
      b.data()[bAt(p, l, j)] = gen.next();
  if (!p.overwrite)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j)
        c.data()[i * p.ldc + j] = gen.next();
  // A(m - 1, 0) NaN: the last row's results are the activation's of a NaN
  // (poisonsWithNan).
  if (p.m > 0 && p.k > 0 && poisonsWithNan(dist, p.epilogue.activation.any()))
    a.data()[aAt(p, p.m - 1, 0)] = NAN;
  const std::vector<float> a0 = a.region, b0 = b.region, c0 = c.region;
  Workspace ws(p.workspace, p);
  const Epilogue &e = p.epilogue;
  const std::vector<float> bias = biasFor(ws, biasCount(p), gen);
  callKernel(kernel, a.data(), b.data(), c.data(), ws, p.workspace, p.parts);

  const std::string name = distributionCName(dist);
  if (int64_t at = firstChanged(a, a0); at != INT64_MIN)
    return name + ": A changed at element " + std::to_string(at);
  if (int64_t at = firstChanged(b, b0); at != INT64_MIN)
    return name + ": B changed at element " + std::to_string(at);
  const double bound = gemmErrorBound(p.k);
  const bool exact = comparedBitForBit(dist, p.k, e.activation);
  for (int64_t i = -kGuard; i < p.m * p.ldc + kGuard; ++i) {
    bool inside = i >= 0 && i < p.m * p.ldc && i % p.ldc < p.n;
    if (!inside && !isSentinel(&c.data()[i]))
      return name +
             ": C's guard or leading-dimension gap overwritten at "
             "element " +
             std::to_string(i);
  }
  // The fp64 reference a row at a time, B read along its rows (the
  // emulator pays for every cache miss of a column walk): B as K x N and a
  // row of A gathered first, whatever their storage.
  std::vector<float> bRowMajor(size_t(p.k * p.n)), aRow(size_t(p.k));
  for (int64_t l = 0; l < p.k; ++l)
    for (int64_t j = 0; j < p.n; ++j)
      bRowMajor[size_t(l * p.n + j)] = b.data()[bAt(p, l, j)];
#ifdef QIMENG_CROSS_OPENBLAS
  // OpenBLAS on the same operands (beta 0 for an overwriting kernel: C's
  // NaN sentinel is not read), checked against the same reference.
  std::vector<float> ob(c0.begin() + kGuard, c0.begin() + kGuard + p.m * p.ldc);
  openblas_set_num_threads(1);
  cblas_sgemm(101, p.transA ? 112 : 111, p.transB ? 112 : 111, int(p.m),
              int(p.n), int(p.k), 1.0f, a.data(), int(p.lda), b.data(),
              int(p.ldb), p.overwrite ? 0.0f : 1.0f, ob.data(), int(p.ldc));
  openBlasMaxRel = std::max(openBlasMaxRel, 0.0);
#endif
  std::vector<double> ref(size_t(p.n)), mag(size_t(p.n));
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      ref[j] = p.overwrite ? 0 : double(c0[size_t(kGuard + i * p.ldc + j)]);
      mag[j] = std::fabs(ref[j]);
    }
    for (int64_t l = 0; l < p.k; ++l)
      aRow[size_t(l)] = a.data()[aAt(p, i, l)];
    for (int64_t l = 0; l < p.k; ++l) {
      const double av = aRow[size_t(l)];
      const float *brow = bRowMajor.data() + l * p.n;
      for (int64_t j = 0; j < p.n; ++j) {
        double t = av * double(brow[j]);
        ref[j] += t;
        mag[j] += std::fabs(t);
      }
    }
    for (int64_t j = 0; j < p.n; ++j) {
      const double bv = e.bias == Epilogue::Columns ? bias[size_t(j)]
                        : e.bias == Epilogue::Rows  ? bias[size_t(i)]
                                                    : 0.0;
      const double sum = ref[j] + bv; // the activation's input
      ref[j] = e.apply(ref[j], bv);
      mag[j] = activatedMagnitude(e.activation, mag[j] + std::fabs(bv), sum,
                                  ref[j], bound);
#ifdef QIMENG_CROSS_OPENBLAS
      const double theirs = e.apply(ob[size_t(i * p.ldc + j)], bv);
      openBlasMaxRel =
          std::max(openBlasMaxRel, relativeError(theirs, ref[j], mag[j]));
      if (std::string why =
              elementFailure(float(theirs), ref[j], mag[j], exact, bound);
          !why.empty())
        return name + ": OpenBLAS's C(" + std::to_string(i) + "," +
               std::to_string(j) + ") = " + num(theirs) +
               " disagrees with the fp64 reference " + num(ref[j]) + why +
               " (the oracles differ, not the kernel)";
#endif
      float got = c.data()[i * p.ldc + j];
      maxRel = std::max(maxRel, relativeError(got, ref[j], mag[j]));
      std::string why = elementFailure(got, ref[j], mag[j], exact, bound);
      if (!why.empty())
        return name + ": C(" + std::to_string(i) + "," + std::to_string(j) +
               ") = " + num(got) + ", expected " + num(ref[j]) + why;
    }
  }
  return "";
}

/// A convolution (docs/CrossTargets.md) in one of linalg's layouts.
struct ConvProblem {
  enum Layout { NhwcHwcf, NhwcFhwc, NchwFchw } layout = NhwcHwcf;
  int64_t n, h, w, c, f, kh, kw, sh, sw, dh, dw, s[3], workspace;
  int64_t pixel;     ///< nhwc: elements from one output pixel to the next
  Epilogue epilogue; ///< a bias per output channel
  bool overwrite;
  uint64_t seed;
  int runs;
  /// A parallel kernel's parts of its GEMM view (writeRange).
  std::vector<std::array<int64_t, 4>> parts;
  bool nhwc() const { return layout != NchwFchw; }
  int64_t oh() const { return (h - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w - dw * (kw - 1) - 1) / sw + 1; }
  /// All of the convolution's GEMM view as the range at 24, which its
  /// parallel form reads: output pixels x filters (nhwc), filters x an
  /// image's pixels (nchw).
  void writeRange(Workspace &ws) const {
    int64_t range[4] = {0, nhwc() ? n * oh() * ow() : f, 0,
                        nhwc() ? f : oh() * ow()};
    std::memcpy(ws.base + 24, range, sizeof(range));
  }
  int64_t inputSpan() const {
    return nhwc() ? (n - 1) * s[0] + (h - 1) * s[1] + (w - 1) * s[2] + c
                  : (n - 1) * s[0] + (c - 1) * s[1] + (h - 1) * s[2] + w;
  }
  int64_t taps() const { return kh * kw; }
  /// Index of input element (image, row, column, channel) as stored.
  int64_t inputAt(int64_t b, int64_t y, int64_t x, int64_t ch) const {
    return nhwc() ? b * s[0] + y * s[1] + x * s[2] + ch
                  : b * s[0] + ch * s[1] + y * s[2] + x;
  }
  /// Index of filter element (tap, channel, filter) as stored.
  int64_t filterAt(int64_t tap, int64_t ch, int64_t fi) const {
    switch (layout) {
    case NhwcHwcf:
      return (tap * c + ch) * f + fi;
    case NhwcFhwc:
      return (fi * taps() + tap) * c + ch;
    case NchwFchw:
      break;
    }
    return (fi * c + ch) * taps() + tap;
  }
  /// Index of output element (image, row, column, filter).
  int64_t outputAt(int64_t b, int64_t y, int64_t x, int64_t fi) const {
    return nhwc() ? ((b * oh() + y) * ow() + x) * pixel + fi
                  : ((b * f + fi) * oh() + y) * ow() + x;
  }
  int64_t outputSpan() const {
    return nhwc() ? (n * oh() * ow() - 1) * pixel + f : n * f * oh() * ow();
  }
  /// Whether output index i lies between two pixels' channels.
  bool outputGap(int64_t i) const { return nhwc() && i % pixel >= f; }
};

/// Runs one distribution of a convolution; the failure, or "".
std::string runConvOne(KernelFn kernel, const ConvProblem &p, Distribution dist,
                       double &maxRel) {
  const int64_t oh = p.oh(), ow = p.ow(), k = p.taps() * p.c;
  const int64_t outSize = p.outputSpan();
  Guarded in(p.inputSpan()), flt(p.taps() * p.c * p.f), out(outSize);
  InputGenerator gen(dist, p.seed);
  // The input's elements get values; the gaps between them stay NaN.
  for (int64_t b = 0; b < p.n; ++b)
    for (int64_t y = 0; y < p.h; ++y)
      for (int64_t x = 0; x < p.w; ++x)
        for (int64_t ch = 0; ch < p.c; ++ch)
          in.data()[p.inputAt(b, y, x, ch)] = gen.next();
  for (int64_t i = 0; i < flt.size(); ++i)
    flt.data()[i] = gen.next();
  // The input's first element NaN: the first pixel's results are the
  // activation's of a NaN (poisonsWithNan).
  if (poisonsWithNan(dist, p.epilogue.activation.any()))
    in.data()[p.inputAt(0, 0, 0, 0)] = NAN;
  // The output's values (all of it: its gaps too, which must stay).
  for (int64_t i = 0; i < outSize; ++i)
    if (!p.overwrite || p.outputGap(i))
      out.data()[i] = gen.next();
  const std::vector<float> in0 = in.region, flt0 = flt.region,
                           out0 = out.region;
  Workspace ws(p.workspace);
  p.writeRange(ws);
  const std::vector<float> bias =
      biasFor(ws, p.epilogue.bias == Epilogue::None ? 0 : p.f, gen);
  callKernel(kernel, in.data(), flt.data(), out.data(), ws, p.workspace,
             p.parts);

  const std::string name = distributionCName(dist);
  if (int64_t at = firstChanged(in, in0); at != INT64_MIN)
    return name + ": the input changed at element " + std::to_string(at);
  if (int64_t at = firstChanged(flt, flt0); at != INT64_MIN)
    return name + ": the filter changed at element " + std::to_string(at);
  for (int64_t i = -kGuard; i < outSize + kGuard; ++i)
    if ((i < 0 || i >= outSize) && !isSentinel(&out.data()[i]))
      return name + ": the output's guard overwritten at element " +
             std::to_string(i);
  for (int64_t i = 0; i < outSize; ++i)
    if (p.outputGap(i) &&
        std::memcmp(&out.data()[i], &out0[size_t(kGuard + i)], 4) != 0)
      return name + ": the output's element " + std::to_string(i) +
             ", between pixels " + std::to_string(p.pixel) +
             " channels apart, was written";
  const double bound = gemmErrorBound(k);
  const bool exact = comparedBitForBit(dist, k, p.epilogue.activation);
  // The filter as (tap, channel) rows of F, then each output pixel's F
  // sums a row of the filter at a time.
  std::vector<float> rows(size_t(k * p.f));
  for (int64_t tap = 0; tap < p.taps(); ++tap)
    for (int64_t ch = 0; ch < p.c; ++ch)
      for (int64_t fi = 0; fi < p.f; ++fi)
        rows[size_t((tap * p.c + ch) * p.f + fi)] =
            flt.data()[p.filterAt(tap, ch, fi)];
  std::vector<double> ref(size_t(p.f)), mag(size_t(p.f));
  for (int64_t b = 0; b < p.n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x) {
        for (int64_t fi = 0; fi < p.f; ++fi) {
          ref[fi] =
              p.overwrite
                  ? 0
                  : double(out0[size_t(kGuard + p.outputAt(b, y, x, fi))]);
          mag[fi] = std::fabs(ref[fi]);
        }
        for (int64_t i = 0; i < p.kh; ++i)
          for (int64_t j = 0; j < p.kw; ++j)
            for (int64_t ch = 0; ch < p.c; ++ch) {
              const double v = in.data()[p.inputAt(b, y * p.sh + i * p.dh,
                                                   x * p.sw + j * p.dw, ch)];
              const float *row =
                  rows.data() + ((i * p.kw + j) * p.c + ch) * p.f;
              for (int64_t fi = 0; fi < p.f; ++fi) {
                const double t = v * double(row[fi]);
                ref[fi] += t;
                mag[fi] += std::fabs(t);
              }
            }
        for (int64_t fi = 0; fi < p.f; ++fi) {
          const double bv = bias.empty() ? 0.0 : bias[size_t(fi)];
          const double sum = ref[fi] + bv; // the activation's input
          ref[fi] = p.epilogue.apply(ref[fi], bv);
          mag[fi] =
              activatedMagnitude(p.epilogue.activation, mag[fi] + std::fabs(bv),
                                 sum, ref[fi], bound);
          const float got = out.data()[p.outputAt(b, y, x, fi)];
          maxRel = std::max(maxRel, relativeError(got, ref[fi], mag[fi]));
          std::string why = elementFailure(got, ref[fi], mag[fi], exact, bound);
          if (!why.empty())
            return name + ": output(" + std::to_string(b) + "," +
                   std::to_string(y) + "," + std::to_string(x) + "," +
                   std::to_string(fi) + ") = " + num(got) + ", expected " +
                   num(ref[fi]) + why;
        }
      }
  return "";
}

/// The median time of `runs` calls on uniform inputs of `in0` and `in1`
/// floats, an output of `out` zeros, `ws` and a bias of `biasEntries` (0
/// without runs).
double medianNs(KernelFn kernel, int runs, uint64_t seed, int64_t in0,
                int64_t in1, int64_t out, Workspace &ws, int64_t biasEntries) {
  if (runs <= 0)
    return 0;
  Guarded a(in0), b(in1), c(out);
  InputGenerator gen(Distribution::Uniform, seed);
  for (Guarded *g : {&a, &b})
    for (int64_t i = 0; i < g->size(); ++i)
      g->data()[i] = gen.next();
  const std::vector<float> bias = biasFor(ws, biasEntries, gen);
  for (int64_t i = 0; i < c.size(); ++i)
    c.data()[i] = 0;
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    kernel(a.data(), b.data(), c.data(), ws.base);
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

/// The distributions DISTRIBUTIONS names.
std::vector<Distribution> distributions(const char *which) {
  if (std::strcmp(which, "all") == 0)
    return {Distribution::SmallIntegers, Distribution::Uniform,
            Distribution::Mixed};
  if (std::strcmp(which, "small-integers") != 0)
    usage("DISTRIBUTIONS must be all or small-integers");
  return {Distribution::SmallIntegers};
}

/// Runs `check(dist, maxRel)` for each distribution DISTRIBUTIONS names
/// until one fails, then `time()` when all passed, and prints the verdict.
template <typename Check, typename Time>
int report(const char *distributionsArg, Check check, Time time) {
  double maxRel = 0;
  std::string failure;
  for (Distribution dist : distributions(distributionsArg)) {
    failure = check(dist, maxRel);
    if (!failure.empty())
      break;
  }
  const double ns = failure.empty() ? time() : 0;
  // JSON has no infinity: an unbounded error (a NaN or infinite element
  // where a number was due) is null.
  char rel[32] = "null";
  if (std::isfinite(maxRel))
    std::snprintf(rel, sizeof(rel), "%.9g", maxRel);
  std::printf("{\"passed\":%s,\"failure\":\"%s\",\"max_rel_error\":%s,"
              "\"median_ns\":%.1f",
              failure.empty() ? "true" : "false", jsonEscape(failure).c_str(),
              rel, ns);
  if (openBlasMaxRel >= 0)
    std::printf(",\"openblas_max_rel_error\":%.9g", openBlasMaxRel);
  std::printf("}\n");
  return 0;
}

int convMain(int argc, char **argv) {
  if (argc != 26 && argc != 27)
    usage("a convolution takes 25 arguments (26 with PARTS)");
  ConvProblem p;
  int64_t entry = parseInt(argv[2], "entry");
  const std::string layout = argv[4];
  if (layout == "nhwc_hwcf")
    p.layout = ConvProblem::NhwcHwcf;
  else if (layout == "nhwc_fhwc")
    p.layout = ConvProblem::NhwcFhwc;
  else if (layout == "nchw_fchw")
    p.layout = ConvProblem::NchwFchw;
  else
    usage("LAYOUT must be nhwc_hwcf, nhwc_fhwc or nchw_fchw");
  int64_t *fields[] = {&p.n,    &p.h,    &p.w,     &p.c,        &p.f,  &p.kh,
                       &p.kw,   &p.sh,   &p.sw,    &p.dh,       &p.dw, &p.s[0],
                       &p.s[1], &p.s[2], &p.pixel, &p.workspace};
  const char *names[] = {"n",  "h",  "w",     "c",        "f",  "kh",
                         "kw", "sh", "sw",    "dh",       "dw", "s0",
                         "s1", "s2", "pixel", "workspace"};
  for (int i = 0; i < 16; ++i)
    *fields[i] = parseInt(argv[5 + i], names[i]);
  p.overwrite = parseInt(argv[21], "overwrite") != 0;
  p.seed = uint64_t(parseInt(argv[22], "seed"));
  p.runs = int(parseInt(argv[23], "runs"));
  p.epilogue = parseEpilogue(argv[25], /*conv=*/true);
  if (argc == 27)
    p.parts = parseParts(argv[26]);
  if (p.n < 1 || p.c < 1 || p.f < 1 || p.kh < 1 || p.kw < 1 || p.sh < 1 ||
      p.sw < 1 || p.dh < 1 || p.dw < 1 || p.h < p.dh * (p.kh - 1) + 1 ||
      p.w < p.dw * (p.kw - 1) + 1 ||
      (p.nhwc()
           ? p.s[2] < p.c || p.s[1] < p.w * p.s[2] || p.s[0] < p.h * p.s[1]
           : p.s[2] < p.w || p.s[1] < p.h * p.s[2] || p.s[0] < p.c * p.s[1]) ||
      p.pixel < p.f || (!p.nhwc() && p.pixel != p.f))
    usage("sizes must be positive, the filter within the input and the "
          "strides apart (an nchw output's PIXEL is F)");
  KernelFn kernel = loadCode(argv[1], entry);
  return report(
      argv[24],
      [&](Distribution dist, double &maxRel) {
        return runConvOne(kernel, p, dist, maxRel);
      },
      [&] {
        Workspace ws(p.workspace);
        p.writeRange(ws);
        return medianNs(kernel, p.runs, p.seed, p.inputSpan(),
                        p.taps() * p.c * p.f, p.outputSpan(), ws,
                        p.epilogue.bias == Epilogue::None ? 0 : p.f);
      });
}

int main(int argc, char **argv) {
  if (argc > 3 && std::strcmp(argv[3], "conv") == 0)
    return convMain(argc, argv);
  if (argc != 16 && argc != 17)
    usage("expected 15 arguments (16 with PARTS)");
  Problem p;
  int64_t entry = parseInt(argv[2], "entry");
  p.m = parseInt(argv[3], "m");
  p.n = parseInt(argv[4], "n");
  p.k = parseInt(argv[5], "k");
  const std::string transposes = argv[6];
  if (transposes.size() != 2 ||
      transposes.find_first_not_of("nt") != std::string::npos)
    usage("TRANSPOSES must be nn, nt, tn or tt");
  p.transA = transposes[0] == 't';
  p.transB = transposes[1] == 't';
  p.lda = parseInt(argv[7], "lda");
  p.ldb = parseInt(argv[8], "ldb");
  p.ldc = parseInt(argv[9], "ldc");
  p.workspace = parseInt(argv[10], "workspace");
  p.overwrite = parseInt(argv[11], "overwrite") != 0;
  p.seed = uint64_t(parseInt(argv[12], "seed"));
  p.runs = int(parseInt(argv[13], "runs"));
  p.epilogue = parseEpilogue(argv[15], /*conv=*/false);
  if (argc == 17)
    p.parts = parseParts(argv[16]);
  // K may be 0 (a run-time K's empty call: C = its init, the epilogue
  // applied); the leading dimensions stay at least 1.
  if (p.m < 1 || p.n < 1 || p.k < 0 ||
      p.lda < std::max<int64_t>(1, p.transA ? p.m : p.k) ||
      p.ldb < std::max<int64_t>(1, p.transB ? p.k : p.n) || p.ldc < p.n)
    usage("M and N must be positive, K at least 0, and each leading "
          "dimension at least its rows' length (and 1)");
  KernelFn kernel = loadCode(argv[1], entry);
  return report(
      argv[14],
      [&](Distribution dist, double &maxRel) {
        return runOne(kernel, p, dist, maxRel);
      },
      [&] {
        Workspace ws(p.workspace, p);
        return medianNs(kernel, p.runs, p.seed, aRows(p) * p.lda,
                        bRows(p) * p.ldb, p.m * p.ldc, ws, biasCount(p));
      });
}
