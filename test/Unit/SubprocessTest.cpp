//===- SubprocessTest.cpp - runSubprocess ---------------------------------===//
#include "qimeng/Support/Subprocess.h"
#include "ErrorHelpers.h"
#include "qimeng/Support/Coprocess.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include <cerrno>
#include <chrono>
#include <csignal>
#include <gtest/gtest.h>
#include <sys/types.h>
#include <thread>

using namespace qimeng;

namespace {

SubprocessResult runOk(llvm::StringRef program, std::vector<std::string> args,
                       llvm::StringRef input = "",
                       const SubprocessOptions &options = {}) {
  auto resultOrErr = runSubprocess(program, args, input, options);
  if (!resultOrErr) {
    ADD_FAILURE() << llvm::toString(resultOrErr.takeError());
    return {};
  }
  return std::move(*resultOrErr);
}

TEST(SubprocessTest, CatEchoesStdinToStdout) {
  SubprocessResult r = runOk("/bin/cat", {"cat"}, "hello\nworld\n");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_TRUE(r.succeeded());
  EXPECT_FALSE(r.timedOut);
  EXPECT_FALSE(r.crashed);
  EXPECT_EQ(r.out, "hello\nworld\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.statusMessage, "");
}

TEST(SubprocessTest, EmptyInputIsEndOfFile) {
  SubprocessResult r = runOk("/bin/cat", {"cat"}, "");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "");
}

TEST(SubprocessTest, ProgramIsFoundOnPath) {
  SubprocessResult r = runOk("cat", {"cat"}, "x");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "x");
}

TEST(SubprocessTest, EmptyArgsRunTheProgramAlone) {
  SubprocessResult r = runOk("/bin/echo", {}, "");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "\n");
}

