//===- GemmValidator.h - Nothing generated is trusted -----------*- C++ -*-===//
//
// Checks a GEMM kernel against OpenBLAS cblas_sgemm and an fp64 reference
// with several input distributions, guard bytes around C and in its
// leading-dimension gaps, and A and B checked unchanged after the call.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_RUNTIME_GEMMVALIDATOR_H
#define QIMENG_RUNTIME_GEMMVALIDATOR_H

#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Runtime/ValidationNumerics.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qimeng {

/// The kernel ABI (docs/KernelContract.md): C += op(A) * op(B) for the shape
/// and strides the kernel was generated for; `workspace` is 64-byte aligned
/// and at least the kernel's workspace size.
using GemmKernelFn = void (*)(const float *a, const float *b, float *c,
                              void *workspace);

/// The distribution's name as it appears in failure messages:
/// "small-integers", "uniform", "mixed".
llvm::StringRef distributionName(Distribution dist);

/// fp64 references (values and magnitudes) kept between validations of the
/// same problem with the same inputs: qimeng-runner validates a candidate
/// before and after timing it, and the reference of a large problem costs
/// more than running the kernel. Keyed by problem, distribution and seed.
class ReferenceCache {
public:
  struct Entry {
    std::vector<double> ref, mag;
  };
  const Entry *find(const std::string &key) const {
    auto it = entries.find(key);
    return it == entries.end() ? nullptr : &it->second;
  }
  void store(const std::string &key, Entry entry) {
    entries[key] = std::move(entry);
  }

private:
  std::map<std::string, Entry> entries;
};

struct ValidationOptions {
  std::vector<Distribution> distributions = {
      Distribution::SmallIntegers, Distribution::Uniform, Distribution::Mixed};
  uint64_t seed = 0x5eed;
  /// Also compare with OpenBLAS (cblas_sgemm with beta = 1).
  bool compareOpenBlas = true;
  /// Guard floats before and after each buffer.
  int64_t guardElements = 64;
  /// Where references are kept between calls; none when null.
  ReferenceCache *referenceCache = nullptr;
};

struct ValidationReport {
  bool passed = false;
  /// Largest |ours - fp64| / (sum_k |a||b| + |c0|) over elements and runs.
  double maxRelError = 0;
  /// Same measure for OpenBLAS, for the record.
  double openBlasMaxRelError = 0;
  /// First failure, e.g. "uniform: C(3,4) = 1.5, expected 2.25 (fp64)",
  /// "guard bytes after C overwritten at element 12", "A changed at (0,1)".
  std::string failure;
};

/// Runs `kernel` on fresh buffers for each distribution and checks it.
/// Returns an error only for an invalid descriptor or allocation failure; a
/// wrong kernel gives a report with passed = false and the reason.
llvm::Expected<ValidationReport> validateGemm(
    const GemmDesc &desc,
    const std::function<void(const float *, const float *, float *, void *)>
        &kernel,
    size_t workspaceBytes, const ValidationOptions &options = {});

/// Float storage whose first real element is 64-byte aligned, with `guard`
/// floats on each side. Move-only; the memory is freed on destruction. The
/// validator runs kernels on these; a benchmark can use them for aligned
/// operands and a workspace.
class GuardedBuffer {
public:
  /// Allocates `size` floats plus `guard` on each side. The contents are
  /// uninitialised; fill them with fillSentinel(). `size` 0 gives a valid,
  /// aligned, non-null data() pointer.
  static llvm::Expected<GuardedBuffer> allocate(int64_t size, int64_t guard);

  /// Allocates `size` floats with `guard` before them and none after: the
  /// last float ends a page, and the page after it is mapped with no
  /// access, so that a kernel reading (or writing) past the end faults
  /// instead of passing on whatever lies there. For the operands a kernel
  /// reads; data() is then only 4-byte aligned (kernels take any address).
  static llvm::Expected<GuardedBuffer> allocateBeforeUnmapped(int64_t size,
                                                              int64_t guard);

  /// The first real element, 64-byte aligned (allocate) or ending a page
  /// (allocateBeforeUnmapped).
  float *data() const { return dataPtr; }
  int64_t size() const { return numElements; }
  int64_t guard() const { return numGuard; }

  /// The whole region, guards included: guard() floats before data(), size()
  /// floats, and guard() floats after (allocate) or none
  /// (allocateBeforeUnmapped).
  float *regionBegin() const { return dataPtr - numGuard; }
  int64_t regionSize() const { return numElements + numGuard + numGuardAfter; }

  /// Writes kGuardSentinelBits over the whole region, guards included.
  void fillSentinel();

  /// The first guard float that no longer holds the sentinel: a negative
  /// offset from data() for the guard before (-1 is the float just before),
  /// or an offset >= size() for the guard after.
  std::optional<int64_t> firstDamagedGuard() const;

private:
  /// free() for allocate's storage, munmap of the whole mapping for
  /// allocateBeforeUnmapped's.
  struct Release {
    Release() : mappedBytes(0) {}
    explicit Release(size_t bytes) : mappedBytes(bytes) {}
    size_t mappedBytes;
    void operator()(float *p) const;
  };
  std::unique_ptr<float, Release> storage;
  float *dataPtr = nullptr;
  int64_t numElements = 0;
  int64_t numGuard = 0;
  int64_t numGuardAfter = 0;
};

} // namespace qimeng

#endif // QIMENG_RUNTIME_GEMMVALIDATOR_H
