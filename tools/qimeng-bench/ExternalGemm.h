//===- ExternalGemm.h - Other libraries' SGEMM, loaded at run time -*- C++ -*-//
//
// Baselines beside OpenBLAS for qimeng-bench: BLIS (typed API bli_sgemm) and
// libxsmm (libxsmm_sgemm), each opened with dlopen so that the tool builds
// and runs without them, and with RTLD_DEEPBIND so that their BLAS symbols
// (BLIS exports sgemm_ and cblas_sgemm too) never bind to the OpenBLAS that
// the tool links, nor OpenBLAS's to theirs.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TOOLS_QIMENG_BENCH_EXTERNALGEMM_H
#define QIMENG_TOOLS_QIMENG_BENCH_EXTERNALGEMM_H

#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/Target.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <string>

namespace qimeng {

/// A handle from dlopen, closed on destruction. Move-only.
class SharedLibrary {
public:
  /// Opens the first of `candidates` (names for the loader's search, or
  /// paths) that loads, with RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND, and
  /// RTLD_NODELETE when `keepMapped`: for a library whose thread pool
  /// outlives its calls (BLIS's OpenMP runtime), unmapping it under its idle
  /// threads crashes them. If none loads, the error is
  /// "not found (<dlerror of the first candidate>)".
  static llvm::Expected<SharedLibrary>
  open(llvm::ArrayRef<const char *> candidates, bool keepMapped = false);

  SharedLibrary(SharedLibrary &&other) noexcept;
  SharedLibrary &operator=(SharedLibrary &&other) noexcept;
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;
  ~SharedLibrary();

  /// The address of `name` in this library, or null when it has none.
  void *symbol(const char *name) const;

  /// symbol() as a function pointer of type `Fn`.
  template <typename Fn> Fn function(const char *name) const {
    return reinterpret_cast<Fn>(symbol(name));
  }

  /// The file that was loaded, symbolic links resolved.
  const std::string &path() const { return filePath; }

private:
  SharedLibrary(void *handle, std::string filePath)
      : handle(handle), filePath(std::move(filePath)) {}

  void *handle = nullptr;
  std::string filePath;
};

/// An SGEMM from another library, called with GemmDesc's semantics.
class ExternalGemm {
public:
  virtual ~ExternalGemm() = default;

  /// The library's name as the benchmark prints it: "BLIS", "libxsmm".
  virtual llvm::StringRef name() const = 0;

  /// The version the library reports, or "" when it exports none.
  virtual std::string version() const = 0;

  /// One line on what was loaded and how it runs: file, kernels, threads.
  virtual std::string describe() const = 0;

  /// Threads the library computes with.
  virtual int threads() const = 0;

  /// Work a library does once per problem, outside the timing (oneDNN
  /// creates its primitive); call before gemm() with the same `desc`.
  virtual llvm::Error prepare(const GemmDesc &desc) {
    (void)desc;
    return llvm::Error::success();
  }

  /// C += A * B (alpha = beta = 1) for `desc`: row-major, leading
  /// dimensions in elements, transA/transB as GemmDesc defines them.
  virtual void gemm(const GemmDesc &desc, const float *a, const float *b,
                    float *c) const = 0;

  /// Which of the library's code paths computes `desc`, where that differs
  /// by shape (libxsmm: "jit" or "blas-fallback"; oneDNN: the
  /// implementation, "brg:avx512_core"); "" otherwise.
  virtual std::string pathFor(const GemmDesc &desc) const { return ""; }
};

/// BLIS through its typed API, bli_sgemm, from libblis.so.4.
class BlisGemm final : public ExternalGemm {
public:
  /// Loads BLIS to compute with `threads` threads: BLIS_NUM_THREADS is set
  /// before loading, and bli_thread_set_num_threads is called when present.
  /// BLIS picks its kernels (its "arch") once, when it initialises; unless
  /// `asDetected`, a configuration `bestBlisArch(host)` that ranks above
  /// BLIS's own choice is forced with BLIS_ARCH_TYPE (BLIS 0.9 reads the
  /// arch_t number), after a child process has shown that this build has
  /// it (BLIS aborts on one it lacks). describe() says which ran and why.
  static llvm::Expected<std::unique_ptr<ExternalGemm>>
  load(int threads, const Target &host, bool asDetected);

