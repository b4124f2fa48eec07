//===- ExternalGemm.cpp - Other libraries' SGEMM, loaded at run time ------===//
//
// GemmDesc is row-major: A(m,k) is A[m*lda + k] (A[k*lda + m] when transA),
// B(k,n) is B[k*ldb + n] (B[n*ldb + k] when transB), C(m,n) is C[m*ldc + n].
//
// BLIS takes a row stride and a column stride per operand, so each operand
// is described as stored (row stride = leading dimension, column stride 1)
// and the transposes are passed as BLIS_TRANSPOSE.
//
// libxsmm_sgemm is column-major, as BLAS: a row-major matrix with leading
// dimension ld is its transpose in column-major order with the same ld. So
// the row-major C += op(A) * op(B) is computed as the column-major
// C^T += op(B)^T * op(A)^T: operands swapped, m and n swapped, each
// operand's transpose flag kept with its operand.
//
//===----------------------------------------------------------------------===//
#include "ExternalGemm.h"
#include "qimeng/Runtime/PeerKernels.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <cassert>
#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <link.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace qimeng;

//===----------------------------------------------------------------------===//
// SharedLibrary
//===----------------------------------------------------------------------===//

llvm::Expected<SharedLibrary>
SharedLibrary::open(llvm::ArrayRef<const char *> candidates, bool keepMapped) {
  int flags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
  if (keepMapped)
    flags |= RTLD_NODELETE;
  std::string firstError;
  for (const char *candidate : candidates) {
    void *handle = dlopen(candidate, flags);
    if (!handle) {
      if (firstError.empty()) {
        const char *err = dlerror();
        firstError = err ? err : std::string(candidate) + ": dlopen failed";
      }
      continue;
    }
    std::string path = candidate;
    struct link_map *map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
        *map->l_name)
      path = map->l_name;
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved))
      path = resolved;
    return SharedLibrary(handle, std::move(path));
  }
  return llvm::createStringError("not found (" + firstError + ")");
}

SharedLibrary::SharedLibrary(SharedLibrary &&other) noexcept
    : handle(other.handle), filePath(std::move(other.filePath)) {
  other.handle = nullptr;
}

SharedLibrary &SharedLibrary::operator=(SharedLibrary &&other) noexcept {
  if (this != &other) {
    if (handle)
      dlclose(handle);
    handle = other.handle;
    filePath = std::move(other.filePath);
    other.handle = nullptr;
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle)
    dlclose(handle);
}

void *SharedLibrary::symbol(const char *name) const {
  return handle ? dlsym(handle, name) : nullptr;
}

//===----------------------------------------------------------------------===//
// BlisGemm
//===----------------------------------------------------------------------===//

// trans_t values from blis.h (BLIS_TRANS_BIT is 1 << 3).
static constexpr int kBlisNoTranspose = 0x0;
static constexpr int kBlisTranspose = 0x8;
// conj_t's BLIS_NO_CONJUGATE.
static constexpr int kBlisNoConjugate = 0x0;

/// The BLIS builds to try: the soname first (Debian's alternatives pick the
/// variant), then the variants' own directories.
static const char *const kBlisCandidates[] = {
    "libblis.so.4",
    "/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4",
    "/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4",
    "/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4",
};

namespace {
/// What a BLIS initialised in a child process chose.
struct BlisArchProbe {
  std::string arch; ///< bli_arch_string of bli_arch_query_id
  int requestedId = -1;
};
} // namespace

