//===- qimeng-cuda-runner.cpp - Run an emitted CUDA GEMM on the GPU -------===//
//
// qimeng-cuda-runner KERNEL.cu [--runs N]
//
// Compiles a cuda_gemm kernel (python_emitters/qimeng_emitters/cuda_gemm.py)
// with NVRTC for the GPU here, validates it, times it and times cuBLAS on
// the same problem at the same precision. A process of its own, so that a
// kernel that faults or hangs takes its context down, not its caller.
// Plain C++17 with NVRTC (through qimeng/Cuda/NvrtcCompile.h, as lib/Cuda)
// and cuBLAS linked and the driver loaded with dlopen, nothing of LLVM:
// scripts/device-check.sh builds it with g++ on a GPU machine that has only the
// CUDA toolkit.
//
// Validation, on fresh inputs per distribution (every row of C, or 48 of
// them on large problems, the references on every core): small integers
// (exact in bf16, f16, tf32 and f32, and so are their sums): C must match
// bit for bit; uniform in [-1, 1] (rounded to bf16 or f16 for 16-bit
// kernels): |C - ref| <= bound, ref in fp64 of the rounded inputs, bound =
// 4 (K + 1) 2^-24 (sum |a b| + |C0|) for f32 sums; tf32 kernels are given
// f32 inputs and the tensor cores drop 13 bits of each (rounded or
// truncated: a product off by less than 2^-9 of itself), so theirs is
// (2^-9 + 4 (K + 1) 2^-24) (sum |a b| + |C0|), ref in fp64 of the f32
// inputs. B is K x N, or N x K where the header says b=nk. cuBLAS runs on
// the same inputs and must meet the same bounds (else it would be timed on
// another problem); the largest |C - C_cuBLAS| is reported. C starts NaN
// for an overwriting kernel (C0 = 0), random otherwise; 256 guard elements past
// C must stay unwritten; NaN never passes. A failure names the first wrong
// elements and how many there are.
// Kernels whose header says so (qm.args "A:tma64x128,B:tma64x64,C" or
// "...,C:tma32x64") take A, B and maybe C as the copy engine's tensor
// maps (cuTensorMapEncodeTiled, 128-byte swizzle, made once per buffer)
// and qm.dynamic_shared_bytes of dynamic shared memory.
// Timing: CUDA events around each call, the L2 flushed before it, ours and
// cuBLAS interleaved call by call, the medians of --runs (default 20).
//
// Exit status: 0 validated, 1 failed validation, 2 usage or compile
// error, 77 no GPU here (no CUDA driver or device): the message says why.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Cuda/NvrtcCompile.h"
#include <cuda.h>
#ifdef QIMENG_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kNoGpu = 77;
constexpr size_t kGuard = 256;

[[noreturn]] void die(int status, const std::string &message) {
  std::fprintf(stderr, "qimeng-cuda-runner: %s\n", message.c_str());
  std::exit(status);
}

// The driver API, loaded at run time (libcuda.so.1 exists only where the
// NVIDIA driver does).
#define QM_STR(x) #x
#define QM_XSTR(x) QM_STR(x)
#define QM_DRIVER_FUNCTIONS(X)                                                 \
  X(cuInit)                                                                    \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleGetFunction)                                                       \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemsetD8)                                                                \
  X(cuLaunchKernel)                                                            \
  X(cuFuncSetAttribute)                                                        \
  X(cuTensorMapEncodeTiled)                                                    \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)

struct Driver {
#define QM_MEMBER(name) decltype(&name) name##_ = nullptr;
  QM_DRIVER_FUNCTIONS(QM_MEMBER)
#undef QM_MEMBER

  void load() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      die(kNoGpu, std::string("no CUDA driver here: ") + dlerror());
#define QM_RESOLVE(name)                                                       \
  name##_ = reinterpret_cast<decltype(&name)>(dlsym(lib, QM_XSTR(name)));      \
  if (!name##_)                                                                \
    die(kNoGpu, "the CUDA driver lacks " QM_XSTR(name));
    QM_DRIVER_FUNCTIONS(QM_RESOLVE)
#undef QM_RESOLVE
  }

