//===- EmitterRunner.cpp - Run the Python emitters ------------------------===//
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Config.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/KernelJson.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

using namespace qimeng;

EmitterOptions EmitterOptions::defaults() {
  EmitterOptions o;
  o.python = QIMENG_PYTHON;
  o.packageDir = QIMENG_EMITTER_DIR;
  if (auto v = llvm::sys::Process::GetEnv("QIMENG_PYTHON"))
    o.python = *v;
  if (auto v = llvm::sys::Process::GetEnv("QIMENG_EMITTER_DIR"))
    o.packageDir = *v;
  return o;
}

static std::vector<std::string> splitList(llvm::StringRef s) {
  llvm::SmallVector<llvm::StringRef> parts;
  s.split(parts, ',', -1, false);
  std::vector<std::string> out;
  for (auto p : parts)
    out.push_back(p.trim().str());
  return out;
}

llvm::Expected<EmittedKernel> qimeng::parseEmitterOutput(std::string text) {
  EmittedKernel k;
  bool sawWorkspace = false, sawBegin = false, sawEnd = false;
  llvm::StringRef rest(text);
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    if (line == "# qm.body.begin")
      sawBegin = true;
    else if (line == "# qm.body.end")
      sawEnd = true;
    if (!line.consume_front("# qm."))
      continue;
    auto [key, value] = line.split(": ");
    if (key == "symbol") {
      k.symbol = value.str();
    } else if (key == "workspace_bytes") {
      if (value.getAsInteger(10, k.workspaceBytes))
        return llvm::createStringError(
            "emitter output has a malformed workspace size '" + value.str() +
            "'");
      sawWorkspace = true;
    } else if (key == "generator") {
      k.generatorVersion = value.str();
    } else if (key == "args") {
      k.argRegisters = splitList(value);
    } else if (key == "clobbers") {
      k.clobbers = splitList(value);
    } else if (key == "features") {
      k.features = splitList(value);
    } else if (key == "leading_dims") {
      if (value != "runtime" && value != "immediate")
        return llvm::createStringError(
            "emitter output has a malformed qm.leading_dims '" + value.str() +
            "'; expected runtime or immediate");
      k.runtimeLeadingDims = value == "runtime";
    } else if (key == "input_strides") {
      if (value != "runtime")
        return llvm::createStringError(
            "emitter output has a malformed qm.input_strides '" + value.str() +
            "'; expected runtime");
      k.runtimeInputStrides = true;
    } else if (key == "runtime_sizes") {
      for (const std::string &size : splitList(value)) {
        if (size == "m")
          k.runtimeM = true;
        else if (size == "n")
          k.runtimeN = true;
        else if (size == "k")
          k.runtimeK = true;
        else
          return llvm::createStringError(
              "emitter output has a malformed qm.runtime_sizes '" +
              value.str() + "'; expected some of m, n and k");
      }
    } else if (key == "b_prepacked") {
      auto layout = PrepackedB::parse(value);
      if (!layout)
        return layout.takeError();
      k.prepackedB = *layout;
    } else if (key == "inner_loop_flops") {
      if (value.getAsInteger(10, k.innerLoopFlops))
        return llvm::createStringError(
            "emitter output has a malformed qm.inner_loop_flops '" +
            value.str() + "'");
    } else if (key == "vector_bits") {
      if (value.getAsInteger(10, k.vectorBits))
        return llvm::createStringError(
            "emitter output has a malformed qm.vector_bits '" + value.str() +
            "'");
    } else if (key == "flops_per_iteration") {
      if (value.getAsInteger(10, k.flopsPerIteration))
        return llvm::createStringError(
            "emitter output has a malformed flop count '" + value.str() + "'");
    }
  }
  if (k.symbol.empty() || !sawWorkspace || !sawBegin || !sawEnd)
    return llvm::createStringError(
        "emitter output lacks its header (qm.symbol, qm.workspace_bytes) or "
        "body markers");
  k.text = std::move(text);
  return k;
}

