//===- CommandLine.cpp ----------------------------------------------------===//
#include "qimeng/Support/CommandLine.h"
#include <cstdlib>
#include <unistd.h>

using namespace qimeng;

RenamedArgs::RenamedArgs(int argc, char **argv, llvm::StringRef from,
                         llvm::StringRef to) {
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    llvm::StringRef flag = a;
    if (i > 0 && (flag.consume_front("--") || flag.consume_front("-")) &&
        flag.consume_front(from) && (flag.empty() || flag.starts_with("=")))
      args_.push_back("--" + to.str() + flag.str());
    else
      args_.push_back(a.str());
  }
  for (std::string &a : args_)
    pointers_.push_back(a.data());
}

static const char *kReexecMarker = "QIMENG_BENCH_OPENBLAS_ENV";

void qimeng::reexecWithoutOpenBlasOverrides(char **argv) {
  if (getenv(kReexecMarker))
    return;
  std::string was;
  for (const char *name : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}) {
    if (const char *v = getenv(name)) {
      was += std::string(was.empty() ? "" : " ") + name + "=" + v;
      unsetenv(name);
    }
  }
  if (was.empty())
    return;
  setenv(kReexecMarker, was.c_str(), 1);
  execv("/proc/self/exe", argv);
  // execv failed: go on, saying so.
  setenv(kReexecMarker, ("re-exec failed, still set: " + was).c_str(), 1);
}

std::string qimeng::openBlasOverridesNote() {
  const char *note = getenv(kReexecMarker);
  return note ? std::string("unset for this run (were ") + note + ")"
              : "not set";
}
