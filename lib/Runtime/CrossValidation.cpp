//===- CrossValidation.cpp - Validate a kernel for another architecture ===//
#include "qimeng/Runtime/CrossValidation.h"
#include "qimeng/Config.h"
#include "qimeng/Emit/Assembler.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <nlohmann/json.hpp>

using namespace qimeng;

CrossValidationOptions CrossValidationOptions::defaults() {
  CrossValidationOptions o;
  o.runnerDir = QIMENG_BINARY_DIR;
  if (auto dir = llvm::sys::Process::GetEnv("QIMENG_CROSS_RUNNER_DIR"))
    o.runnerDir = *dir;
  return o;
}

llvm::Expected<KernelCode> qimeng::kernelCode(const EmittedKernel &kernel,
                                              const Target &target) {
  auto object = assembleToObject(kernel.text, target, kernel.symbol + ".s");
  if (!object)
    return object.takeError();
  auto file =
      llvm::object::ObjectFile::createObjectFile((*object)->getMemBufferRef());
  if (!file)
    return file.takeError();
  KernelCode code;
  bool haveText = false;
  for (const llvm::object::SectionRef &section : (*file)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name || *name != ".text") {
      if (!name)
        llvm::consumeError(name.takeError());
      continue;
    }
    if (section.relocations().begin() != section.relocations().end())
      return llvm::createStringError(
          "kernel " + kernel.symbol +
          " needs relocations; a kernel's code must be position independent "
          "and self-contained");
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents)
      return contents.takeError();
    code.bytes = contents->str();
    haveText = true;
  }
  if (!haveText || code.bytes.empty())
    return llvm::createStringError("kernel " + kernel.symbol +
                                   " assembled to no code");
  for (const llvm::object::SymbolRef &symbol : (*file)->symbols()) {
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != kernel.symbol)
      continue;
    llvm::Expected<uint64_t> address = symbol.getAddress();
    if (!address)
      return address.takeError();
    code.entry = *address;
    return code;
  }
  return llvm::createStringError("kernel text lacks its symbol " +
                                 kernel.symbol);
}

/// How the runner is started: under qemu here with the code in a file, or
/// over ssh on a board with the code on stdin.
struct Backend {
  std::string program;
  std::vector<std::string> argv; ///< up to the runner's own arguments
  std::string codeArg;           ///< the CODE argument
  std::string input;             ///< the runner's stdin
  /// Removes the code file (qemu) when the backend goes.
  std::unique_ptr<llvm::FileRemover> codeFile;
  bool remote = false;
  std::string name;
  uint64_t entry = 0; ///< the kernel's offset in its code
};

