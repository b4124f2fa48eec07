//===- GemmValidator.cpp - Nothing generated is trusted -------------------===//
//
// For each input distribution: fill guarded, 64-byte aligned operands (NaN
// sentinels in the guards and leading-dimension gaps), run the kernel once,
// then check, in order, that C's guards and gaps are untouched, that A and B
// are unchanged bit for bit (and the workspace's guards intact), and that every
// C(i,j) is within the error bound of an fp64 reference (bit for bit where the
// inputs make every partial sum exact). Optionally cross-checks against
// OpenBLAS cblas_sgemm.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Runtime/GemmValidator.h"
#include "ValidationSupport.h"
#include "qimeng/Kernel/WorkspaceHeader.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <sys/mman.h>
#include <tuple>
#include <unistd.h>

using namespace qimeng;
using namespace qimeng::validation;

//===----------------------------------------------------------------------===//
// GuardedBuffer
//===----------------------------------------------------------------------===//

namespace {
/// 64 bytes in floats.
constexpr int64_t kAlignFloats = 16;
/// Keeps every size computation below far from int64_t and size_t overflow.
constexpr int64_t kMaxBufferFloats = int64_t(1) << 40;

int64_t roundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/// A buffer's sizes, checked before either allocation computes with them.
llvm::Error checkBufferSizes(int64_t size, int64_t guard) {
  if (size < 0 || guard < 0)
    return llvm::createStringError(
        llvm::formatv("invalid buffer of {0} floats with {1} guard floats",
                      size, guard)
            .str());
  if (size > kMaxBufferFloats || guard > kMaxBufferFloats)
    return llvm::createStringError(
        llvm::formatv("buffer of {0} floats with {1} guard floats is too large",
                      size, guard)
            .str());
  return llvm::Error::success();
}

} // namespace

llvm::Expected<GuardedBuffer> GuardedBuffer::allocate(int64_t size,
                                                      int64_t guard) {
  if (llvm::Error err = checkBufferSizes(size, guard))
    return std::move(err);
  // The guard before sits at the end of an aligned prefix so that data() is
  // aligned; the total is a multiple of the alignment as aligned_alloc needs.
  int64_t prefix = roundUp(guard, kAlignFloats);
  int64_t total =
      roundUp(std::max<int64_t>(prefix + size + guard, 1), kAlignFloats);
  size_t bytes = size_t(total) * sizeof(float);
  void *raw = std::aligned_alloc(64, bytes);
  if (!raw)
    return llvm::createStringError(
        llvm::formatv("cannot allocate {0} bytes", bytes).str());
  GuardedBuffer buf;
  buf.storage.reset(static_cast<float *>(raw));
  buf.dataPtr = buf.storage.get() + prefix;
  buf.numElements = size;
  buf.numGuard = guard;
  buf.numGuardAfter = guard;
  return std::move(buf);
}

void GuardedBuffer::Release::operator()(float *p) const {
  if (mappedBytes)
    munmap(p, mappedBytes);
  else
    std::free(p);
}

llvm::Expected<GuardedBuffer>
GuardedBuffer::allocateBeforeUnmapped(int64_t size, int64_t guard) {
  if (llvm::Error err = checkBufferSizes(size, guard))
    return std::move(err);
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t used = size_t(guard + size) * sizeof(float);
  const size_t readable = (used + page - 1) / page * page;
  const size_t mapped = readable + page;
  void *raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return llvm::createStringError(
        llvm::formatv("cannot map {0} bytes", mapped).str());
  auto *base = static_cast<char *>(raw);
  if (mprotect(base + readable, page, PROT_NONE) != 0) {
    munmap(raw, mapped);
    return llvm::createStringError("cannot protect the page after a buffer");
  }
  GuardedBuffer buf;
  buf.storage = std::unique_ptr<float, Release>(static_cast<float *>(raw),
                                                Release(mapped));
  buf.dataPtr = reinterpret_cast<float *>(base + readable) - size;
  buf.numElements = size;
  buf.numGuard = guard;
  buf.numGuardAfter = 0;
  return std::move(buf);
}

