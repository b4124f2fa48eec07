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
// them on large problems): small integers (exact in
// bf16 and f32, and so are their sums): C must match bit for bit; uniform
// in [-1, 1] (rounded to bf16 for bf16 kernels): |C - ref| <= bound, ref in
// fp64 of the rounded inputs, bound = 4 K 2^-24 (sum |a b| + |C0|) for f32
// sums. C starts NaN for an overwriting kernel (C0 = 0), random otherwise;
// 256 guard elements past C must stay unwritten; NaN never passes.
// Timing: CUDA events around each call, the L2 flushed before it, the
// median of --runs (default 20).
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
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
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
};

std::string headerValue(const std::string &text, const std::string &key) {
  std::string tag = "// qm." + key + ": ";
  size_t at = text.find(tag);
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
  char dtype[16] = {};
  int overwrite = 0;
  long long m, n, kk;
  if (std::sscanf(headerValue(k.source, "problem").c_str(),
                  "m=%lld n=%lld k=%lld dtype=%15s overwrite=%d", &m, &n, &kk,
                  dtype, &overwrite) != 5)
    die(2, "malformed qm.problem");
  k.m = m, k.n = n, k.k = kk, k.dtype = dtype, k.overwrite = overwrite;
  if (k.dtype != "f32" && k.dtype != "bf16")
    die(2, "unknown dtype " + k.dtype);
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

struct Problem {
  const Kernel &k;
  CUfunction fn;
  bool bf16() const { return k.dtype == "bf16"; }
  size_t elementBytes() const { return bf16() ? 2 : 4; }

  void launch(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) const {
    void *args[] = {&a, &b, &c};
    cu.check(cu.cuLaunchKernel_(fn, k.grid[0], k.grid[1], k.grid[2], k.block[0],
                                k.block[1], k.block[2], 0, nullptr, args,
                                nullptr),
             "cuLaunchKernel");
  }

  /// One validation on inputs from `draw`; the first failure or "".
  std::string validate(bool integers, std::mt19937 &rng, double &maxErr) const {
    const int64_t m = k.m, n = k.n, kk = k.k;
    std::uniform_int_distribution<int> small(-3, 3);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    auto draw = [&] {
      float v = integers ? float(small(rng)) : uniform(rng);
      return bf16() ? fromBf16(toBf16(v)) : v;
    };
    std::vector<float> a(size_t(m * kk)), b(size_t(kk * n));
    for (float &v : a)
      v = draw();
    for (float &v : b)
      v = draw();
    std::vector<float> c0(size_t(m * n) + kGuard);
    const float sentinel = -12345.0f;
    for (size_t i = 0; i < c0.size(); ++i)
      c0[i] = i >= size_t(m * n) ? sentinel
              : k.overwrite      ? NAN
                            : (integers ? float(small(rng)) : uniform(rng));
    auto upload = [&](const std::vector<float> &v, DeviceBuffer &d) {
      if (!bf16() || &v == &c0) {
        cu.check(cu.cuMemcpyHtoD_(d.ptr, v.data(), v.size() * 4), "upload");
        return;
      }
      std::vector<uint16_t> h(v.size());
      for (size_t i = 0; i < v.size(); ++i)
        h[i] = toBf16(v[i]);
      cu.check(cu.cuMemcpyHtoD_(d.ptr, h.data(), h.size() * 2), "upload");
    };
    DeviceBuffer da(a.size() * elementBytes()), db(b.size() * elementBytes()),
        dc(c0.size() * 4);
    upload(a, da);
    upload(b, db);
    upload(c0, dc);
    launch(da.ptr, db.ptr, dc.ptr);
    cu.check(cu.cuCtxSynchronize_(), "the kernel");
    std::vector<float> c(c0.size());
    cu.check(cu.cuMemcpyDtoH_(c.data(), dc.ptr, c.size() * 4), "download");
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
    for (int64_t i : rows) {
      std::vector<double> ref(size_t(n), 0.0), mag(size_t(n), 0.0);
      for (int64_t p = 0; p < kk; ++p) {
        const double av = a[size_t(i * kk + p)];
        const float *brow = &b[size_t(p * n)];
        for (int64_t j = 0; j < n; ++j) {
          ref[size_t(j)] += av * brow[j];
          mag[size_t(j)] += std::fabs(av * brow[j]);
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        const double start = k.overwrite ? 0.0 : c0[size_t(i * n + j)];
        const double want = ref[size_t(j)] + start;
        const double got = c[size_t(i * n + j)];
        const double bound = integers
                                 ? 0.0
                                 : 4.0 * double(kk + 1) * std::ldexp(1.0, -24) *
                                       (mag[size_t(j)] + std::fabs(start));
        const double err = std::fabs(got - want);
        if (!(err <= bound)) {
          char text[160];
          std::snprintf(text, sizeof text,
                        "%s: C(%lld, %lld) = %.9g, expected %.9g (bound %.3g)",
                        integers ? "small integers" : "uniform", (long long)i,
                        (long long)j, got, want, bound);
          return text;
        }
        if (want != 0.0)
          maxErr = std::max(maxErr, err / std::fabs(want));
      }
    }
    return "";
  }
};

/// Median milliseconds of `runs` timed calls of `call`, the L2 flushed
/// (a 512 MiB memset) before each.
template <typename Call> double medianMs(int runs, Call call) {
  DeviceBuffer flush(512u << 20);
  CUevent start, stop;
  cu.check(cu.cuEventCreate_(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  cu.check(cu.cuEventCreate_(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<float> ms;
  call(); // warm-up
  for (int r = 0; r < runs; ++r) {
    cu.check(cu.cuMemsetD8_(flush.ptr, uint8_t(r), 512u << 20), "flush");
    cu.check(cu.cuEventRecord_(start, nullptr), "cuEventRecord");
    call();
    cu.check(cu.cuEventRecord_(stop, nullptr), "cuEventRecord");
    cu.check(cu.cuEventSynchronize_(stop), "cuEventSynchronize");
    float t = 0;
    cu.check(cu.cuEventElapsedTime_(&t, start, stop), "cuEventElapsedTime");
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
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
  Problem problem{k, fn};
  std::printf("device: %s\nkernel: %s (%s, C %s A * B)\n", name,
              k.symbol.c_str(), k.dtype.c_str(), k.overwrite ? "=" : "+=");

  std::mt19937 rng(2026);
  double maxErr = 0;
  for (bool integers : {true, false}) {
    std::string failure = problem.validate(integers, rng, maxErr);
    if (!failure.empty()) {
      std::printf("validated: no: %s\n", failure.c_str());
      return 1;
    }
  }
  std::printf("validated: yes (small integers bit for bit; uniform within "
              "the bound, max rel err %.2e)\n",
              maxErr);

  const double flops = 2.0 * double(k.m) * double(k.n) * double(k.k);
  DeviceBuffer a(size_t(k.m * k.k) * problem.elementBytes()),
      b(size_t(k.k * k.n) * problem.elementBytes()), c(size_t(k.m * k.n) * 4);
  // Timing inputs: random bits in [-1, 1) (never zeros, which time faster).
  std::mt19937 timingRng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (auto [buffer, count] :
       {std::pair{&a, size_t(k.m * k.k)}, std::pair{&b, size_t(k.k * k.n)}}) {
    if (problem.bf16()) {
      std::vector<uint16_t> h(count);
      for (uint16_t &v : h)
        v = toBf16(uniform(timingRng));
      cu.check(cu.cuMemcpyHtoD_(buffer->ptr, h.data(), count * 2), "upload");
    } else {
      std::vector<float> h(count);
      for (float &v : h)
        v = uniform(timingRng);
      cu.check(cu.cuMemcpyHtoD_(buffer->ptr, h.data(), count * 4), "upload");
    }
  }
  cu.check(cu.cuMemsetD8_(c.ptr, 0, size_t(k.m * k.n) * 4), "cuMemsetD8");
  double ours = medianMs(runs, [&] { problem.launch(a.ptr, b.ptr, c.ptr); });
  std::printf("ours: %.3f ms, %.1f TFLOP/s (median of %d, L2 flushed)\n", ours,
              flops / ours * 1e-9, runs);
#ifdef QIMENG_HAVE_CUBLAS
  // cuBLAS at the same precision and accumulation: row-major C = A B as
  // column-major C^T = B^T A^T; bf16 inputs with f32 compute and output,
  // or f32 with its default (no TF32) math; beta as ours.
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
    die(1, "cublasCreate failed");
  const float alpha = 1.0f, beta = k.overwrite ? 0.0f : 1.0f;
  cudaDataType_t in = problem.bf16() ? CUDA_R_16BF : CUDA_R_32F;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  double theirs = medianMs(runs, [&] {
    status =
        cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(k.n), int(k.m),
                     int(k.k), &alpha, reinterpret_cast<void *>(b.ptr), in,
                     int(k.n), reinterpret_cast<void *>(a.ptr), in, int(k.k),
                     &beta, reinterpret_cast<void *>(c.ptr), CUDA_R_32F,
                     int(k.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  });
  if (status != CUBLAS_STATUS_SUCCESS)
    die(1, "cublasGemmEx failed");
  std::printf(
      "cuBLAS: %.3f ms, %.1f TFLOP/s (cublasGemmEx, %s inputs, f32 "
      "compute and output, CUBLAS_GEMM_DEFAULT)\nours / cuBLAS: %.2fx\n",
      theirs, flops / theirs * 1e-9, problem.bf16() ? "bf16" : "f32",
      theirs / ours);
  cublasDestroy(handle);
#endif
  return 0;
}
