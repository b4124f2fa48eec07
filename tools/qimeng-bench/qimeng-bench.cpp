//===- qimeng-bench.cpp - Our kernels against BLAS libraries, side by side ===//
//
// For each shape: emit our kernel and validate it in a qimeng-runner
// process; start OpenBLAS, BLIS, libxsmm and oneDNN each in a process of its
// own (PeerProcess.h), where each is validated with the same checker; then
// time them all interleaved round by round, one process at a time, same
// threads and the same semantics (C += A * B, i.e. beta = 1), and report
// medians, paired ratios and the fraction of this machine's measured FMA
// peak.
//
// Every peer runs the best kernels it has for this CPU (PeerKernels.h):
// OpenBLAS and BLIS pick theirs from the CPU's identity and misjudge newer
// CPUs, so the benchmark re-executes itself with OPENBLAS_CORETYPE set and
// loads BLIS with BLIS_ARCH_TYPE set where the CPU's features allow better
// kernels than the library's own choice, confirms which ran and prints it.
// --baseline-as-detected keeps each library's own choice.
//
//===----------------------------------------------------------------------===//
#include "BenchKernel.h"
#include "ConvBench.h"
#include "CudaBench.h"
#include "PeerProcess.h"
#include "qimeng/Emit/Assembler.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/Benchmark.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Runtime/JitKernel.h"
#include "qimeng/Runtime/PeakGauge.h"
#include "qimeng/Runtime/PeerKernels.h"
#include "qimeng/Runtime/RunnerService.h"
#include "qimeng/Support/CommandLine.h"
#include "qimeng/Tune/Tuner.h"
#include "qimeng/Tune/TuningDatabase.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <unistd.h>

using namespace qimeng;
namespace cl = llvm::cl;

static cl::OptionCategory benchCategory("qimeng-bench options");
static cl::opt<std::string>
    opKind("op",
           cl::desc("Operation: gemm (also spelt sgemm), or conv2d (with "
                    "--suite)"),
           cl::init("sgemm"), cl::cat(benchCategory));
static cl::opt<std::string> dtypeOpt(
    "dtype",
    cl::desc("Operand types: f32; bf16 (bf16 A and B, f32 C and "
             "accumulation: ours' AVX512-BF16 kernels against oneDNN's bf16 "
             "matmul and OpenBLAS's sbgemm where the build has it); s8 (s8 A "
             "and B, s32 C) or u8s8 (u8 A): ours' AVX512-VNNI kernels "
             "against oneDNN's int8 matmul (AMX's tiles for bf16 and 8-bit "
             "where the host has them); f16 (f16 A and B, f32 C and "
             "accumulation: ours on the AMX-BF16 tiles, each f16 split into "
             "two bf16, or on AVX-512 widened to f32 (few rows against B^T "
             "and hosts without AMX), against oneDNN's f16 matmul, or where "
             "it has none its f32 matmul on the values widened outside the "
             "timing). With --op conv2d the input is "
             "A's type, the filter B's and the output C's, against oneDNN's "
             "convolution at the same types"),
    cl::init("f32"), cl::cat(benchCategory));
static cl::opt<std::string>
    suiteOpt("suite",
             cl::desc("conv2d layers to run: resnet50 (ResNet-50's 3x3 "
                      "stages, a 1x1 and the 7x7 stride-2 stem, batch 1, "
                      "NHWC unless --conv-layout says NCHW)"),
             cl::init("resnet50"), cl::cat(benchCategory));
static cl::opt<int> settleMsOpt(
    "settle-ms",
    cl::desc("Pause before each candidate's round, in milliseconds, so that "
             "the other libraries' thread teams stop spinning first (default: "
             "250 with more than one thread, else 0)"),
    cl::init(-1), cl::cat(benchCategory));
static cl::opt<std::string>
    layersOpt("layers",
              cl::desc("Comma-separated layer names of the conv2d suite to "
                       "run (default: all; the names are the table's "
                       "first column)"),
              cl::init(""), cl::cat(benchCategory));
static cl::opt<std::string>
    shapesOpt("shapes",
              cl::desc("Comma-separated MxNxK shapes (default: 64x64x64,"
                       "128x128x128,256x256x256,512x512x512,1024x1024x1024,"
                       "2048x2048x2048)"),
              cl::init("64x64x64,128x128x128,256x256x256,512x512x512,"
                       "1024x1024x1024,2048x2048x2048"),
              cl::cat(benchCategory));
// libLLVM.so already registers a hidden "threads" option, so ours is
// "thread-count" and main() maps --threads onto it (RenamedArgs).
static cl::opt<unsigned>
    threadsOpt("thread-count",
               cl::desc("Threads for ours, OpenBLAS and BLIS; libxsmm runs on "
                        "one (also spelled --threads)"),
               cl::init(1), cl::cat(benchCategory));