void GuardedBuffer::fillSentinel() {
  float sentinel;
  std::memcpy(&sentinel, &kGuardSentinelBits, sizeof(sentinel));
  std::fill_n(regionBegin(), regionSize(), sentinel);
}

std::optional<int64_t> GuardedBuffer::firstDamagedGuard() const {
  for (int64_t off = -1; off >= -numGuard; --off)
    if (!isSentinel(dataPtr + off))
      return off;
  for (int64_t off = numElements; off < numElements + numGuardAfter; ++off)
    if (!isSentinel(dataPtr + off))
      return off;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

llvm::StringRef qimeng::distributionName(Distribution dist) {
  return distributionCName(dist);
}

namespace {

/// An operand as stored: `rows` rows of `cols` elements, `ld` apart.
struct StoredLayout {
  int64_t rows, cols, ld;
};

/// Sentinel over the whole region, then the real elements from `gen`.
void fillOperand(GuardedBuffer &buf, StoredLayout l, InputGenerator &gen) {
  buf.fillSentinel();
  for (int64_t r = 0; r < l.rows; ++r)
    for (int64_t c = 0; c < l.cols; ++c)
      buf.data()[r * l.ld + c] = gen.next();
}

/// Describes where offset `off` from data() lies in an operand.
std::string describeOffset(llvm::StringRef name, const GuardedBuffer &buf,
                           StoredLayout l, int64_t off) {
  if (auto guard = guardDamage(name, buf, off))
    return *guard;
  int64_t r = off / l.ld, c = off % l.ld;
  if (c >= l.cols)
    return llvm::formatv("{0} gap (row {1}, column {2}) overwritten", name, r,
                         c)
        .str();
  return llvm::formatv("{0} changed at ({1},{2})", name, r, c).str();
}

/// A copy of the operand in `floats` in `Element`s of `narrow(float)`
/// (bf16 bits, bytes): the same rows and leading dimension in those
/// elements, the sentinel in its guards and gaps, its end against a page
/// with no access (allocateBeforeUnmapped). What a bf16 or 8-bit kernel
/// reads.
template <typename Element, typename Narrow>
llvm::Expected<GuardedBuffer> narrowOperand(const GuardedBuffer &floats,
                                            StoredLayout l, int64_t guard,
                                            Narrow narrow) {
  const int64_t span = l.rows > 0 ? (l.rows - 1) * l.ld + l.cols : 0;
  return narrowCopy<Element>(floats, span, guard, std::nullopt, narrow,
                             [&](auto f) {
                               for (int64_t r = 0; r < l.rows; ++r)
                                 for (int64_t c = 0; c < l.cols; ++c)
                                   f(r * l.ld + c);
                             });
}

/// The generated values of an 8-bit operand, in place (int8Value).
void toInt8Values(GuardedBuffer &buf, StoredLayout l, Distribution dist,
                  bool isUnsigned) {
  for (int64_t r = 0; r < l.rows; ++r)
    for (int64_t c = 0; c < l.cols; ++c) {
      float &x = buf.data()[r * l.ld + c];
      x = int8Value(x, dist, isUnsigned);
    }
}

/// Rounds the operand's elements to bf16 or f16 (`round`) in place.
void roundOperand(GuardedBuffer &buf, StoredLayout l, float (*round)(float)) {
  for (int64_t r = 0; r < l.rows; ++r)
    for (int64_t c = 0; c < l.cols; ++c)
      buf.data()[r * l.ld + c] = round(buf.data()[r * l.ld + c]);
}

/// describeOffset for an operand of `perFloat` elements to a float (bf16:
/// 2, bytes: 4): `off` counts floats.
std::string describeNarrowOffset(llvm::StringRef name, const GuardedBuffer &buf,
                                 StoredLayout l, int64_t off,
                                 int64_t perFloat) {
  if (auto guard = guardDamage(name, buf, off))
    return *guard;
  const int64_t r = perFloat * off / l.ld, c = perFloat * off % l.ld;
  if (c >= l.cols)
    return llvm::formatv("{0} gap (row {1}, from column {2}) overwritten", name,
                         r, c)
        .str();
  return llvm::formatv("{0} changed at ({1},{2}) or one of the {3} elements "
                       "after it",
                       name, r, c, perFloat - 1)
      .str();
}

/// Check (a): C's guards and leading-dimension gaps still hold the sentinel.
std::optional<std::string> checkGuardsAndGaps(llvm::StringRef name,
                                              const GuardedBuffer &buf,
                                              StoredLayout l) {
  if (std::optional<int64_t> off = buf.firstDamagedGuard())
    return describeOffset(name, buf, l, *off);
  for (int64_t r = 0; r + 1 < l.rows; ++r)
    for (int64_t c = l.cols; c < l.ld; ++c)
      if (!isSentinel(buf.data() + r * l.ld + c))
        return describeOffset(name, buf, l, r * l.ld + c);
  return std::nullopt;
}

/// Check (b): the whole region, guards and gaps included, equals `pristine`
/// bit for bit. Element coordinates are as stored (row, column).
std::optional<std::string> checkUnchanged(llvm::StringRef name,
                                          const GuardedBuffer &buf,
                                          StoredLayout l,
                                          const std::vector<float> &pristine) {
  if (std::optional<int64_t> off = firstChanged(buf, pristine))
    return describeOffset(name, buf, l, *off);
  return std::nullopt;
}

/// Whether `rows` rows `ld` apart stay far from overflowing the spans and
/// buffer sizes computed from them.
bool spanFits(int64_t rows, int64_t ld) {
  return ld <= kMaxBufferFloats && (rows - 1) <= kMaxBufferFloats / ld;
}

/// Whether OpenBLAS can take the descriptor's sizes.
bool fitsBlas(const GemmDesc &d) {
  const int64_t maxInt = std::numeric_limits<blasint>::max();
  return d.m <= maxInt && d.n <= maxInt && d.k <= maxInt && d.lda <= maxInt &&
         d.ldb <= maxInt && d.ldc <= maxInt;
}

/// Elements of an epilogue's bias: N along the columns, M along the rows.
int64_t biasElements(const GemmDesc &d) {
  return d.bias == GemmBias::Rows ? d.m : d.n;
}

/// The bias element that C(i, j) gets, or 0 without a bias.
float biasAt(const GemmDesc &d, const float *bias, int64_t i, int64_t j) {
  switch (d.bias) {
  case GemmBias::None:
    return 0.0f;
  case GemmBias::Columns:
    return bias[j];
  case GemmBias::Rows:
    return bias[i];
  }
  return 0.0f;
}

/// The epilogue on the fp64 reference: + the bias (its magnitude added to
/// the element's), then the activation (Activation::apply; the magnitude
/// as activatedMagnitude makes it for the check's `bound`).
void applyEpilogue(const GemmDesc &d, const float *bias,
                   std::vector<double> &ref, std::vector<double> &mag,
                   double bound) {
  if (!d.hasEpilogue())
    return;
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t j = 0; j < d.n; ++j) {
      double &r = ref[size_t(i * d.n + j)];
      const double b = biasAt(d, bias, i, j);
      const double sum = r + b; // the activation's input
      r = d.activation.apply(sum);
      double &size = mag[size_t(i * d.n + j)];
      size =
          activatedMagnitude(d.activation, size + std::fabs(b), sum, r, bound);
    }
}

} // namespace

