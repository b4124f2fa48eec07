//===- PeerProcess.cpp - Each peer library in a process of its own --------===//
#include "PeerProcess.h"
#include "ExternalGemm.h"
#include "OneDnn.h"
#include "qimeng/Kernel/KernelJson.h"
#include "qimeng/Runtime/ConvValidator.h"
#include "qimeng/Runtime/GemmValidator.h"
#include "qimeng/Runtime/PeerKernels.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include <cblas.h>
#include <chrono>
#include <cstdio>
#include <dlfcn.h>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sched.h>
#include <unistd.h>

extern "C" void openblas_set_num_threads(int);

using namespace qimeng;
using json = nlohmann::json;

/// How long a worker may take to load and validate (an fp64 reference of a
/// 2048^3 GEMM, three times) or to run a round.
static constexpr double kReadySeconds = 900;
static constexpr double kRoundSeconds = 300;

//===----------------------------------------------------------------------===//
// Parent side
//===----------------------------------------------------------------------===//

static json problemJson(const KernelProblem &problem) {
  json j = problem.conv() ? toJson(*problem.conv()) : toJson(problem.gemm());
  j["op"] = problem.opName().str();
  return j;
}

llvm::Expected<PeerProcess> PeerProcess::start(llvm::StringRef peer,
                                               const KernelProblem &problem,
                                               int threads, bool asDetected,
                                               bool describeOnly) {
  // This very binary: on Linux /proc/self/exe, which still runs it when its
  // file has been replaced (a rebuild during a long benchmark) where the
  // path would start the new build or nothing.
  std::string exe =
      llvm::sys::fs::exists("/proc/self/exe")
          ? std::string("/proc/self/exe")
          : llvm::sys::fs::getMainExecutable(
                nullptr, reinterpret_cast<void *>(&servePeerWorker));
  auto process = Coprocess::start(exe, {"qimeng-bench", "--peer-worker"});
  if (!process)
    return process.takeError();
  json request = {{"peer", peer.str()},
                  {"problem", problemJson(problem)},
                  {"threads", threads},
                  {"as_detected", asDetected},
                  {"describe_only", describeOnly}};
  auto line = process->ask(request.dump(), kReadySeconds);
  if (!line)
    return line.takeError();
  json answer = json::parse(*line, nullptr, false);
  if (answer.is_discarded() || !answer.is_object())
    return llvm::createStringError("the " + peer.str() + " worker answered '" +
                                   *line + "'");
  auto text = [&](const char *key) {
    auto it = answer.find(key);
    return it != answer.end() && it->is_string() ? it->get<std::string>()
                                                 : std::string();
  };
  auto loaded = answer.find("loaded");
  if (loaded == answer.end() || !loaded->is_boolean() || !loaded->get<bool>())
    return llvm::createStringError(text("error"));
  PeerReady ready;
  ready.label = text("label");
  ready.version = text("version");
  ready.describe = text("describe");
  ready.failure = text("failure");
  ready.path = text("path");
  auto validated = answer.find("validated");
  ready.validated = validated != answer.end() && validated->is_boolean() &&
                    validated->get<bool>();
  auto t = answer.find("threads");
  ready.threads =
      t != answer.end() && t->is_number_integer() ? t->get<int>() : threads;
  return PeerProcess(std::move(*process), std::move(ready));
}

llvm::Expected<double> PeerProcess::round(int calls) {
  auto line = process_.ask(json({{"calls", calls}}).dump(), kRoundSeconds);
  if (!line)
    return line.takeError();
  json answer = json::parse(*line, nullptr, false);
  auto s = answer.is_object() ? answer.find("seconds") : answer.end();
  if (answer.is_discarded() || s == answer.end() || !s->is_number() ||
      !(s->get<double>() > 0))
    return llvm::createStringError("the " + ready_.label +
                                   " worker answered '" + *line + "'");
  return s->get<double>();
}

std::optional<PeerProcess> PeerResult::start(llvm::StringRef peer,
                                             const KernelProblem &problem,
                                             int threads, bool asDetected) {
  auto worker = PeerProcess::start(peer, problem, threads, asDetected);
  if (!worker) {
    failure = llvm::toString(worker.takeError());
    return std::nullopt;
  }
  path = worker->ready().path;
  if (!worker->ready().validated) {
    failure = "failed validation: " + worker->ready().failure;
    return std::nullopt;
  }
  return std::move(*worker);
}