  llvm::StringRef name() const override { return "BLIS"; }
  std::string version() const override;
  std::string describe() const override;
  int threads() const override { return numThreads; }
  void gemm(const GemmDesc &desc, const float *a, const float *b,
            float *c) const override;
  /// "sgemv" for one row or one column of C, "" otherwise.
  std::string pathFor(const GemmDesc &desc) const override;

private:
  /// bli_sgemm: trans_t is an int-sized enum, dim_t and inc_t are 64-bit
  /// (load() checks bli_info_get_int_type_size_str).
  using SgemmFn = void (*)(int transa, int transb, int64_t m, int64_t n,
                           int64_t k, float *alpha, float *a, int64_t rsa,
                           int64_t csa, float *b, int64_t rsb, int64_t csb,
                           float *beta, float *c, int64_t rsc, int64_t csc);

  /// bli_sgemv: y = beta y + alpha op(A) x, conj_t int-sized too.
  using SgemvFn = void (*)(int transa, int conjx, int64_t m, int64_t n,
                           float *alpha, float *a, int64_t rsa, int64_t csa,
                           float *x, int64_t incx, float *beta, float *y,
                           int64_t incy);

  BlisGemm(SharedLibrary lib, SgemmFn sgemm, SgemvFn sgemv, int numThreads,
           std::string threadsVia, std::string archNote)
      : lib(std::move(lib)), sgemm(sgemm), sgemv(sgemv), numThreads(numThreads),
        threadsVia(std::move(threadsVia)), archNote(std::move(archNote)) {}

  SharedLibrary lib;
  SgemmFn sgemm;
  /// For one row or one column of C (a matrix-vector product, for which
  /// it is BLIS's best routine); null where the library has none.
  SgemvFn sgemv;
  int numThreads;
  std::string threadsVia;
  std::string archNote; ///< how the kernels were chosen
};

/// libxsmm through libxsmm_sgemm, its BLAS-like column-major entry point,
/// from libxsmm.so.1. It runs on the calling thread only.
class LibxsmmGemm final : public ExternalGemm {
public:
  /// Loads libxsmm and calls libxsmm_init when the library exports it.
  static llvm::Expected<std::unique_ptr<ExternalGemm>> load();

  llvm::StringRef name() const override { return "libxsmm"; }
  std::string version() const override { return ""; }
  std::string describe() const override;
  int threads() const override { return 1; }
  void gemm(const GemmDesc &desc, const float *a, const float *b,
            float *c) const override;
  std::string pathFor(const GemmDesc &desc) const override;

private:
  /// libxsmm_sgemm; libxsmm_blasint is int in the default (LP64) build.
  using SgemmFn = void (*)(const char *transa, const char *transb, const int *m,
                           const int *n, const int *k, const float *alpha,
                           const float *a, const int *lda, const float *b,
                           const int *ldb, const float *beta, float *c,
                           const int *ldc);
  /// libxsmm_smmdispatch: the JIT kernel libxsmm_sgemm would use, or null.
  using DispatchFn = void *(*)(int m, int n, int k, const int *lda,
                               const int *ldb, const int *ldc,
                               const float *alpha, const float *beta,
                               const int *flags, const int *prefetch);

  LibxsmmGemm(SharedLibrary lib, SgemmFn sgemm, DispatchFn dispatch)
      : lib(std::move(lib)), sgemm(sgemm), dispatch(dispatch) {}

  SharedLibrary lib;
  SgemmFn sgemm;
  DispatchFn dispatch;
};

} // namespace qimeng

#endif // QIMENG_TOOLS_QIMENG_BENCH_EXTERNALGEMM_H
