//===- CudaKernelTest.cpp - Emitted CUDA kernels, compiled by NVRTC -------===//
//
// No GPU is needed: the emitters write the kernels, NVRTC compiles them to
// cubins in this process, and ptxas's report must be clean (no spills, no
// warnings). Running them needs a GPU: qimeng-cuda-runner does, and its
// test here reports itself skipped, with the runner's reason, where there
// is none.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Cuda/CudaKernel.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace qimeng;

namespace {

#define QM_SKIP_UNLESS_NVRTC()                                                 \
  do {                                                                         \
    if (!nvrtcAvailable())                                                     \
      GTEST_SKIP() << nvrtcUnavailableReason();                                \
  } while (0)

std::string request(llvm::StringRef dtype, llvm::StringRef arch, int64_t m,
                    int64_t n, int64_t k, bool overwrite = false,
                    bool bTransposed = false) {
  return llvm::formatv("{{\"version\": 1, \"kind\": \"cuda_gemm\", "
                       "\"arch\": \"{0}\", \"dtype\": \"{1}\", \"m\": {2}, "
                       "\"n\": {3}, \"k\": {4}, \"overwrite\": {5}, "
                       "\"b_layout\": \"{6}\"}",
                       arch, dtype, m, n, k, overwrite ? "true" : "false",
                       bTransposed ? "nk" : "kn")
      .str();
}

TEST(CudaKernelTest, HeaderSaysHowToLaunch) {
  // 1000 x 770 in 128 x 128 tiles: a grid of 7 x 8 blocks of 8 warps.
  auto k = emitCudaKernel(request("bf16", "sm_90a", 1000, 770, 333),
                          EmitterOptions::defaults());
  ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->symbol, "qm_cuda_bf16gemm_1000x770x333_bm128_bn128_bk32_"
                       "64x32_sm_90a");
  EXPECT_EQ(k->arch, "sm_90a");
  EXPECT_EQ(k->grid, (std::array<unsigned, 3>{7, 8, 1}));
  EXPECT_EQ(k->block, (std::array<unsigned, 3>{256, 1, 1}));
  EXPECT_GT(k->sharedBytes, 0u);
  EXPECT_NE(k->text.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16"),
            std::string::npos);
  EXPECT_EQ(k->engine, "mma");
  EXPECT_EQ(k->args, "A,B,C");

  // K and N multiples of 8: Hopper's wgmma with tensor maps (C's too: the
  // copy engine adds the tile to C), its tiles in one dimension (128 x 128:
  // 128 x 256 would leave multiprocessors idle), a producer and two
  // consumer warpgroups, six stages of dynamic shared memory.
  auto w = emitCudaKernel(request("bf16", "sm_90a", 1000, 776, 336),
                          EmitterOptions::defaults());
  ASSERT_TRUE(static_cast<bool>(w)) << llvm::toString(w.takeError());
  EXPECT_EQ(w->engine, "wgmma");
  EXPECT_EQ(w->args, "A:tma64x128,B:tma64x64,C:tma32x64");
  EXPECT_EQ(w->grid, (std::array<unsigned, 3>{8 * 7, 1, 1}));
  EXPECT_EQ(w->block, (std::array<unsigned, 3>{384, 1, 1}));
  EXPECT_EQ(w->sharedBytes, 0u);
  EXPECT_EQ(w->dynamicSharedBytes, 6u * (128 + 128) * 64 * 2 + 1024);
}

TEST(CudaKernelTest, MalformedHeaderIsAnError) {
  auto k = parseCudaKernel("// qm.symbol: f\n// qm.arch: sm_80\n"
                           "// qm.grid: 1,0,1\n");
  ASSERT_FALSE(static_cast<bool>(k));
  EXPECT_NE(llvm::toString(k.takeError()).find("qm.grid"), std::string::npos);
}