void PeerResult::record(const InterleavedTiming &timing, size_t index,
                        double flops) {
  if (!timing.failures[index].empty()) {
    failure = "timing failed: " + timing.failures[index];
    return;
  }
  gflops = flops / median(timing.secondsPerCall[index]) * 1e-9;
  paired = medianPairedSpeedup(timing.secondsPerCall[0],
                               timing.secondsPerCall[index]);
}

TimedCandidate PeerResult::candidate(PeerProcess &worker) {
  return {worker.ready().label, nullptr,
          [w = &worker](int calls) { return w->round(calls); }};
}

//===----------------------------------------------------------------------===//
// Worker side
//===----------------------------------------------------------------------===//

namespace {

/// A peer's call on the problem's three operands: (A, B, C) for a GEMM,
/// (input, filter, output) for a convolution; it accumulates into the third.
using PeerCall = std::function<void(const float *, const float *, float *)>;

/// A library loaded for one problem, ready to validate and time.
struct LoadedPeer {
  PeerReady info;
  /// The call validation makes (for oneDNN's convolution, the weights'
  /// reorder and the convolution).
  PeerCall validationCall;
  /// The call timing makes, after `beforeTiming` has seen the operands.
  PeerCall timedCall;
  std::function<llvm::Error(const float *filter)> beforeTiming;
  // What the calls use.
  std::unique_ptr<ExternalGemm> gemm;
  /// The problem `gemm` was prepared for (f16's widened to f32).
  std::optional<GemmDesc> gemmPreparedAs;
  std::unique_ptr<OneDnn> onednn;
  std::unique_ptr<OneDnnConvPrimitive> conv;
  std::vector<float> scratch;
  std::string callError; ///< the first error a call hit
};

/// The `n` f16 values at `halves` (an f16 operand in a float buffer)
/// widened, exactly, into `to`: what oneDNN's f32 primitives read where it
/// has no f16 ones.
void widenF16(const float *halves, int64_t n, std::vector<float> &to) {
  const auto *h = reinterpret_cast<const uint16_t *>(halves);
  to.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i)
    to[size_t(i)] = validation::floatOfF16(h[i]);
}

