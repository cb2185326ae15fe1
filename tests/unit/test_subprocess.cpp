// run_process against real misbehaving children: crashes, hangs, floods, stray grandchildren.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "orchestrate/subprocess.hpp"

namespace kbv {
namespace {

using namespace std::chrono_literals;

ProcessSpec command(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  return spec;
}

ProcessSpec shell(const std::string& script) { return command({"/bin/sh", "-c", script}); }

Clock::time_point in(std::chrono::milliseconds ms) { return Clock::now() + ms; }

// Dead means gone or a zombie waiting for init: either way it runs no more and holds no pipe.
bool process_is_dead(pid_t pid) {
  if (::kill(pid, 0) == -1 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto close_paren = line.rfind(')');  // the name may contain spaces; the state follows ") "
  return close_paren != std::string::npos && close_paren + 2 < line.size() &&
         (line[close_paren + 2] == 'Z' || line[close_paren + 2] == 'X');
}

bool becomes_dead(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    if (process_is_dead(pid)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(Subprocess, ExitCodePropagates) {
  auto r = run_process(shell("exit 3"), in(5000ms));
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.describe(), "exited with code 3");
  EXPECT_GT(r.wall_seconds, 0.0);
}

// The CPU of the whole tree: a grandchild's work counts once its parent has reaped it (a judge
// reaps its sandboxes, they their compilers), which is how kbv run prices a build.
TEST(Subprocess, CpuSecondsIncludeReapedGrandchildren) {
  auto r = run_process(shell("sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'; true"), in(60s));
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_GT(r.cpu_seconds, 0.05) << "the grandchild's loop";
  EXPECT_LT(r.cpu_seconds, 2 * r.wall_seconds + 0.5);
  auto idle = run_process(shell("sleep 0.3"), in(10s));
  EXPECT_LT(idle.cpu_seconds, 0.05) << "sleeping costs no CPU";
}

TEST(Subprocess, SegfaultReportsSignal) {
  auto r = run_process(shell("kill -SEGV $$"), in(5000ms));
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.term_signal, SIGSEGV);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.describe(), "killed by signal 11 (SIGSEGV)");
}

TEST(Subprocess, HangIsKilledAtDeadline) {
  auto r = run_process(command({"sleep", "100"}), in(500ms));
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_GE(r.wall_seconds, 0.45);
  EXPECT_LT(r.wall_seconds, 1.5);
  EXPECT_EQ(r.describe().rfind("timed out after 0.", 0), 0u) << r.describe();
}

TEST(Subprocess, TimeoutSignalLetsTheChildSayWhereItHangsBeforeTheKill) {
  // The child prints on SIGUSR1 and keeps hanging: it is heard, then killed after the grace.
  // What it sends on fd 3 after the deadline is late and never reaches the handler.
  auto spec = shell("echo early >&3; trap 'echo stuck-here; echo late >&3' USR1; while :; do sleep 0.05; done");
  spec.timeout_signal = SIGUSR1;
  spec.timeout_grace_seconds = 0.5;
  std::vector<std::string> lines;
  auto r = run_process(spec, in(500ms), [&](const std::string& l) {
    lines.push_back(l);
    return std::optional<Clock::time_point>{};
  });
  EXPECT_EQ(lines, std::vector<std::string>{"early"});
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.exited);
  EXPECT_NE((r.output_head + r.output_tail).find("stuck-here"), std::string::npos);
  EXPECT_GE(r.wall_seconds, 0.95);
  EXPECT_LT(r.wall_seconds, 2.5);
}

TEST(Subprocess, TimeoutSignalThatKillsTheChildStillReadsTimedOut) {
  auto spec = command({"sleep", "100"});
  spec.timeout_signal = SIGUSR1;  // sleep's default action: die
  auto r = run_process(spec, in(300ms));
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.wall_seconds, 1.5);
}