static cl::opt<unsigned> runsOpt("runs",
                                 cl::desc("Timed rounds per shape (>= 7); "
                                          "the median is reported"),
                                 cl::init(9), cl::cat(benchCategory));
static cl::opt<std::string>
    transOpt("transpose", cl::desc("Operand layout: nn, nt, tn or tt"),
             cl::init("nn"), cl::cat(benchCategory));
static cl::opt<std::string>
    configOpt("kernel-config",
              cl::desc("Pin our kernel's configuration (as the pass option)"),
              cl::init(""), cl::cat(benchCategory));
static cl::opt<bool> jsonOpt("json", cl::desc("One JSON object per shape"),
                             cl::init(false), cl::cat(benchCategory));
static cl::opt<bool>
    tunedOpt("tuned",
             cl::desc("Benchmark the tuned kernel: the database's entry, or "
                      "tune the shape first (see --tune-budget) and store it"),
             cl::init(false), cl::cat(benchCategory));
static cl::opt<unsigned>
    tuneBudgetOpt("tune-budget",
                  cl::desc("Trials when --tuned has to tune a shape"),
                  cl::init(24), cl::cat(benchCategory));
static cl::opt<std::string> cacheDirOpt(
    "cache-dir",
    cl::desc("Tuning database for --tuned (default: QIMENG_CACHE_DIR, then "
             "$XDG_CACHE_HOME/qimeng-tensorop, then ~/.cache/qimeng-tensorop)"),
    cl::init(""), cl::cat(benchCategory));
static cl::list<std::string> variantOpt(
    "variant",
    cl::desc("Settings laid over our kernel's config (keys as "
             "--kernel-config); that kernel is validated and timed side by "
             "side with ours, and its speedup over ours printed under the "
             "row (repeat for more variants)"),
    cl::value_desc("settings"), cl::cat(benchCategory));
static cl::opt<std::string> convLayoutOpt(
    "conv-layout",
    cl::desc("--op conv2d: the layers' layout, nhwc_hwcf (default: "
             "StableHLO's, TOSA's with the filter as hwcf) or nchw_fchw "
             "(torch's; oneDNN then chooses its activations' layout and "
             "each call reorders the nchw tensors into it and back)"),
    cl::init("nhwc_hwcf"), cl::cat(benchCategory));
static cl::opt<bool> prepackedWeightsOpt(
    "prepacked-weights",
    cl::desc("--op conv2d (f32, bf16, s8 or u8s8): our kernels take the "
             "filter packed once, outside the timing (constant weights, as "
             "oneDNN's are reordered once, and as the pass packs a constant "
             "filter at compile time): no PACK B at each call"),
    cl::init(false), cl::cat(benchCategory));
static cl::opt<bool>
    noExternalOpt("no-external",
                  cl::desc("Skip BLIS, libxsmm and oneDNN: OpenBLAS is the "
                           "only baseline"),
                  cl::init(false), cl::cat(benchCategory));
// Read before llvm::cl parses (selectOpenBlasCore runs first); declared here
// for --help and so that the parser accepts it.
static cl::opt<std::string> deviceOpt(
    "device",
    cl::desc("cpu (the default), or cuda: ours against cuBLAS on the GPU "
             "(--dtype bf16, f16, tf32 (f32 inputs multiplied in tf32 on "
             "tensor cores; Hopper's wgmma reads them only with B N x K: "
             "--transpose nt) or f32; --transpose nn or nt; --gpu names the "
             "GPU the kernels are compiled for; default shapes 4096^3, "
             "8192^3 and 16384x1024x8192)"),
    cl::init("cpu"), cl::cat(benchCategory));
static cl::opt<std::string>
    gpuOpt("gpu",
           cl::desc("With --device cuda: the GPU the kernels are written "
                    "for (H200, H100, A100, RTX 4090, RTX 4060)"),
           cl::init("H200"), cl::cat(benchCategory));
static cl::opt<bool> baselineAsDetectedOpt(
    "baseline-as-detected",
    cl::desc("Run OpenBLAS and BLIS with the kernels they pick by "
             "themselves, even where this CPU's features allow better ones "
             "(by default the benchmark forces the best: "
             "OPENBLAS_CORETYPE, BLIS_ARCH_TYPE)"),
    cl::init(false), cl::cat(benchCategory));

struct Shape {
  int64_t m, n, k;
};

static llvm::Expected<std::vector<Shape>> parseShapes(llvm::StringRef s) {
  std::vector<Shape> shapes;
  llvm::SmallVector<llvm::StringRef> items;
  s.split(items, ',', -1, false);
  for (llvm::StringRef item : items) {
    llvm::SmallVector<llvm::StringRef> dims;
    item.trim().split(dims, 'x');
    Shape sh;
    if (dims.size() != 3 || dims[0].getAsInteger(10, sh.m) ||
        dims[1].getAsInteger(10, sh.n) || dims[2].getAsInteger(10, sh.k) ||
        sh.m < 1 || sh.n < 1 || sh.k < 1)
      return llvm::createStringError("bad shape '" + item.str() +
                                     "'; expected MxNxK with sizes >= 1");
    shapes.push_back(sh);
  }
  if (shapes.empty())
    return llvm::createStringError("no shapes given");
  return shapes;
}

