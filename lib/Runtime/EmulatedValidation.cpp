//===- EmulatedValidation.cpp - Validate a kernel for another architecture ===//
#include "qimeng/Runtime/EmulatedValidation.h"
#include "qimeng/Config.h"
#include "qimeng/Emit/Assembler.h"
#include "qimeng/Support/Subprocess.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

using namespace qimeng;

EmulatedValidationOptions EmulatedValidationOptions::defaults() {
  EmulatedValidationOptions o;
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

/// One run of the cross runner on `desc`'s leading dimensions.
static llvm::Expected<EmulatedRun>
runOnce(const GemmDesc &desc, const EmittedKernel &kernel,
        llvm::StringRef codePath, uint64_t entry, const std::string &runner,
        const Target::Emulation &emulation,
        const EmulatedValidationOptions &options, bool allDistributions,
        int timedRuns) {
  std::vector<std::string> args = {emulation.program};
  args.insert(args.end(), emulation.args.begin(), emulation.args.end());
  for (const std::string &arg :
       {runner, codePath.str(), std::to_string(entry), std::to_string(desc.m),
        std::to_string(desc.n), std::to_string(desc.k),
        std::to_string(desc.lda), std::to_string(desc.ldb),
        std::to_string(desc.ldc), std::to_string(kernel.workspaceBytes),
        std::string(desc.overwrite ? "1" : "0"), std::to_string(options.seed),
        std::to_string(timedRuns),
        std::string(allDistributions ? "all" : "small-integers")})
    args.push_back(arg);
  // An emulator runs the kernel and the fp64 reference some hundred times
  // slower than the hardware: the limit grows with the work (a 1024^3 GEMM
  // takes about a minute a distribution under qemu-riscv64).
  SubprocessOptions sp;
  sp.timeoutSeconds =
      options.timeoutSeconds +
      unsigned(double(desc.m) * double(desc.n) * double(desc.k) / 4e6);
  auto result = runSubprocess(emulation.program, args, "", sp);
  if (!result)
    return result.takeError();
  EmulatedRun run;
  if (result->timedOut || result->crashed || result->exitCode != 0) {
    run.report.passed = false;
    std::string status =
        result->timedOut
            ? "timed out after " + std::to_string(sp.timeoutSeconds) + " s"
        : result->crashed ? result->statusMessage
                          : "exit status " + std::to_string(result->exitCode);
    run.report.failure =
        "the kernel's run under " + emulation.program + " failed: " + status;
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
  return run;
}

llvm::Expected<EmulatedRun>
qimeng::validateGemmUnderEmulation(const GemmDesc &desc, const Target &target,
                                   const EmittedKernel &kernel,
                                   const EmulatedValidationOptions &options) {
  if (!kernel.runtimeLeadingDims)
    return llvm::createStringError(
        "kernel " + kernel.symbol +
        " holds its leading dimensions as immediates; the cross runner runs "
        "kernels that take them at run time");
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
  auto code = kernelCode(kernel, target);
  if (!code)
    return code.takeError();
  llvm::SmallString<128> path;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("qimeng-kernel", "bin", fd, path))
    return llvm::createStringError("cannot create a file for the kernel's "
                                   "code: " +
                                   ec.message());
  llvm::FileRemover remover(path);
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << code->bytes;
    if (out.has_error())
      return llvm::createStringError("cannot write the kernel's code to " +
                                     path.str().str());
  }
  EmulatedRun total;
  total.report.passed = true;
  // Every distribution on the dense leading dimensions, the exact one on
  // padded ones (what they add is the strides; each run costs the
  // emulator a whole fp64 reference).
  const GemmDesc shapes[2] = {desc, desc.withPaddedLeadingDims()};
  for (int i = 0; i < 2; ++i) {
    auto run = runOnce(shapes[i], kernel, path, code->entry, runner, *emulation,
                       options, /*allDistributions=*/i == 0,
                       i == 0 ? options.timedRuns : 0);
    if (!run)
      return run.takeError();
    total.report.maxRelError =
        std::max(total.report.maxRelError, run->report.maxRelError);
    if (!run->report.passed) {
      run->report.failure =
          (i == 0 ? "" : "padded leading dimensions: ") + run->report.failure;
      return run;
    }
    if (!total.medianNs)
      total.medianNs = run->medianNs;
  }
  return total;
}
