//===- Coprocess.cpp - A child process spoken to line by line -------------===//
#include "qimeng/Support/Coprocess.h"
#include "llvm/Support/FormatVariadic.h"
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char **environ;

using namespace qimeng;

llvm::Expected<Coprocess> Coprocess::start(llvm::StringRef program,
                                           llvm::ArrayRef<std::string> args) {
  int toChild[2], fromChild[2];
  if (pipe2(toChild, O_CLOEXEC) != 0)
    return llvm::createStringError("pipe failed: " +
                                   std::string(strerror(errno)));
  if (pipe2(fromChild, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(toChild[0]);
    ::close(toChild[1]);
    return llvm::createStringError("pipe failed: " +
                                   std::string(strerror(err)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, toChild[0], 0);
  posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1);
  std::string path = program.str();
  std::vector<std::string> argStrings(args.begin(), args.end());
  if (argStrings.empty())
    argStrings.push_back(path);
  std::vector<char *> argv;
  for (std::string &a : argStrings)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc =
      posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(toChild[0]);
  ::close(fromChild[1]);
  if (rc != 0) {
    ::close(toChild[1]);
    ::close(fromChild[0]);
    return llvm::createStringError("cannot start " + path + ": " +
                                   strerror(rc));
  }
  return Coprocess(pid, toChild[1], fromChild[0]);
}

Coprocess::Coprocess(Coprocess &&other) noexcept
    : pid_(other.pid_), in_(other.in_), out_(other.out_),
      buffered_(std::move(other.buffered_)) {
  other.pid_ = -1;
  other.in_ = other.out_ = -1;
}

Coprocess &Coprocess::operator=(Coprocess &&other) noexcept {
  if (this != &other) {
    close();
    pid_ = other.pid_;
    in_ = other.in_;
    out_ = other.out_;
    buffered_ = std::move(other.buffered_);
    other.pid_ = -1;
    other.in_ = other.out_ = -1;
  }
  return *this;
}

Coprocess::~Coprocess() { close(); }

void Coprocess::close() {
  if (in_ >= 0)
    ::close(in_); // end of input: a well-behaved child exits
  if (out_ >= 0)
    ::close(out_);
  in_ = out_ = -1;
  if (pid_ <= 0)
    return;
  for (int i = 0; i < 50; ++i) { // up to 0.5 s
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string Coprocess::exitStatus() {
  if (pid_ <= 0)
    return "not running";
  int status = 0;
  pid_t r = -1;
  for (int i = 0; i < 100 && (r = waitpid(pid_, &status, WNOHANG)) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (r != pid_)
    return "closed its output";
  pid_ = -1;
  if (WIFEXITED(status))
    return llvm::formatv("exited with status {0}", WEXITSTATUS(status)).str();
  if (WIFSIGNALED(status))
    return llvm::formatv("killed by signal {0} ({1})", WTERMSIG(status),
                         strsignal(WTERMSIG(status)))
        .str();
  return "stopped";
}

llvm::Error Coprocess::writeLine(llvm::StringRef line) {
  if (in_ < 0)
    return llvm::createStringError("the child's input is closed");
  // A child that has exited must not kill us with SIGPIPE: block it in this
  // thread for the write, and take a SIGPIPE the write raised off the
  // thread's pending set before unblocking (EPIPE reports it instead).
  sigset_t pipeOnly, saved;
  sigemptyset(&pipeOnly);
  sigaddset(&pipeOnly, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipeOnly, &saved);
  std::string data = line.str() + "\n";
  size_t done = 0;
  int error = 0;
  while (done < data.size()) {
    ssize_t n = ::write(in_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = errno;
      break;
    }
    done += size_t(n);
  }
  if (error == EPIPE) {
    timespec zero{0, 0};
    sigtimedwait(&pipeOnly, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (error == EPIPE)
    return llvm::createStringError("the child " + exitStatus() +
                                   " before reading its input");
  if (error)
    return llvm::createStringError("cannot write to the child: " +
                                   std::string(strerror(error)));
  return llvm::Error::success();
}

llvm::Expected<std::string> Coprocess::readLine(double timeoutSeconds) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeoutSeconds);
  while (true) {
    size_t nl = buffered_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return line;
    }
    if (out_ < 0)
      return llvm::createStringError("the child's output is closed");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0)
      return llvm::createStringError(
          llvm::formatv("no answer from the child in {0:F1} s", timeoutSeconds)
              .str());
    pollfd p{out_, POLLIN, 0};
    int ready = poll(&p, 1, int(left));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      continue; // the deadline check above reports it
    char chunk[4096];
    ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return llvm::createStringError("the child " + exitStatus() +
                                     " before answering");
    buffered_.append(chunk, size_t(n));
  }
}

llvm::Expected<std::string> Coprocess::ask(llvm::StringRef line,
                                           double timeoutSeconds) {
  if (llvm::Error e = writeLine(line))
    return std::move(e);
  return readLine(timeoutSeconds);
}