llvm::Expected<std::unique_ptr<LoadedPeer>>
loadPeer(const std::string &peer, const KernelProblem &problem, int threads,
         bool asDetected) {
  auto p = std::make_unique<LoadedPeer>();
  LoadedPeer &lp = *p;
  lp.info.threads = threads;
  const ConvDesc *conv = problem.conv();
  const GemmDesc &g = problem.gemm();
  // OpenBLAS computes with `threads` in every peer's process: libxsmm hands
  // the shapes it has no kernel for to it.
  openblas_set_num_threads(threads);
  const bool bf16 = !conv && g.precision == GemmPrecision::Bf16;
  const bool f16 = !conv && g.precision == GemmPrecision::F16;
  const bool int8 = !conv && isIntegerPrecision(g.precision);
  if ((bf16 || f16 || int8) && (peer == "blis" || peer == "libxsmm"))
    return llvm::createStringError(
        "no " + precisionName(g.precision).str() +
        " GEMM compared (BLIS 0.9 has none; libxsmm's low-precision kernels "
        "are not wired into this benchmark)");
  if (int8 && peer == "openblas")
    return llvm::createStringError("OpenBLAS has no 8-bit integer GEMM");
  if (f16 && peer == "openblas")
    return llvm::createStringError("OpenBLAS 0.3.21 has no f16 GEMM");
  if (conv && g.precision != GemmPrecision::F32 && peer == "openblas")
    return llvm::createStringError("im2col + OpenBLAS is an f32 column (no " +
                                   precisionName(g.precision).str() +
                                   " GEMM in Debian's OpenBLAS)");
  if (bf16 && peer == "openblas") {
    // cblas_sbgemm exists only in builds with BUILD_BFLOAT16 (Debian's
    // 0.3.21 has none): looked up, not linked.
    using SbgemmFn =
        void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint,
                 blasint, blasint, float, const uint16_t *, blasint,
                 const uint16_t *, blasint, float, float *, blasint);
    auto sbgemm =
        reinterpret_cast<SbgemmFn>(dlsym(RTLD_DEFAULT, "cblas_sbgemm"));
    if (!sbgemm)
      return llvm::createStringError(
          "this OpenBLAS exports no cblas_sbgemm (built without "
          "BUILD_BFLOAT16)");
    OpenBlasSelection sel = openBlasSelection();
    lp.info.label = "OpenBLAS sbgemm";
    lp.info.describe = sel.describe() + ", config '" + sel.config + "'";
    lp.validationCall = [g, sbgemm](const float *a, const float *b, float *c) {
      sbgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
             g.transB ? CblasTrans : CblasNoTrans, g.m, g.n, g.k, 1.0f,
             reinterpret_cast<const uint16_t *>(a), g.lda,
             reinterpret_cast<const uint16_t *>(b), g.ldb, 1.0f, c, g.ldc);
    };
  } else if (peer == "openblas") {
    OpenBlasSelection sel = openBlasSelection();
    lp.info.label = conv ? "im2col + OpenBLAS sgemm" : "OpenBLAS";
    lp.info.describe = sel.describe() + ", config '" + sel.config + "'";
    if (conv) {
      ConvDesc d = *conv;
      lp.validationCall = [d, &lp](const float *in, const float *flt,
                                   float *out) {
        convIm2colSgemm(d, in, flt, out, lp.scratch);
      };
    } else {
      // Its best routine for the shape: sgemv for one row or column.
      if (openBlasRoutineFor(g) == "sgemv")
        lp.info.path = "sgemv";
      lp.validationCall = [g](const float *a, const float *b, float *c) {
        openBlasSgemm(g, a, b, c);
      };
    }
  } else if (peer == "onednn" && conv) {
    auto lib = OneDnn::load(threads);
    if (!lib)
      return lib.takeError();
    lp.onednn = std::move(*lib);
    lp.info.label = "oneDNN";
    lp.info.version = lp.onednn->version();
    lp.info.describe =
        lp.onednn->describe() + ", convolution_auto, " +
        (conv->isNhwc() ? "NHWC source and destination"
                        : "NCHW source and destination reordered into and "
                          "out of the primitive's layout at each call") +
        ", weights reordered once, sum post-op (dst += conv)";
    auto prim = lp.onednn->prepareConv(*conv);
    if (!prim && conv->precision == GemmPrecision::F16) {
      // No f16 convolution in oneDNN 2.6.3 on the CPU: its f32 one on the
      // same values widened, the widening outside the timing (as for the
      // f16 matmul).
      lp.info.describe += "; f16: no f16 convolution here (" +
                          llvm::toString(prim.takeError()) +
                          "), so its f32 one on the f16 values widened to "
                          "f32 outside the timing";
      ConvDesc wide = *conv;
      wide.precision = GemmPrecision::F32;
      auto widePrim = lp.onednn->prepareConv(wide);
      if (!widePrim)
        return widePrim.takeError();
      lp.conv = std::move(*widePrim);
      lp.info.path = lp.conv->implementation();
      auto in = std::make_shared<std::vector<float>>();
      auto flt = std::make_shared<std::vector<float>>();
      auto lastIn = std::make_shared<const float *>(nullptr);
      const int64_t inSpan = conv->inputSpan(),
                    fltSpan = conv->filterElements();
      lp.validationCall = [&lp, in, flt, inSpan,
                           fltSpan](const float *x, const float *w, float *y) {
        widenF16(x, inSpan, *in);
        widenF16(w, fltSpan, *flt);
        llvm::Error e = lp.conv->setFilter(flt->data());
        if (!e)
          e = lp.conv->run(in->data(), y);
        if (e && lp.callError.empty())
          lp.callError = llvm::toString(std::move(e));
        else
          llvm::consumeError(std::move(e));
      };
      lp.timedCall = [&lp, in, lastIn, inSpan](const float *x, const float *,
                                               float *y) {
        if (*lastIn != x) {
          widenF16(x, inSpan, *in);
          *lastIn = x;
        }
        llvm::consumeError(lp.conv->run(in->data(), y));
      };
      lp.beforeTiming = [&lp, flt, fltSpan](const float *w) {
        widenF16(w, fltSpan, *flt);
        return lp.conv->setFilter(flt->data());
      };
      return p;
    }
    if (!prim)
      return prim.takeError();
    lp.conv = std::move(*prim);
    lp.info.path = lp.conv->implementation();
    lp.validationCall = [&lp](const float *in, const float *flt, float *out) {
      llvm::Error e = lp.conv->setFilter(flt);
      if (!e)
        e = lp.conv->run(in, out);
      if (e && lp.callError.empty())
        lp.callError = llvm::toString(std::move(e));
      else
        llvm::consumeError(std::move(e));
    };
    lp.timedCall = [&lp](const float *in, const float *, float *out) {
      llvm::consumeError(lp.conv->run(in, out));
    };
    lp.beforeTiming = [&lp](const float *flt) {
      return lp.conv->setFilter(flt);
    };
  } else if (!conv &&
             (peer == "blis" || peer == "libxsmm" || peer == "onednn")) {
    auto lib = peer == "blis"
                   ? BlisGemm::load(threads, Target::detectHost(), asDetected)
               : peer == "libxsmm" ? LibxsmmGemm::load()
                                   : OneDnnGemm::load(threads);
    if (!lib)
      return lib.takeError();
    lp.gemm = std::move(*lib);
    lp.info.label = lp.gemm->name().str();
    lp.info.version = lp.gemm->version();
    lp.info.describe = lp.gemm->describe();
    lp.info.threads = lp.gemm->threads();
    llvm::Error prepared = lp.gemm->prepare(g);
    if (prepared && f16 && peer == "onednn") {
      // oneDNN 2.6.3 has no f16 matmul on the CPU ("unimplemented"): its
      // f32 matmul on the same values widened (exactly) to f32, which
      // makes the same exact products and f32 sums. The widening happens
      // outside the timing (timing widens its fixed operands once, in
      // the untimed call before each batch).
      lp.info.describe +=
          "; f16: no f16 matmul here (" + llvm::toString(std::move(prepared)) +
          "), so its f32 matmul on the f16 values widened to f32 outside "
          "the timing";
      GemmDesc wide = g;
      wide.precision = GemmPrecision::F32;
      if (auto e = lp.gemm->prepare(wide))
        return std::move(e);
      lp.gemmPreparedAs = wide;
      const ExternalGemm *lib2 = lp.gemm.get();
      auto wa = std::make_shared<std::vector<float>>();
      auto wb = std::make_shared<std::vector<float>>();
      lp.validationCall = [lib2, wide, wa, wb](const float *a, const float *b,
                                               float *c) {
        widenF16(a, wide.aSpan(), *wa);
        widenF16(b, wide.bSpan(), *wb);
        lib2->gemm(wide, wa->data(), wb->data(), c);
      };
      auto last = std::make_shared<std::pair<const float *, const float *>>();
      lp.timedCall = [lib2, wide, wa, wb, last](const float *a, const float *b,
                                                float *c) {
        if (last->first != a || last->second != b) {
          widenF16(a, wide.aSpan(), *wa);
          widenF16(b, wide.bSpan(), *wb);
          *last = {a, b};
        }
        lib2->gemm(wide, wa->data(), wb->data(), c);
      };
      return p;
    }
    if (prepared)
      return std::move(prepared);
    const ExternalGemm *lib2 = lp.gemm.get();
    lp.validationCall = [lib2, g](const float *a, const float *b, float *c) {
      lib2->gemm(g, a, b, c);
    };
  } else {
    return llvm::createStringError("no peer '" + peer + "' for " +
                                   problem.opName().str());
  }
  if (!lp.timedCall)
    lp.timedCall = lp.validationCall;
  return p;
}