  void check(CUresult r, const char *what) const {
    if (r == CUDA_SUCCESS)
      return;
    const char *text = nullptr;
    cuGetErrorString_(r, &text);
    die(1, std::string(what) + ": " + (text ? text : "unknown error"));
  }
};

Driver cu;

/// What the kernel's `// qm.` header says.
struct Kernel {
  std::string source, symbol, arch, dtype;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  int64_t m = 0, n = 0, k = 0;
  bool overwrite = false;
  /// B is N x K (qm.problem b=nk: C = A B^T), else K x N.
  bool bTransposed = false;
  /// Dynamic shared memory a launch asks for (qm.dynamic_shared_bytes).
  unsigned dynamicShared = 0;
  /// Where A and B (and C: tmaC) go as the copy engine's tensor maps
  /// rather than pointers (qm.args "A:tma64x128"): the boxes, innermost
  /// dimension first.
  bool tma = false, tmaC = false;
  unsigned boxA[2] = {0, 0}, boxB[2] = {0, 0}, boxC[2] = {0, 0};
};

std::string headerValue(const std::string &text, const std::string &key,
                        bool required = true) {
  std::string tag = "// qm." + key + ": ";
  size_t at = text.find(tag);
  if (at == std::string::npos && !required)
    return "";
  if (at == std::string::npos)
    die(2, "the kernel has no qm." + key + " line");
  size_t end = text.find('\n', at);
  return text.substr(at + tag.size(), end - at - tag.size());
}

Kernel readKernel(const char *path) {
  std::ifstream in(path);
  if (!in)
    die(2, std::string("cannot read ") + path);
  std::stringstream text;
  text << in.rdbuf();
  Kernel k;
  k.source = text.str();
  k.symbol = headerValue(k.source, "symbol");
  k.arch = headerValue(k.source, "arch");
  if (std::sscanf(headerValue(k.source, "grid").c_str(), "%u,%u,%u", &k.grid[0],
                  &k.grid[1], &k.grid[2]) != 3 ||
      std::sscanf(headerValue(k.source, "block").c_str(), "%u,%u,%u",
                  &k.block[0], &k.block[1], &k.block[2]) != 3)
    die(2, "malformed qm.grid or qm.block");
  char dtype[16] = {}, layout[3] = "kn";
  int overwrite = 0;
  long long m, n, kk;
  if (std::sscanf(headerValue(k.source, "problem").c_str(),
                  "m=%lld n=%lld k=%lld dtype=%15s overwrite=%d b=%2s", &m, &n,
                  &kk, dtype, &overwrite, layout) < 5)
    die(2, "malformed qm.problem");
  k.m = m, k.n = n, k.k = kk, k.dtype = dtype, k.overwrite = overwrite;
  if (k.dtype != "f32" && k.dtype != "tf32" && k.dtype != "bf16" &&
      k.dtype != "f16")
    die(2, "unknown dtype " + k.dtype);
  if (std::string(layout) != "kn" && std::string(layout) != "nk")
    die(2, std::string("unknown B layout ") + layout);
  k.bTransposed = std::string(layout) == "nk";
  std::string shared = headerValue(k.source, "dynamic_shared_bytes", false);
  if (!shared.empty())
    k.dynamicShared = unsigned(std::stoul(shared));
  std::string args = headerValue(k.source, "args");
  if (args != "A,B,C") {
    char rest[32] = {};
    if (std::sscanf(args.c_str(), "A:tma%ux%u,B:tma%ux%u,%31s", &k.boxA[0],
                    &k.boxA[1], &k.boxB[0], &k.boxB[1], rest) != 5)
      die(2, "unknown qm.args " + args);
    k.tma = true;
    if (std::string(rest) != "C") {
      if (std::sscanf(rest, "C:tma%ux%u", &k.boxC[0], &k.boxC[1]) != 2)
        die(2, "unknown qm.args " + args);
      k.tmaC = true;
    }
  }
  return k;
}

std::string compile(const Kernel &k) {
  qimeng::NvrtcOutput out =
      qimeng::nvrtcCompileToCubin(k.source, k.symbol, k.arch);
  if (!out.error.empty())
    die(2, out.error);
  std::printf("compiled %s for %s\n%s", k.symbol.c_str(), k.arch.c_str(),
              out.log.c_str());
  return out.cubin;
}

