//===- Coprocess.h - A child process spoken to line by line ------*- C++
//-*-===//
//
// A program started with pipes on its stdin and stdout, kept running for a
// conversation: we write a line, it answers a line. The benchmark uses it to
// run each peer library in a process of its own and drive the processes
// round by round. Move-only; the destructor closes the child's stdin, gives
// it a moment to exit, then kills and reaps it.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_SUPPORT_COPROCESS_H
#define QIMENG_SUPPORT_COPROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <sys/types.h>

namespace qimeng {

class Coprocess {
public:
  /// Starts `program` (a path) with `args` (args[0] is the name the child
  /// sees) and our environment; its stderr stays ours.
  static llvm::Expected<Coprocess> start(llvm::StringRef program,
                                         llvm::ArrayRef<std::string> args);

  Coprocess(Coprocess &&other) noexcept;
  Coprocess &operator=(Coprocess &&other) noexcept;
  Coprocess(const Coprocess &) = delete;
  Coprocess &operator=(const Coprocess &) = delete;
  ~Coprocess();

  /// Writes `line` and a newline to the child's stdin.
  llvm::Error writeLine(llvm::StringRef line);
  /// The child's next line of stdout, without its newline. An error when
  /// the child closes its stdout first (it exited or crashed: the message
  /// says how) or sends nothing for `timeoutSeconds`.
  llvm::Expected<std::string> readLine(double timeoutSeconds);
  /// writeLine, then readLine.
  llvm::Expected<std::string> ask(llvm::StringRef line, double timeoutSeconds);

  pid_t pid() const { return pid_; }

private:
  Coprocess(pid_t pid, int in, int out) : pid_(pid), in_(in), out_(out) {}
  void close();
  /// Why the child is gone, after its stdout closed ("exited with status
  /// 1", "killed by signal 11 (Segmentation fault)").
  std::string exitStatus();

  pid_t pid_ = -1;
  int in_ = -1;  ///< the child's stdin, written by us
  int out_ = -1; ///< the child's stdout, read by us
  std::string buffered_;
};

} // namespace qimeng

#endif // QIMENG_SUPPORT_COPROCESS_H