TEST(Subprocess, ChildRunsInItsOwnProcessGroup) {
  std::vector<std::string> lines;
  auto r = run_process(shell("echo $$ >&3; cut -d' ' -f5 /proc/$$/stat >&3"), in(5000ms),
                       [&](const std::string& l) {
                         lines.push_back(l);
                         return std::nullopt;
                       });
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], lines[1]);  // pgid == pid
  EXPECT_NE(std::stol(lines[1]), static_cast<long>(::getpgrp()));
}

TEST(Subprocess, GrandchildDiesWithTimedOutGroup) {
  pid_t grandchild = 0;
  auto r = run_process(shell("sleep 100 & echo $! >&3; sleep 100"), in(500ms), [&](const std::string& l) {
    grandchild = static_cast<pid_t>(std::stol(l));
    return std::nullopt;
  });
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.wall_seconds, 1.5);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(becomes_dead(grandchild));
}

TEST(Subprocess, GrandchildDiesWhenChildExits) {
  // The background sleep keeps the output pipe open; without the group kill on exit the call
  // would wait for it (or its deadline) and leave it running.
  pid_t grandchild = 0;
  auto r = run_process(shell("sleep 100 & echo $! >&3; exit 0"), in(10000ms), [&](const std::string& l) {
    grandchild = static_cast<pid_t>(std::stol(l));
    return std::nullopt;
  });
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(r.wall_seconds, 1.5);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(becomes_dead(grandchild));
}

TEST(Subprocess, OutputFloodIsCountedButBounded) {
  auto spec = command({"head", "-c", "300000000", "/dev/zero"});
  spec.keep_head_bytes = 1000;
  spec.keep_tail_bytes = 1 << 20;  // above one read (64 KiB), so the tail's trimming is exercised
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  auto r = run_process(spec, in(20000ms));
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 32 * 1024) << "KiB of peak RSS: output kept in memory?";
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output_bytes, 300000000u);
  EXPECT_EQ(r.output_head, std::string(1000, '\0'));
  EXPECT_EQ(r.output_tail, std::string(1 << 20, '\0'));
}

TEST(Subprocess, HeadAndTailKeepTheRightBytes) {
  std::string all;
  for (int i = 1; i <= 20000; ++i) all += std::to_string(i) + "\n";
  auto spec = shell("seq 1 20000; echo oops >&2");
  spec.keep_head_bytes = 100;
  spec.keep_tail_bytes = 300;
  all += "oops\n";  // stderr goes to the same pipe
  auto r = run_process(spec, in(5000ms));
  EXPECT_EQ(r.output_bytes, all.size());
  EXPECT_EQ(r.output_head, all.substr(0, 100));
  EXPECT_EQ(r.output_tail, all.substr(all.size() - 300));

  // Small output: head and tail split it without overlap.
  auto small = shell("printf 0123456789");
  small.keep_head_bytes = 4;
  small.keep_tail_bytes = 100;
  auto s = run_process(small, in(5000ms));
  EXPECT_EQ(s.output_head, "0123");
  EXPECT_EQ(s.output_tail, "456789");
  EXPECT_EQ(s.output_bytes, 10u);
}

TEST(Subprocess, MessagesArriveInOrderWithUnterminatedLastLine) {
  std::vector<std::string> lines;
  auto r = run_process(shell("echo one >&3; echo out; echo two >&3; printf three >&3"), in(5000ms),
                       [&](const std::string& l) {
                         lines.push_back(l);
                         return std::nullopt;
                       });
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(r.output_head, "out\n");
  EXPECT_FALSE(r.message_truncated);
}

TEST(Subprocess, LongMessageIsTruncatedAndFlagged) {
  std::vector<std::string> lines;
  auto spec = shell("printf '0123456789abcdef\\nok\\n' >&3");
  spec.max_message_bytes = 10;
  auto r = run_process(spec, in(5000ms), [&](const std::string& l) {
    lines.push_back(l);
    return std::nullopt;
  });
  EXPECT_EQ(lines, (std::vector<std::string>{"0123456789", "ok"}));
  EXPECT_TRUE(r.message_truncated);
}

