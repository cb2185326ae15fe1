// The sandbox launcher, on real processes (a shell and python3 stand in for kbv-sandbox): each
// mechanism holds when it is reported in force, and a missing one is reported, not silent.
// CI runs as root on a kernel with user namespaces and Landlock (like these machines); where a
// mechanism is unavailable the test says so and checks that the report says so too.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "isolation/landlock.hpp"
#include "isolation/freeze.hpp"
#include "isolation/launch.hpp"
#include "isolation/peek_exit.hpp"

namespace kbv::isolation {
namespace {

namespace fs = std::filesystem;

struct SandboxRun {
  std::string out;
  int status = -1;
  IsolationReport report;
};

fs::path scratch() {
  static fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("kbv-isolation-test-" + std::to_string(::getpid()));
    fs::create_directories(d / "writable");
    fs::permissions(d, fs::perms::all);
    fs::permissions(d / "writable", fs::perms::all);
    return d;
  }();
  return dir;
}

SandboxSpec shell(const std::string& script) {
  SandboxSpec spec;
  spec.program = "/bin/sh";
  spec.argv = {"/bin/sh", "-c", script};
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"KBV_TEST_VAR", "visible"}};
  spec.writable = {(scratch() / "writable").string()};
  spec.limits.memory_bytes = 2LL << 30;
  spec.limits.max_processes = 256;
  return spec;
}

// bash, not sh: `exec -a NAME` (a process the test can find by name) is not POSIX, and dash's
// "exec: -a: not found" would leave nothing to look for.
SandboxSpec bash(const std::string& script) {
  SandboxSpec spec = shell(script);
  spec.program = "/bin/bash";
  spec.argv = {"/bin/bash", "-c", script};
  return spec;
}

// Runs the sandbox to completion with its stdout on a pipe.
SandboxRun run(SandboxSpec spec, int timeout_s = 30) {
  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  spec.fds = {{out[1], 1}};
  SandboxRun r;
  Launched l = launch_sandbox(spec);
  ::close(out[1]);
  r.report = l.report;
  char buf[4096];
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      r.out.append(buf, static_cast<std::size_t>(n));
    }
    if (std::chrono::steady_clock::now() > until) break;
  }
  ::close(out[0]);
  for (int i = 0; i < 100 && poll_sandbox(l) < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  r.status = end_sandbox(l);
  return r;
}

bool process_with_marker(const std::string& marker) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(marker) != std::string::npos) return true;
  }
  return false;
}

TEST(Isolation, ItsOwnPidNamespaceAndProc) {
  SandboxRun r = run(shell("echo pid=$$; ls /proc | grep -c '^[0-9]'"));
  if (!r.report.pid_namespace) GTEST_SKIP() << "no PID namespace here; warnings: " << r.report.warnings.size();
  EXPECT_NE(r.out.find("pid=1\n"), std::string::npos) << r.out;
  // Its /proc shows its own few processes, not the host's.
  int visible = std::stoi(r.out.substr(r.out.find('\n') + 1));
  EXPECT_LT(visible, 10) << r.out;
}

TEST(Isolation, NoNetworkNotEvenLoopback) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  ::listen(listener, 4);
  int port = ntohs(addr.sin_port);
  auto spec = shell("");
  spec.program = "/usr/bin/python3";
  spec.argv = {"/usr/bin/python3", "-c",
               "import socket\ntry:\n  socket.create_connection(('127.0.0.1', " + std::to_string(port) +
                   "), 2); print('connected')\nexcept OSError as e: print('refused', e)"};
  SandboxRun r = run(spec);
  pollfd p{listener, POLLIN, 0};
  bool heard = ::poll(&p, 1, 200) > 0;
  ::close(listener);
  if (!r.report.network_namespace) {
    EXPECT_FALSE(r.report.warnings.empty()) << "no network namespace must be a warning";
    GTEST_SKIP() << "no network namespace here";
  }
  EXPECT_FALSE(heard) << r.out;
  EXPECT_NE(r.out.find("refused"), std::string::npos) << r.out;
}