TEST(SubprocessTest, StderrIsCapturedApart) {
  SubprocessResult r =
      runOk("/bin/sh", {"sh", "-c", "echo to-out; echo to-err >&2"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "to-out\n");
  EXPECT_EQ(r.err, "to-err\n");
}

TEST(SubprocessTest, NonZeroExitIsReported) {
  SubprocessResult r =
      runOk("/bin/sh", {"sh", "-c", "echo failing >&2; exit 3"});
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_FALSE(r.succeeded());
  EXPECT_FALSE(r.timedOut);
  EXPECT_FALSE(r.crashed);
  EXPECT_EQ(r.err, "failing\n");
}

// llvm::sys::Wait folds exit statuses 126 and 127 into -1 ("could not
// execute"); a program that started and exited with them keeps its status.
TEST(SubprocessTest, ExitStatus127And126AreExitCodes) {
  SubprocessResult r127 = runOk("/bin/sh", {"sh", "-c", "exit 127"});
  EXPECT_EQ(r127.exitCode, 127);
  EXPECT_FALSE(r127.crashed);
  SubprocessResult r126 = runOk("/bin/sh", {"sh", "-c", "exit 126"});
  EXPECT_EQ(r126.exitCode, 126);
}

TEST(SubprocessTest, MissingProgramIsAnErrorNamingIt) {
  QM_ASSERT_FAILS_WITH(
      runSubprocess("/nonexistent/qimeng-no-such-program", {}, "").takeError(),
      "/nonexistent/qimeng-no-such-program");
  QM_ASSERT_FAILS_WITH(
      runSubprocess("qimeng-no-such-program-on-path", {}, "").takeError(),
      "qimeng-no-such-program-on-path");
}

TEST(SubprocessTest, DirectoryIsAnError) {
  QM_ASSERT_FAILS_WITH(runSubprocess("/tmp", {}, "").takeError(),
                       "cannot run '/tmp'");
}

TEST(SubprocessTest, TimeoutKillsTheChild) {
  llvm::SmallString<128> pidPath;
  ASSERT_FALSE(
      llvm::sys::fs::createTemporaryFile("qimeng-pid", "txt", pidPath));
  llvm::FileRemover remover(pidPath);

  SubprocessOptions options;
  options.timeoutSeconds = 1;
  auto start = std::chrono::steady_clock::now();
  SubprocessResult r = runOk(
      "/bin/sh",
      {"sh", "-c", "echo $$ > '" + pidPath.str().str() + "'; exec sleep 30"},
      "", options);
  auto elapsed = std::chrono::steady_clock::now() - start;

  EXPECT_TRUE(r.timedOut);
  EXPECT_FALSE(r.crashed);
  EXPECT_LT(r.exitCode, 0);
  EXPECT_FALSE(r.succeeded());
  EXPECT_LT(elapsed, std::chrono::seconds(10));

  auto pidText = llvm::MemoryBuffer::getFile(pidPath);
  ASSERT_TRUE(static_cast<bool>(pidText));
  int pid = 0;
  ASSERT_FALSE((*pidText)->getBuffer().trim().getAsInteger(10, pid));
  ASSERT_GT(pid, 0);
  // Killed and reaped: no process, not even a zombie, has that pid.
  errno = 0;
  EXPECT_EQ(::kill(static_cast<pid_t>(pid), 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(SubprocessTest, OutputIsCappedAndMarked) {
  SubprocessOptions options;
  options.outputCap = 100;
  SubprocessResult r =
      runOk("/bin/sh",
            {"sh", "-c",
             "head -c 10000 /dev/zero | tr '\\0' a; head -c 50 /dev/zero | "
             "tr '\\0' b >&2"},
            "", options);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, std::string(100, 'a') + "\n[output truncated]");
  // stderr is under the cap: kept whole, no marker.
  EXPECT_EQ(r.err, std::string(50, 'b'));
}

TEST(SubprocessTest, OutputExactlyAtCapIsNotMarked) {
  SubprocessOptions options;
  options.outputCap = 4;
  SubprocessResult r = runOk("/bin/cat", {"cat"}, "abcd", options);
  EXPECT_EQ(r.out, "abcd");
}

TEST(SubprocessTest, CrashIsReported) {
  SubprocessResult r = runOk("/bin/sh", {"sh", "-c", "kill -SEGV $$"});
  EXPECT_TRUE(r.crashed);
  EXPECT_FALSE(r.timedOut);
  EXPECT_LT(r.exitCode, 0);
  EXPECT_FALSE(r.statusMessage.empty());
}

TEST(SubprocessTest, EnvReplacesTheEnvironment) {
  SubprocessOptions options;
  options.env = std::vector<std::string>{"A=1"};
  SubprocessResult r = runOk("/usr/bin/env", {"env"}, "", options);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "A=1\n");
}

TEST(SubprocessTest, MemoryLimitStopsABigAllocation) {
  if (!llvm::sys::fs::can_execute("/usr/bin/python3"))
    GTEST_SKIP() << "needs /usr/bin/python3";
  SubprocessOptions options;
  options.memoryLimitMB = 256;
  SubprocessResult small = runOk(
      "/usr/bin/python3",
      {"python3", "-c", "x = bytearray(8 << 20); print(len(x))"}, "", options);
  EXPECT_EQ(small.exitCode, 0) << small.err;
  EXPECT_EQ(small.out, "8388608\n");
  SubprocessResult big =
      runOk("/usr/bin/python3", {"python3", "-c", "x = bytearray(2 << 30)"}, "",
            options);
  EXPECT_NE(big.exitCode, 0);
  EXPECT_NE(big.err.find("MemoryError"), std::string::npos) << big.err;
}

} // namespace

#include "qimeng/Support/CommandLine.h"

TEST(RenamedArgsTest, RenamesTheFlagInBothSpellingsOnly) {
  const char *in[] = {"tool",       "--threads=2",      "-threads", "4",
                      "--threadsx", "--thread-count=3", "threads=5"};
  std::vector<char *> argv;
  for (const char *a : in)
    argv.push_back(const_cast<char *>(a));
  qimeng::RenamedArgs r(static_cast<int>(argv.size()), argv.data(), "threads",
                        "thread-count");
  ASSERT_EQ(r.argc(), 7);
  EXPECT_STREQ(r.argv()[0], "tool");
  EXPECT_STREQ(r.argv()[1], "--thread-count=2");
  EXPECT_STREQ(r.argv()[2], "--thread-count");
  EXPECT_STREQ(r.argv()[3], "4");
  EXPECT_STREQ(r.argv()[4], "--threadsx");
  EXPECT_STREQ(r.argv()[5], "--thread-count=3");
  EXPECT_STREQ(r.argv()[6], "threads=5");
}

//===----------------------------------------------------------------------===//
// Coprocess
//===----------------------------------------------------------------------===//

TEST(CoprocessTest, AConversationLineByLine) {
  QM_ASSERT_EXPECTED(cat, Coprocess::start("/bin/cat", {"cat"}));
  for (const char *line : {"hello", "", "a longer line with spaces"}) {
    QM_ASSERT_EXPECTED(answer, cat.ask(line, 10));
    EXPECT_EQ(answer, line);
  }
}

TEST(CoprocessTest, AChildThatExitsSaysHow) {
  QM_ASSERT_EXPECTED(child,
                     Coprocess::start("/bin/sh", {"sh", "-c", "exit 3"}));
  QM_ASSERT_FAILS_WITH(child.readLine(10).takeError(), "exited with status 3");
  QM_ASSERT_EXPECTED(
      crash, Coprocess::start("/bin/sh", {"sh", "-c", "kill -SEGV $$"}));
  QM_ASSERT_FAILS_WITH(crash.readLine(10).takeError(), "killed by signal 11");
  // Writing to a child that is gone is an error, not a SIGPIPE.
  QM_ASSERT_EXPECTED(gone, Coprocess::start("/bin/sh", {"sh", "-c", "exit 0"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  QM_ASSERT_FAILS_WITH(gone.writeLine("anyone?"), "before reading its input");
}

TEST(CoprocessTest, SilenceTimesOutAndTheChildIsReaped) {
  pid_t pid = -1;
  {
    QM_ASSERT_EXPECTED(sleeper,
                       Coprocess::start("/bin/sleep", {"sleep", "100"}));
    pid = sleeper.pid();
    auto t0 = std::chrono::steady_clock::now();
    QM_ASSERT_FAILS_WITH(sleeper.readLine(0.2).takeError(),
                         "no answer from the child in 0.2 s");
    EXPECT_LT(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count(),
        5.0);
  }
  // The destructor killed and reaped it: no such process any more.
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(CoprocessTest, AProgramThatCannotStart) {
  QM_ASSERT_FAILS_WITH(
      Coprocess::start("/nonexistent/program", {"program"}).takeError(),
      "cannot start /nonexistent/program");
}
