//===- CudaKernel.cpp - Emitted CUDA kernels ------------------------------===//
#include "qimeng/Cuda/CudaKernel.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include <regex>

using namespace qimeng;

/// "x,y,z" as three positive integers.
static bool parseTriple(llvm::StringRef value, std::array<unsigned, 3> &out) {
  llvm::SmallVector<llvm::StringRef, 3> parts;
  value.split(parts, ',');
  if (parts.size() != 3)
    return false;
  for (int i = 0; i < 3; ++i)
    if (parts[i].trim().getAsInteger(10, out[i]) || out[i] == 0)
      return false;
  return true;
}

llvm::Expected<CudaKernelSource> qimeng::parseCudaKernel(std::string text) {
  CudaKernelSource k;
  bool sawGrid = false, sawBlock = false, sawShared = false;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.consume_front("// qm."))
      continue;
    auto [key, value] = line.split(':');
    value = value.trim();
    auto malformed = [&](const char *what) {
      return llvm::createStringError(
          llvm::formatv("CUDA kernel has a malformed qm.{0} '{1}'; expected "
                        "{2}",
                        key, value, what)
              .str());
    };
    if (key == "symbol") {
      k.symbol = value.str();
    } else if (key == "arch") {
      k.arch = value.str();
    } else if (key == "grid") {
      if (!parseTriple(value, k.grid))
        return malformed("three positive integers");
      sawGrid = true;
    } else if (key == "block") {
      if (!parseTriple(value, k.block))
        return malformed("three positive integers");
      sawBlock = true;
    } else if (key == "shared_bytes") {
      if (value.getAsInteger(10, k.sharedBytes))
        return malformed("an integer");
      sawShared = true;
    } else if (key == "dynamic_shared_bytes") {
      if (value.getAsInteger(10, k.dynamicSharedBytes))
        return malformed("an integer");
      sawShared = true;
    } else if (key == "engine") {
      k.engine = value.str();
    } else if (key == "args") {
      k.args = value.str();
    } else if (key == "generator") {
      k.generatorVersion = value.str();
    }
  }
  if (k.symbol.empty() || k.arch.empty() || !sawGrid || !sawBlock || !sawShared)
    return llvm::createStringError(
        "CUDA kernel lacks one of the qm.symbol, qm.arch, qm.grid, qm.block "
        "and qm.shared_bytes (or qm.dynamic_shared_bytes) header lines");
  k.text = std::move(text);
  return k;
}

llvm::Expected<CudaKernelSource>
qimeng::emitCudaKernel(llvm::StringRef requestJson,
                       const EmitterOptions &options) {
  auto text = runEmitterText(requestJson, options);
  if (!text)
    return text.takeError();
  return parseCudaKernel(std::move(*text));
}

/// The integer just before `what` in `line` ("12 bytes spill stores").
static uint64_t numberBefore(llvm::StringRef line, llvm::StringRef what) {
  size_t at = line.find(what);
  if (at == llvm::StringRef::npos)
    return 0;
  llvm::StringRef before = line.take_front(at).rtrim();
  size_t start = before.find_last_not_of("0123456789");
  uint64_t v = 0;
  before.substr(start == llvm::StringRef::npos ? 0 : start + 1)
      .getAsInteger(10, v);
  return v;
}

PtxasReport qimeng::parsePtxasLog(llvm::StringRef log) {
  PtxasReport r;
  bool sawRegisters = false, sawFrame = false;
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (line.contains("warning")) {
      r.warnings.push_back(line.trim().str());
      continue;
    }
    if (!sawFrame && line.contains("bytes stack frame")) {
      r.stackBytes = numberBefore(line, "bytes stack frame");
      r.spillStores = numberBefore(line, "bytes spill stores");
      r.spillLoads = numberBefore(line, "bytes spill loads");
      sawFrame = true;
    } else if (!sawRegisters && line.contains("Used ") &&
               line.contains(" registers")) {
      r.registers = unsigned(numberBefore(line, "registers"));
      sawRegisters = true;
    }
  }
  return r;
}