/// The shell word `word` quoted for a POSIX shell.
static std::string shellQuote(llvm::StringRef word) {
  std::string out = "'";
  for (char c : word)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// One run of the cross runner with `runnerArgs` (its arguments after
/// CODE) on a problem of `multiplyAdds`.
static llvm::Expected<CrossRun>
runRunner(const std::vector<std::string> &runnerArgs, double multiplyAdds,
          const Backend &backend, const CrossValidationOptions &options) {
  std::vector<std::string> args = backend.argv;
  if (backend.remote) {
    // One shell command on the board: the code from stdin into a
    // temporary file, the runner on it, the file removed, its status.
    std::string command =
        "f=$(mktemp) && cat > \"$f\" && " + args.back() + " \"$f\"";
    for (const std::string &a : runnerArgs)
      command += " " + shellQuote(a);
    command += "; s=$?; rm -f \"$f\"; exit $s";
    args.back() = command;
  } else {
    args.push_back(backend.codeArg);
    args.insert(args.end(), runnerArgs.begin(), runnerArgs.end());
  }
  // An emulator runs the kernel and the fp64 reference some hundred times
  // slower than the hardware: the limit grows with the work (a 1024^3 GEMM
  // takes about a minute a distribution under qemu-riscv64).
  SubprocessOptions sp;
  sp.timeoutSeconds = options.timeoutSeconds + unsigned(multiplyAdds / 4e6);
  auto result = runSubprocess(backend.program, args, backend.input, sp);
  if (!result)
    return result.takeError();
  CrossRun run;
  if (result->timedOut || result->crashed || result->exitCode != 0) {
    run.report.passed = false;
    std::string status =
        result->timedOut
            ? "timed out after " + std::to_string(sp.timeoutSeconds) + " s"
        : result->crashed ? result->statusMessage
                          : "exit status " + std::to_string(result->exitCode);
    run.report.failure =
        "the kernel's run on " + backend.name + " failed: " + status;
    llvm::StringRef err = llvm::StringRef(result->err).trim();
    if (!err.empty())
      run.report.failure += " (" + err.take_back(300).str() + ")";
    return run;
  }
  auto answer = nlohmann::json::parse(result->out, nullptr, false);
  if (!answer.is_object() || !answer.contains("passed") ||
      !answer["passed"].is_boolean() || !answer.contains("failure") ||
      !answer["failure"].is_string())
    return llvm::createStringError("the cross runner answered '" +
                                   llvm::StringRef(result->out).trim().str() +
                                   "'");
  run.report.passed = answer["passed"].get<bool>();
  run.report.failure = answer["failure"].get<std::string>();
  if (auto it = answer.find("max_rel_error");
      it != answer.end() && it->is_number())
    run.report.maxRelError = it->get<double>();
  if (auto it = answer.find("median_ns"); it != answer.end() && it->is_number())
    run.medianNs = it->get<double>();
  if (auto it = answer.find("openblas_max_rel_error");
      it != answer.end() && it->is_number())
    run.report.openBlasMaxRelError = it->get<double>();
  return run;
}

/// The runner's EPILOGUE: "none" or a comma list ("bias=columns", "relu",
/// "relu_min=-1", "relu_max=6", "relu_nan_to_floor", "leaky_relu=0.01",
/// "activation=gelu_erf"); a
/// convolution's bias
/// is "bias" (per output channel).
static std::string epilogueArg(GemmBias bias, const Activation &activation,
                               bool conv) {
  std::vector<std::string> items;
  if (bias != GemmBias::None)
    items.push_back(conv                        ? "bias"
                    : bias == GemmBias::Columns ? "bias=columns"
                                                : "bias=rows");
  if (activation.relu)
    items.push_back("relu");
  if (activation.floor)
    items.push_back(llvm::formatv("relu_min={0:e9}", *activation.floor).str());
  if (activation.nanToFloor)
    items.push_back("relu_nan_to_floor");
  if (activation.bound)
    items.push_back(llvm::formatv("relu_max={0:e9}", *activation.bound).str());
  if (activation.leakySlope)
    items.push_back(
        llvm::formatv("leaky_relu={0:e9}", *activation.leakySlope).str());
  if (activation.smooth != Activation::Smooth::None)
    items.push_back(std::string("activation=") +
                    Activation::smoothName(activation.smooth));
  return items.empty() ? "none" : llvm::join(items, ",");
}

/// The runner's PARTS: "m_begin:m_end:n_begin:n_end" a part, comma-separated.
static std::string partsArg(const std::vector<GemmRange> &parts) {
  std::vector<std::string> items;
  for (const GemmRange &p : parts)
    items.push_back(
        llvm::formatv("{0}:{1}:{2}:{3}", p.mBegin, p.mEnd, p.nBegin, p.nEnd));
  return llvm::join(items, ",");
}

/// One run of a GEMM on `desc`'s leading dimensions.
static llvm::Expected<CrossRun> runOnce(const GemmDesc &desc,
                                        const EmittedKernel &kernel,
                                        const Backend &backend,
                                        const CrossValidationOptions &options,
                                        bool allDistributions, int timedRuns,
                                        const std::vector<GemmRange> &parts) {
  const std::string transposes = {desc.transA ? 't' : 'n',
                                  desc.transB ? 't' : 'n'};
  std::vector<std::string> runnerArgs = {
      std::to_string(backend.entry),
      std::to_string(desc.m),
      std::to_string(desc.n),
      std::to_string(desc.k),
      transposes,
      std::to_string(desc.lda),
      std::to_string(desc.ldb),
      std::to_string(desc.ldc),
      std::to_string(kernel.workspaceBytes),
      desc.overwrite ? "1" : "0",
      std::to_string(options.seed),
      std::to_string(timedRuns),
      allDistributions ? "all" : "small-integers",
      epilogueArg(desc.bias, desc.activation, /*conv=*/false)};
  if (!parts.empty())
    runnerArgs.push_back(partsArg(parts));
  return runRunner(runnerArgs, double(desc.m) * double(desc.n) * double(desc.k),
                   backend, options);
}

std::string qimeng::crossBackendName(const Target &target,
                                     const CrossValidationOptions &options) {
  if (!options.remoteHost.empty())
    return "ssh " + options.remoteHost;
  auto emulation = target.emulation();
  if (!emulation) {
    llvm::consumeError(emulation.takeError());
    return "no emulator";
  }
  return emulation->program + " " + llvm::join(emulation->args, " ");
}

/// The backend `options` choose for `target`, checked: its programs exist.
/// Under qemu the code goes into a temporary file, which lives as long as
/// the backend; a board gets it on ssh's stdin.
static llvm::Expected<Backend> backendFor(const Target &target,
                                          const CrossValidationOptions &options,
                                          const KernelCode &code) {
  Backend b;
  b.name = crossBackendName(target, options);
  if (!options.remoteHost.empty()) {
    if (!llvm::sys::findProgramByName("ssh"))
      return llvm::createStringError("cannot run on " + options.remoteHost +
                                     ": no ssh (package openssh-client)");
    b.program = "ssh";
    b.argv = {"ssh", "-o", "BatchMode=yes"};
    b.argv.insert(b.argv.end(), options.sshOptions.begin(),
                  options.sshOptions.end());
    b.argv.push_back(options.remoteHost);
    b.argv.push_back(options.remoteRunner.empty()
                         ? "qimeng-cross-runner-" + target.archName()
                         : options.remoteRunner);
    b.input = code.bytes;
    b.remote = true;
    return b;
  }
  auto emulation = target.emulation();
  if (!emulation)
    return emulation.takeError();
  if (!llvm::sys::findProgramByName(emulation->program))
    return llvm::createStringError(
        "cannot validate for " + target.archName() + ": " + emulation->program +
        " not found (scripts/setup.sh installs qemu-user)");
  std::string runner =
      options.runnerDir + "/qimeng-cross-runner-" + target.archName();
  if (!llvm::sys::fs::can_execute(runner))
    return llvm::createStringError(
        "cannot validate for " + target.archName() + ": no cross runner " +
        runner + " (built when the " + target.archName() +
        "-linux-gnu-g++ cross compiler is installed; scripts/setup.sh "
        "installs it)");
  llvm::SmallString<128> path;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("qimeng-kernel", "bin", fd, path))
    return llvm::createStringError("cannot create a file for the kernel's "
                                   "code: " +
                                   ec.message());
  b.codeFile = std::make_unique<llvm::FileRemover>(path);
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << code.bytes;
    if (out.has_error())
      return llvm::createStringError("cannot write the kernel's code to " +
                                     path.str().str());
  }
  b.program = emulation->program;
  b.argv = {emulation->program};
  b.argv.insert(b.argv.end(), emulation->args.begin(), emulation->args.end());
  b.argv.push_back(runner);
  b.codeArg = path.str().str();
  return b;
}