/// 16-bit bits that mark an element of D the kernel must write (a NaN in
/// bf16 and in f16).
static constexpr uint16_t kUnwrittenHalf = 0x7fc0;

llvm::Expected<GuardedBuffer>
qimeng::validation::allocateHalfOutput(const GemmDesc &d, int64_t guard) {
  auto buf = GuardedBuffer::allocate((d.dSpan() + 1) / 2, guard);
  if (!buf)
    return buf.takeError();
  buf->fillSentinel();
  auto *bits = reinterpret_cast<uint16_t *>(buf->data());
  for (int64_t i = 0; i < d.m; ++i)
    std::fill_n(bits + i * d.ldd, d.n, kUnwrittenHalf);
  return buf;
}

std::optional<std::string> qimeng::validation::checkHalfOutput(
    const GemmDesc &d, const GuardedBuffer &out,
    const std::vector<float> &pristine, const std::vector<double> &ref,
    const std::vector<double> &mag, bool exact, double bound,
    llvm::StringRef name, ValidationReport &report) {
  const bool f16 = d.precision == GemmPrecision::F16;
  const HalfFloat half = halfFloat(f16);
  const double absolute = std::ldexp(1.0, f16 ? -24 : -126);
  const auto *now = reinterpret_cast<const uint16_t *>(out.regionBegin());
  const auto *before = reinterpret_cast<const uint16_t *>(pristine.data());
  const int64_t begin = 2 * (out.data() - out.regionBegin());
  std::optional<std::string> failure;
  for (int64_t u = 0; u < 2 * out.regionSize() && !failure; ++u) {
    const int64_t off = u - begin;
    const int64_t i = off >= 0 ? off / d.ldd : -1,
                  j = off >= 0 ? off % d.ldd : -1;
    if (i < 0 || i >= d.m || j >= d.n) {
      if (now[u] != before[u])
        failure =
            llvm::formatv("{0}: D {1} ({3} element {2} from its start) "
                          "overwritten",
                          name, off < 0 || off >= d.dSpan() ? "guard" : "gap",
                          off, half.name)
                .str();
      continue;
    }
    const float got = half.valueOf(now[u]);
    const double want = ref[size_t(i * d.n + j)];
    const double size = mag[size_t(i * d.n + j)];
    // A NaN input's result (poisonsWithNan): NaN, or the floor exactly.
    if (std::isnan(want) || std::isnan(size)) {
      if (std::isnan(want) ? !std::isnan(got)
                           : now[u] != half.bitsOf(float(want)))
        failure = llvm::formatv("{0}: D({1},{2}) = {3}, expected {4} (a NaN "
                                "input's result{5})",
                                name, i, j, num(got), num(want),
                                std::isnan(want) ? "" : ": the floor, exactly")
                      .str();
      continue;
    }
    const uint16_t rounded = half.bitsOf(float(want));
    const double allowed = bound * size + absolute;
    // f16 overflows from 65520 on: an infinity of want's sign is right for
    // a want past its largest finite value (65504), and no error to record.
    const bool overflows = f16 && std::isinf(got) &&
                           std::fabs(want) >= 65504.0 &&
                           (got > 0) == (want > 0);
    if (!overflows)
      report.maxRelError =
          std::max(report.maxRelError, relativeError(got, want, size));
    if (exact ? now[u] != rounded
              : !(std::fabs(double(got) - want) <= allowed || overflows))
      failure =
          llvm::formatv(
              "{0}: D({1},{2}) = {3}, expected {4}{5}", name, i, j, num(got),
              num(want),
              exact ? llvm::formatv(" rounded to {1}, {0} (exact, "
                                    "bit for bit)",
                                    num(half.valueOf(rounded)), half.name)
                          .str()
                    : llvm::formatv(" (fp64 rounded once to {0})", half.name)
                          .str())
              .str();
  }
  return failure;
}