TEST(CudaKernelTest, PtxasReportIsRead) {
  PtxasReport r = parsePtxasLog(
      "ptxas info    : Compiling entry function 'f' for 'sm_80'\n"
      "ptxas info    : Function properties for f\n"
      "ptxas         .     16 bytes stack frame, 24 bytes spill stores, 8 "
      "bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 18944 bytes "
      "smem\n"
      "ptxas warning : (C7515) Potential Performance Loss: wgmma.mma_async "
      "instructions are serialized\n");
  EXPECT_EQ(r.registers, 255u);
  EXPECT_EQ(r.stackBytes, 16u);
  EXPECT_EQ(r.spillStores, 24u);
  EXPECT_EQ(r.spillLoads, 8u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("C7515"), std::string::npos);
  EXPECT_FALSE(r.clean());
  EXPECT_TRUE(parsePtxasLog("ptxas         .     0 bytes stack frame, 0 bytes "
                            "spill stores, 0 bytes spill loads\n"
                            "ptxas info    : Used 64 registers\n")
                  .clean());
}

TEST(CudaKernelTest, EmittedKernelsCompileClean) {
  QM_SKIP_UNLESS_NVRTC();
  // FFMA and tensor-core kernels, for Ampere and Hopper, on a shape with
  // edges in every dimension and on a large square one, accumulating and
  // overwriting, B K x N and N x K: each a cubin, without spills or ptxas
  // warnings.
  struct Case {
    const char *dtype;
    int64_t m, n, k;
    bool overwrite, bTransposed = false;
  };
  // On sm_90a the shapes whose K and N are multiples of 8 take wgmma,
  // tf32 with B N x K only.
  for (const char *arch : {"sm_80", "sm_90a"})
    for (Case c : {Case{"f32", 1000, 770, 333, false},
                   Case{"f32", 4096, 4096, 4096, true},
                   Case{"bf16", 1000, 770, 333, true},
                   Case{"bf16", 8192, 8192, 8192, false},
                   Case{"bf16", 1000, 776, 336, false, true},
                   Case{"f16", 1000, 776, 336, true},
                   Case{"f16", 4096, 4096, 4096, false},
                   Case{"tf32", 1000, 770, 333, false},
                   Case{"tf32", 1000, 776, 336, true, true},
                   Case{"tf32", 8192, 8192, 8192, false, true}}) {
      auto k = emitCudaKernel(
          request(c.dtype, arch, c.m, c.n, c.k, c.overwrite, c.bTransposed),
          EmitterOptions::defaults());
      ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
      const llvm::StringRef dtype(c.dtype);
      const bool hopper = llvm::StringRef(arch) == "sm_90a" && dtype != "f32" &&
                          c.n % 8 == 0 && c.k % 8 == 0 &&
                          (dtype != "tf32" || c.bTransposed);
      EXPECT_EQ(k->engine, hopper                              ? "wgmma"
                           : llvm::StringRef(c.dtype) == "f32" ? "ffma"
                                                               : "mma");
      auto compiled = compileCudaKernel(*k);
      ASSERT_TRUE(static_cast<bool>(compiled))
          << llvm::toString(compiled.takeError());
      SCOPED_TRACE(k->symbol + "\n" + compiled->log);
      ASSERT_GE(compiled->cubin.size(), 4u);
      EXPECT_EQ(compiled->cubin.substr(0, 4), "\x7f"
                                              "ELF");
      EXPECT_GT(compiled->ptxas.registers, 0u);
      EXPECT_TRUE(compiled->ptxas.clean());
      // The ELF header names the architecture (sm_90a's says 90).
      auto sm = cubinSmVersion(compiled->cubin);
      ASSERT_TRUE(static_cast<bool>(sm)) << llvm::toString(sm.takeError());
      EXPECT_EQ(*sm, llvm::StringRef(arch) == "sm_80" ? 80u : 90u);
      // The PTX it was assembled from: the architecture and the entry.
      llvm::StringRef ptx(compiled->ptx);
      EXPECT_NE(ptx.find(std::string(".target ") + arch), std::string::npos);
      EXPECT_NE(ptx.find(".entry " + k->symbol + "("), std::string::npos);
      EXPECT_FALSE(ptx.ends_with(llvm::StringRef("\0", 1)));
    }
}

