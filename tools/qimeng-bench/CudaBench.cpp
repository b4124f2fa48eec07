//===- CudaBench.cpp - qimeng-bench --device cuda -------------------------===//
//
// The answer to "which precision, which baseline?": both configurations in
// full before the figures. Ours: the cuda_gemm emitter's kernel for the
// GPU's architecture (docs/Cuda.md), compiled with NVRTC, validated before
// it is timed. cuBLAS: cublasGemmEx at the same precision and
// accumulation, its heuristics' default algorithm, on the same buffers,
// timed call by call interleaved with ours (qimeng-cuda-runner).
//
//===----------------------------------------------------------------------===//
#include "CudaBench.h"
#include "qimeng/Cuda/CudaKernel.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/GpuMachines.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

using namespace qimeng;
using json = nlohmann::json;

namespace {} // namespace

int qimeng::runCudaBench(const std::vector<CudaBenchShape> &shapes,
                         const std::string &dtype, bool bTransposed,
                         const std::string &gpuName, unsigned runs,
                         bool jsonOut, const std::string &runnerDir) {
  llvm::ExitOnError exitOnErr("qimeng-bench: ");
  if (dtype != "bf16" && dtype != "f16" && dtype != "tf32" && dtype != "f32")
    exitOnErr(llvm::createStringError("--device cuda takes --dtype bf16, f16, "
                                      "tf32 or f32, not '" +
                                      dtype + "'"));
  std::optional<GpuMachine> gpu = gpuMachineNamed(gpuName);
  if (!gpu)
    exitOnErr(llvm::createStringError(
        "unknown --gpu '" + gpuName +
        "'; known: " + llvm::join(gpuMachineTitles(), ", ")));
  const std::string runner = runnerDir + "/qimeng-cuda-runner";
  const bool tf32 = dtype == "tf32";
  const char *cublasType = dtype == "bf16"  ? "CUDA_R_16BF"
                           : dtype == "f16" ? "CUDA_R_16F"
                                            : "CUDA_R_32F";
  if (!jsonOut)
    llvm::outs()
        << "qimeng-bench --device cuda: C += A*" << (bTransposed ? "B^T" : "B")
        << " (beta = 1), A and B "
        << (tf32 ? "f32 multiplied in tf32 on tensor cores" : dtype)
        << (bTransposed ? ", B N x K" : ", B K x N")
        << ", C and accumulation f32, row-major; kernels for the " << gpu->title
        << " (" << gpu->arch << ", " << gpu->sms << " multiprocessors), NVRTC "
        << nvrtcVersionText() << "\n"
        << "ours: python_emitters' cuda_gemm (the engine and tiles in each "
           "row's kernel name), compiled in process, no spills; validated "
           "before timing (small integers bit for bit, uniform inputs "
           "within "
        << (tf32 ? "(2^-9 + 4 (K + 1) 2^-24)" : "4 (K + 1) 2^-24")
        << " (sum |a b| + |C0|) of an fp64 reference, C's guards untouched, "
           "NaN never passes)\n"
        << "cuBLAS: cublasGemmEx, " << cublasType << " A and B"
        << (bTransposed ? " (B with CUBLAS_OP_T)" : "") << ", CUDA_R_32F C, "
        << (tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F")
        << (dtype == "f32" ? " (no TF32)" : "")
        << ", CUBLAS_GEMM_DEFAULT (its heuristics), alpha 1, beta 1, on "
           "ours' buffers\n"
        << "timing: CUDA events, the L2 flushed (512 MiB memset) before "
           "every call, ours and cuBLAS interleaved call by call, medians of "
        << runs << "\n";
  int status = 0;
  bool header = false;
  for (const CudaBenchShape &s : shapes) {
    const std::string shape = llvm::formatv("{0}x{1}x{2}", s.m, s.n, s.k);
    CudaGemmKernel kernel =
        exitOnErr(buildCudaGemm(*gpu, dtype, s.m, s.n, s.k, /*overwrite=*/false,
                                bTransposed, EmitterOptions::defaults()));
    auto run = runCudaKernelSource(runner, kernel.source, runs);
    if (!run) {
      llvm::errs() << "qimeng-bench: " << shape << ": "
                   << llvm::toString(run.takeError()) << "\n";
      status = 1;
      continue;
    }
    if (!run->ran) {
      // No GPU here: nothing can be timed, for this shape or any other.
      if (jsonOut)
        llvm::outs() << json{{"shape", shape},
                             {"dtype", dtype},
                             {"b", bTransposed ? "nk" : "kn"},
                             {"kernel", kernel.source.symbol},
                             {"not_run_because", run->why}}
                            .dump()
                     << "\n";
      else
        llvm::outs() << "not run: " << run->why << "\n";
      return 77;
    }
    const double ratio = run->oursMs > 0 ? run->cublasMs / run->oursMs : 0.0;
    if (jsonOut) {
      llvm::outs() << json{{"shape", shape},
                           {"dtype", dtype},
                           {"b", bTransposed ? "nk" : "kn"},
                           {"device", run->device},
                           {"kernel", kernel.source.symbol},
                           {"engine", kernel.source.engine},
                           {"registers", kernel.compiled.ptxas.registers},
                           {"ours_ms", run->oursMs},
                           {"ours_tflops", run->oursTflops},
                           {"cublas_ms", run->cublasMs},
                           {"cublas_tflops", run->cublasTflops},
                           {"ratio", ratio},
                           {"validated", run->validation},
                           {"cublas", run->cublasConfig}}
                          .dump()
                   << "\n";
      continue;
    }
    if (!header) {
      llvm::outs() << "device: " << run->device << "\n"
                   << llvm::formatv("{0,-18} {1,12} {2,14} {3,7}  {4}\n",
                                    "shape", "ours TFLOP/s", "cuBLAS TFLOP/s",
                                    "ratio", "kernel");
      header = true;
    }
    llvm::outs() << llvm::formatv("{0,-18} {1,12:F1} {2,14:F1} {3,7:F2}  {4}\n",
                                  shape, run->oursTflops, run->cublasTflops,
                                  ratio, kernel.source.symbol);
  }
  return status;
}