namespace {

/// One distribution's run. Returns the first failure, if any; updates the
/// report's error maxima.
llvm::Expected<std::optional<std::string>>
runOne(const GemmDesc &d,
       const std::function<void(const float *, const float *, float *, void *)>
           &kernel,
       size_t workspaceBytes, const ValidationOptions &options,
       Distribution dist, ValidationReport &report) {
  const llvm::StringRef name = distributionName(dist);
  const StoredLayout aLayout{d.aRows(), d.aCols(), d.lda};
  const StoredLayout bLayout{d.bRows(), d.bCols(), d.ldb};
  const StoredLayout cLayout{d.m, d.n, d.ldc};

  // A and B end against a page with no access: a kernel that reads past
  // them faults here (the runner reports the crash) rather than in a
  // caller whose buffer ends a page.
  auto aBuf =
      GuardedBuffer::allocateBeforeUnmapped(d.aSpan(), options.guardElements);
  if (!aBuf)
    return aBuf.takeError();
  auto bBuf =
      GuardedBuffer::allocateBeforeUnmapped(d.bSpan(), options.guardElements);
  if (!bBuf)
    return bBuf.takeError();
  auto cBuf = GuardedBuffer::allocate(d.cSpan(), options.guardElements);
  if (!cBuf)
    return cBuf.takeError();
  // Workspace in floats, rounded up, guarded like the operands; 0 bytes
  // still gives an aligned, non-null pointer.
  auto workspace = GuardedBuffer::allocate(
      int64_t((workspaceBytes + sizeof(float) - 1) / sizeof(float)),
      options.guardElements);
  if (!workspace)
    return workspace.takeError();
  workspace->fillSentinel();

  InputGenerator gen(dist, options.seed);
  fillOperand(*aBuf, aLayout, gen);
  fillOperand(*bBuf, bLayout, gen);
  fillOperand(*cBuf, cLayout, gen);
  // A(m - 1, 0) NaN: the last row's results are the activation's of a NaN
  // (a floating-point kernel's, bf16 and f16 too: the rounding below keeps
  // it; the last row is a row edge's where there is one).
  if (!isIntegerPrecision(d.precision) && d.m > 0 && d.k > 0 &&
      poisonsWithNan(dist, d.activation.any()))
    aBuf->data()[d.transA ? d.m - 1 : (d.m - 1) * d.lda] =
        std::numeric_limits<float>::quiet_NaN();
  // bf16 or f16 operands: A and B hold bf16 (f16) values, the kernel
  // reads their 16-bit copies, the reference and OpenBLAS the same values
  // in f32.
  const bool half = isHalfPrecision(d.precision);
  const bool f16 = d.precision == GemmPrecision::F16;
  std::optional<GuardedBuffer> aNarrow, bNarrow;
  if (half) {
    const HalfFloat type = halfFloat(f16);
    roundOperand(*aBuf, aLayout, type.roundTo);
    roundOperand(*bBuf, bLayout, type.roundTo);
    auto a = narrowOperand<uint16_t>(*aBuf, aLayout, options.guardElements,
                                     type.bitsOf);
    if (!a)
      return a.takeError();
    auto b = narrowOperand<uint16_t>(*bBuf, bLayout, options.guardElements,
                                     type.bitsOf);
    if (!b)
      return b.takeError();
    aNarrow = std::move(*a);
    bNarrow = std::move(*b);
  }
  // 8-bit operands likewise, and an s32 C: small integers, its bits in
  // C's buffer, their values in cInts for the reference.
  const bool integer = isIntegerPrecision(d.precision);
  std::vector<float> cInts;
  if (integer) {
    toInt8Values(*aBuf, aLayout, dist, d.precision == GemmPrecision::U8S8);
    toInt8Values(*bBuf, bLayout, dist, false);
    // The values are integers of the type's range: their low byte.
    auto toByte = [](float x) { return uint8_t(int32_t(x) & 0xff); };
    auto a =
        narrowOperand<uint8_t>(*aBuf, aLayout, options.guardElements, toByte);
    if (!a)
      return a.takeError();
    auto b =
        narrowOperand<uint8_t>(*bBuf, bLayout, options.guardElements, toByte);
    if (!b)
      return b.takeError();
    aNarrow = std::move(*a);
    bNarrow = std::move(*b);
    cInts.assign(size_t(d.cSpan()), 0.0f);
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        float &x = cBuf->data()[i * d.ldc + j];
        const int32_t v = int32_t(std::lround(double(x) * 1000));
        cInts[size_t(i * d.ldc + j)] = float(v);
        std::memcpy(&x, &v, sizeof(v));
      }
  }
  const bool narrow = half || integer;
  const GuardedBuffer &aRead = narrow ? *aNarrow : *aBuf;
  const GuardedBuffer &bRead = narrow ? *bNarrow : *bBuf;
  // An overwriting kernel must not read C: its elements are NaN, which
  // any read would carry into the result, and the reference starts from 0.
  std::vector<float> zeros;
  if (d.overwrite) {
    for (int64_t i = 0; i < d.m; ++i)
      std::fill_n(cBuf->data() + i * d.ldc, d.n,
                  std::numeric_limits<float>::quiet_NaN());
    zeros.assign(size_t(d.cSpan()), 0.0f);
  }
  // An epilogue's bias, from the same generator, its pointer in the
  // workspace header as the compiled module writes it.
  const StoredLayout biasLayout{1, biasElements(d), biasElements(d)};
  auto biasBuf = GuardedBuffer::allocate(d.hasEpilogue() ? biasElements(d) : 0,
                                         options.guardElements);
  if (!biasBuf)
    return biasBuf.takeError();
  if (d.hasEpilogue())
    fillOperand(*biasBuf, biasLayout, gen);
  const std::vector<float> biasPristine = copyRegion(*biasBuf);
  const std::vector<float> aPristine = copyRegion(*aBuf);
  const std::vector<float> bPristine = copyRegion(*bBuf);
  const std::vector<float> cPristine = copyRegion(*cBuf);
  // What the kernel reads, as it was: for f32 the copies above.
  std::vector<float> aNarrowPristine, bNarrowPristine;
  if (narrow) {
    aNarrowPristine = copyRegion(aRead);
    bNarrowPristine = copyRegion(bRead);
  }
  const std::vector<float> &aReadPristine =
      narrow ? aNarrowPristine : aPristine;
  const std::vector<float> &bReadPristine =
      narrow ? bNarrowPristine : bPristine;
  const int64_t guard = options.guardElements;
  const float *a0 = aPristine.data() + guard;
  const float *b0 = bPristine.data() + guard;
  const float *c0 = d.overwrite ? zeros.data()
                    : integer   ? cInts.data()
                                : cPristine.data() + guard;
  const float *bias0 = biasPristine.data() + guard;
  // A bf16 output, its pointer in the header as the module writes it.
  std::optional<GuardedBuffer> dBuf;
  std::vector<float> dPristine;
  if (d.halfOutput) {
    auto out = allocateHalfOutput(d, options.guardElements);
    if (!out)
      return out.takeError();
    dBuf = std::move(*out);
    dPristine = copyRegion(*dBuf);
    writeHalfOutput(workspace->data(), dBuf->data());
  }