llvm::Expected<std::string> EmittedKernel::body() const {
  static constexpr llvm::StringLiteral begin = "# qm.body.begin\n";
  static constexpr llvm::StringLiteral end = "# qm.body.end\n";
  llvm::StringRef t(text);
  size_t b = t.find(begin);
  size_t e = t.find(end);
  if (b == llvm::StringRef::npos || e == llvm::StringRef::npos || e < b)
    return llvm::createStringError("kernel " + symbol + " has no body markers");
  return t.slice(b + begin.size(), e).str();
}

llvm::Expected<std::string> EmittedKernel::innerLoop() const {
  llvm::StringRef t(text);
  size_t b = t.find(" qm.inner_loop.begin\n");
  size_t e = t.find(" qm.inner_loop.end\n");
  if (innerLoopFlops == 0 || b == llvm::StringRef::npos ||
      e == llvm::StringRef::npos || e < b)
    return llvm::createStringError(
        "kernel " + symbol +
        " marks no inner loop (qm.inner_loop_flops and the "
        "qm.inner_loop.begin/end lines: a full register block's K loop)");
  b = t.find('\n', b) + 1;
  return t.slice(b, t.rfind('\n', e) + 1).str();
}

/// The blocking and variant fields a GEMM-based kernel shares.
static void addConfigFields(nlohmann::json &r, const GemmConfig &c,
                            llvm::StringRef fault, const Target *target) {
  r["isa"] = isaName(c.isa).str();
  r["mr"] = c.mr;
  r["nr"] = c.nr;
  r["k_unroll"] = c.kUnroll;
  if (c.threads > 1)
    r["parallel"] = true;
  if (!fault.empty())
    r["fault"] = fault.str();
  if (target)
    r["target_features"] = target->features;
  // The sketch-driven writers take the register block, the K unroll and a
  // vector length; a GEMM's K blocks and B's packing are added by
  // gemmRequestJson (a convolution runs all of K, B packed as its layout
  // needs).
  if (isSketchIsa(c.isa)) {
    if (c.isa == VectorIsa::Sve && target && target->scalableVectors)
      r["vlen"] = "scalable";
    else if (c.isa == VectorIsa::Rvv || c.isa == VectorIsa::Sve)
      r["vlen"] = target && target->vlen ? target->vlen : 128;
    if (c.isa == VectorIsa::Rvv)
      r["lmul"] = c.lmul;
    return;
  }
  r["kc"] = c.kc;
  r["mc"] = c.mc;
  r["nc"] = c.nc;
  r["prefetch_a"] = c.prefetchA;
  r["prefetch_b"] = c.prefetchB;
  r["order"] = orderName(c.order).str();
  if (c.packB == BPacking::InPlace)
    r["pack_b"] = false;
  if (c.packB == BPacking::Fused)
    r["fuse_pack_b"] = true;
  if (c.loop != MacroLoopOrder::JrIr)
    r["loop_order"] = loopOrderName(c.loop).str();
  if (c.aLayout != ALayout::KMajor)
    r["a_layout"] = c.aLayout == ALayout::Rows ? "rows" : "direct";
  if (c.product == Product::Transposed)
    r["product"] = "transposed";
  if (c.sweepB)
    r["sweep_b"] = true;
}

/// The kind's element types (an 8-bit A's signedness), and for the
/// dot-product emitters (dotgemm.py, dotconv.py), which have no prefetch
/// distances, K-step orders or A layouts, those fields left unsaid at
/// their defaults: anything else reaches them and is refused.
static void addDotFields(nlohmann::json &r, GemmPrecision precision,
                         const GemmConfig &c) {
  if (isIntegerPrecision(precision))
    r["a_type"] = precision == GemmPrecision::U8S8 ? "u8" : "s8";
  if (precision == GemmPrecision::F32)
    return;
  if (c.prefetchA == 0)
    r.erase("prefetch_a");
  if (c.prefetchB == 0)
    r.erase("prefetch_b");
  if (c.order == KStepOrder::Broadcast)
    r.erase("order");
  if (c.aLayout == ALayout::KMajor)
    r.erase("a_layout");
}