/// In a child process (BLIS aborts the process when BLIS_ARCH_TYPE names a
/// configuration its build lacks, and picks its kernels once per process):
/// loads BLIS, sets BLIS_ARCH_TYPE to the number of the configuration named
/// `arch` (none when empty), initialises it and reports what it runs.
static llvm::Expected<BlisArchProbe> probeBlisArch(const std::string &arch) {
  int fds[2];
  if (pipe(fds) != 0)
    return llvm::createStringError("pipe failed");
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return llvm::createStringError("fork failed");
  }
  if (pid == 0) {
    close(fds[0]);
    unsetenv("BLIS_ARCH_TYPE");
    void *h = nullptr;
    for (const char *c : kBlisCandidates)
      if ((h = dlopen(c, RTLD_NOW | RTLD_LOCAL)))
        break;
    using ArchIdFn = int (*)();
    using ArchStringFn = const char *(*)(int);
    using InitFn = void (*)();
    auto archId =
        h ? reinterpret_cast<ArchIdFn>(dlsym(h, "bli_arch_query_id")) : nullptr;
    auto archString =
        h ? reinterpret_cast<ArchStringFn>(dlsym(h, "bli_arch_string"))
          : nullptr;
    auto init = h ? reinterpret_cast<InitFn>(dlsym(h, "bli_init")) : nullptr;
    if (!archId || !archString || !init)
      _exit(2);
    int id = -1;
    if (!arch.empty()) {
      // arch_t numbers differ between releases: find it by name. The
      // generic configuration is the last of the enumeration.
      for (int i = 0; i < 64 && id < 0; ++i) {
        const char *name = archString(i);
        if (!name)
          break;
        if (arch == name)
          id = i;
        if (llvm::StringRef(name) == "generic")
          break;
      }
      if (id < 0)
        _exit(3);
      setenv("BLIS_ARCH_TYPE", std::to_string(id).c_str(), 1);
    }
    init();
    std::string answer =
        std::string(archString(archId())) + "\n" + std::to_string(id) + "\n";
    ssize_t unused = write(fds[1], answer.data(), answer.size());
    (void)unused;
    _exit(0);
  }
  close(fds[1]);
  std::string answer;
  char buf[256];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0)
    answer.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
      return llvm::createStringError("BLIS has no configuration named '" +
                                     arch + "'");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
      return llvm::createStringError("BLIS did not load in the probe");
    return llvm::createStringError("BLIS aborted when asked for '" + arch +
                                   "' (its build lacks that configuration)");
  }
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(answer).split(lines, '\n', -1, false);
  BlisArchProbe probe;
  if (lines.size() != 2 || lines[1].getAsInteger(10, probe.requestedId))
    return llvm::createStringError("BLIS probe gave no answer");
  probe.arch = lines[0].str();
  return probe;
}

/// Sets BLIS_ARCH_TYPE for the BLIS this process is about to load, and
/// returns how its kernels were chosen, for describe().
static std::string chooseBlisArch(const Target &host, bool asDetected) {
  std::string machine;
  if (const char *v = getenv("BLIS_ARCH_TYPE")) {
    machine = std::string("; the machine's BLIS_ARCH_TYPE=") + v +
              " unset for this run";
    unsetenv("BLIS_ARCH_TYPE");
  }
  auto detected = probeBlisArch("");
  if (!detected)
    return "its own choice (the probe failed: " +
           llvm::toString(detected.takeError()) + ")" + machine;
  std::string best = bestBlisArch(host);
  std::string force =
      asDetected ? "" : kernelsToForce(detected->arch, best, blisArchRank);
  if (force.empty()) {
    if (asDetected && !best.empty() && best != detected->arch)
      return "its own choice, kept by --baseline-as-detected; this CPU's "
             "features allow " +
             best + machine;
    return "its own choice" +
           (best.empty()             ? std::string()
            : best == detected->arch ? ", the best for this CPU's features"
                                     : ", ranked at least as high as " + best) +
           machine;
  }
  auto forced = probeBlisArch(force);
  if (!forced)
    return "its own choice: forcing " + force + " failed (" +
           llvm::toString(forced.takeError()) + ")" + machine;
  if (forced->arch != force)
    return "its own choice: asked for " + force + ", BLIS ran " + forced->arch +
           machine;
  setenv("BLIS_ARCH_TYPE", std::to_string(forced->requestedId).c_str(), 1);
  return llvm::formatv("forced with BLIS_ARCH_TYPE={0} ({1}): BLIS picks {2} "
                       "on this CPU, whose features allow {1}{3}",
                       forced->requestedId, force, detected->arch, machine)
      .str();
}

llvm::Expected<std::unique_ptr<ExternalGemm>>
BlisGemm::load(int threads, const Target &host, bool asDetected) {
  // BLIS reads BLIS_NUM_THREADS when it initialises, on its first call; it
  // is the fallback for a build without bli_thread_set_num_threads.
  setenv("BLIS_NUM_THREADS", std::to_string(threads).c_str(), 1);
  std::string archNote = chooseBlisArch(host, asDetected);
  // An OpenMP or pthreads build keeps its worker threads after a call.
  auto lib = SharedLibrary::open(kBlisCandidates, /*keepMapped=*/true);
  if (!lib)
    return lib.takeError();
  auto sgemm = lib->function<SgemmFn>("bli_sgemm");
  if (!sgemm)
    return llvm::createStringError(lib->path() + " has no bli_sgemm");
  using IntSizeFn = const char *(*)();
  auto intSize = lib->function<IntSizeFn>("bli_info_get_int_type_size_str");
  if (!intSize)
    return llvm::createStringError(
        lib->path() + " has no bli_info_get_int_type_size_str; cannot tell "
                      "the width of dim_t");
  if (llvm::StringRef(intSize()) != "64")
    return llvm::createStringError(
        lib->path() + " uses " + intSize() +
        "-bit dim_t/inc_t; this benchmark calls bli_sgemm with 64-bit ones");
  std::string via = "BLIS_NUM_THREADS";
  using SetThreadsFn = void (*)(int64_t);
  if (auto setThreads =
          lib->function<SetThreadsFn>("bli_thread_set_num_threads")) {
    setThreads(threads);
    via = "bli_thread_set_num_threads";
  }
  auto sgemv = lib->function<SgemvFn>("bli_sgemv");
  return std::unique_ptr<ExternalGemm>(
      new BlisGemm(std::move(*lib), sgemm, sgemv, threads, std::move(via),
                   std::move(archNote)));
}