  if (d.hasEpilogue())
    writeBias(workspace->data(), biasBuf->data());
  kernel(aRead.data(), bRead.data(), cBuf->data(), workspace->data());

  // (a) C's guards and gaps.
  if (auto failure = checkGuardsAndGaps("C", *cBuf, cLayout))
    return std::optional<std::string>((name + ": " + *failure).str());
  // (b) A and B unchanged.
  for (auto [what, buf, layout, pristine] :
       {std::tuple{"A", &aRead, aLayout, &aReadPristine},
        {"B", &bRead, bLayout, &bReadPristine}})
    if (std::optional<int64_t> off = firstChanged(*buf, *pristine))
      return std::optional<std::string>(
          (name + ": " +
           (narrow ? describeNarrowOffset(what, *buf, layout, *off,
                                          4 / d.operandElementBytes())
                   : describeOffset(what, *buf, layout, *off)))
              .str());
  if (d.hasEpilogue())
    if (auto failure =
            checkUnchanged("the bias", *biasBuf, biasLayout, biasPristine))
      return std::optional<std::string>((name + ": " + *failure).str());
  // The workspace's contents are the kernel's, its guards are not.
  if (std::optional<int64_t> off = workspace->firstDamagedGuard())
    return std::optional<std::string>(
        (name + ": " +
         describeOffset("workspace", *workspace,
                        StoredLayout{1, workspace->size(),
                                     std::max<int64_t>(workspace->size(), 1)},
                        *off))
            .str());