/// A peer library's column: its names, and the header line that says what
/// it is or why it is missing.
struct PeerColumn {
  std::string peer;    ///< PeerProcess's name: "blis"
  std::string label;   ///< "BLIS", as in the table's column header
  std::string jsonKey; ///< "blis", the prefix of its JSON fields
  std::string pathKey; ///< JSON field of its path: "path", or "impl"
  bool available = false;
  std::string version;
  int threads = 1;
  std::string note;
};

/// The column of `peer`, described by a worker that loads it (for the
/// header) on `problem`; a missing library is a note, not an error.
static PeerColumn describeColumn(std::string peer, std::string label,
                                 std::string jsonKey, std::string pathKey,
                                 const KernelProblem &problem, int threads,
                                 bool asDetected) {
  PeerColumn col{std::move(peer), std::move(label), std::move(jsonKey),
                 std::move(pathKey)};
  if (noExternalOpt && col.peer != "openblas") {
    col.note = col.label + ": skipped (--no-external)";
    return col;
  }
  auto worker = PeerProcess::start(col.peer, problem, threads, asDetected,
                                   /*describeOnly=*/true);
  if (!worker) {
    col.note = col.label + ": " + llvm::toString(worker.takeError());
    return col;
  }
  const PeerReady &r = worker->ready();
  col.available = true;
  col.version = r.version;
  col.threads = r.threads;
  col.note = col.label + (r.version.empty() ? "" : " " + r.version) + ": " +
             r.describe;
  if (r.threads < threads)
    col.note += llvm::formatv("; the others run {0} threads", threads);
  return col;
}

/// A GFLOPS cell: the value with `mark` appended, or "n/a".
static std::string gflopsCell(std::optional<double> gflops,
                              llvm::StringRef mark = "") {
  return gflops ? llvm::formatv("{0:F1}{1}", *gflops, mark).str() : "n/a";
}

/// --settle-ms, or its default for `threads`.
static double settleSeconds(unsigned threads) {
  if (settleMsOpt >= 0)
    return settleMsOpt / 1000.0;
  return defaultSettleSeconds(int(threads));
}

