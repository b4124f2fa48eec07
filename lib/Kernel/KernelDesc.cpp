//===- KernelDesc.cpp -----------------------------------------------------===//
#include "qimeng/Kernel/KernelDesc.h"
#include "llvm/Support/FormatVariadic.h"

using namespace qimeng;

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
  if (m < 1 || n < 1 || k < 1)
    return llvm::createStringError(
        llvm::formatv("invalid gemm shape {0}x{1}x{2}: sizes must be >= 1", m,
                      n, k)
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
  return llvm::Error::success();
}

std::string GemmDesc::str() const {
  return llvm::formatv("sgemm_m{0}_n{1}_k{2}_lda{3}_ldb{4}_ldc{5}_{6}{7}", m, n,
                       k, lda, ldb, ldc, transA ? 't' : 'n', transB ? 't' : 'n')
      .str();
}
