//===- TaskPrompt.cpp - One sentence to a task ----------------------------===//
#include "qimeng/LLM/TaskPrompt.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Support/JsonFieldReader.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <nlohmann/json.hpp>
#include <regex>

using namespace qimeng;
using json = nlohmann::json;

namespace {

std::string lower(llvm::StringRef s) { return s.lower(); }

bool has(const std::string &text, const char *word) {
  std::regex re(std::string("\\b") + word + "\\b");
  return std::regex_search(text, re);
}

/// `task` for `gpu`, its target and the GPU itself.
void setGpu(Task &task, const GpuMachine &gpu) {
  task.target = gpu.target();
  task.gpu = gpu;
}

/// A GPU named in the prompt: its target, and the type (bf16, f16, tf32
/// or f32).
llvm::Error setGpuTarget(const std::string &text, const GpuMachine &gpu,
                         Task &task) {
  setGpu(task, gpu);
  task.dtype = "f32";
  if (has(text, "bf16"))
    task.dtype = "bf16";
  else if (has(text, "fp16") || has(text, "f16") || has(text, "half"))
    task.dtype = "f16";
  else if (has(text, "tf32"))
    task.dtype = "tf32";
  static const char *const others[] = {"int8",   "i8",    "fp64", "f64",
                                       "double", "int32", "fp8"};
  for (const char *t : others)
    if (has(text, t))
      return llvm::createStringError(
          std::string("GPU kernels are generated in bf16, f16 and tf32 "
                      "(tensor cores, f32 sums) and f32 (FFMA); the prompt "
                      "asks for ") +
          t);
  return llvm::Error::success();
}

/// Checks dtype and target words shared by both kinds.
llvm::Error checkTypeAndTarget(const std::string &text, Task &task) {
  if (std::optional<GpuMachine> gpu = gpuMachineInText(text))
    return setGpuTarget(text, *gpu, task);
  static const char *const others[] = {"fp16",   "f16",   "bf16", "half",
                                       "int8",   "i8",    "fp64", "f64",
                                       "double", "int32", "fp8"};
  for (const char *t : others)
    if (has(text, t)) {
      // bf16 and 8-bit GEMMs exist, through other doors (no baseline of
      // this tool's times them yet).
      const llvm::StringRef type(t);
      const bool elsewhere = type == "bf16" || type == "int8" || type == "i8";
      return llvm::createStringError(
          std::string("only fp32 kernels can be generated; the prompt asks "
                      "for ") +
          t +
          (elsewhere ? " (bf16 and int8 GEMMs: the pass, qimeng-tune --dtype "
                       "and qimeng-bench --dtype)"
                     : ""));
    }
  task.dtype = "f32";
  // A machine of the paper's by name ("for the SpacemiT K1", "... a
  // Cortex-A76"): generated, validated under emulation and ranked by the
  // static model there.
  for (const std::string &name : Target::machineNames())
    if (has(text, std::regex_replace(name, std::regex(R"([-.])"), R"(\$&)")
                      .c_str())) {
      task.target = *Target::specOfMachine(name);
      return llvm::Error::success();
    }
  // "for/on <name> cpu|machine|gpu|processor", or a machine named outright.
  std::smatch m;
  std::regex named(
      R"(\b(?:for|on) (?:(?:an?|the) )?((?!(?:an?|the)\b)[a-z0-9_\-]+) (?:cpu|machine|gpu|processor)\b)");
  std::string what;
  if (std::regex_search(text, m, named))
    what = m[1];
  static const char *const machines[] = {"gpu",     "cuda", "nvidia", "arm",
                                         "aarch64", "neon", "sve",    "riscv",
                                         "a100",    "h100", "h200",   "apple"};
  for (const char *name : machines)
    if (what.empty() && has(text, name))
      what = name;
  if (!what.empty() && what != "this" && what != "host" && what != "my" &&
      what != "our" && what != "local" && what != "x86" && what != "x86-64")
    return llvm::createStringError(
        "kernels are tuned on this machine, or by the static model for a "
        "machine it knows (" +
        llvm::join(Target::machineTitles(), ", ") + "), or written for a GPU " +
        "it knows (" + llvm::join(gpuMachineTitles(), ", ") +
        "); the prompt asks for '" + what + "'");
  task.target = "host";
  return llvm::Error::success();
}

} // namespace