int main(int argc, char **argv) {
  bool asDetected = hasFlag(argc, argv, "baseline-as-detected");
  selectOpenBlasCore(argv, Target::detectHost(), asDetected);
  // A peer library's process (PeerProcess.h), started by a benchmark.
  if (hasFlag(argc, argv, "peer-worker"))
    return servePeerWorker();
  llvm::InitLLVM init(argc, argv);
  RenamedArgs renamed(argc, argv, "threads", "thread-count");
  argc = renamed.argc();
  argv = renamed.argv();
  cl::HideUnrelatedOptions(benchCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "qimeng-bench: our generated kernels against OpenBLAS, BLIS, libxsmm "
      "and oneDNN, timed\nside by side\n\n"
      "Every library runs the best kernels it has for this CPU: where "
      "OpenBLAS or BLIS\npick worse ones than the CPU's features allow, "
      "the benchmark forces the best\n(OPENBLAS_CORETYPE in its own "
      "re-executed environment, BLIS_ARCH_TYPE), confirms\nwhich ran and "
      "prints it (--baseline-as-detected keeps their own choice).\n\n"
      "Each shape's kernel is validated in a qimeng-runner process first. "
      "Each peer library\nruns in a process of its own (qimeng-bench "
      "--peer-worker), where it is validated\nwith the same checker; then "
      "ours (in this process), cblas_sgemm (OpenBLAS),\nbli_sgemm (BLIS), "
      "libxsmm_sgemm and oneDNN's matmul primitive (a sum post-op),\nall "
      "with beta = 1 (the same C += A*B), are timed interleaved, round by "
      "round,\none process at a time, and the medians compared. Results are "
      "also given as a\npercentage of this core's measured FMA peak (the "
      "best of several probes).\n\n"
      "BLIS (libblis.so.4), libxsmm (libxsmm.so.1) and oneDNN (libdnnl.so.2) "
      "are loaded with\ndlopen when present; a missing one, or one that "
      "fails validation, shows n/a and\nthe header says why. libxsmm is "
      "single-threaded here, and for M*N*K above 64^3,\nor shapes it has no "
      "JIT kernel for, it calls the process's BLAS sgemm_\n(OpenBLAS): such "
      "cells are marked '*'. Where C has one row or one column (a\n"
      "matrix-vector product), OpenBLAS and BLIS run their sgemv, their best "
      "routine\nfor it (OpenBLAS 0.3.21's sgemm does not hand it over): "
      "such cells are marked '^'.\n\n"
      "Table columns: ours GFLOPS and %peak; OpenBLAS GFLOPS and %peak; "
      "BLIS GFLOPS;\nlibxsmm GFLOPS; oneDNN GFLOPS; ratio = ours' speedup "
      "over OpenBLAS and vs best =\nours' lowest speedup over any peer, both "
      "the median over rounds of the round's\ntime ratio (the two ran back "
      "to back); max rel err and validated are ours.\n--json rows carry "
      "<lib>_gflops (openblas, blis, libxsmm, onednn; each only when\n"
      "measured), paired_ratio_<lib> and paired_ratio_best_other (the "
      "table's), ratio and\nratio_best_other (of the medians), "
      "best_other_gflops, onednn_impl, openblas_core,\nopenblas_detected, "
      "openblas_forced, <lib>_version, <lib>_threads, libxsmm_path\n(jit or "
      "blas-fallback), openblas_path and blis_path (sgemv where it ran) and\n"
      "<lib>_failure when a library fails.\n\n"
      "--op conv2d --suite resnet50 [--layers ...]: ResNet-50's layers "
      "(batch 1, NHWC or,\nwith --conv-layout nchw_fchw, NCHW), ours against "
      "im2col + OpenBLAS sgemm and oneDNN "
      "(libdnnl.so.2), each in\nits own process and validated first. vs im2col "
      "and vs "
      "oneDNN are the median over rounds of the\nround's time ratio; --json "
      "rows carry ours_gflops, openblas_gflops,\nonednn_gflops (medians), "
      "ratio_openblas and ratio_onednn (of the medians),\n"
      "paired_ratio_openblas and paired_ratio_onednn (the table's).\n\n"
      "--variant SETTINGS (repeatable): our kernel with SETTINGS laid over "
      "its config,\nsuch as --variant mr=6,nr=64,kc=192; all of them and "
      "ours are validated, then\ntimed interleaved for --runs rounds in one "
      "qimeng-runner process. Each variant's\nline gives its GFLOPS and its "
      "speedup over ours (the median of the per-round\nratios); --json rows "
      "carry them in \"variants\". The setting ld=runtime makes the "
      "variant the\nkernel that reads its leading dimensions at run time "
      "(docs/KernelContract.md):\n--variant ld=runtime compares the two "
      "forms, each with the model's\nconfig for it (a tuned config is "
      "kept, A copied in rows where its block is\ntoo tall to read A in "
      "place with a run-time lda); sizes=runtime makes it the\nkernel that "
      "reads M, N and K at run time too (B packed, or read in place where\n"
      "the last sliver's loads are masked: AVX-512); m=runtime, n=runtime "
      "and\nk=runtime read those sizes alone at run time (m=runtime: what "
      "the pass gives a\nmatmul over a dynamic batch). For --op conv2d,\n"
      "ld=runtime is the kernel that reads the input's strides at run time "
      "(\"_isrt\").\n");
  llvm::ExitOnError exitOnErr("qimeng-bench: ");
  if (runsOpt < 7)
    exitOnErr(llvm::createStringError("--runs must be at least 7"));
  if (deviceOpt == "cuda") {
    if (opKind == "conv2d")
      exitOnErr(llvm::createStringError(
          "--device cuda times GEMMs only (no GPU convolutions yet)"));
    if (transOpt != "nn" && transOpt != "nt")
      exitOnErr(llvm::createStringError("--device cuda takes --transpose nn (B "
                                        "K x N) or nt (B N x K), not '" +
                                        transOpt + "'"));
    std::vector<CudaBenchShape> gpuShapes;
    for (const Shape &s : exitOnErr(
             parseShapes(shapesOpt.getNumOccurrences()
                             ? std::string(shapesOpt)
                             : std::string("4096x4096x4096,8192x8192x8192,"
                                           "16384x1024x8192"))))
      gpuShapes.push_back({s.m, s.n, s.k});
    return runCudaBench(
        gpuShapes, dtypeOpt, transOpt == "nt", gpuOpt, runsOpt, jsonOpt,
        llvm::sys::path::parent_path(
            llvm::sys::fs::getMainExecutable(argv[0], (void *)&main))
            .str());
  }
  if (deviceOpt != "cpu")
    exitOnErr(llvm::createStringError("unsupported --device '" + deviceOpt +
                                      "'; expected cpu or cuda"));
  if (opKind == "gemm")
    opKind = "sgemm";
  if (opKind != "sgemm" && opKind != "conv2d")
    exitOnErr(llvm::createStringError("unsupported --op '" + opKind +
                                      "'; expected gemm or conv2d"));
  std::optional<GemmPrecision> parsedPrecision = parsePrecision(
      dtypeOpt == "s8" ? std::string("s8s8") : std::string(dtypeOpt));
  if (!parsedPrecision)
    exitOnErr(llvm::createStringError("unsupported --dtype '" + dtypeOpt +
                                      "'; expected f32, bf16, f16, s8 or "
                                      "u8s8"));
  const GemmPrecision precision = *parsedPrecision;
  if (threadsOpt < 1)
    exitOnErr(llvm::createStringError("--threads must be at least 1"));
  std::string trans = transOpt;
  if (trans != "nn" && trans != "nt" && trans != "tn" && trans != "tt")
    exitOnErr(llvm::createStringError("--transpose must be nn, nt, tn or tt"));
  std::vector<Shape> shapes = exitOnErr(parseShapes(shapesOpt));
  std::vector<std::string> variants(variantOpt.begin(), variantOpt.end());
  for (const std::string &v : variants) {
    std::string keys = v;
    takeFormSettings(keys);
    if (auto parsed = GemmConfig::parse(keys, GemmConfig()); !parsed)
      exitOnErr(llvm::createStringError(
          "--variant '" + v + "': " + llvm::toString(parsed.takeError())));
  }

  // With several threads, every OpenMP team is bound one thread a core:
  // unbound, the scheduler at times left both of our two threads on one
  // core for a whole run (ours at 87 GFLOPS on 512x512x64 where it gives
  // 180). Peer processes start unbound (PeerProcess.cpp) and bind their own.
  // The places are a list of the cores' CPUs (corePlaces): with
  // OMP_PLACES=cores, libomp on a virtual machine whose cpuid lacks leaf 11
  // saw this host's two vCPUs as one core and left our two threads unbound
  // on one place of both, where libgomp (the peers) bound one a core; ours
  // then shared a CPU with its own spinning thread whenever the scheduler
  // put them together (2 threads, 128^3: 85-100 GFLOPS in the table,
  // 290-318 in a runner process).
  std::string binding = "none (one thread)";
  if (threadsOpt > 1) {
    if (getenv("OMP_PROC_BIND") || getenv("OMP_PLACES")) {
      binding = "as the environment sets it (OMP_PROC_BIND, OMP_PLACES)";
    } else {
      std::string places = hostCorePlaces();
      if (places.empty())
        places = "cores";
      setenv("OMP_PROC_BIND", "spread", 1);
      setenv("OMP_PLACES", places.c_str(), 1);
      binding = "OMP_PROC_BIND=spread OMP_PLACES=" + places +
                " (one place a core; libomp and libgomp)";
    }
  }
  // One wait policy for every OpenMP runtime: a team spins as long as
  // libomp's does by default (ours), then sleeps; the settle pause outlasts
  // it. GNU libgomp (BLIS, oneDNN) spins far shorter by default, and on a
  // virtual machine its threads then wake late within a round. The peer
  // processes inherit this.
  std::string waitPolicy;
  if (getenv("GOMP_SPINCOUNT") || getenv("OMP_WAIT_POLICY")) {
    waitPolicy = "as the environment sets it (GOMP_SPINCOUNT or "
                 "OMP_WAIT_POLICY)";
  } else {
    double iteration = measureSpinIterationSeconds();
    long count = gompSpinCount(kTeamSpinSeconds, iteration);
    setenv("GOMP_SPINCOUNT", std::to_string(count).c_str(), 1);
    waitPolicy = llvm::formatv(
                     "teams spin {0} ms, then sleep: libomp (ours) by default, "
                     "GNU libgomp (BLIS, oneDNN) with GOMP_SPINCOUNT={1} "
                     "({2:F1} ns a spin here)",
                     int(kTeamSpinSeconds * 1000), count, iteration * 1e9)
                     .str();
  }
  Target host = Target::detectHost();
  EmitterOptions emitter = EmitterOptions::defaults();
  IsolatedValidationOptions runner = IsolatedValidationOptions::defaults();
  // The peak of the instructions the kernels run: FMAs, VDPBF16PS or
  // VPDPBUSD, or AMX's tiles where the host has them.
  VectorIsa isa = matrixIsa(host, precision);
  if (isa == VectorIsa::None)
    exitOnErr(llvm::createStringError(
        "this host has no vector isa our emitters support"));
  // The peak probe runs in qimeng-runner, like every generated kernel; the
  // best of several probes (PeakGauge).
  PeakGauge *gauge = exitOnErr(
      PeakGauge::forHost(isa, emitter, runner, /*initialProbes=*/3, precision));
  double corePeak = gauge->gflops();
  double peak = corePeak * threadsOpt;
  double bandwidth = measureReadBandwidthGBps(threadsOpt);
  OpenBlasSelection openBlas = openBlasSelection();

  if (prepackedWeightsOpt && opKind != "conv2d")
    exitOnErr(llvm::createStringError(
        "--prepacked-weights is for --op conv2d (constant weights); for a "
        "GEMM, --variant b=prepacked times B packed once beside ours"));
  if (opKind == "conv2d") {
    ConvBenchSettings settings;
    settings.suite = suiteOpt;
    settings.kernelConfig = configOpt;
    settings.variants = variants;
    settings.settleSeconds = settleSeconds(threadsOpt);
    llvm::SmallVector<llvm::StringRef> layers;
    llvm::StringRef(layersOpt).split(layers, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef name : layers)
      settings.layers.push_back(name.trim().str());
    settings.threads = threadsOpt;
    settings.runs = runsOpt;
    settings.json = jsonOpt;
    settings.skipOneDnn = noExternalOpt;
    settings.prepackedWeights = prepackedWeightsOpt;
    if (convLayoutOpt == "nchw_fchw")
      settings.layout = ConvLayout::NchwFchw;
    else if (convLayoutOpt != "nhwc_hwcf")
      exitOnErr(llvm::createStringError(
          "--conv-layout must be nhwc_hwcf or nchw_fchw, not '" +
          convLayoutOpt + "'"));
    settings.asDetected = asDetected;
    settings.waitPolicy = waitPolicy + "; thread binding: " + binding;
    settings.kernel.tuned = tunedOpt;
    settings.kernel.tuneBudget = tuneBudgetOpt;
    settings.kernel.cacheDir = cacheDirOpt;
    settings.host = host;
    settings.emitter = emitter;
    settings.runner = runner;
    settings.corePeak = corePeak;
    settings.peakNote = gauge->describe();
    settings.precision = precision;
    settings.openBlas = openBlas;
    return exitOnErr(runConvBench(settings));
  }

  // Each peer is timed in a process of its own (PeerProcess.h); the
  // columns' header lines come from workers that load the libraries.
  std::vector<PeerColumn> columns;
  {
    GemmDesc firstDesc = GemmDesc::packed(shapes[0].m, shapes[0].n, shapes[0].k,
                                          trans[0] == 't', trans[1] == 't');
    firstDesc.precision = precision;
    KernelProblem first(firstDesc);
    int t = int(threadsOpt);
    columns.push_back(describeColumn("openblas", "OpenBLAS", "openblas", "path",
                                     first, t, asDetected));
    columns.push_back(
        describeColumn("blis", "BLIS", "blis", "path", first, t, asDetected));
    columns.push_back(describeColumn("libxsmm", "libxsmm", "libxsmm", "path",
                                     first, t, asDetected));
    columns.push_back(describeColumn("onednn", "oneDNN", "onednn", "impl",
                                     first, t, asDetected));
  }
  if (!jsonOpt) {
    llvm::outs() << llvm::formatv(
        "qimeng-bench: {4} {0}, {1} thread(s), C += A*B (beta = 1), median "
        "of {2} interleaved rounds (each after an untimed call{3}); each peer "
        "in a process of its own\n",
        trans, threadsOpt, unsigned(runsOpt),
        settleSeconds(threadsOpt) > 0
            ? llvm::formatv(" that follows a {0} ms pause",
                            int(settleSeconds(threadsOpt) * 1000 + 0.5))
                  .str()
            : std::string(),
        precision == GemmPrecision::Bf16
            ? "sbgemm (bf16 A and B, f32 C, products exact, sums in f32)"
        : precision == GemmPrecision::F16
            ? "shgemm (f16 A and B, f32 C, products exact, sums in f32)"
        : precision == GemmPrecision::S8S8
            ? "s8s8gemm (s8 A and B, s32 C, exact)"
        : precision == GemmPrecision::U8S8
            ? "u8s8gemm (u8 A, s8 B, s32 C, exact)"
            : "sgemm");
    // Integer GEMMs count operations, not floating-point ones (the JSON
    // keys keep their names).
    const char *unit = isIntegerPrecision(precision) ? "GOPS" : "GFLOPS";
    llvm::outs() << llvm::formatv(
        "host: {0} ({1}); {7} peak measured: {2:F1} {8} per core ({3}, "
        "{6}), {4:F1} for {5} thread(s)\n",
        host.cpu, host.triple, corePeak, isaName(isa), peak,
        unsigned(threadsOpt), gauge->describe(),
        peakInstructionName(isa, precision), unit);
    llvm::outs() << llvm::formatv(
        "memory read bandwidth measured: {0:F1} GB/s with {1} thread(s), "
        "the better of one stream and four a thread "
        "(JSON rows give each shape's GB/s at its least traffic)\n",
        bandwidth, unsigned(threadsOpt));
    for (const PeerColumn &col : columns)
      llvm::outs() << col.note << "\n";
    llvm::outs() << "OpenMP wait policy: " << waitPolicy
                 << "; thread binding: " << binding << "\n";
    llvm::outs() << "ratio and vs best: ours' speedup in each round (the "
                    "median over rounds of theirs / ours, run back to back); "
                    "vs best takes the peer it is lowest against\n";
    auto column = [&](const char *who) {
      return llvm::formatv("{0} {1}", who, unit).str();
    };
    llvm::outs() << llvm::formatv(
        "{0,-16} {1,11} {2,7} {3,15} {4,7} {5,11} {6,14} {7,13} {8,7} {9,7} "
        "{10,12} {11,10}  {12}\n",
        "shape", column("ours"), "%peak", column("OpenBLAS"), "%peak",
        column("BLIS"), column("libxsmm"), column("oneDNN"), "ratio", "vs best",
        "max rel err", "validated", "kernel");
  } else {
    // JSON rows stay on stdout; what was loaded, or why not, goes here.
    for (const PeerColumn &col : columns)
      llvm::errs() << "qimeng-bench: " << col.note << "\n";
  }
  bool allValid = true;
  for (const Shape &sh : shapes) {
    GemmDesc desc =
        GemmDesc::packed(sh.m, sh.n, sh.k, trans[0] == 't', trans[1] == 't');
    desc.precision = precision;
    GemmConfig config =
        exitOnErr(chooseGemmConfig(desc, host, int(threadsOpt)));
    if (!configOpt.empty())
      config =
          clampToProblem(exitOnErr(GemmConfig::parse(configOpt, config)), desc);
    // More than one thread: the parallel kernel, once per part of C.
    config.threads = partitionedThreads(desc, config, int(threadsOpt));
    BenchKernelOptions kernelOptions;
    kernelOptions.tuned = tunedOpt;
    kernelOptions.tuneBudget = tuneBudgetOpt;
    kernelOptions.cacheDir = cacheDirOpt;
    BenchKernel kernel = exitOnErr(
        benchKernel(desc, config, host, emitter, runner, kernelOptions));
    config = kernel.config;
    const EmittedKernel &emitted = kernel.emitted;
    const std::vector<GemmRange> &parts = kernel.parts;
    int tunedTrials = kernel.tunedTrials;
    ValidationReport ours =
        exitOnErr(validateGemmIsolated(desc, host, emitted, runner, parts));
    // Each peer in its own process: it validates itself with the same
    // checker, then waits for its rounds.
    std::vector<PeerResult> results(columns.size());
    std::vector<std::optional<PeerProcess>> workers(columns.size());
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].available)
        workers[i] = results[i].start(columns[i].peer, KernelProblem(desc),
                                      int(threadsOpt), asDetected);
    }
    // OpenBLAS's column is the reference column where it has the op.
    bool validated =
        ours.passed && (workers[0].has_value() || !columns[0].available);
    allValid &= validated;

    double oursGflops = 0;
    if (ours.passed) {
      // Trusted now: load it here and time it against the peers.
      auto object = exitOnErr(
          assembleToObject(emitted.text, host, emitted.symbol + ".s"));
      auto jit = exitOnErr(JitKernel::load(std::move(object), emitted.symbol));
      GemmKernelFn fn = jit->gemm();
      auto a = exitOnErr(GuardedBuffer::allocate(desc.aSpan(), 0));
      auto b = exitOnErr(GuardedBuffer::allocate(desc.bSpan(), 0));
      auto c = exitOnErr(GuardedBuffer::allocate(desc.cSpan(), 0));
      // One workspace slice per part, as runGemmParts uses them.
      uint64_t wsBytes =
          emitted.workspaceBytes * std::max<size_t>(1, parts.size());
      auto ws =
          exitOnErr(GuardedBuffer::allocate(int64_t(wsBytes / 4 + 16), 0));
      // The operands every peer process makes too (seed 42).
      fillTimingOperands(a, b, desc.precision);
      std::fill_n(c.data(), desc.cSpan(), 0.0f);
      std::vector<TimedCandidate> cands = {
          {"ours", [&] {
             runGemmParts(fn, desc, parts, emitted.workspaceBytes, a.data(),
                          b.data(), c.data(), ws.data());
           }}};
      std::vector<std::pair<size_t, size_t>> timed; // (column, candidate)
      for (size_t i = 0; i < columns.size(); ++i) {
        if (!workers[i])
          continue;
        timed.push_back({i, cands.size()});
        cands.push_back(PeerResult::candidate(*workers[i]));
      }
      InterleavedTiming t =
          timeInterleaved(cands, runsOpt, 0.05, settleSeconds(threadsOpt));
      oursGflops = desc.flops() / median(t.secondsPerCall[0]) * 1e-9;
      for (auto [col, cand] : timed)
        results[col].record(t, cand, desc.flops());
    }
    workers.clear(); // the peer processes end
    VariantComparison variantResults;
    if (!variants.empty())
      variantResults = exitOnErr(
          compareVariants(desc, kernel, ours.passed, variants, threadsOpt,
                          int(runsOpt), host, emitter, runner));
    const PeerResult &blasResult = results[0];
    double blasGflops = blasResult.gflops.value_or(0);
    double ratio = blasGflops > 0 ? oursGflops / blasGflops : 0;
    // GB/s at the least traffic: GFLOPS / flops * bytes.
    auto gbps = [&](double gflops) {
      return gflops * gemmMinimumBytes(sh.m, sh.n, sh.k) / desc.flops();
    };
    // The best peer by median, and ours' lowest paired speedup over any.
    double bestOther = 0;
    std::optional<double> pairedBest;
    for (const PeerResult &r : results) {
      if (r.gflops)
        bestOther = std::max(bestOther, *r.gflops);
      if (r.paired)
        pairedBest = pairedBest ? std::min(*pairedBest, *r.paired) : *r.paired;
    }
    double ratioBestOther = bestOther > 0 ? oursGflops / bestOther : 0;
    if (jsonOpt) {
      nlohmann::json row = {
          {"op", gemmOpName(precision).str()},
          {"dtype", precisionName(precision).str()},
          {"m", sh.m},
          {"n", sh.n},
          {"k", sh.k},
          {"transpose", trans},
          {"threads", unsigned(threadsOpt)},
          {"ours_gflops", oursGflops},
          {"openblas_gflops", blasGflops},
          {"ratio", ratio},
          {"ours_gbps", gbps(oursGflops)},
          {"openblas_gbps", gbps(blasGflops)},
          {"bandwidth_gbps", bandwidth},
          {"pct_bandwidth",
           bandwidth > 0 ? 100 * gbps(oursGflops) / bandwidth : 0},
          {"pct_peak", 100 * oursGflops / peak},
          {"openblas_pct_peak", 100 * blasGflops / peak},
          {"peak_gflops", peak},
          {"peak_probe_spread", gauge->spread()},
          {"max_rel_err", ours.maxRelError},
          {"validated", validated},
          {"kernel", emitted.symbol},
          {"config", config.str()},
          {"tuned", bool(tunedOpt)},
          {"tune_trials", tunedTrials},
          {"openblas_core", openBlas.running},
          {"openblas_detected", openBlas.detected},
          {"openblas_forced", !openBlas.requested.empty()}};
      if (!ours.passed)
        row["failure"] = ours.failure;
      // No OpenBLAS figures where it has no such GEMM (bf16 without
      // cblas_sbgemm), rather than zeros.
      if (!columns[0].available)
        for (const char *key :
             {"openblas_gflops", "ratio", "openblas_gbps", "openblas_pct_peak"})
          row.erase(key);
      for (size_t i = 0; i < columns.size(); ++i) {
        const PeerColumn &col = columns[i];
        const PeerResult &r = results[i];
        if (!col.available)
          continue;
        if (!col.version.empty())
          row[col.jsonKey + "_version"] = col.version;
        if (r.gflops) {
          row[col.jsonKey + "_gflops"] = *r.gflops;
          row[col.jsonKey + "_threads"] = col.threads;
          if (!r.path.empty())
            row[col.jsonKey + "_" + col.pathKey] = r.path;
        }
        if (r.paired)
          row["paired_ratio_" + col.jsonKey] = *r.paired;
        if (!r.failure.empty())
          row[col.jsonKey + "_failure"] = r.failure;
      }
      if (pairedBest)
        row["paired_ratio_best_other"] = *pairedBest;
      row["best_other_gflops"] = bestOther;
      row["ratio_best_other"] = ratioBestOther;
      if (!variants.empty())
        row["variants"] = variantsJson(variantResults);
      llvm::outs() << row.dump(-1, ' ', false,
                               nlohmann::json::error_handler_t::replace)
                   << "\n";
    } else {
      std::string cells[4];
      for (size_t i = 0; i < 4; ++i)
        cells[i] = gflopsCell(results[i].gflops,
                              results[i].path == "blas-fallback" ? "*"
                              : results[i].path == "sgemv"       ? "^"
                                                                 : "");
      auto ratioCell = [](std::optional<double> r) {
        return r ? llvm::formatv("{0:F2}", *r).str() : std::string("n/a");
      };
      llvm::outs() << llvm::formatv(
          "{0,-16} {1,11:F1} {2,6:F1}% {3,15} {4,6:F1}% {5,11} {6,14} "
          "{7,13} {8,7} {9,7} {10,12:E1} {11,10}  {12}\n",
          llvm::formatv("{0}x{1}x{2}", sh.m, sh.n, sh.k).str(), oursGflops,
          100 * oursGflops / peak, cells[0], 100 * blasGflops / peak, cells[1],
          cells[2], cells[3], ratioCell(results[0].paired),
          ratioCell(pairedBest), ours.maxRelError, validated ? "yes" : "NO",
          emitted.symbol);
      llvm::outs() << formatVariantLines(variantResults);
      if (!ours.passed)
        llvm::outs() << "  ours failed validation: " << ours.failure << "\n";
      for (size_t i = 0; i < columns.size(); ++i)
        if (!results[i].failure.empty())
          llvm::outs() << "  " << columns[i].label << ": " << results[i].failure
                       << "\n";
    }
    llvm::outs().flush();
  }
  return allValid ? 0 : 1;
}