TEST(Isolation, WritesOnlyWhereAllowed) {
  fs::path outside = scratch() / "outside.txt";
  fs::path inside = scratch() / "writable" / "inside.txt";
  SandboxRun r = run(shell("echo x > " + outside.string() + "; echo y > " + inside.string() + "; echo done"));
  EXPECT_TRUE(fs::exists(inside)) << r.out;
  if (r.report.landlock_abi == 0) {
    EXPECT_FALSE(r.report.warnings.empty());
    GTEST_SKIP() << "Landlock not in force here";
  }
  EXPECT_FALSE(fs::exists(outside)) << "Landlock ABI " << r.report.landlock_abi;
}

TEST(Isolation, EveryProcessItStartsDiesWithIt) {
  std::string marker = "kbv-isolation-marker-" + std::to_string(::getpid());
  SandboxRun r = run(bash("(exec -a " + marker + " sleep 300) & setsid bash -c '(exec -a " + marker + "s sleep 300)' & sleep 0.3; "
                          "pgrep -fc " + marker + " >/dev/null && echo started"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_NE(r.out.find("started"), std::string::npos) << r.out;
  EXPECT_FALSE(process_with_marker(marker)) << "a child survived its sandbox (pid namespace: " << r.report.pid_namespace
                                            << ", cgroup: " << r.report.cgroup << ")";
}

// A launcher killed outright (kbv -9, a Slurm job's end) runs no clean-up: the sandbox and all it
// started must end with it, not spin on as orphans. The kernel clears the death signal whenever a
// uid changes, which both the user namespace's uid map and the unprivileged uid do.
TEST(Isolation, ASandboxEndsWhenItsLauncherIsKilled) {
  std::string marker = "kbv-orphan-marker-" + std::to_string(::getpid());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t launcher = ::fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    ::close(ready[0]);
    auto spec = bash("(exec -a " + marker + " sleep 300) & echo started; exec -a " + marker + "-init sleep 300");
    spec.fds = {{ready[1], 1}};
    launch_sandbox(spec);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char buf[16] = {};
  pollfd p{ready[0], POLLIN, 0};
  ASSERT_GT(::poll(&p, 1, 20000), 0) << "the sandbox never started";
  ASSERT_GT(::read(ready[0], buf, sizeof buf), 0);
  ::close(ready[0]);
  bool started = false;  // the marker processes, by name (never the launcher's own command line)
  for (int i = 0; i < 100 && !started; ++i) {
    started = process_with_marker(marker + "-init");
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(started) << "the sandbox's processes never appeared";
  ::kill(launcher, SIGKILL);
  ::waitpid(launcher, nullptr, 0);
  bool alive = true;
  for (int i = 0; i < 100 && alive; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    alive = process_with_marker(marker);
  }
  EXPECT_FALSE(alive) << "the sandbox outlived its killed launcher";
}

// A candidate kept under /tmp (kbv's API writes one there, users do too) must be readable in the
// sandbox's own /tmp; the rest of the host's /tmp stays out of sight, and nothing comes back writable.
TEST(Isolation, WhatItMustReadUnderTmpComesBackReadOnly) {
  fs::path dir = scratch() / "candidate-dir";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);
  std::ofstream(dir / "candidate.py") << "print('hello')\n";
  fs::permissions(dir / "candidate.py", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  std::ofstream(scratch() / "secret.txt") << "host secret\n";
  auto spec = shell("cat " + (dir / "candidate.py").string() + "; cat " + (scratch() / "secret.txt").string() +
                    " 2>/dev/null || echo no-secret; echo x > " + (dir / "new.txt").string() + " 2>/dev/null || echo no-write");
  spec.must_read = {(dir / "candidate.py").string(), dir.string()};
  SandboxRun r = run(spec);
  EXPECT_NE(r.out.find("print('hello')"), std::string::npos) << r.out;
  if (!r.report.mount_namespace) GTEST_SKIP() << "no mount namespace here: /tmp is the host's";
  EXPECT_NE(r.out.find("no-secret"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no-write"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "new.txt"));
}

// kbv installed or checked out under /tmp (containers and CI runners build there), in a folder
// whose name has spaces, reached as named or through a symlink from outside /tmp: the sandbox's
// private /tmp must not hide its own program.
TEST(Isolation, ItsProgramUnderTmpIsNotHiddenByItsOwnTmp) {
  const fs::path install = scratch() / "kbv install with spaces" / "bin";
  fs::create_directories(install);
  fs::copy_file("/bin/sh", install / "kbv-sandbox", fs::copy_options::overwrite_existing);
  // Outside /tmp: the test's working folder (ctest's is the build folder).
  const fs::path outside = fs::absolute("kbv-isolation-link-" + std::to_string(::getpid()));
  struct RemoveLink {
    fs::path p;
    ~RemoveLink() {
      std::error_code ec;
      fs::remove(p, ec);
    }
  } remove_outside{outside};
  fs::remove(outside);
  fs::create_directory_symlink(install.parent_path(), outside);
  const fs::path inside = scratch() / "link to install";
  fs::remove(inside);
  fs::create_directory_symlink(install.parent_path(), inside);
  for (const fs::path& program : {install / "kbv-sandbox", outside / "bin" / "kbv-sandbox", inside / "bin" / "kbv-sandbox"}) {
    SCOPED_TRACE(program.string());
    auto spec = shell("echo started-from-tmp");
    spec.program = program.string();
    spec.argv = {program.string(), "-c", "echo started-from-tmp"};
    SandboxRun r = run(spec);
    EXPECT_NE(r.out.find("started-from-tmp"), std::string::npos) << r.out;
  }
}

// The build root: a sandbox sees its own entry and what it must read there (the torch PCH), not
// another entry, even one opened to all while both run. Outside /tmp, whose privacy would hide it
// anyway. The control run, without the private folder, reads the other entry.
TEST(Isolation, OfAPrivateFolderItSeesOnlyItsOwnPart) {
  const fs::path root = fs::absolute("kbv-private-root-" + std::to_string(::getpid()));
  struct RemoveTree {
    fs::path p;
    ~RemoveTree() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } remove_root{root};
  fs::create_directories(root / "own");
  fs::create_directories(root / "pch");
  fs::create_directories(root / "someone-else");
  fs::permissions(root, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(root / "own", fs::perms::all);
  std::ofstream(root / "pch" / "header.gch") << "pch-bytes\n";
  std::ofstream(root / "someone-else" / "note") << "other-note\n";
  const std::string script = "ls " + root.string() + "; cat " + (root / "pch" / "header.gch").string() + "; cat " +
                             (root / "someone-else" / "note").string() + " 2>/dev/null || echo unreadable; echo x > " +
                             (root / "own" / "f").string() + " && echo wrote-own";
  auto spec = shell(script);
  spec.writable.push_back((root / "own").string());
  spec.must_read.push_back((root / "pch").string());

  SandboxRun open = run(spec);
  EXPECT_NE(open.out.find("other-note"), std::string::npos) << "control: " << open.out;
  fs::remove(root / "own" / "f");

  spec.private_dirs = {root.string()};
  SandboxRun r = run(spec);
  if (!r.report.mount_namespace) GTEST_SKIP() << "no mount namespace here";
  EXPECT_NE(r.out.find("pch-bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote-own"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(root / "own" / "f"));
  EXPECT_NE(r.out.find("unreadable"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("other-note"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("other\n"), std::string::npos) << "listed: " << r.out;
}

// Its scratch folder (the judge's private tmp, HOME and TMPDIR) is memory of its own: what it
// writes there never reaches the host's disk, a write past limits.tmp_bytes fails there, and what
// the judge put there (its copy of the candidate) stays read-only. The control run, without the
// scratch, writes to the host's folder.
TEST(Isolation, ItsScratchFolderIsMemoryOfItsOwn) {
  char tmpl[] = "/tmp/kbv-scratch-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  struct RemoveTree {
    fs::path p;
    ~RemoveTree() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } remove_dir{dir};
  fs::permissions(dir, fs::perms::all);
  std::ofstream(dir / "given") << "given-bytes\n";
  fs::permissions(dir / "given", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const std::string d = dir.string();
  auto spec = shell("cat " + d + "/given; echo x > " + d + "/new && echo wrote-new; "
                    "head -c 8388608 /dev/zero > " + d + "/big 2>/dev/null || echo big-refused; "
                    "echo y >> " + d + "/given 2>/dev/null || echo given-readonly");
  spec.writable.push_back(d);
  spec.limits.tmp_bytes = 4 << 20;

  SandboxRun open = run(spec);
  EXPECT_NE(open.out.find("wrote-new"), std::string::npos) << "control: " << open.out;
  EXPECT_TRUE(fs::exists(dir / "new")) << "control: " << open.out;
  fs::remove(dir / "new");
  fs::remove(dir / "big");

  spec.scratch = d;
  SandboxRun r = run(spec);
  if (!r.report.mount_namespace || !r.report.readonly_root) GTEST_SKIP() << "no mount namespace or read-only step here";
  EXPECT_NE(r.out.find("given-bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote-new"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("big-refused"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("given-readonly"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "new")) << "written to the host's disk";
  EXPECT_FALSE(fs::exists(dir / "big")) << "written to the host's disk";
}

// A needed path reached through a link inside a private folder (a build root that is a link to
// scratch space, under a private cache, as clusters lay out ~/.cache): the folder is still hidden
// (another file in it is out of sight) and the path comes back as named, real folders along it and
// the link's target at its end: the sandbox writes through it.
TEST(Isolation, APrivateFolderWithALinkOutIsHiddenAndThePathThroughItWorks) {
  const fs::path root = fs::absolute("kbv-private-link-" + std::to_string(::getpid()));
  struct RemoveTree {
    fs::path p;
    ~RemoveTree() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } remove_root{root};
  fs::create_directories(root / "cache");
  fs::create_directories(root / "scratch" / "entry");
  fs::permissions(root, fs::perms::all);
  fs::permissions(root / "cache", fs::perms::all);
  fs::permissions(root / "scratch" / "entry", fs::perms::all);
  fs::create_directory_symlink(root / "scratch", root / "cache" / "builds");
  std::ofstream(root / "cache" / "results.db") << "other-verdicts\n";
  fs::permissions(root / "cache" / "results.db", fs::perms::owner_all | fs::perms::others_read);
  auto spec = shell("echo x > " + (root / "cache" / "builds" / "entry" / "f").string() + " && echo wrote; cat " +
                    (root / "cache" / "results.db").string() + " 2>/dev/null || echo unreadable");
  spec.writable.push_back((root / "cache" / "builds" / "entry").string());
  SandboxRun open = run(spec);
  EXPECT_NE(open.out.find("other-verdicts"), std::string::npos) << "control: " << open.out;
  spec.private_dirs = {(root / "cache").string()};
  SandboxRun r = run(spec);
  if (!r.report.mount_namespace || !r.report.readonly_root) GTEST_SKIP() << "no mount namespace or read-only step here";
  EXPECT_NE(r.out.find("wrote"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(root / "scratch" / "entry" / "f")) << r.out;
  EXPECT_NE(r.out.find("unreadable"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("other-verdicts"), std::string::npos) << r.out;
  for (const auto& w : r.report.warnings) EXPECT_EQ(w.find("not made private"), std::string::npos) << w;
}

// A process that traces the sandbox's first one (PTRACE_O_TRACEEXIT) holds it, once killed, at
// the start of its exit: the PID namespace is never torn down and everything in it lives on.
// No process in the sandbox may trace at all.
TEST(Isolation, NoProcessInItCanTrace) {
  auto spec = shell("");
  spec.program = "/usr/bin/python3";
  spec.argv = {"/usr/bin/python3", "-c",
               "import ctypes, os\n"
               "libc = ctypes.CDLL(None, use_errno=True)\n"
               "r = libc.ptrace(0, 0, 0, 0)  # PTRACE_TRACEME: always allowed unless filtered\n"
               "print('traceme', r, os.strerror(ctypes.get_errno()) if r else 'allowed')"};
  SandboxRun r = run(spec);
  EXPECT_TRUE(r.report.tracing_denied) << r.out;
  EXPECT_NE(r.out.find("traceme -1 Operation not permitted"), std::string::npos) << r.out;
}

// The sandbox has ended when end_sandbox returns: no process it started still runs (writing into
// a folder the caller is about to remove). The kernel tears a PID namespace down only as its
// first process exits, which takes a while when that process holds much memory.
TEST(Isolation, NothingItStartedRunsOnceItHasEnded) {
  fs::path log = scratch() / "writable" / "still_running.log";
  fs::remove(log);
  auto spec = shell("(while :; do echo x >> " + log.string() + "; sleep 0.005; done) & "
                    "exec python3 -c \"b = b'x' * (1 << 30); print('started', flush=True); import time; time.sleep(300)\"");
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  spec.fds = {{out[1], 1}};
  Launched l = launch_sandbox(spec);
  ::close(out[1]);
  if (!l.report.pid_namespace) {
    end_sandbox(l);
    GTEST_SKIP() << "no PID namespace here";
  }
  char buf[64] = {};
  pollfd p{out[0], POLLIN, 0};
  ASSERT_GT(::poll(&p, 1, 30000), 0) << "the sandbox never started";
  ASSERT_GT(::read(out[0], buf, sizeof buf - 1), 0);
  ::close(out[0]);
  ASSERT_NE(std::string(buf).find("started"), std::string::npos) << buf;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(l.ended.has_value());
  const int status = end_sandbox(l);
  auto size_at_end = fs::file_size(log);
  // It says so (the judge releases the device on it), and says it again without redoing it.
  EXPECT_EQ(l.ended, std::optional<bool>(true));
  EXPECT_EQ(end_sandbox(l), status);
  EXPECT_EQ(l.ended, std::optional<bool>(true));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(fs::file_size(log), size_at_end) << "a process of the sandbox kept writing after it ended";
}

// SandboxFreeze (the judge's compile of the torch_compile baseline): nothing the sandbox started
// runs while frozen -- forked, setsid'd or not -- and everything runs again afterwards.
TEST(Isolation, AFrozenSandboxRunsNothingUntilThawed) {
  fs::path log = scratch() / "writable" / "frozen.log";
  fs::remove(log);
  const std::string writer = "while :; do echo x >> " + log.string() + "; sleep 0.005; done";
  // ...and, inside a PID namespace of its own ($$ is 1 there), one that keeps sending SIGCONT to
  // everything it may signal, to undo a stop.
  auto spec = bash("(" + writer + ") & setsid bash -c '" + writer + "' & "
                   "if [ $$ = 1 ]; then (while :; do kill -CONT -1 2>/dev/null; done) & fi; echo started; exec sleep 300");
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  spec.fds = {{out[1], 1}};
  Launched l = launch_sandbox(spec);
  ::close(out[1]);
  if (!l.report.pid_namespace && l.cgroup.empty()) {
    end_sandbox(l);
    GTEST_SKIP() << "neither a PID namespace nor a cgroup here";
  }
  char buf[64] = {};
  pollfd p{out[0], POLLIN, 0};
  ASSERT_GT(::poll(&p, 1, 30000), 0) << "the sandbox never started";
  ASSERT_GT(::read(out[0], buf, sizeof buf - 1), 0);
  ::close(out[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    SandboxFreeze frozen(l);
    ASSERT_TRUE(frozen.frozen()) << frozen.error();
    if (l.cgroup.empty()) EXPECT_GE(frozen.stopped(), 4u) << "the shell, both writers, sleep";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a write under way lands
    auto size_frozen = fs::file_size(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    EXPECT_EQ(fs::file_size(log), size_frozen) << "a process of the sandbox ran while it was frozen";
  }
  auto size_thawed = fs::file_size(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_GT(fs::file_size(log), size_thawed) << "the sandbox did not run again after the freeze";
  end_sandbox(l);
}

// A process whose main thread has exited shows 'Z' in its own stat while its other threads run
// on: the freeze must look at every thread (red team, 2026-12-02: such helpers burned the CPUs
// through every "frozen" baseline sample).
TEST(Isolation, AFrozenSandboxStopsThreadsWhoseMainThreadExited) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3 to start such a process";
  fs::path log = scratch() / "writable" / "zombie_leader.log";
  fs::remove(log);
  const std::string py =
      "import ctypes, threading, time\n"
      "def write():\n"
      "    while True:\n"
      "        with open('" + log.string() + "', 'a') as f: f.write('x')\n"
      "        time.sleep(0.005)\n"
      "threading.Thread(target=write).start()\n"
      "time.sleep(0.05)\n"
      "ctypes.CDLL(None).syscall(60, 0)\n";  // SYS_exit: this thread only
  auto spec = bash("/usr/bin/python3 -c \"$KBV_PY\" & echo started; exec sleep 300");
  spec.env["KBV_PY"] = py;
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  spec.fds = {{out[1], 1}};
  Launched l = launch_sandbox(spec);
  ::close(out[1]);
  if (!l.report.pid_namespace && l.cgroup.empty()) {
    end_sandbox(l);
    GTEST_SKIP() << "neither a PID namespace nor a cgroup here";
  }
  char buf[64] = {};
  pollfd p{out[0], POLLIN, 0};
  ASSERT_GT(::poll(&p, 1, 30000), 0) << "the sandbox never started";
  ASSERT_GT(::read(out[0], buf, sizeof buf - 1), 0);
  ::close(out[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // python started, its main thread gone
  ASSERT_TRUE(fs::exists(log)) << "the writer thread never wrote";
  {
    SandboxFreeze frozen(l);
    ASSERT_TRUE(frozen.frozen()) << frozen.error();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto size_frozen = fs::file_size(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    EXPECT_EQ(fs::file_size(log), size_frozen) << "a thread of a process whose main thread exited ran while frozen";
  }
  auto size_thawed = fs::file_size(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_GT(fs::file_size(log), size_thawed) << "the thread did not run again after the freeze";
  end_sandbox(l);
}

// No process in the sandbox may make a namespace of its own (a nested PID namespace hides its
// processes from the freeze and from the judge's view of the GPU), while creating threads and
// processes still works (clone3 is "not implemented", glibc falls back to clone).
TEST(Isolation, NoNewNamespacesInsideTheSandbox) {
  SandboxRun r = run(bash("unshare -Up true 2>/dev/null && echo NESTED_PID || echo refused-pid; "
                          "unshare -U true 2>/dev/null && echo NESTED_USER || echo refused-user; "
                          "( true ) && echo forked; "
                          "/usr/bin/python3 -c 'import threading; t = threading.Thread(target=print, args=(\"threaded\",)); t.start(); t.join()'"));
  if (!r.report.tracing_denied) GTEST_SKIP() << "no seccomp here";
  EXPECT_EQ(r.out.find("NESTED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused-pid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused-user"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("forked"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("threaded"), std::string::npos) << r.out;
}

// Without a cgroup or a PID namespace of its own the sandbox shares the judge's namespace: a
// freeze by signals would stop the judge and kbv too, so it must refuse.
TEST(Isolation, NoFreezeWithoutANamespaceOfItsOwn) {
  auto spec = shell("echo started; exec sleep 300");
  spec.use_namespaces = false;
  spec.use_cgroup = false;
  Launched l = launch_sandbox(spec);
  {
    SandboxFreeze frozen(l);
    EXPECT_FALSE(frozen.frozen());
    EXPECT_EQ(frozen.stopped(), 0u);
    EXPECT_NE(frozen.error().find("no PID namespace"), std::string::npos) << frozen.error();
  }
  EXPECT_TRUE(namespace_processes(l.inner_pidfd).empty());
  end_sandbox(l);
}

volatile sig_atomic_t g_usr1 = 0;

TEST(Isolation, ItCannotSignalTheLaunchersProcessGroup) {
  auto old = ::signal(SIGUSR1, [](int) { g_usr1 = 1; });
  SandboxRun r = run(shell("kill -USR1 0; echo sent"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::signal(SIGUSR1, old);
  EXPECT_NE(r.out.find("sent"), std::string::npos) << r.out;
  EXPECT_EQ(g_usr1, 0) << "kill(0, ...) from the sandbox reached the launcher's process group";
}

TEST(Isolation, ItCannotCreateFilesInTheHostsDev) {
  std::string name = "/dev/kbv-isolation-test-" + std::to_string(::getpid());
  SandboxRun r = run(shell("echo x > " + name + "; echo done"));
  bool made = fs::exists(name);
  fs::remove(name);
  EXPECT_FALSE(made) << "ro " << r.report.readonly_root << " landlock " << r.report.landlock_abi;
}

TEST(Isolation, NoFileLargerThanTheLimit) {
  auto spec = shell("head -c 8388608 /dev/zero > " + (scratch() / "writable" / "big").string() + "; echo $?");
  spec.limits.max_file_bytes = 1 << 20;
  SandboxRun r = run(spec);
  EXPECT_LE(fs::file_size(scratch() / "writable" / "big"), 1u << 20) << r.out;
}

TEST(Isolation, TheEnvironmentIsTheAllowList) {
  ::setenv("KBV_TEST_SECRET_API_KEY", "do-not-leak", 1);
  SandboxRun r = run(shell("env"));
  ::unsetenv("KBV_TEST_SECRET_API_KEY");
  EXPECT_NE(r.out.find("KBV_TEST_VAR=visible"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("do-not-leak"), std::string::npos) << r.out;
}

TEST(Isolation, RootRunsItAsAnUnprivilegedUid) {
  if (::geteuid() != 0) GTEST_SKIP() << "the uid mapping is for a root launcher";
  auto spec = shell("cat /proc/self/uid_map 2>/dev/null; id -u");
  spec.outer_uid = 0x7ff00042;
  SandboxRun r = run(spec);
  EXPECT_EQ(r.report.outer_uid, 0x7ff00042) << r.out;
  // In its user namespace it is root of nothing: its uid 0 maps to the unprivileged one.
  if (r.report.user_namespace) EXPECT_NE(r.out.find(std::to_string(0x7ff00042)), std::string::npos) << r.out;
}

TEST(Isolation, AMissingMechanismIsReportedNotSilent) {
  auto spec = shell("echo hi");
  spec.use_namespaces = false;
  spec.use_landlock = false;
  spec.use_cgroup = false;
  SandboxRun r = run(spec);
  EXPECT_FALSE(r.report.pid_namespace);
  EXPECT_FALSE(r.report.network_namespace);
  EXPECT_EQ(r.report.landlock_abi, 0);
  EXPECT_FALSE(r.report.warnings.empty());
  bool says_network = false;
  for (const auto& w : r.report.warnings) says_network = says_network || w.find("network") != std::string::npos;
  EXPECT_TRUE(says_network);
  bool says_private = false;
  for (const auto& w : r.report.warnings) says_private = says_private || w.find("no private /tmp") != std::string::npos;
  EXPECT_TRUE(says_private) << "other candidates' files are visible: said";
}

TEST(Isolation, AProgramThatCannotStartIsAnError) {
  auto spec = shell("");
  spec.program = "/nonexistent/kbv-sandbox";
  spec.argv = {spec.program};
  EXPECT_THROW(launch_sandbox(spec), std::runtime_error);
}

}  // namespace
}  // namespace kbv::isolation

// The watchdog's view of the sandbox's launcher: an exit is seen without reaping, the reaper
// still gets the status, and a reaped child is no longer "ended" (its reaper has noticed).
namespace kbv::isolation {
namespace {

// Polls for up to 5 s.
std::optional<int> wait_for_peeked_exit(int pidfd) {
  std::optional<int> seen;
  for (int i = 0; i < 500 && !seen; ++i) {
    ::usleep(10 * 1000);
    seen = peek_exit_status(pidfd);
  }
  return seen;
}

TEST(PeekExit, SeesAnExitWithoutReapingIt) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::usleep(100 * 1000);
    ::_exit(6);
  }
  int fd = open_pidfd(pid);
  ASSERT_GE(fd, 0) << "pidfd_open";
  EXPECT_FALSE(peek_exit_status(fd)) << "still running";
  std::optional<int> seen = wait_for_peeked_exit(fd);
  ASSERT_TRUE(seen);
  EXPECT_TRUE(WIFEXITED(*seen));
  EXPECT_EQ(WEXITSTATUS(*seen), 6);
  EXPECT_EQ(peek_exit_status(fd), seen) << "asking again changes nothing";
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid) << "the peek reaped it";
  EXPECT_EQ(status, *seen);
  EXPECT_FALSE(peek_exit_status(fd)) << "reaped: its reaper has noticed";
  ::close(fd);
}

TEST(PeekExit, ReportsASignalAsWaitpidWould) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  int fd = open_pidfd(pid);
  ASSERT_GE(fd, 0);
  ::kill(pid, SIGKILL);
  std::optional<int> seen = wait_for_peeked_exit(fd);
  ASSERT_TRUE(seen);
  EXPECT_TRUE(WIFSIGNALED(*seen));
  EXPECT_EQ(WTERMSIG(*seen), SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(status, *seen);
  ::close(fd);
  EXPECT_FALSE(peek_exit_status(-1));
}

// Who counts as another tenant of the device while the baselines are timed (timing_phase.cpp):
// a zombie answers kill(pid, 0) and has left its cgroup's cgroup.procs, so a sandbox that never
// reaps a child whose CUDA context a grandchild keeps open would pass it off as someone else's
// process (examples/hacks/redteam_zombie_tenant.py), and device_busy and implausible_speed
// became warnings. It is not running: no tenant.
TEST(ProcessRunning, AZombieIsNotRunningThoughKillFindsIt) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(0);
  int fd = open_pidfd(pid);
  ASSERT_GE(fd, 0) << "pidfd_open";
  ASSERT_TRUE(wait_for_peeked_exit(fd)) << "the child never ended";  // ended, not reaped
  EXPECT_EQ(::kill(pid, 0), 0) << "kill(pid, 0) sees the zombie: the old rule counted it";
  EXPECT_FALSE(process_running(pid));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_FALSE(process_running(pid)) << "reaped";
  ::close(fd);
}

// A zombie's device memory (the context a holder keeps for it) is its parent's: /proc still names
// the parent until the zombie is reaped (examples/attacks/hoard_in_zombie.py).
TEST(ProcessRunning, AZombieStillNamesItsParent) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(0);
  int fd = open_pidfd(pid);
  ASSERT_GE(fd, 0) << "pidfd_open";
  ASSERT_TRUE(wait_for_peeked_exit(fd)) << "the child never ended";
  EXPECT_EQ(parent_process(pid), ::getpid());
  EXPECT_EQ(parent_process(::getpid()), ::getppid());
  ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
  EXPECT_EQ(parent_process(pid), 0) << "reaped: no such process";
  EXPECT_EQ(parent_process(-1), 0);
  ::close(fd);
}

TEST(ProcessRunning, ALiveProcessIsRunning) {
  EXPECT_TRUE(process_running(::getpid()));
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_TRUE(process_running(pid));
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  EXPECT_FALSE(process_running(-1));
}

}  // namespace
}  // namespace kbv::isolation