TEST(CudaKernelTest, ClusterPairsCompileClean) {
  QM_SKIP_UNLESS_NVRTC();
  // Two-block clusters multicasting B (16-bit B K x N, tf32 B N x K):
  // cubins with no spills and no warnings.
  for (const char *fields :
       {"\"dtype\": \"bf16\", \"m\": 8192, \"n\": 8192, \"k\": 8192",
        "\"dtype\": \"tf32\", \"m\": 1000, \"n\": 776, \"k\": 336, "
        "\"b_layout\": \"nk\""}) {
    auto k = emitCudaKernel(
        std::string("{\"version\": 1, \"kind\": \"cuda_gemm\", \"arch\": "
                    "\"sm_90a\", \"overwrite\": false, \"cluster\": 2, ") +
            fields + "}",
        EmitterOptions::defaults());
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    EXPECT_NE(k->text.find("__cluster_dims__(2, 1, 1)"), std::string::npos);
    auto compiled = compileCudaKernel(*k);
    ASSERT_TRUE(static_cast<bool>(compiled))
        << llvm::toString(compiled.takeError());
    SCOPED_TRACE(k->symbol + "\n" + compiled->log);
    EXPECT_TRUE(compiled->ptxas.clean());
  }
}

TEST(CudaKernelTest, CubinArchitectureOfOtherImages) {
  QM_SKIP_UNLESS_NVRTC();
  auto k = emitCudaKernel(request("f16", "sm_89", 64, 64, 64),
                          EmitterOptions::defaults());
  ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  auto compiled = compileCudaKernel(*k);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  auto sm = cubinSmVersion(compiled->cubin);
  ASSERT_TRUE(static_cast<bool>(sm)) << llvm::toString(sm.takeError());
  EXPECT_EQ(*sm, 89u);
  // An x86-64 ELF header (e_machine 62) and text are not cubins.
  std::string x86 = compiled->cubin;
  x86[18] = 62;
  auto notCuda = cubinSmVersion(x86);
  ASSERT_FALSE(static_cast<bool>(notCuda));
  EXPECT_NE(llvm::toString(notCuda.takeError()).find("not for a CUDA GPU"),
            std::string::npos);
  auto text = cubinSmVersion("not an ELF image at all, just text");
  ASSERT_FALSE(static_cast<bool>(text));
  EXPECT_NE(llvm::toString(text.takeError()).find("not a 64-bit ELF"),
            std::string::npos);
}

TEST(CudaKernelTest, CompileErrorsNameTheLine) {
  QM_SKIP_UNLESS_NVRTC();
  auto k = parseCudaKernel("// qm.symbol: broken\n// qm.arch: sm_80\n"
                           "// qm.grid: 1,1,1\n// qm.block: 32,1,1\n"
                           "// qm.shared_bytes: 0\n"
                           "extern \"C\" __global__ void broken(float *c) {\n"
                           "  c[0] = undeclared;\n"
                           "}\n");
  ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  auto compiled = compileCudaKernel(*k);
  ASSERT_FALSE(static_cast<bool>(compiled));
  std::string message = llvm::toString(compiled.takeError());
  EXPECT_NE(message.find("broken.cu(7)"), std::string::npos) << message;
  EXPECT_NE(message.find("undeclared"), std::string::npos) << message;
}