std::string BlisGemm::version() const {
  using VersionFn = const char *(*)();
  if (auto fn = lib.function<VersionFn>("bli_info_get_version_str"))
    if (const char *v = fn())
      return v;
  return "";
}

std::string BlisGemm::describe() const {
  std::string text = lib.path();
  using ArchIdFn = int (*)();
  using ArchStringFn = const char *(*)(int);
  auto archId = lib.function<ArchIdFn>("bli_arch_query_id");
  auto archString = lib.function<ArchStringFn>("bli_arch_string");
  if (archId && archString)
    if (const char *arch = archString(archId()))
      text += std::string(", kernels ") + arch + " (" + archNote + ")";
  using FlagFn = int64_t (*)();
  const char *model = "unknown threading";
  auto openmp = lib.function<FlagFn>("bli_info_get_enable_openmp");
  auto pthreads = lib.function<FlagFn>("bli_info_get_enable_pthreads");
  if (openmp && openmp())
    model = "openmp";
  else if (pthreads && pthreads())
    model = "pthreads";
  else if (openmp && pthreads)
    model = "single-threaded build";
  text += llvm::formatv(", {0} thread(s) via {1} ({2})", numThreads, threadsVia,
                        model)
              .str();
  return text;
}

std::string BlisGemm::pathFor(const GemmDesc &desc) const {
  return sgemv && (desc.m == 1 || desc.n == 1) ? "sgemv" : "";
}

void BlisGemm::gemm(const GemmDesc &desc, const float *a, const float *b,
                    float *c) const {
  float one = 1.0f;
  // One row of C: y = B' x, B' the N x K matrix B(k, n) with x = A's row;
  // one column: y = A x with x = B's column (general strides).
  if (sgemv && desc.m == 1) {
    sgemv(kBlisNoTranspose, kBlisNoConjugate, desc.n, desc.k, &one,
          const_cast<float *>(b), desc.transB ? desc.ldb : 1,
          desc.transB ? 1 : desc.ldb, const_cast<float *>(a),
          desc.transA ? desc.lda : 1, &one, c, 1);
    return;
  }
  if (sgemv && desc.n == 1) {
    sgemv(kBlisNoTranspose, kBlisNoConjugate, desc.m, desc.k, &one,
          const_cast<float *>(a), desc.transA ? 1 : desc.lda,
          desc.transA ? desc.lda : 1, const_cast<float *>(b),
          desc.transB ? 1 : desc.ldb, &one, c, desc.ldc);
    return;
  }
  // bli_sgemm takes non-const operands but reads A and B only.
  sgemm(desc.transA ? kBlisTranspose : kBlisNoTranspose,
        desc.transB ? kBlisTranspose : kBlisNoTranspose, desc.m, desc.n, desc.k,
        &one, const_cast<float *>(a), desc.lda, 1, const_cast<float *>(b),
        desc.ldb, 1, &one, c, desc.ldc, 1);
}

//===----------------------------------------------------------------------===//
// LibxsmmGemm
//===----------------------------------------------------------------------===//

// libxsmm_sgemm JIT-compiles a kernel only for M*N*K up to LIBXSMM_MAX_MNK
// (libxsmm_config.h; 64^3 in 1.17's default build) and hands larger ones to
// the sgemm_ of the BLAS in the process.
static constexpr uint64_t kLibxsmmMaxMnk = 64 * 64 * 64;
// LIBXSMM_GEMM_FLAG_TRANS_A and _B from libxsmm_typedefs.h.
static constexpr int kLibxsmmTransA = 1;
static constexpr int kLibxsmmTransB = 2;