/// `kernel` assembled for `target` and placed where `options` run it.
static llvm::Expected<Backend> backendFor(const Target &target,
                                          const CrossValidationOptions &options,
                                          const EmittedKernel &kernel) {
  auto code = kernelCode(kernel, target);
  if (!code)
    return code.takeError();
  auto backend = backendFor(target, options, *code);
  if (backend)
    backend->entry = code->entry;
  return backend;
}

llvm::Expected<CrossRun>
qimeng::validateGemmCross(const GemmDesc &desc, const Target &target,
                          const EmittedKernel &kernel,
                          const std::vector<GemmRange> &parts,
                          const CrossValidationOptions &options) {
  if (!kernel.runtimeLeadingDims)
    return llvm::createStringError(
        "kernel " + kernel.symbol +
        " holds its leading dimensions as immediates; the cross runner runs "
        "kernels that take them at run time");
  auto backend = backendFor(target, options, kernel);
  if (!backend)
    return backend.takeError();
  CrossRun total;
  total.report.passed = true;
  // Every distribution on the dense leading dimensions, the exact one on
  // padded ones (what they add is the strides; under an emulator each run
  // costs a whole fp64 reference); a run-time M also at one row, a third of
  // M and one and a half times M plus one (edges, and more blocks than the
  // kernel was built for), exact and padded; a run-time K likewise (a K
  // shorter than one unrolled iteration, and longer than the one built
  // for), and at 0 (C its init, the epilogue applied), and a run-time N (one
  // column, and more panels than built for).
  std::vector<GemmDesc> shapes = {desc, desc.withPaddedLeadingDims()};
  auto alsoAt = [&](int64_t GemmDesc::*size, bool orNone) {
    const int64_t built = desc.*size;
    std::vector<int64_t> sizes = {1, std::max<int64_t>(1, built / 3),
                                  built + built / 2 + 1};
    if (orNone)
      sizes.insert(sizes.begin(), 0);
    for (int64_t s : sizes) {
      GemmDesc other = desc;
      other.*size = s;
      if (s != built)
        shapes.push_back(other.withPaddedLeadingDims());
    }
  };
  if (desc.dynamicM)
    alsoAt(&GemmDesc::m, false);
  if (desc.dynamicN)
    alsoAt(&GemmDesc::n, false);
  if (desc.dynamicK)
    alsoAt(&GemmDesc::k, true);
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto run =
        runOnce(shapes[i], kernel, *backend, options,
                /*allDistributions=*/i == 0, i == 0 ? options.timedRuns : 0,
                // The parts cover the static M and N (the first two).
                i < 2 ? parts : std::vector<GemmRange>());
    if (!run)
      return run.takeError();
    total.report.maxRelError =
        std::max(total.report.maxRelError, run->report.maxRelError);
    total.report.openBlasMaxRelError = std::max(
        total.report.openBlasMaxRelError, run->report.openBlasMaxRelError);
    if (!run->report.passed) {
      std::string where =
          i == 0 ? ""
                 : llvm::formatv("padded leading dimensions, M = {0}, N = "
                                 "{1}, K = {2}: ",
                                 shapes[i].m, shapes[i].n, shapes[i].k)
                       .str();
      run->report.failure = where + run->report.failure;
      return run;
    }
    if (!total.medianNs)
      total.medianNs = run->medianNs;
  }
  return total;
}

