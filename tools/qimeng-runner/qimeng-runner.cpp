//===- qimeng-runner.cpp - Run generated kernels in their own process -----===//
//
// The compiler and the tuner never call generated code in their own
// process; they spawn this program. `--validate-gemm` reads a validation
// request (JSON) on stdin, assembles and loads the kernel, runs the
// validator and prints the report as one JSON object on stdout. Exit 0 when
// a report was printed (passed or not), 1 for a bad request. A kernel that
// crashes takes this process down with it, which is the point.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Runtime/RunnerService.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

static llvm::cl::opt<bool>
    validateGemmOpt("validate-gemm",
                    llvm::cl::desc("Validate the SGEMM kernel described by "
                                   "the JSON request on stdin"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "qimeng-runner: runs one generated kernel in an isolated process\n");
  if (!validateGemmOpt) {
    llvm::WithColor::error(llvm::errs(), "qimeng-runner")
        << "nothing to do; pass --validate-gemm\n";
    return 1;
  }
  auto input = llvm::MemoryBuffer::getSTDIN();
  if (!input) {
    llvm::WithColor::error(llvm::errs(), "qimeng-runner")
        << "cannot read stdin: " << input.getError().message() << "\n";
    return 1;
  }
  auto answer = qimeng::serveValidationRequest((*input)->getBuffer());
  if (!answer) {
    llvm::WithColor::error(llvm::errs(), "qimeng-runner")
        << llvm::toString(answer.takeError()) << "\n";
    return 1;
  }
  llvm::outs() << *answer << "\n";
  return 0;
}