TEST(Subprocess, MessageCanMoveDeadlineEarlier) {
  auto r = run_process(shell("echo go >&3; sleep 100"), in(10000ms),
                       [](const std::string&) { return std::optional(in(200ms)); });
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.wall_seconds, 1.5);
}

TEST(Subprocess, MessageCanMoveDeadlineLater) {
  auto r = run_process(shell("echo go >&3; sleep 0.6; exit 4"), in(300ms),
                       [](const std::string&) { return std::optional(in(5000ms)); });
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 4);
}

TEST(Subprocess, StdinIsDeliveredIntact) {
  std::string data(1 << 20, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + (i * 7919) % 26);
  auto spec = command({"cat"});
  spec.stdin_data = data;
  spec.keep_head_bytes = data.size();
  auto r = run_process(spec, in(10000ms));
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.output_bytes, data.size());
  EXPECT_TRUE(r.output_head == data);  // not EXPECT_EQ: a 1 MB diff helps no one
}

TEST(Subprocess, StdinCountedByWc) {
  auto spec = command({"wc", "-c"});
  spec.stdin_data = std::string(1000000, 'x');
  auto r = run_process(spec, in(10000ms));
  EXPECT_EQ(r.output_head, "1000000\n");
}

TEST(Subprocess, ChildIgnoringStdinDoesNotKillParentWithSigpipe) {
  auto spec = command({"true"});
  spec.stdin_data = std::string(4 << 20, 'x');  // more than a pipe holds
  auto r = run_process(spec, in(5000ms));
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(Subprocess, EmptyStdinIsClosed) {
  auto r = run_process(command({"cat"}), in(5000ms));
  EXPECT_TRUE(r.exited);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.output_bytes, 0u);
}

TEST(Subprocess, EnvSetIsSeen) {
  auto spec = shell("printf '%s|%s' \"$KBV_TEST_VAR\" \"$HOME\"");
  spec.env_set = {{"KBV_TEST_VAR", "hello world"}, {"HOME", "/nowhere"}};
  auto r = run_process(spec, in(5000ms));
  EXPECT_EQ(r.output_head, "hello world|/nowhere");
}

// kbv run --overlap-builds: a build runs niced, and so does all it starts (its compilers).
TEST(Subprocess, NiceReachesTheChildAndItsChildren) {
  auto spec = shell("cut -d' ' -f19 /proc/self/stat; sh -c \"cut -d' ' -f19 /proc/self/stat\"");
  auto plain = run_process(spec, in(10s));
  spec.nice = 7;
  auto niced = run_process(spec, in(10s));
  const int own = ::getpriority(PRIO_PROCESS, 0);
  EXPECT_EQ(plain.output_head, std::to_string(own) + "\n" + std::to_string(own) + "\n");
  const int expected = std::min(19, own + 7);
  EXPECT_EQ(niced.output_head, std::to_string(expected) + "\n" + std::to_string(expected) + "\n");
}

// Builds beside an evaluation: the idle class and the OOM killer's first pick, inherited.
TEST(Subprocess, BackgroundReachesTheChildAndItsChildren) {
  // Field 41 of /proc/<pid>/stat is the scheduling policy (SCHED_IDLE = 5).
  auto spec = shell("cut -d' ' -f41 /proc/self/stat; sh -c \"cut -d' ' -f41 /proc/self/stat; cat /proc/self/oom_score_adj\"");
  spec.background = true;
  auto r = run_process(spec, in(10s));
  EXPECT_EQ(r.output_head, "5\n5\n1000\n");
  spec.background = false;
  auto plain = run_process(spec, in(10s));
  EXPECT_EQ(plain.output_head.substr(0, 4), "0\n0\n");
}

TEST(Subprocess, ParentEnvIsInherited) {
  ::setenv("KBV_TEST_INHERITED", "yes", 1);
  auto r = run_process(shell("printf %s \"$KBV_TEST_INHERITED\""), in(5000ms));
  ::unsetenv("KBV_TEST_INHERITED");
  EXPECT_EQ(r.output_head, "yes");
}

