//===- CommandLine.h - Small helpers for our tools' flags --------*- C++
//-*-===//
#ifndef QIMENG_SUPPORT_COMMANDLINE_H
#define QIMENG_SUPPORT_COMMANDLINE_H

#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace qimeng {

/// argv with every `--FROM[=v]` / `-FROM[=v]` spelled `--TO[=v]`, owning
/// its strings; `pointers()` is the argv to hand to llvm::cl. For a flag
/// whose natural name libLLVM.so already registers (it has a hidden
/// `--threads`), so the tool's own option must be called something else.
class RenamedArgs {
public:
  RenamedArgs(int argc, char **argv, llvm::StringRef from, llvm::StringRef to);
  int argc() const { return static_cast<int>(pointers_.size()); }
  char **argv() { return pointers_.data(); }

private:
  std::vector<std::string> args_;
  std::vector<char *> pointers_;
};

} // namespace qimeng

#endif // QIMENG_SUPPORT_COMMANDLINE_H