/// Validates `lp` on `problem` with the checker ours goes through.
llvm::Error validatePeer(LoadedPeer &lp, const KernelProblem &problem) {
  ValidationOptions plain;
  plain.compareOpenBlas = false;
  auto call = [&lp](const float *x, const float *y, float *z, void *) {
    lp.validationCall(x, y, z);
  };
  auto report = problem.conv() ? validateConv(*problem.conv(), call, 0, plain)
                               : validateGemm(problem.gemm(), call, 0, plain);
  if (!report)
    return report.takeError();
  lp.info.validated = report->passed && lp.callError.empty();
  lp.info.failure = !lp.callError.empty() ? lp.callError : report->failure;
  if (lp.gemm)
    lp.info.path = lp.gemm->pathFor(lp.gemmPreparedAs ? *lp.gemmPreparedAs
                                                      : problem.gemm());
  return llvm::Error::success();
}

json readyJson(const PeerReady &r) {
  return {{"loaded", true},       {"label", r.label},
          {"version", r.version}, {"describe", r.describe},
          {"threads", r.threads}, {"validated", r.validated},
          {"failure", r.failure}, {"path", r.path}};
}

void answer(const json &j) {
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

void qimeng::fillTimingOperands(GuardedBuffer &a, GuardedBuffer &b,
                                GemmPrecision precision) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  const validation::HalfFloat half =
      validation::halfFloat(precision == GemmPrecision::F16);
  for (GuardedBuffer *buf : {&a, &b}) {
    auto *bits = reinterpret_cast<uint16_t *>(buf->data());
    auto *bytes = reinterpret_cast<int8_t *>(buf->data());
    for (int64_t j = 0; j < buf->size(); ++j) {
      const float x = dist(rng);
      if (isHalfPrecision(precision))
        bits[j] = half.bitsOf(x);
      else if (isIntegerPrecision(precision))
        bytes[j] = int8_t(std::lround(x * 127));
      else
        buf->data()[j] = x;
    }
  }
}

