//===- CommandLine.cpp ----------------------------------------------------===//
#include "qimeng/Support/CommandLine.h"

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