TEST(Subprocess, WorkingDirIsRespected) {
  char templ[] = "/tmp/kbv_subprocess_XXXXXX";
  ASSERT_NE(::mkdtemp(templ), nullptr);
  auto spec = command({"pwd", "-P"});
  spec.working_dir = templ;
  auto r = run_process(spec, in(5000ms));
  char* real = ::realpath(templ, nullptr);
  ASSERT_NE(real, nullptr);
  EXPECT_EQ(r.output_head, std::string(real) + "\n");
  std::free(real);
  ::rmdir(templ);
}

TEST(Subprocess, MissingProgramThrows) {
  EXPECT_THROW(run_process(command({"kbv-no-such-program-xyz"}), in(5000ms)), std::system_error);
  EXPECT_THROW(run_process(command({"/nonexistent/prog"}), in(5000ms)), std::system_error);
  char path[] = "/tmp/kbv_not_executable_XXXXXX";  // exists, mode 0600: EACCES, as execvp says
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  try {
    run_process(command({path}), in(5000ms));
    ADD_FAILURE() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EACCES);
  }
  ::unlink(path);
}

TEST(Subprocess, MissingWorkingDirThrows) {
  auto spec = command({"true"});
  spec.working_dir = "/nonexistent/kbv/dir";
  EXPECT_THROW(run_process(spec, in(5000ms)), std::system_error);
}

TEST(Subprocess, OnlyStandardFdsAndFd3AreInherited) {
  int raw[2];
  ASSERT_EQ(::pipe(raw), 0);
  // Lifted above 3 (a fresh test process may get fd 3 itself), without CLOEXEC on purpose: the
  // child must close them anyway.
  int fds[2] = {::fcntl(raw[0], F_DUPFD, 20), ::fcntl(raw[1], F_DUPFD, 20)};
  ::close(raw[0]);
  ::close(raw[1]);
  auto script = "for f in 0 1 2 3 " + std::to_string(fds[0]) + " " + std::to_string(fds[1]) +
                "; do [ -e /proc/$$/fd/$f ] && printf 1 || printf 0; done";
  auto r = run_process(shell(script), in(5000ms));
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(r.output_head, "111100");
}

TEST(Subprocess, IgnoredSigpipeIsNotInherited) {
  // A candidate piping into `head` must see the normal SIGPIPE, whatever kbv does with it.
  auto old = std::signal(SIGPIPE, SIG_IGN);
  auto r = run_process(shell("grep SigIgn /proc/self/status"), in(5000ms));
  std::signal(SIGPIPE, old);
  // SigIgn is a hex mask; SIGPIPE (13) is bit 12, i.e. 0x1000.
  auto mask = std::stoull(r.output_head.substr(r.output_head.find(':') + 1), nullptr, 16);
  EXPECT_EQ(mask & (1ull << (SIGPIPE - 1)), 0u) << r.output_head;
}

TEST(Subprocess, HandlerExceptionKillsChild) {
  pid_t child = 0;
  auto spec = shell("echo $$ >&3; sleep 100");
  EXPECT_THROW(run_process(spec, in(10000ms),
                           [&](const std::string& l) -> std::optional<Clock::time_point> {
                             child = static_cast<pid_t>(std::stol(l));
                             throw std::runtime_error("handler failed");
                           }),
               std::runtime_error);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(process_is_dead(child));  // reaped by run_process before it rethrew
}

}  // namespace
}  // namespace kbv

namespace kbv {
namespace {

// Ctrl-C in `kbv run` sets a flag; the running child's group must die promptly.
TEST(SubprocessCancel, SettingTheFlagKillsTheGroupPromptly) {
  std::atomic<bool> cancel{false};
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo started >&3; sleep 100"};
  spec.cancel = &cancel;
  auto start = Clock::now();
  auto result = run_process(spec, Clock::now() + std::chrono::seconds(30), [&](const std::string&) {
    cancel = true;  // as soon as the child has started
    return std::optional<Clock::time_point>{};
  });
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(result.cancelled);
  EXPECT_FALSE(result.timed_out);
  EXPECT_LT(seconds, 3.0);
}

}  // namespace
}  // namespace kbv