  // (c) Every element against the fp64 reference.
  // An f16 kernel may sum each product as four exact partial products
  // (amx.py's split into bf16 parts): 4K terms in the f32 sum.
  const double bound = gemmErrorBound(f16 ? 4 * d.k : d.k);
  ReferenceCache::Entry storage;
  const ReferenceCache::Entry &reference = referenceFor(
      options,
      // The leading dimensions too: a run-time-ld descriptor's str() has
      // none.
      llvm::formatv("{0}/lda{1}_ldb{2}_ldc{3}/{4}/{5}", d.str(), d.lda, d.ldb,
                    d.ldc, name, options.seed)
          .str(),
      storage, [&](std::vector<double> &ref, std::vector<double> &mag) {
        computeReference(d, a0, b0, c0, ref, mag);
        applyEpilogue(d, bias0, ref, mag, bound);
      });
  const std::vector<double> &ref = reference.ref, &mag = reference.mag;
  const bool exact = comparedBitForBit(dist, d.k, d.activation);
  std::optional<std::string> failure;
  const float *c = cBuf->data();
  // C is the kernel's scratch when it writes D (its guards and gaps were
  // checked above).
  if (d.halfOutput)
    return checkHalfOutput(d, *dBuf, dPristine, ref, mag, exact,
                           f16 ? f16OutputErrorBound(d.k)
                               : bf16OutputErrorBound(d.k),
                           name, report);
  // s32: exact, the sum modulo 2^32 as arith.addi.
  if (integer) {
    for (int64_t i = 0; i < d.m && !failure; ++i)
      for (int64_t j = 0; j < d.n && !failure; ++j) {
        int32_t got;
        std::memcpy(&got, c + i * d.ldc + j, sizeof(got));
        const int64_t want64 = int64_t(ref[size_t(i * d.n + j)]);
        const int32_t want = int32_t(uint32_t(uint64_t(want64)));
        if (got != want)
          failure = llvm::formatv("{0}: C({1},{2}) = {3}, expected {4} "
                                  "(exact)",
                                  name, i, j, got, want)
                        .str();
      }
    return failure;
  }
  for (int64_t i = 0; i < d.m; ++i) {
    for (int64_t j = 0; j < d.n; ++j) {
      const float got = c[i * d.ldc + j];
      const double want = ref[size_t(i * d.n + j)];
      const double size = mag[size_t(i * d.n + j)];
      const double rel = relativeError(got, want, size);
      report.maxRelError = std::max(report.maxRelError, rel);
      if (failure)
        continue;
      std::string why = elementFailure(got, want, size, exact, bound);
      if (!why.empty())
        failure = llvm::formatv("{0}: C({1},{2}) = {3}, expected {4}{5}", name,
                                i, j, num(got), num(want), why)
                      .str();
    }
  }
  if (failure)
    return failure;