TEST(CudaKernelTest, ArchitectureWithoutTheInstructionFails) {
  QM_SKIP_UNLESS_NVRTC();
  // mma.sync with bf16 needs sm_80: the emitter refuses older ones, and
  // NVRTC refuses the instruction for them.
  auto refused = emitCudaKernel(request("bf16", "sm_75", 64, 64, 64),
                                EmitterOptions::defaults());
  ASSERT_FALSE(static_cast<bool>(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("arch"),
            std::string::npos);
  auto k = emitCudaKernel(request("bf16", "sm_80", 64, 64, 64),
                          EmitterOptions::defaults());
  ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  k->arch = "sm_75";
  EXPECT_FALSE(static_cast<bool>(compileCudaKernel(*k)));
}

TEST(CudaKernelTest, RunnerValidatesOnTheGpu) {
  QM_SKIP_UNLESS_NVRTC();
  // A bf16 kernel with edges in every dimension, overwriting (C starts
  // NaN), through the runner process: validated on the GPU and timed
  // against cuBLAS; without a GPU the runner says why and exits 77.
  auto k = emitCudaKernel(request("bf16", "sm_80", 200, 136, 88, true),
                          EmitterOptions::defaults());
  ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("qimeng-cuda", "cu", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    ASSERT_FALSE(ec) << ec.message();
    out << k->text;
  }
  const std::string runner =
      std::string(QIMENG_TEST_BINARY_DIR) + "/qimeng-cuda-runner";
  SubprocessOptions options;
  options.timeoutSeconds = 300;
  auto result = runSubprocess(runner, {runner, std::string(path)}, "", options);
  llvm::sys::fs::remove(path);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  if (result->exitCode == 77)
    GTEST_SKIP() << llvm::StringRef(result->err).trim().str();
  EXPECT_EQ(result->exitCode, 0) << result->out << result->err;
  EXPECT_NE(result->out.find("validated: yes"), std::string::npos)
      << result->out;
}

/// A stand-in for qimeng-cuda-runner: a shell script that prints `out`,
/// `err` on stderr, and exits with `status`.
std::string fakeRunner(llvm::StringRef out, llvm::StringRef err, int status) {
  llvm::SmallString<128> path;
  EXPECT_FALSE(
      llvm::sys::fs::createTemporaryFile("fake-cuda-runner", "sh", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream script(path, ec);
    EXPECT_FALSE(ec) << ec.message();
    script << "#!/bin/sh\ncat <<'EOF'\n"
           << out << "\nEOF\necho '" << err << "' >&2\nexit " << status << "\n";
  }
  llvm::sys::fs::setPermissions(path, llvm::sys::fs::owner_all);
  return std::string(path);
}

TEST(CudaKernelTest, RunnerReportIsRead) {
  // What runCudaKernel reads of the runner: the device, the validation,
  // both timings and cuBLAS's configuration; no GPU (77) and no runner are
  // reports that did not run; a failed validation is an error.
  std::string ran = fakeRunner(
      "compiled qm_x for sm_90a\ndevice: NVIDIA H200\nvalidated: yes (small "
      "integers bit for bit)\nours: 1.416 ms, 776.6 TFLOP/s (median of 10, "
      "L2 flushed)\ncuBLAS: 1.406 ms, 781.9 TFLOP/s (cublasGemmEx, bf16 "
      "inputs, f32 compute and output, CUBLAS_GEMM_DEFAULT; interleaved "
      "with ours)\nours / cuBLAS: 0.99x",
      "", 0);
  auto report = runCudaKernel(ran, "kernel.cu", 10);
  llvm::sys::fs::remove(ran);
  ASSERT_TRUE(static_cast<bool>(report)) << llvm::toString(report.takeError());
  EXPECT_TRUE(report->ran);
  EXPECT_EQ(report->device, "NVIDIA H200");
  EXPECT_EQ(report->validation, "yes (small integers bit for bit)");
  EXPECT_DOUBLE_EQ(report->oursMs, 1.416);
  EXPECT_DOUBLE_EQ(report->oursTflops, 776.6);
  EXPECT_DOUBLE_EQ(report->cublasTflops, 781.9);
  EXPECT_EQ(report->cublasConfig,
            "cublasGemmEx, bf16 inputs, f32 compute and output, "
            "CUBLAS_GEMM_DEFAULT; interleaved with ours");

  std::string none =
      fakeRunner("", "qimeng-cuda-runner: no CUDA driver here", 77);
  auto skipped = runCudaKernel(none, "kernel.cu", 10);
  llvm::sys::fs::remove(none);
  ASSERT_TRUE(static_cast<bool>(skipped))
      << llvm::toString(skipped.takeError());
  EXPECT_FALSE(skipped->ran);
  EXPECT_EQ(skipped->why, "qimeng-cuda-runner: no CUDA driver here");

  std::string wrong = fakeRunner("validated: no: uniform: C(0, 1) = 2", "", 1);
  auto failed = runCudaKernel(wrong, "kernel.cu", 10);
  llvm::sys::fs::remove(wrong);
  ASSERT_FALSE(static_cast<bool>(failed));
  std::string message = llvm::toString(failed.takeError());
  EXPECT_NE(message.find("exit 1"), std::string::npos) << message;
  EXPECT_NE(message.find("C(0, 1) = 2"), std::string::npos) << message;

  auto missing = runCudaKernel("/nonexistent/qimeng-cuda-runner", "k.cu", 10);
  ASSERT_TRUE(static_cast<bool>(missing));
  EXPECT_FALSE(missing->ran);
  EXPECT_NE(missing->why.find("is not built"), std::string::npos);
}

} // namespace