llvm::Expected<std::unique_ptr<ExternalGemm>> LibxsmmGemm::load() {
  // A shared libxsmm where one is installed; else the build's private shared
  // object made from Debian's static libxsmm.a, beside the tool's bin/ in
  // lib/ (tools/qimeng-bench/CMakeLists.txt).
  std::vector<std::string> names = {"libxsmm.so.1", "libxsmm.so"};
#ifdef QIMENG_LIBXSMM_SHARED
  std::string exe = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&LibxsmmGemm::load));
  if (!exe.empty()) {
    llvm::SmallString<256> path(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(path, "lib", QIMENG_LIBXSMM_SHARED);
    names.insert(names.begin(), std::string(path));
  }
#endif
  std::vector<const char *> candidates;
  for (const std::string &name : names)
    candidates.push_back(name.c_str());
  auto lib = SharedLibrary::open(candidates);
  if (!lib) {
    // Debian's libxsmm-dev installs static archives only.
    if (!llvm::sys::fs::exists("/usr/lib/libxsmm.a"))
      return lib.takeError();
    return llvm::createStringError(
        llvm::toString(lib.takeError()) +
        "; /usr/lib/libxsmm.a is a static archive, which dlopen cannot load "
        "(configure the build with it present to get a shared copy)");
  }
  auto sgemm = lib->function<SgemmFn>("libxsmm_sgemm");
  if (!sgemm)
    return llvm::createStringError(lib->path() + " has no libxsmm_sgemm");
  using InitFn = void (*)();
  if (auto init = lib->function<InitFn>("libxsmm_init"))
    init();
  auto dispatch = lib->function<DispatchFn>("libxsmm_smmdispatch");
  return std::unique_ptr<ExternalGemm>(
      new LibxsmmGemm(std::move(*lib), sgemm, dispatch));
}

std::string LibxsmmGemm::describe() const {
  std::string text = lib.path();
  using ArchFn = const char *(*)();
  if (auto arch = lib.function<ArchFn>("libxsmm_get_target_arch"))
    if (const char *name = arch())
      text += std::string(", target ") + name;
  text +=
      ", 1 thread (libxsmm_sgemm is sequential); jit kernels up to "
      "M*N*K = 64^3, larger shapes and those without a kernel (marked *) go to "
      "the process's BLAS sgemm_";
  return text;
}

/// The column-major operands of the swapped product: libxsmm's "A" is our
/// B, its "B" is our A.
struct ColumnMajorArgs {
  char transa, transb;
  int m, n, k, lda, ldb, ldc;
};

static ColumnMajorArgs columnMajorArgs(const GemmDesc &desc) {
  assert(desc.m <= INT_MAX && desc.n <= INT_MAX && desc.k <= INT_MAX &&
         desc.lda <= INT_MAX && desc.ldb <= INT_MAX && desc.ldc <= INT_MAX &&
         "libxsmm_blasint is 32-bit");
  ColumnMajorArgs args;
  args.transa = desc.transB ? 'T' : 'N';
  args.transb = desc.transA ? 'T' : 'N';
  args.m = static_cast<int>(desc.n);
  args.n = static_cast<int>(desc.m);
  args.k = static_cast<int>(desc.k);
  args.lda = static_cast<int>(desc.ldb);
  args.ldb = static_cast<int>(desc.lda);
  args.ldc = static_cast<int>(desc.ldc);
  return args;
}

void LibxsmmGemm::gemm(const GemmDesc &desc, const float *a, const float *b,
                       float *c) const {
  ColumnMajorArgs x = columnMajorArgs(desc);
  float one = 1.0f;
  sgemm(&x.transa, &x.transb, &x.m, &x.n, &x.k, &one, b, &x.lda, a, &x.ldb,
        &one, c, &x.ldc);
}

std::string LibxsmmGemm::pathFor(const GemmDesc &desc) const {
  if (uint64_t(desc.m) * uint64_t(desc.n) * uint64_t(desc.k) > kLibxsmmMaxMnk)
    return "blas-fallback";
  if (!dispatch)
    return "";
  // The kernel libxsmm_sgemm asks for; null means it falls back to BLAS.
  ColumnMajorArgs x = columnMajorArgs(desc);
  int flags = (x.transa == 'T' ? kLibxsmmTransA : 0) |
              (x.transb == 'T' ? kLibxsmmTransB : 0);
  float one = 1.0f;
  return dispatch(x.m, x.n, x.k, &x.lda, &x.ldb, &x.ldc, &one, &one, &flags,
                  nullptr)
             ? "jit"
             : "blas-fallback";
}