  // OpenBLAS on the pristine inputs, for the record and as a cross-check of
  // the reference. Where OpenBLAS itself is outside the bound against fp64
  // only its error is recorded; elsewhere ours must be within twice the
  // bound of it.
  if (!options.compareOpenBlas || !fitsBlas(d))
    return std::optional<std::string>();
  std::vector<float> cBlas(c0, c0 + d.cSpan());
  cblas_sgemm(CblasRowMajor, d.transA ? CblasTrans : CblasNoTrans,
              d.transB ? CblasTrans : CblasNoTrans, blasint(d.m), blasint(d.n),
              blasint(d.k), 1.0f, a0, blasint(d.lda), b0, blasint(d.ldb), 1.0f,
              cBlas.data(), blasint(d.ldc));
  // The epilogue in float, as a fused kernel does it.
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t j = 0; j < d.n; ++j) {
      float &v = cBlas[size_t(i * d.ldc + j)];
      v += biasAt(d, bias0, i, j);
      v = d.activation.apply(v);
    }
  for (int64_t i = 0; i < d.m; ++i) {
    for (int64_t j = 0; j < d.n; ++j) {
      const float got = c[i * d.ldc + j];
      const float blas = cBlas[size_t(i * d.ldc + j)];
      const double want = ref[size_t(i * d.n + j)];
      const double size = mag[size_t(i * d.n + j)];
      if (std::isnan(size))
        continue; // a NaN input's result: checked exactly above
      const double blasRel = relativeError(blas, want, size);
      report.openBlasMaxRelError =
          std::max(report.openBlasMaxRelError, blasRel);
      if (failure || !(blasRel <= bound))
        continue;
      const double diff = std::fabs(double(got) - double(blas));
      if (!(diff <= 2 * bound * size))
        failure = llvm::formatv("{0}: C({1},{2}) = {3}, openblas gives {4}, "
                                "difference {5} > twice the bound {6} times "
                                "magnitude {7}",
                                name, i, j, num(got), num(blas), shortNum(diff),
                                shortNum(bound), shortNum(size))
                      .str();
    }
  }
  return failure;
}

} // namespace