std::string qimeng::gemmRequestJson(const GemmDesc &d, const GemmConfig &c,
                                    llvm::StringRef fault,
                                    const Target *target) {
  nlohmann::json r = toJson(d);
  r["version"] = 1;
  // The kind names the element types: "sbgemm" is bf16 x bf16 -> f32,
  // "shgemm" f16 x f16 -> f32, "igemm" u8 or s8 (a_type) x s8 -> s32.
  r["kind"] = d.precision == GemmPrecision::F32    ? "sgemm"
              : d.precision == GemmPrecision::Bf16 ? "sbgemm"
              : d.precision == GemmPrecision::F16  ? "shgemm"
                                                   : "igemm";
  r.erase("dtype");
  // A run-time-ld kernel takes its leading dimensions at each call.
  if (d.runtimeLd)
    for (const char *field : {"lda", "ldb", "ldc", "ldd"})
      r.erase(field);
  addConfigFields(r, c, fault, target);
  addDotFields(r, d.precision, c);
  // The f32 matrix-vector form is the dot kernels' (dotgemm.py): none of
  // sgemm.py's prefetch distances, K-step order, macro-loop order or A
  // layout, which the config keeps for its panel form (packb=1).
  if (d.precision == GemmPrecision::F32 && isMatrixVectorForm(d, c))
    for (const char *field :
         {"prefetch_a", "prefetch_b", "order", "loop_order", "a_layout"})
      r.erase(field);
  // A sketch kernel's K in blocks of kc below a static K, and B as stored
  // copied a panel at a time (a transposed B is packed anyway; a run-time K
  // runs whole, read in place).
  if (isSketchIsa(c.isa) && !d.dynamicK) {
    if (c.kc < d.k)
      r["kc"] = c.kc;
    if (c.packB != BPacking::InPlace && !d.transB)
      r["pack_b"] = true;
  }
  return r.dump();
}

std::string qimeng::convRequestJson(const ConvDesc &d, const GemmConfig &c,
                                    llvm::StringRef fault,
                                    const Target *target) {
  nlohmann::json r = toJson(d);
  r["version"] = 1;
  // "sbconv2d" is bf16 x bf16 -> f32, "shconv2d" f16 x f16 -> f32 (AMX
  // only), "iconv2d" u8 or s8 (a_type) x s8 -> s32 (dotconv.py).
  r["kind"] = d.precision == GemmPrecision::F32    ? "sconv2d"
              : d.precision == GemmPrecision::Bf16 ? "sbconv2d"
              : d.precision == GemmPrecision::F16  ? "shconv2d"
                                                   : "iconv2d";
  r.erase("dtype");
  // The emitter's default is the dense input: only a strided one is sent,
  // and none to a kernel that reads them at run time.
  if (d.inputIsDense() || d.runtimeStrides)
    r.erase("input_strides");
  addConfigFields(r, c, fault, target);
  addDotFields(r, d.precision, c);
  return r.dump();
}

/// A fixed environment: the emitter sees its package and nothing of ours
/// (no API keys, no user site-packages).
static SubprocessOptions emitterProcess(const EmitterOptions &options) {
  SubprocessOptions sp;
  sp.timeoutSeconds = options.timeoutSeconds;
  sp.outputCap = options.outputCap;
  sp.env = std::vector<std::string>{
      "PYTHONPATH=" + options.packageDir, "PYTHONDONTWRITEBYTECODE=1",
      "PYTHONHASHSEED=0", "LC_ALL=C", "PATH=/usr/bin:/bin"};
  return sp;
}