llvm::Expected<Task> qimeng::parseTaskPrompt(llvm::StringRef prompt) {
  std::string text = lower(prompt);
  Task task;
  if (auto err = checkTypeAndTarget(text, task))
    return std::move(err);
  bool conv =
      has(text, "conv") || has(text, "conv2d") || has(text, "convolution");
  bool gemm = has(text, "gemm") || has(text, "sgemm") || has(text, "matmul") ||
              text.find("matrix multipl") != std::string::npos;
  if (conv == gemm)
    return llvm::createStringError(
        conv ? "the prompt names both a convolution and a GEMM"
             : "cannot tell the operation: say GEMM (or matmul) with MxNxK, "
               "or conv2d with NxHxWxC, the filters and their size");
  std::smatch m;
  if (gemm) {
    std::regex dims(R"((\d+)\s*x\s*(\d+)\s*x\s*(\d+))");
    if (!std::regex_search(text, m, dims))
      return llvm::createStringError(
          "cannot read the GEMM's shape: write it as MxNxK, such as "
          "512x512x512");
    int64_t mm = std::stoll(m[1]), n = std::stoll(m[2]), k = std::stoll(m[3]);
    bool ta = text.find("transposed a") != std::string::npos ||
              text.find("a transposed") != std::string::npos;
    bool tb = text.find("transposed b") != std::string::npos ||
              text.find("b transposed") != std::string::npos;
    GemmDesc d = GemmDesc::packed(mm, n, k, ta, tb);
    if (auto err = d.verify())
      return std::move(err);
    task.problem = d;
    task.shape = llvm::formatv("{0}x{1}x{2}", mm, n, k).str();
    return task;
  }
  std::regex input(R"((\d+)\s*x\s*(\d+)\s*x\s*(\d+)\s*x\s*(\d+))");
  if (!std::regex_search(text, m, input))
    return llvm::createStringError(
        "cannot read the convolution's input: write it as NxHxWxC, such as "
        "1x58x58x64 (the padded input)");
  int64_t n = std::stoll(m[1]), h = std::stoll(m[2]), w = std::stoll(m[3]),
          c = std::stoll(m[4]);
  std::string rest = m.suffix();
  std::smatch f;
  std::regex filters(
      R"((?:->|\bto)\s*(\d+)|(\d+)\s*(?:filters|output channels))");
  if (!std::regex_search(text, f, filters))
    return llvm::createStringError(
        "cannot read the number of filters: write 'to 64' or '64 filters'");
  int64_t fcount = std::stoll(f[1].matched ? f[1].str() : f[2].str());
  std::smatch k;
  std::regex kernel(R"(\b(\d+)\s*x\s*(\d+)\b(?!\s*x))");
  int64_t kh = 0, kw = 0;
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), kernel);
       it != std::sregex_iterator(); ++it) {
    kh = std::stoll((*it)[1]);
    kw = std::stoll((*it)[2]);
    break;
  }
  if (!kh)
    return llvm::createStringError(
        "cannot read the filter size: write it as KHxKW, such as 3x3");
  int64_t stride = 1, dilation = 1;
  std::smatch s;
  if (std::regex_search(text, s, std::regex(R"(stride\s*(\d+))")))
    stride = std::stoll(s[1]);
  if (std::regex_search(text, s, std::regex(R"(dilation\s*(\d+))")))
    dilation = std::stoll(s[1]);
  ConvLayout layout =
      has(text, "nchw") ? ConvLayout::NchwFchw : ConvLayout::NhwcHwcf;
  // For NCHW the input is written NxCxHxW.
  if (layout == ConvLayout::NchwFchw)
    std::swap(c, h), std::swap(h, w);
  ConvDesc d = ConvDesc::dense(layout, n, h, w, c, fcount, kh, kw, stride,
                               stride, dilation, dilation);
  if (auto err = d.verify())
    return std::move(err);
  task.problem = d;
  task.shape = d.str();
  return task;
}