/// The fp64 reference and magnitude, m x n row-major:
///   ref(i,j) = c0(i,j) + sum_k A(i,k) B(k,j)
///   mag(i,j) = |c0(i,j)| + sum_k |A(i,k) B(k,j)|
/// ref by OpenBLAS cblas_dgemm on double copies of the operands: a float
/// times a float is exact in double, so this is an fp64 reference with
/// double rounding only in the sums, and fast enough to validate every
/// tuning candidate of a 2048^3 GEMM. mag by cblas_sgemm on |A| and |B|.
void qimeng::validation::computeReference(const GemmDesc &d, const float *a,
                                          const float *b, const float *c0,
                                          std::vector<double> &ref,
                                          std::vector<double> &mag) {
  const int64_t m = d.m, n = d.n, k = d.k;
  std::vector<double> aL(size_t(m * k)), bL(size_t(k * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      aL[size_t(i * k + p)] = d.transA ? a[p * d.lda + i] : a[i * d.lda + p];
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      bL[size_t(p * n + j)] = d.transB ? b[j * d.ldb + p] : b[p * d.ldb + j];
  ref.assign(size_t(m * n), 0.0);
  mag.assign(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double c = c0[i * d.ldc + j];
      ref[size_t(i * n + j)] = c;
      mag[size_t(i * n + j)] = std::fabs(c);
    }
  // (BLAS wants a leading dimension of at least 1, K = 0 included.)
  const blasint ldaL = blasint(std::max<int64_t>(k, 1));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(m), blasint(n),
              blasint(k), 1.0, aL.data(), ldaL, bL.data(), blasint(n), 1.0,
              ref.data(), blasint(n));
  // The magnitude only scales the bound: float is enough (non-negative
  // terms, relative error below k * 2^-24), widened by that much.
  std::vector<float> aAbs(aL.size()), bAbs(bL.size()), magF(size_t(m * n));
  for (size_t i = 0; i < aL.size(); ++i)
    aAbs[i] = float(std::fabs(aL[i]));
  for (size_t i = 0; i < bL.size(); ++i)
    bAbs[i] = float(std::fabs(bL[i]));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(m), blasint(n),
              blasint(k), 1.0f, aAbs.data(), ldaL, bAbs.data(), blasint(n),
              0.0f, magF.data(), blasint(n));
  const double widen = 1.0 + 2.0 * double(k + 1) * std::ldexp(1.0, -24);
  for (size_t i = 0; i < mag.size(); ++i)
    mag[i] += double(magF[i]) * widen;
}

llvm::Expected<ValidationReport> qimeng::validateGemm(
    const GemmDesc &desc,
    const std::function<void(const float *, const float *, float *, void *)>
        &kernel,
    size_t workspaceBytes, const ValidationOptions &options) {
  if (llvm::Error err = desc.verify())
    return std::move(err);
  if (!kernel)
    return llvm::createStringError("no kernel to validate");
  if (options.distributions.empty())
    return llvm::createStringError("no input distributions to validate with");
  if (!spanFits(desc.aRows(), desc.lda) || !spanFits(desc.bRows(), desc.ldb) ||
      !spanFits(desc.m, desc.ldc) ||
      (desc.halfOutput && !spanFits(desc.m, desc.ldd)) || !fitsBlas(desc))
    return llvm::createStringError(
        llvm::formatv("operands of {0} are too large to validate", desc.str())
            .str());
  if (options.guardElements < 0)
    return llvm::createStringError(
        llvm::formatv("negative guard size {0}", options.guardElements).str());

  return validateEachDistribution(
      options, [&](Distribution dist, ValidationReport &report) {
        return runOne(desc, kernel, workspaceBytes, options, dist, report);
      });
}