llvm::Expected<unsigned> qimeng::cubinSmVersion(llvm::StringRef cubin) {
  // ELF64 little-endian: e_machine at 18 (2 bytes), e_flags at 48; the
  // ABI version (EI_ABIVERSION, byte 8) says where e_flags keeps the SM:
  // bits 8-15 from version 8 (CUDA 12.8 on), bits 0-7 before.
  if (cubin.size() < 64 ||
      !cubin.starts_with("\x7f"
                         "ELF") ||
      cubin[4] != 2)
    return llvm::createStringError("not a 64-bit ELF image");
  auto byte = [&](size_t at) { return unsigned(uint8_t(cubin[at])); };
  if ((byte(18) | byte(19) << 8) != 190)
    return llvm::createStringError("an ELF image, but not for a CUDA GPU "
                                   "(e_machine " +
                                   std::to_string(byte(18) | byte(19) << 8) +
                                   ")");
  const unsigned flags =
      byte(48) | byte(49) << 8 | byte(50) << 16 | byte(51) << 24;
  return byte(8) >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

llvm::Expected<CudaGemmKernel>
qimeng::buildCudaGemm(const GpuMachine &gpu, llvm::StringRef dtype, int64_t m,
                      int64_t n, int64_t k, bool overwrite, bool bTransposed,
                      const EmitterOptions &options) {
  const std::string request = llvm::formatv(
      "{{\"version\": 1, \"kind\": \"cuda_gemm\", \"arch\": \"{0}\", "
      "\"dtype\": \"{1}\", \"m\": {2}, \"n\": {3}, \"k\": {4}, "
      "\"overwrite\": {5}, \"b_layout\": \"{6}\", \"sms\": {7}}",
      gpu.arch, dtype, m, n, k, overwrite ? "true" : "false",
      bTransposed ? "nk" : "kn", gpu.sms);
  auto source = emitCudaKernel(request, options);
  if (!source)
    return source.takeError();
  auto compiled = compileCudaKernel(*source);
  if (!compiled)
    return compiled.takeError();
  if (!compiled->ptxas.clean())
    return llvm::createStringError("ptxas reported spills or warnings for " +
                                   source->symbol + ":\n" + compiled->log);
  return CudaGemmKernel{std::move(*source), std::move(*compiled)};
}

llvm::Expected<CudaRunReport> qimeng::runCudaKernel(llvm::StringRef runner,
                                                    llvm::StringRef sourcePath,
                                                    unsigned runs) {
  CudaRunReport report;
  if (!llvm::sys::fs::can_execute(runner)) {
    report.why = runner.str() + " is not built (it needs the CUDA toolkit's "
                                "NVRTC and cuBLAS at configure time)";
    return report;
  }
  SubprocessOptions options;
  options.timeoutSeconds = 600;
  auto result = runSubprocess(
      runner, {runner.str(), sourcePath.str(), "--runs", std::to_string(runs)},
      "", options);
  if (!result)
    return result.takeError();
  if (result->exitCode == 77) {
    report.why = llvm::StringRef(result->err).trim().str();
    return report;
  }
  if (!result->succeeded())
    return llvm::createStringError(
        "the kernel failed on the GPU (qimeng-cuda-runner " +
        (result->statusMessage.empty()
             ? "exit " + std::to_string(result->exitCode)
             : result->statusMessage) +
        "): " + result->out + result->err);
  report.ran = true;
  const std::string &out = result->out;
  std::smatch m;
  if (std::regex_search(out, m, std::regex("device: (.*)")))
    report.device = m[1];
  if (std::regex_search(out, m, std::regex("validated: (.*)")))
    report.validation = m[1];
  if (std::regex_search(
          out, m, std::regex(R"(ours: ([0-9.]+) ms, ([0-9.]+) TFLOP/s)"))) {
    report.oursMs = std::stod(m[1]);
    report.oursTflops = std::stod(m[2]);
  }
  if (std::regex_search(
          out, m,
          std::regex(R"(cuBLAS: ([0-9.]+) ms, ([0-9.]+) TFLOP/s \((.*)\))"))) {
    report.cublasMs = std::stod(m[1]);
    report.cublasTflops = std::stod(m[2]);
    report.cublasConfig = m[3];
  }
  return report;
}

llvm::Expected<CudaRunReport>
qimeng::runCudaKernelSource(llvm::StringRef runner,
                            const CudaKernelSource &kernel, unsigned runs) {
  llvm::SmallString<128> path;
  if (auto ec = llvm::sys::fs::createTemporaryFile(kernel.symbol, "cu", path))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (ec)
      return llvm::createStringError("cannot write " + std::string(path) +
                                     ": " + ec.message());
    out << kernel.text;
  }
  auto report = runCudaKernel(runner, path, runs);
  llvm::sys::fs::remove(path);
  return report;
}