int qimeng::servePeerWorker() {
  // The benchmark binds its own OpenMP threads, its main thread among them,
  // and this process inherited that thread's CPU: let it run on all of
  // them again, for its library to place its threads as it would.
  cpu_set_t all;
  CPU_ZERO(&all);
  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  for (long i = 0; i < cpus && i < CPU_SETSIZE; ++i)
    CPU_SET(i, &all);
  sched_setaffinity(0, sizeof all, &all);
  std::string line;
  if (!std::getline(std::cin, line))
    return 1;
  json request = json::parse(line, nullptr, false);
  auto fail = [](const std::string &why) {
    answer({{"loaded", false}, {"error", why}});
    return 1;
  };
  if (request.is_discarded() || !request.is_object())
    return fail("the request is not a JSON object");
  auto str = [&](const char *key) {
    auto it = request.find(key);
    return it != request.end() && it->is_string() ? it->get<std::string>()
                                                  : std::string();
  };
  auto flag = [&](const char *key) {
    auto it = request.find(key);
    return it != request.end() && it->is_boolean() && it->get<bool>();
  };
  auto threadsIt = request.find("threads");
  int threads = threadsIt != request.end() && threadsIt->is_number_integer()
                    ? threadsIt->get<int>()
                    : 1;
  auto problemIt = request.find("problem");
  if (problemIt == request.end() || !problemIt->is_object())
    return fail("the request has no problem");
  auto opIt = problemIt->find("op");
  bool isConv = opIt != problemIt->end() && opIt->is_string() &&
                opIt->get<std::string>() == "sconv2d";
  KernelProblem problem;
  if (isConv) {
    auto d = convDescFromJson(*problemIt, "peer request");
    if (!d)
      return fail(llvm::toString(d.takeError()));
    problem = KernelProblem(*d);
  } else {
    auto d = gemmDescFromJson(*problemIt, "peer request");
    if (!d)
      return fail(llvm::toString(d.takeError()));
    problem = KernelProblem(*d);
  }
  auto loaded = loadPeer(str("peer"), problem, threads, flag("as_detected"));
  if (!loaded)
    return fail(llvm::toString(loaded.takeError()));
  LoadedPeer &lp = **loaded;
  if (!flag("describe_only"))
    if (llvm::Error e = validatePeer(lp, problem))
      return fail(llvm::toString(std::move(e)));
  answer(readyJson(lp.info));
  if (flag("describe_only"))
    return 0;

  // The timing operands: the same values in every process (seed 42).
  const ConvDesc *conv = problem.conv();
  const GemmDesc &g = problem.gemm();
  int64_t spans[3] = {conv ? conv->inputSpan() : g.aSpan(),
                      conv ? conv->filterElements() : g.bSpan(),
                      conv ? conv->outputSpan() : g.cSpan()};
  std::vector<GuardedBuffer> operands;
  for (int64_t span : spans) {
    auto b = GuardedBuffer::allocate(span, 0);
    if (!b)
      return 1;
    operands.push_back(std::move(*b));
  }
  fillTimingOperands(operands[0], operands[1], g.precision);
  std::fill_n(operands[2].data(), operands[2].size(), 0.0f);
  if (lp.beforeTiming)
    if (llvm::Error e = lp.beforeTiming(operands[1].data())) {
      llvm::errs() << "qimeng-bench peer worker: "
                   << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
  auto call = [&] {
    lp.timedCall(operands[0].data(), operands[1].data(), operands[2].data());
  };
  while (std::getline(std::cin, line)) {
    json r = json::parse(line, nullptr, false);
    auto callsIt = r.is_object() ? r.find("calls") : r.end();
    if (r.is_discarded() || callsIt == r.end() ||
        !callsIt->is_number_integer() || callsIt->get<int>() < 1)
      return 1;
    int calls = callsIt->get<int>();
    call(); // untimed: brings the operands and the thread team back
    double t0 = now();
    for (int k = 0; k < calls; ++k)
      call();
    answer({{"seconds", (now() - t0) / calls}});
  }
  return 0;
}
