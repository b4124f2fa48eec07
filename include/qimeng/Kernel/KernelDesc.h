//===- KernelDesc.h - What a kernel computes --------------------*- C++ -*-===//
//
// The contract between the pass and everything below it: a plain, hashable,
// printable description of one operation instance. No MLIR in here.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_KERNELDESC_H
#define QIMENG_KERNEL_KERNELDESC_H

#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>

namespace qimeng {

/// Single-precision GEMM on row-major storage, with linalg.matmul semantics:
/// C[m][n] += sum_k A(m,k) * B(k,n).
///
/// A(m,k) is A[m*lda + k], or A[k*lda + m] when transA (A stored K x M).
/// B(k,n) is B[k*ldb + n], or B[n*ldb + k] when transB (B stored N x K).
/// C(m,n) is C[m*ldc + n]. Leading dimensions are in elements.
struct GemmDesc {
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  bool transA = false;
  bool transB = false;

  /// A descriptor with the tightest leading dimensions for its transposes.
  static GemmDesc packed(int64_t m, int64_t n, int64_t k, bool transA = false,
                         bool transB = false);

  /// Rows and columns of A and B as stored.
  int64_t aRows() const { return transA ? k : m; }
  int64_t aCols() const { return transA ? m : k; }
  int64_t bRows() const { return transB ? n : k; }
  int64_t bCols() const { return transB ? k : n; }

  /// Elements each operand spans in memory (last row is not padded).
  int64_t aSpan() const { return (aRows() - 1) * lda + aCols(); }
  int64_t bSpan() const { return (bRows() - 1) * ldb + bCols(); }
  int64_t cSpan() const { return (m - 1) * ldc + n; }

  double flops() const { return 2.0 * m * n * k; }

  /// Checks sizes >= 1 and leading dimensions wide enough.
  llvm::Error verify() const;

  /// Stable, readable key: "sgemm_m7_n5_k3_lda3_ldb5_ldc5_nn".
  std::string str() const;

  bool operator==(const GemmDesc &o) const {
    return m == o.m && n == o.n && k == o.k && lda == o.lda && ldb == o.ldb &&
           ldc == o.ldc && transA == o.transA && transB == o.transB;
  }
};

} // namespace qimeng

#endif // QIMENG_KERNEL_KERNELDESC_H