llvm::Expected<EmittedKernel>
qimeng::runEmitter(llvm::StringRef requestJson, const EmitterOptions &options) {
  auto text = runEmitterText(requestJson, options);
  if (!text)
    return text.takeError();
  return parseEmitterOutput(std::move(*text));
}

llvm::Expected<std::string>
qimeng::runEmitterText(llvm::StringRef requestJson,
                       const EmitterOptions &options) {
  SubprocessOptions sp = emitterProcess(options);
  std::vector<std::string> args = {options.python, "-s", "-m",
                                   "qimeng_emitters"};
  auto result = runSubprocess(options.python, args, requestJson, sp);
  if (!result)
    return llvm::createStringError("cannot run the emitter: " +
                                   llvm::toString(result.takeError()));
  if (result->timedOut)
    return llvm::createStringError(
        llvm::formatv("emitter timed out after {0} s", options.timeoutSeconds)
            .str());
  if (result->exitCode != 0 || result->crashed) {
    llvm::StringRef err = llvm::StringRef(result->err).trim();
    // The protocol's one `error: ...` line; the last line of a traceback
    // otherwise.
    size_t pos = err.rfind("error: ");
    llvm::StringRef message =
        pos != llvm::StringRef::npos ? err.substr(pos + 7) : err;
    if (message.empty())
      message = "no message";
    return llvm::createStringError(
        llvm::formatv("emitter failed (exit {0}): {1}", result->exitCode,
                      message)
            .str());
  }
  return std::move(result->out);
}

llvm::Expected<EmittedKernel>
qimeng::emitGemmKernel(const GemmDesc &desc, const GemmConfig &config,
                       const EmitterOptions &options, llvm::StringRef fault,
                       const Target *target) {
  if (auto err = desc.verify())
    return std::move(err);
  return runEmitter(gemmRequestJson(desc, config, fault, target), options);
}

llvm::Expected<EmittedKernel>
qimeng::emitConvKernel(const ConvDesc &desc, const GemmConfig &config,
                       const EmitterOptions &options, llvm::StringRef fault,
                       const Target *target) {
  if (auto err = desc.verify())
    return std::move(err);
  return runEmitter(convRequestJson(desc, config, fault, target), options);
}

llvm::Expected<EmittedKernel> qimeng::emitKernel(const KernelProblem &problem,
                                                 const GemmConfig &config,
                                                 const EmitterOptions &options,
                                                 llvm::StringRef fault,
                                                 const Target *target) {
  if (const ConvDesc *conv = problem.conv())
    return emitConvKernel(*conv, config, options, fault, target);
  return emitGemmKernel(problem.gemm(), config, options, fault, target);
}

std::string qimeng::peakInstructionName(VectorIsa isa,
                                        GemmPrecision precision) {
  const bool amx = isa == VectorIsa::Amx;
  if (precision == GemmPrecision::Bf16)
    return amx ? "TDPBF16PS (AMX)" : "VDPBF16PS";
  if (precision == GemmPrecision::F16)
    return amx ? "TDPBF16PS (AMX) / 4: an f16 product is four bf16 ones"
               : "FMA (f16 widened to f32)";
  if (isIntegerPrecision(precision))
    return amx ? "TDPBUSD (AMX)" : "VPDPBUSD";
  return "FMA";
}

llvm::Expected<EmittedKernel>
qimeng::emitFmaPeakProbe(VectorIsa isa, const EmitterOptions &options,
                         GemmPrecision precision) {
  nlohmann::json r = {
      {"version", 1}, {"kind", "fma_peak"}, {"isa", isaName(isa).str()}};
  // AMX's tiles (TDPBF16PS, TDPBUSD) or AVX-512's dot instructions.
  const bool amx = isa == VectorIsa::Amx;
  if (precision == GemmPrecision::F16 && amx)
    r["instruction"] = "amx-f16"; // TDPBF16PS, an f16 product four of its
  else if (precision == GemmPrecision::Bf16)
    r["instruction"] = amx ? "amx-bf16" : "bf16-dot";
  else if (isIntegerPrecision(precision))
    r["instruction"] = amx ? "amx-int8" : "vnni-dot";
  auto probe = runEmitter(r.dump(), options);
  if (!probe)
    return probe.takeError();
  if (probe->flopsPerIteration == 0)
    return llvm::createStringError("fma_peak probe lacks its flop count");
  return probe;
}

