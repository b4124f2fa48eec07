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
// with ENTRY the kernel's byte offset in CODE, TRANSPOSES nn, nt, tn or tt
// (A stored K x M with lda >= M after a t in first place, B stored N x K
// with ldb >= K after a t in second place), OVERWRITE 0 or 1 (C = A*B:
// C starts as the NaN sentinel and must not be read), RUNS timed calls
// after the checks (0: none) and DISTRIBUTIONS "all" or "small-integers"
// (the exact one alone). Exit 0 when a verdict
// was printed (passed or not), 2 for bad arguments or I/O.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Runtime/ValidationNumerics.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <vector>

using namespace qimeng;
using namespace qimeng::validation;

namespace {

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

struct Problem {
  int64_t m, n, k, lda, ldb, ldc, workspace;
  bool transA = false, transB = false;
  bool overwrite;
  uint64_t seed;
  int runs;
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
  std::fprintf(stderr,
               "qimeng-cross-runner: %s\nusage: qimeng-cross-runner CODE "
               "ENTRY M N K TRANSPOSES LDA LDB LDC WORKSPACE OVERWRITE SEED "
               "RUNS DISTRIBUTIONS\n",
               why);
  std::exit(2);
}

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

/// A 64-byte aligned workspace whose header holds lda, ldb, ldc at 64
/// (docs/KernelContract.md); the rest zero.
struct Workspace {
  std::vector<unsigned char> storage;
  unsigned char *base;
  explicit Workspace(const Problem &p)
      : storage(size_t(std::max<int64_t>(p.workspace, 128) + 64), 0) {
    uintptr_t addr = reinterpret_cast<uintptr_t>(storage.data());
    base = storage.data() + ((64 - addr % 64) % 64);
    int64_t lds[3] = {p.lda, p.ldb, p.ldc};
    std::memcpy(base + 64, lds, sizeof(lds));
  }
};

/// The first float of `g` (offset from data(), guards included) whose bits
/// differ from `pristine`, or INT64_MIN.
int64_t firstChanged(Guarded &g, const std::vector<float> &pristine) {
  for (size_t i = 0; i < pristine.size(); ++i)
    if (bitsOf(g.region[i]) != bitsOf(pristine[i]))
      return int64_t(i) - kGuard;
  return INT64_MIN;
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
  const std::vector<float> a0 = a.region, b0 = b.region, c0 = c.region;
  Workspace ws(p);
  kernel(a.data(), b.data(), c.data(), ws.base);

  const std::string name = distributionCName(dist);
  if (int64_t at = firstChanged(a, a0); at != INT64_MIN)
    return name + ": A changed at element " + std::to_string(at);
  if (int64_t at = firstChanged(b, b0); at != INT64_MIN)
    return name + ": B changed at element " + std::to_string(at);
  const double bound = gemmErrorBound(p.k);
  const bool exact =
      dist == Distribution::SmallIntegers && smallIntegersAreExact(p.k);
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

double medianNs(KernelFn kernel, const Problem &p) {
  Guarded a(aRows(p) * p.lda), b(bRows(p) * p.ldb), c(p.m * p.ldc);
  InputGenerator gen(Distribution::Uniform, p.seed);
  for (int64_t i = 0; i < a.size(); ++i)
    a.data()[i] = gen.next();
  for (int64_t i = 0; i < b.size(); ++i)
    b.data()[i] = gen.next();
  for (int64_t i = 0; i < c.size(); ++i)
    c.data()[i] = 0;
  Workspace ws(p);
  std::vector<double> times;
  for (int r = 0; r < p.runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    kernel(a.data(), b.data(), c.data(), ws.base);
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  if (times.empty())
    return 0;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 15)
    usage("expected 14 arguments");
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
  if (p.m < 1 || p.n < 1 || p.k < 1 || p.lda < (p.transA ? p.m : p.k) ||
      p.ldb < (p.transB ? p.k : p.n) || p.ldc < p.n)
    usage("sizes must be positive and each leading dimension at least its "
          "rows' length");
  KernelFn kernel = loadCode(argv[1], entry);

  double maxRel = 0;
  std::string failure;
  std::vector<Distribution> dists = {Distribution::SmallIntegers};
  if (std::strcmp(argv[14], "all") == 0)
    dists = {Distribution::SmallIntegers, Distribution::Uniform,
             Distribution::Mixed};
  else if (std::strcmp(argv[14], "small-integers") != 0)
    usage("DISTRIBUTIONS must be all or small-integers");
  for (Distribution dist : dists) {
    failure = runOne(kernel, p, dist, maxRel);
    if (!failure.empty())
      break;
  }
  double ns = failure.empty() && p.runs > 0 ? medianNs(kernel, p) : 0;
  std::printf("{\"passed\":%s,\"failure\":\"%s\",\"max_rel_error\":%.9g,"
              "\"median_ns\":%.1f}\n",
              failure.empty() ? "true" : "false", jsonEscape(failure).c_str(),
              maxRel, ns);
  return 0;
}
