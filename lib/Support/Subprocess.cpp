//===- Subprocess.cpp - Run a program with limits -------------------------===//
//
// A thin layer over llvm::sys::ExecuteAndWait: the streams go through
// temporary files (removed afterwards), and LLVM's return-code conventions
// (-1: could not execute, -2: crashed or timed out, with a message saying
// which) become the fields of SubprocessResult.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Support/Subprocess.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Errno.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <cerrno>

using namespace qimeng;
using llvm::StringRef;

/// Appended to a stream that was cut at outputCap bytes.
static constexpr StringRef truncationMarker = "\n[output truncated]";

/// Creates an empty temporary file for `role` ("stdin", "stdout", ...).
static llvm::Error createTempFile(StringRef role,
                                  llvm::SmallVectorImpl<char> &path) {
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("qimeng-" + role, "txt", path))
    return llvm::createStringError(ec, "cannot create a temporary file for " +
                                           role + ": " + ec.message());
  return llvm::Error::success();
}

/// Writes `input` to a new temporary file for the child's stdin.
static llvm::Error createInputFile(StringRef input,
                                   llvm::SmallVectorImpl<char> &path) {
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("qimeng-stdin", "txt", fd, path))
    return llvm::createStringError(
        ec, "cannot create a temporary file for stdin: " + ec.message());
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << input;
  os.close();
  if (os.has_error()) {
    std::error_code ec = os.error();
    os.clear_error();
    return llvm::createStringError(
        ec, "cannot write stdin to " +
                llvm::Twine(StringRef(path.data(), path.size())) + ": " +
                ec.message());
  }
  return llvm::Error::success();
}

/// Reads at most `cap` bytes of the file at `path`, marking a cut.
static llvm::Expected<std::string> readCapped(StringRef path, size_t cap) {
  uint64_t size = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, size))
    return llvm::createStringError(ec,
                                   "cannot read " + path + ": " + ec.message());
  uint64_t toRead = std::min<uint64_t>(size, cap);
  std::string text;
  if (toRead > 0) {
    auto bufOrErr = llvm::MemoryBuffer::getFileSlice(path, toRead, 0);
    if (!bufOrErr)
      return llvm::createStringError(bufOrErr.getError(),
                                     "cannot read " + path + ": " +
                                         bufOrErr.getError().message());
    text = (*bufOrErr)->getBuffer().str();
  }
  if (size > cap)
    text += truncationMarker;
  return text;
}

/// Finds the file to execute and checks that it can be executed, so that
/// every reason for not starting becomes a message naming the program.
static llvm::Expected<std::string> resolveProgram(StringRef program) {
  if (program.empty())
    return llvm::createStringError("cannot run a program with an empty name");
  std::string path;
  if (program.contains('/')) {
    path = program.str();
  } else {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(program);
    if (!found)
      return llvm::createStringError(
          found.getError(), "cannot run '" + program + "': not found on PATH");
    path = *found;
  }
  if (!llvm::sys::fs::exists(path))
    return llvm::createStringError(
        std::make_error_code(std::errc::no_such_file_or_directory),
        "cannot run '" + program + "': no such file");
  if (llvm::sys::fs::is_directory(path))
    return llvm::createStringError(
        std::make_error_code(std::errc::is_a_directory),
        "cannot run '" + program + "': it is a directory");
  if (!llvm::sys::fs::can_execute(path))
    return llvm::createStringError(
        std::make_error_code(std::errc::permission_denied),
        "cannot run '" + program + "': not executable");
  return path;
}

llvm::Expected<SubprocessResult>
qimeng::runSubprocess(StringRef program, llvm::ArrayRef<std::string> args,
                      StringRef input, const SubprocessOptions &options) {
  llvm::Expected<std::string> path = resolveProgram(program);
  if (!path)
    return path.takeError();

  llvm::SmallString<128> inPath, outPath, errPath;
  if (llvm::Error err = createInputFile(input, inPath))
    return std::move(err);
  llvm::FileRemover inRemover(inPath);
  if (llvm::Error err = createTempFile("stdout", outPath))
    return std::move(err);
  llvm::FileRemover outRemover(outPath);
  if (llvm::Error err = createTempFile("stderr", errPath))
    return std::move(err);
  llvm::FileRemover errRemover(errPath);

  std::vector<StringRef> argv;
  if (args.empty())
    argv.push_back(program);
  else
    argv.assign(args.begin(), args.end());

  std::vector<StringRef> envStorage;
  std::optional<llvm::ArrayRef<StringRef>> env;
  if (options.env) {
    envStorage.assign(options.env->begin(), options.env->end());
    env = envStorage;
  }

  std::optional<StringRef> redirects[] = {StringRef(inPath), StringRef(outPath),
                                          StringRef(errPath)};
  std::string errMsg;
  bool executionFailed = false;
  int rc = llvm::sys::ExecuteAndWait(
      *path, argv, env, redirects, options.timeoutSeconds,
      options.memoryLimitMB, &errMsg, &executionFailed);
  if (executionFailed)
    return llvm::createStringError("cannot start '" + program + "': " + errMsg);

  SubprocessResult result;
  if (rc >= 0) {
    result.exitCode = rc;
  } else if (rc == -1) {
    // Wait() turns exit statuses 127 and 126 into -1 because a forked child
    // reports a failed exec that way. The program was checked above and
    // posix_spawn reports its own failures, so these came from the program.
    if (errMsg == llvm::sys::StrError(ENOENT))
      result.exitCode = 127;
    else if (errMsg == "Program could not be executed")
      result.exitCode = 126;
    else
      return llvm::createStringError("lost track of '" + program +
                                     "' after starting it: " + errMsg);
  } else {
    // -2: killed by a signal, either ours on timeout or another one.
    result.exitCode = rc;
    result.statusMessage = errMsg;
    if (options.timeoutSeconds != 0 &&
        StringRef(errMsg).starts_with("Child timed out"))
      result.timedOut = true;
    else
      result.crashed = true;
  }

  llvm::Expected<std::string> out = readCapped(outPath, options.outputCap);
  if (!out)
    return out.takeError();
  llvm::Expected<std::string> err = readCapped(errPath, options.outputCap);
  if (!err)
    return err.takeError();
  result.out = std::move(*out);
  result.err = std::move(*err);
  return result;
}