/// f32 -> bf16 bits, round to nearest even (inputs here are finite).
uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

float fromBf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// f32 -> IEEE half bits, round to nearest even (finite inputs within
/// the half range, as here: |v| <= 3).
uint16_t toF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const float a = std::fabs(f);
  if (a < 6.103515625e-05f) // subnormal: a multiple of 2^-24
    return uint16_t(sign | uint32_t(std::nearbyint(a * 16777216.0f)));
  uint32_t mant = u & 0x7fffffu, exp = ((u >> 23) & 0xffu) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h; // a carry into the exponent is still right
  return uint16_t(sign | h);
}

float fromF16(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  float a = exp == 0 ? std::ldexp(float(mant), -24)
                     : std::ldexp(float(mant | 0x400u), int(exp) - 25);
  uint32_t u;
  std::memcpy(&u, &a, 4);
  u |= sign;
  std::memcpy(&a, &u, 4);
  return a;
}

/// Device memory freed on scope exit.
struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  explicit DeviceBuffer(size_t bytes) {
    cu.check(cu.cuMemAlloc_(&ptr, bytes), "cuMemAlloc");
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { cu.cuMemFree_(ptr); }
};

/// A kernel's parameters for one set of buffers: the pointers, or for a
/// TMA kernel the tensor maps of A and B, and of C or its pointer (encoded
/// once, outside any timing).
struct Arguments {
  CUdeviceptr a = 0, b = 0, c = 0;
  CUtensorMap mapA{}, mapB{}, mapC{};
  void *params[3] = {};
};

/// What validation found beyond pass or fail.
struct ValidationStats {
  /// The largest |C - ref| / (sum |a b| + |C0|) of ours on uniform inputs.
  double maxErr = 0;
  /// The largest |C - C_cuBLAS| in the same units, where cuBLAS ran.
  double peerDiff = 0;
  bool peerChecked = false;
};

struct Problem {
  const Kernel &k;
  CUfunction fn;
  /// cuBLAS at the same precision on device buffers A, B and C, where it
  /// is linked: validation runs it on the same inputs and holds it to the
  /// same bounds, so that what is timed beside ours is the same problem.
  std::function<void(CUdeviceptr, CUdeviceptr, CUdeviceptr)> peer;
  /// 16-bit inputs (bf16 or f16, as raw bits); f32 for f32 and tf32.
  bool half() const { return k.dtype == "bf16" || k.dtype == "f16"; }
  size_t elementBytes() const { return half() ? 2 : 4; }
  uint16_t bits(float v) const {
    return k.dtype == "bf16" ? toBf16(v) : toF16(v);
  }
  /// The bound on |C - ref| for uniform inputs, in units of
  /// sum |a b| + |C0|: 4 (K + 1) 2^-24 for f32 sums, and 2^-9 more for
  /// tf32 products of f32 inputs.
  double relativeBound() const {
    return (k.dtype == "tf32" ? std::ldexp(1.0, -9) : 0.0) +
           4.0 * double(k.k + 1) * std::ldexp(1.0, -24);
  }
  const char *boundText() const {
    return k.dtype == "tf32" ? "2^-9 + 4 (K + 1) 2^-24" : "4 (K + 1) 2^-24";
  }

  /// `v` as it goes into memory: 16-bit inputs rounded (the reference
  /// takes them rounded); f32 and tf32 inputs as they are.
  float rounded(float v) const {
    if (k.dtype == "bf16")
      return fromBf16(toBf16(v));
    if (k.dtype == "f16")
      return fromF16(toF16(v));
    return v;
  }