llvm::Expected<Task> qimeng::extractTaskWithLlm(llvm::StringRef prompt,
                                                ChatClient &client) {
  std::string ask =
      "Extract the kernel this request asks for, as JSON only, with no "
      "prose. For a matrix multiplication: {\"op\": \"sgemm\", \"m\": M, "
      "\"n\": N, \"k\": K, \"trans_a\": false, \"trans_b\": false, "
      "\"dtype\": \"f32\", \"target\": \"host\"}. For a 2-D convolution: "
      "{\"op\": \"conv2d\", \"layout\": \"nhwc\" or \"nchw\", \"n\", \"h\", "
      "\"w\", \"c\" (the padded input), \"f\", \"kh\", \"kw\", \"stride\", "
      "\"dilation\", \"dtype\", \"target\"}. \"target\" is \"host\" for this "
      "machine, else the machine named (a CPU or a GPU such as \"H200\"); "
      "\"dtype\" is f32, bf16 or f16. Request: " +
      prompt.str();
  auto reply = client.complete({{"user", ask}});
  if (!reply)
    return reply.takeError();
  llvm::StringRef r(*reply);
  size_t open = r.find('{'), close = r.rfind('}');
  json j = open == llvm::StringRef::npos || close == llvm::StringRef::npos ||
                   close < open
               ? json()
               : json::parse(r.slice(open, close + 1).str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return llvm::createStringError("the LLM's task reply holds no JSON object");
  JsonFieldReader f(j, "LLM task reply");
  std::string op, dtype = "f32", target = "host";
  if (auto err = f.string("op", op))
    return std::move(err);
  if (f.find("dtype"))
    if (auto err = f.string("dtype", dtype))
      return std::move(err);
  if (f.find("target"))
    if (auto err = f.string("target", target))
      return std::move(err);
  std::optional<GpuMachine> gpu;
  if (target != "host")
    gpu = gpuMachineNamed(target);
  if (gpu) {
    if (dtype == "fp32" || dtype == "float32")
      dtype = "f32";
    if (dtype == "fp16" || dtype == "half")
      dtype = "f16";
    if (dtype != "f32" && dtype != "bf16" && dtype != "f16" && dtype != "tf32")
      return llvm::createStringError(
          "GPU kernels are generated in bf16, f16, tf32 and f32; the LLM read "
          "the type as " +
          dtype);
  } else if (dtype != "f32" && dtype != "fp32" && dtype != "float32") {
    return llvm::createStringError("only fp32 kernels can be generated; the "
                                   "LLM read the type as " +
                                   dtype);
  }
  if (target != "host" && !gpu) {
    std::optional<std::string> spec = Target::specOfMachine(target);
    if (!spec)
      return llvm::createStringError(
          "kernels are tuned on this machine, or by the static model for a "
          "machine it knows (" +
          llvm::join(Target::machineTitles(), ", ") +
          "); the LLM read the target as '" + target + "'");
    target = *spec;
  }
  Task task;
  task.target = target;
  if (gpu) {
    setGpu(task, *gpu);
    task.dtype = dtype;
  }
  auto integer = [&](const char *name, int64_t &out,
                     std::optional<int64_t> fallback =
                         std::nullopt) -> llvm::Error {
    if (!f.find(name) && fallback) {
      out = *fallback;
      return llvm::Error::success();
    }
    return f.integer64(name, out);
  };
  if (op == "sgemm" || op == "gemm" || op == "matmul") {
    int64_t m = 0, n = 0, k = 0;
    for (auto [name, out] :
         {std::pair<const char *, int64_t *>{"m", &m}, {"n", &n}, {"k", &k}})
      if (auto err = integer(name, *out))
        return std::move(err);
    bool ta = false, tb = false;
    if (f.find("trans_a"))
      if (auto err = f.boolean("trans_a", ta))
        return std::move(err);
    if (f.find("trans_b"))
      if (auto err = f.boolean("trans_b", tb))
        return std::move(err);
    GemmDesc d = GemmDesc::packed(m, n, k, ta, tb);
    if (auto err = d.verify())
      return std::move(err);
    task.problem = d;
    task.shape = llvm::formatv("{0}x{1}x{2}", m, n, k).str();
    return task;
  }
  if (op != "conv2d" && op != "conv")
    return llvm::createStringError("the LLM read the operation as '" + op +
                                   "'; expected sgemm or conv2d");
  std::string layout = "nhwc";
  if (f.find("layout"))
    if (auto err = f.string("layout", layout))
      return std::move(err);
  int64_t n = 0, h = 0, w = 0, c = 0, fc = 0, kh = 0, kw = 0, s = 1, dl = 1;
  for (auto [name, out] : {std::pair<const char *, int64_t *>{"n", &n},
                           {"h", &h},
                           {"w", &w},
                           {"c", &c},
                           {"f", &fc},
                           {"kh", &kh},
                           {"kw", &kw}})
    if (auto err = integer(name, *out))
      return std::move(err);
  if (auto err = integer("stride", s, 1))
    return std::move(err);
  if (auto err = integer("dilation", dl, 1))
    return std::move(err);
  ConvDesc d = ConvDesc::dense(llvm::StringRef(layout).starts_with("nchw")
                                   ? ConvLayout::NchwFchw
                                   : ConvLayout::NhwcHwcf,
                               n, h, w, c, fc, kh, kw, s, s, dl, dl);
  if (auto err = d.verify())
    return std::move(err);
  task.problem = d;
  task.shape = d.str();
  return task;
}