llvm::Expected<std::string>
qimeng::emitterGeneratorVersion(const EmitterOptions &options) {
  if (options.packageDir == QIMENG_EMITTER_DIR)
    return std::string(QIMENG_GENERATOR_VERSION);
  SubprocessOptions sp = emitterProcess(options);
  auto result = runSubprocess(options.python,
                              {options.python, "-s", "-m", "qimeng_emitters"},
                              R"({"version":1,"kind":"version"})", sp);
  if (!result)
    return result.takeError();
  llvm::StringRef version = llvm::StringRef(result->out).trim();
  if (!result->succeeded() || version.empty() || version.contains('\n'))
    return llvm::createStringError(
        "cannot read the emitters' generator version from " +
        options.packageDir);
  return version.str();
}

llvm::Expected<EmittedKernel>
qimeng::runSandboxedEmitter(llvm::StringRef source, llvm::StringRef requestJson,
                            const EmitterOptions &options,
                            const SandboxLimits &limits,
                            bool *networkIsolated) {
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("qimeng-sandbox", dir))
    return llvm::createStringError("cannot create the sandbox directory: " +
                                   ec.message());
  std::string dirText(dir);
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dirText); });
  std::string emitterPath = dirText + "/llm_emitter.py";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(emitterPath, ec);
    if (ec)
      return llvm::createStringError("cannot write the emitter: " +
                                     ec.message());
    out << source;
  }
  std::string launcher = options.packageDir + "/qimeng_sandbox.py";
  SubprocessOptions sp;
  sp.timeoutSeconds = limits.timeoutSeconds;
  sp.outputCap = limits.outputCap;
  sp.env = std::vector<std::string>{}; // nothing of ours: no API key
  std::vector<std::string> args = {options.python,
                                   "-I",
                                   "-S",
                                   launcher,
                                   emitterPath,
                                   dirText,
                                   std::to_string(limits.cpuSeconds),
                                   std::to_string(limits.memoryMB),
                                   std::to_string(limits.fileSizeKB)};
  auto result = runSubprocess(options.python, args, requestJson, sp);
  if (!result)
    return llvm::createStringError("cannot run the sandboxed emitter: " +
                                   llvm::toString(result.takeError()));
  llvm::StringRef err = llvm::StringRef(result->err);
  if (networkIsolated)
    *networkIsolated = err.starts_with("network: isolated");
  if (result->timedOut)
    return llvm::createStringError(
        llvm::formatv("the emitter did not finish within {0} s",
                      limits.timeoutSeconds)
            .str());
  if (result->crashed)
    return llvm::createStringError(
        "the emitter was killed (" + result->statusMessage +
        "; it may have passed its CPU or memory limit)");
  if (llvm::StringRef(result->out).ends_with("[output truncated]"))
    return llvm::createStringError(
        llvm::formatv("the emitter printed more than {0} bytes",
                      limits.outputCap)
            .str());
  if (result->exitCode != 0) {
    size_t pos = err.rfind("error: ");
    llvm::StringRef message =
        pos != llvm::StringRef::npos ? err.substr(pos + 7).trim() : err.trim();
    return llvm::createStringError(
        llvm::formatv("the emitter failed (exit {0}): {1}", result->exitCode,
                      message.empty() ? "no message" : message)
            .str());
  }
  auto kernel = parseEmitterOutput(std::move(result->out));
  if (!kernel)
    return llvm::createStringError("the emitter's output: " +
                                   llvm::toString(kernel.takeError()));
  return kernel;
}