  /// A row-major rows x cols matrix (the kernel's inputs, or f32 C) as a
  /// 2-D tensor map with a 128-byte swizzle, as the kernel lays its tiles
  /// out in shared memory.
  void encode(CUtensorMap &map, CUdeviceptr base, int64_t rows, int64_t cols,
              const unsigned box[2], bool f32) const {
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
    const cuuint64_t strides[1] = {cuuint64_t(cols) * (f32 ? 4 : 2)};
    const cuuint32_t boxDims[2] = {box[0], box[1]}, elementStrides[2] = {1, 1};
    cu.check(cu.cuTensorMapEncodeTiled_(
                 &map,
                 f32                 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                 : k.dtype == "bf16" ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                     : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                 2, reinterpret_cast<void *>(base), dims, strides, boxDims,
                 elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                 CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
             "cuTensorMapEncodeTiled");
  }

  /// `out` filled for A, B and C at these addresses (`out` must stay put:
  /// params points into it).
  void prepare(Arguments &out, CUdeviceptr a, CUdeviceptr b,
               CUdeviceptr c) const {
    out.a = a, out.b = b, out.c = c;
    if (k.tma) {
      encode(out.mapA, a, k.m, k.k, k.boxA, !half());
      if (k.bTransposed)
        encode(out.mapB, b, k.n, k.k, k.boxB, !half());
      else
        encode(out.mapB, b, k.k, k.n, k.boxB, !half());
      out.params[0] = &out.mapA;
      out.params[1] = &out.mapB;
    } else {
      out.params[0] = &out.a;
      out.params[1] = &out.b;
    }
    out.params[2] = &out.c;
    if (k.tmaC) {
      encode(out.mapC, c, k.m, k.n, k.boxC, /*f32=*/true);
      out.params[2] = &out.mapC;
    }
  }

  void launch(Arguments &args) const {
    cu.check(cu.cuLaunchKernel_(fn, k.grid[0], k.grid[1], k.grid[2], k.block[0],
                                k.block[1], k.block[2], k.dynamicShared,
                                nullptr, args.params, nullptr),
             "cuLaunchKernel");
  }

  /// One validation on inputs from `draw`; the first failure or "".
  std::string validate(bool integers, std::mt19937 &rng,
                       ValidationStats &stats) const {
    const int64_t m = k.m, n = k.n, kk = k.k;
    std::uniform_int_distribution<int> small(-3, 3);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    auto draw = [&] {
      float v = integers ? float(small(rng)) : uniform(rng);
      return rounded(v);
    };
    // b as the kernel takes it (K x N or N x K), bKN as the reference
    // reads it.
    std::vector<float> a(size_t(m * kk)), b(size_t(kk * n)), bKN(b.size());
    for (float &v : a)
      v = draw();
    for (float &v : b)
      v = draw();
    for (int64_t p = 0; p < kk; ++p)
      for (int64_t j = 0; j < n; ++j)
        bKN[size_t(p * n + j)] =
            k.bTransposed ? b[size_t(j * kk + p)] : b[size_t(p * n + j)];
    std::vector<float> c0(size_t(m * n) + kGuard);
    const float sentinel = -12345.0f;
    for (size_t i = 0; i < c0.size(); ++i)
      c0[i] = i >= size_t(m * n) ? sentinel
              : k.overwrite      ? NAN
                            : (integers ? float(small(rng)) : uniform(rng));
    auto upload = [&](const std::vector<float> &v, DeviceBuffer &d) {
      if (!half() || &v == &c0) {
        cu.check(cu.cuMemcpyHtoD_(d.ptr, v.data(), v.size() * 4), "upload");
        return;
      }
      std::vector<uint16_t> h(v.size());
      for (size_t i = 0; i < v.size(); ++i)
        h[i] = bits(v[i]);
      cu.check(cu.cuMemcpyHtoD_(d.ptr, h.data(), h.size() * 2), "upload");
    };
    DeviceBuffer da(a.size() * elementBytes()), db(b.size() * elementBytes()),
        dc(c0.size() * 4);
    upload(a, da);
    upload(b, db);
    upload(c0, dc);
    Arguments args;
    prepare(args, da.ptr, db.ptr, dc.ptr);
    launch(args);
    cu.check(cu.cuCtxSynchronize_(), "the kernel");
    std::vector<float> c(c0.size());
    cu.check(cu.cuMemcpyDtoH_(c.data(), dc.ptr, c.size() * 4), "download");
    // cuBLAS on the same inputs and the same C.
    std::vector<float> cPeer;
    if (peer) {
      DeviceBuffer dp(c0.size() * 4);
      upload(c0, dp);
      peer(da.ptr, db.ptr, dp.ptr);
      cu.check(cu.cuCtxSynchronize_(), "cuBLAS");
      cPeer.resize(c0.size());
      cu.check(cu.cuMemcpyDtoH_(cPeer.data(), dp.ptr, cPeer.size() * 4),
               "download");
    }
    for (size_t g = size_t(m * n); g < c.size(); ++g)
      if (std::memcmp(&c[g], &sentinel, 4) != 0)
        return "wrote past C (guard element " +
               std::to_string(g - size_t(m * n)) + ")";
    // Every row where the fp64 reference is cheap; past 2^31 multiply-adds
    // the first, the last and 46 random rows, each whole.
    std::vector<int64_t> rows;
    if (double(m) * double(n) * double(kk) <= double(1u << 31)) {
      for (int64_t i = 0; i < m; ++i)
        rows.push_back(i);
    } else {
      std::uniform_int_distribution<int64_t> any(0, m - 1);
      rows = {0, m - 1};
      for (int r = 0; r < 46; ++r)
        rows.push_back(any(rng));
    }
    // The rows' fp64 references, on every core (a GPU host has several).
    std::vector<std::vector<double>> refs(rows.size()), mags(rows.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t r; (r = next++) < rows.size();) {
        const int64_t i = rows[r];
        std::vector<double> ref(size_t(n), 0.0), mag(size_t(n), 0.0);
        for (int64_t p = 0; p < kk; ++p) {
          const double av = a[size_t(i * kk + p)];
          const float *brow = &bKN[size_t(p * n)];
          for (int64_t j = 0; j < n; ++j) {
            ref[size_t(j)] += av * brow[j];
            mag[size_t(j)] += std::fabs(av * brow[j]);
          }
        }
        refs[r] = std::move(ref);
        mags[r] = std::move(mag);
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < std::max(1u, std::thread::hardware_concurrency());
         ++t)
      pool.emplace_back(work);
    work();
    for (std::thread &t : pool)
      t.join();
    // A wrong element, appended to `into`: the first few of them and then
    // how many point at the fault (whole rows, every eighth column, one
    // tile).
    auto describe = [](std::string &into, int64_t i, int64_t j, double got,
                       double want, double bound) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "%sC(%lld, %lld) = %.9g, expected %.9g (bound %.3g)",
                    into.empty() ? "" : "; ", (long long)i, (long long)j, got,
                    want, bound);
      into += text;
    };
    std::string failure, peerFailure;
    size_t wrong = 0, peerWrong = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t i = rows[r];
      const std::vector<double> &ref = refs[r], &mag = mags[r];
      for (int64_t j = 0; j < n; ++j) {
        const double start = k.overwrite ? 0.0 : c0[size_t(i * n + j)];
        const double want = ref[size_t(j)] + start;
        const double got = c[size_t(i * n + j)];
        const double bound =
            integers ? 0.0
                     : relativeBound() * (mag[size_t(j)] + std::fabs(start));
        const double err = std::fabs(got - want);
        const double scale = mag[size_t(j)] + std::fabs(start);
        if (!cPeer.empty()) {
          const double theirs = cPeer[size_t(i * n + j)];
          if (!(std::fabs(theirs - want) <= bound) && ++peerWrong <= 3)
            describe(peerFailure, i, j, theirs, want, bound);
          if (scale > 0.0 && std::fabs(got - theirs) <= 2 * bound)
            stats.peerDiff =
                std::max(stats.peerDiff, std::fabs(got - theirs) / scale);
        }
        if (!(err <= bound)) {
          if (++wrong <= 6)
            describe(failure, i, j, got, want, bound);
          continue;
        }
        // The error in units of the sum's magnitude, which the bound
        // scales: cancellation makes a relative error meaningless.
        if (scale > 0.0)
          stats.maxErr = std::max(stats.maxErr, err / scale);
      }
    }
    const std::string checked = std::to_string(rows.size() * size_t(n));
    if (wrong)
      return std::string(integers ? "small integers: " : "uniform: ") +
             failure + "; " + std::to_string(wrong) + " of " + checked +
             " checked elements wrong";
    // Ours is right; cuBLAS must be too, or it is given another problem
    // and timing it beside ours means nothing.
    if (peerWrong)
      return std::string(integers ? "small integers: " : "uniform: ") +
             "cuBLAS on the same inputs: " + peerFailure + "; " +
             std::to_string(peerWrong) + " of " + checked +
             " checked elements wrong (it would be timed on another "
             "problem)";
    stats.peerChecked = !cPeer.empty();
    return "";
  }
};

