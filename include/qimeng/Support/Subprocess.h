//===- Subprocess.h - Run a program with limits ------------------*- C++
//-*-===//
#ifndef QIMENG_SUPPORT_SUBPROCESS_H
#define QIMENG_SUPPORT_SUBPROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace qimeng {

struct SubprocessResult {
  int exitCode = 0; ///< program's exit status; negative if it did not exit
  std::string out;  ///< captured stdout (capped)
  std::string err;  ///< captured stderr (capped)
  bool timedOut = false;
  bool crashed = false; ///< killed by a signal
  /// Why the program did not exit normally, as LLVM words it ("Child timed
  /// out", "Segmentation fault (core dumped)"); empty after a normal exit.
  std::string statusMessage;

  /// True when the program exited normally with status 0.
  bool succeeded() const { return exitCode == 0 && !timedOut && !crashed; }
};

struct SubprocessOptions {
  unsigned timeoutSeconds = 60; ///< 0: no timeout
  size_t outputCap = 64u << 20; ///< bytes kept of stdout and of stderr
  /// Environment for the child; std::nullopt inherits ours.
  std::optional<std::vector<std::string>> env;
  /// Sets RLIMIT_DATA and RLIMIT_RSS in the child (LLVM then forks instead
  /// of using posix_spawn).
  unsigned memoryLimitMB = 0; ///< 0: no limit
};

/// Runs `program` with `args` (args[0] is the program name as the child sees
/// it), feeding `input` on stdin through a temporary file and capturing
/// stdout/stderr through temporary files. Returns an error only when the
/// program could not be started; a non-zero exit, a crash or a timeout is
/// reported in the result.
/// Besides that, the only errors are a temporary file that could not be
/// created or read back, or a child that could not be waited for.
///
/// A `program` without a '/' is looked up on our PATH; empty `args` means
/// argv is just the program. Output beyond `outputCap` is dropped and marked
/// with a trailing "\n[output truncated]". On timeout the child is killed
/// with SIGKILL and reaped; processes it started itself are not tracked.
/// The timeout uses SIGALRM (llvm::sys::ExecuteAndWait), so it is reliable
/// only while no other thread of ours blocks that signal or waits on
/// children.
llvm::Expected<SubprocessResult>
runSubprocess(llvm::StringRef program, llvm::ArrayRef<std::string> args,
              llvm::StringRef input, const SubprocessOptions &options = {});

} // namespace qimeng

#endif // QIMENG_SUPPORT_SUBPROCESS_H
