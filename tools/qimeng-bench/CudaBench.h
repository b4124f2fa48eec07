//===- CudaBench.h - qimeng-bench --device cuda -----------------*- C++ -*-===//
#ifndef QIMENG_TOOLS_BENCH_CUDABENCH_H
#define QIMENG_TOOLS_BENCH_CUDABENCH_H

#include <cstdint>
#include <string>
#include <vector>

namespace qimeng {

struct CudaBenchShape {
  int64_t m, n, k;
};

/// Ours against cuBLAS on the GPU, shape by shape: each shape's cuda_gemm
/// kernel for `gpu` (a GpuMachines name; C += A B, or A B^T with B N x K
/// where `bTransposed`), compiled with NVRTC and run by
/// qimeng-cuda-runner (beside `runnerDir`), which validates it and times
/// it and cublasGemmEx interleaved. Returns the exit status: 0, 1 when a
/// kernel fails, 77 when there is no GPU here (said so after the
/// configuration).
int runCudaBench(const std::vector<CudaBenchShape> &shapes,
                 const std::string &dtype, bool bTransposed,
                 const std::string &gpu, unsigned runs, bool json,
                 const std::string &runnerDir);

} // namespace qimeng

#endif // QIMENG_TOOLS_BENCH_CUDABENCH_H