/// Median milliseconds of `runs` timed calls of each of `calls`,
/// interleaved round by round (so that clocks and neighbours weigh on all
/// alike), the L2 flushed (a 512 MiB memset) before each call.
std::vector<double> medianMs(int runs,
                             const std::vector<std::function<void()>> &calls) {
  DeviceBuffer flush(512u << 20);
  CUevent start, stop;
  cu.check(cu.cuEventCreate_(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  cu.check(cu.cuEventCreate_(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<std::vector<float>> ms(calls.size());
  for (const auto &call : calls)
    call(); // warm-up
  for (int r = 0; r < runs; ++r)
    for (size_t i = 0; i < calls.size(); ++i) {
      cu.check(cu.cuMemsetD8_(flush.ptr, uint8_t(r), 512u << 20), "flush");
      cu.check(cu.cuEventRecord_(start, nullptr), "cuEventRecord");
      calls[i]();
      cu.check(cu.cuEventRecord_(stop, nullptr), "cuEventRecord");
      cu.check(cu.cuEventSynchronize_(stop), "cuEventSynchronize");
      float t = 0;
      cu.check(cu.cuEventElapsedTime_(&t, start, stop), "cuEventElapsedTime");
      ms[i].push_back(t);
    }
  std::vector<double> medians;
  for (std::vector<float> &m : ms) {
    std::sort(m.begin(), m.end());
    medians.push_back(m[m.size() / 2]);
  }
  return medians;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    die(2, "usage: qimeng-cuda-runner KERNEL.cu [--runs N]");
  int runs = 20;
  for (int i = 2; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--runs")
      runs = std::max(3, std::atoi(argv[i + 1]));
  Kernel k = readKernel(argv[1]);
  cu.load();
  cu.check(cu.cuInit_(0), "cuInit");
  CUdevice device;
  if (cu.cuDeviceGet_(&device, 0) != CUDA_SUCCESS)
    die(kNoGpu, "the CUDA driver sees no device");
  char name[128] = {};
  cu.cuDeviceGetName_(name, sizeof name, device);
  CUcontext context;
  cu.check(cu.cuDevicePrimaryCtxRetain_(&context, device),
           "cuDevicePrimaryCtxRetain");
  cu.check(cu.cuCtxSetCurrent_(context), "cuCtxSetCurrent");
  std::string cubin = compile(k);
  CUmodule module;
  cu.check(cu.cuModuleLoadData_(&module, cubin.data()), "cuModuleLoadData");
  CUfunction fn;
  cu.check(cu.cuModuleGetFunction_(&fn, module, k.symbol.c_str()),
           "cuModuleGetFunction");
  if (k.dynamicShared > 48 * 1024)
    cu.check(cu.cuFuncSetAttribute_(
                 fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                 int(k.dynamicShared)),
             "cuFuncSetAttribute (dynamic shared memory)");
  Problem problem{k, fn, {}};
  std::printf("device: %s\nkernel: %s (%s, C %s A * B%s)\n", name,
              k.symbol.c_str(), k.dtype.c_str(),
              k.overwrite ? "=" : "+=", k.bTransposed ? "^T" : "");
#ifdef QIMENG_HAVE_CUBLAS
  // cuBLAS at the same precision and accumulation: row-major C = A B as
  // column-major C^T = B^T A^T (B N x K: op T); bf16 or f16 inputs with
  // f32 compute and output, f32 with its default (no TF32) math, or tf32
  // (f32 inputs, CUBLAS_COMPUTE_32F_FAST_TF32); beta as ours.
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
    die(1, "cublasCreate failed");
  const float alpha = 1.0f, beta = k.overwrite ? 0.0f : 1.0f;
  cudaDataType_t in = k.dtype == "bf16"  ? CUDA_R_16BF
                      : k.dtype == "f16" ? CUDA_R_16F
                                         : CUDA_R_32F;
  const cublasComputeType_t compute =
      k.dtype == "tf32" ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const cublasOperation_t opB = k.bTransposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  problem.peer = [&](CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) {
    status = cublasGemmEx(handle, opB, CUBLAS_OP_N, int(k.n), int(k.m),
                          int(k.k), &alpha, reinterpret_cast<void *>(b), in,
                          k.bTransposed ? int(k.k) : int(k.n),
                          reinterpret_cast<void *>(a), in, int(k.k), &beta,
                          reinterpret_cast<void *>(c), CUDA_R_32F, int(k.n),
                          compute, CUBLAS_GEMM_DEFAULT);
    if (status != CUBLAS_STATUS_SUCCESS)
      die(1, "cublasGemmEx failed");
  };
#endif

  std::mt19937 rng(2026);
  ValidationStats stats;
  for (bool integers : {true, false}) {
    std::string failure = problem.validate(integers, rng, stats);
    if (!failure.empty()) {
      std::printf("validated: no: %s\n", failure.c_str());
      return 1;
    }
  }
  char peerText[160] = "";
  if (stats.peerChecked)
    std::snprintf(peerText, sizeof peerText,
                  "; cuBLAS on the same inputs within the same bounds, max "
                  "|C - C_cuBLAS| / (sum |a b| + |C0|) = %.2e",
                  stats.peerDiff);
  std::printf("validated: yes (small integers bit for bit; uniform: max "
              "|C - ref| / (sum |a b| + |C0|) = %.2e, bound %s = %.2e%s)\n",
              stats.maxErr, problem.boundText(), problem.relativeBound(),
              peerText);

  const double flops = 2.0 * double(k.m) * double(k.n) * double(k.k);
  DeviceBuffer a(size_t(k.m * k.k) * problem.elementBytes()),
      b(size_t(k.k * k.n) * problem.elementBytes()), c(size_t(k.m * k.n) * 4);
  // Timing inputs: random bits in [-1, 1) (never zeros, which time faster).
  std::mt19937 timingRng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (auto [buffer, count] :
       {std::pair{&a, size_t(k.m * k.k)}, std::pair{&b, size_t(k.k * k.n)}}) {
    if (problem.half()) {
      std::vector<uint16_t> h(count);
      for (uint16_t &v : h)
        v = problem.bits(uniform(timingRng));
      cu.check(cu.cuMemcpyHtoD_(buffer->ptr, h.data(), count * 2), "upload");
    } else {
      std::vector<float> h(count);
      for (float &v : h)
        v = uniform(timingRng);
      cu.check(cu.cuMemcpyHtoD_(buffer->ptr, h.data(), count * 4), "upload");
    }
  }
  cu.check(cu.cuMemsetD8_(c.ptr, 0, size_t(k.m * k.n) * 4), "cuMemsetD8");
  Arguments args;
  problem.prepare(args, a.ptr, b.ptr, c.ptr);
  std::vector<std::function<void()>> calls = {[&] { problem.launch(args); }};
#ifndef QIMENG_HAVE_CUBLAS
  double ours = medianMs(runs, calls)[0];
  std::printf("ours: %.3f ms, %.1f TFLOP/s (median of %d, L2 flushed)\n", ours,
              flops / ours * 1e-9, runs);
#else
  calls.push_back([&] { problem.peer(a.ptr, b.ptr, c.ptr); });
  std::vector<double> medians = medianMs(runs, calls);
  const double ours = medians[0], theirs = medians[1];
  std::printf("ours: %.3f ms, %.1f TFLOP/s (median of %d, L2 flushed)\n", ours,
              flops / ours * 1e-9, runs);
  std::printf("cuBLAS: %.3f ms, %.1f TFLOP/s (cublasGemmEx, %s inputs, B %s, "
              "%s, f32 output, CUBLAS_GEMM_DEFAULT; interleaved with ours)\n"
              "ours / cuBLAS: %.2fx\n",
              theirs, flops / theirs * 1e-9,
              k.dtype == "tf32" ? "f32" : k.dtype.c_str(),
              k.bTransposed ? "N x K (CUBLAS_OP_T)" : "K x N",
              k.dtype == "tf32" ? "CUBLAS_COMPUTE_32F_FAST_TF32"
                                : "CUBLAS_COMPUTE_32F",
              theirs / ours);
  cublasDestroy(handle);
#endif
  return 0;
}