llvm::Expected<CrossRun>
qimeng::validateConvCross(const ConvDesc &desc, const Target &target,
                          const EmittedKernel &kernel,
                          const std::vector<GemmRange> &parts,
                          const CrossValidationOptions &options) {
  auto backend = backendFor(target, options, kernel);
  if (!backend)
    return backend.takeError();
  // The geometry is the kernel's: one set of strides, all distributions.
  std::vector<std::string> runnerArgs = {std::to_string(backend->entry), "conv",
                                         convLayoutName(desc.layout).str()};
  for (int64_t v :
       {desc.n, desc.h, desc.w, desc.c, desc.f, desc.kh, desc.kw, desc.strideH,
        desc.strideW, desc.dilationH, desc.dilationW, desc.inputStrides[0],
        desc.inputStrides[1], desc.inputStrides[2],
        desc.outputIsDense() ? desc.f : desc.outputPixelStride,
        int64_t(kernel.workspaceBytes)})
    runnerArgs.push_back(std::to_string(v));
  for (std::string v :
       {std::string(desc.overwrite ? "1" : "0"), std::to_string(options.seed),
        std::to_string(options.timedRuns), std::string("all"),
        epilogueArg(desc.bias ? GemmBias::Columns : GemmBias::None,
                    desc.activation, /*conv=*/true)})
    runnerArgs.push_back(v);
  if (!parts.empty())
    runnerArgs.push_back(partsArg(parts));
  const GemmDesc g = desc.gemmView();
  return runRunner(runnerArgs, double(g.m) * double(g.n) * double(g.k),
                   *backend, options);
}
