#include "isolation/launch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/securebits.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "isolation/cgroup.hpp"
#include "isolation/landlock.hpp"
#include "isolation/mounts.hpp"
#include "isolation/seccomp.hpp"

namespace kbv::isolation {
namespace {

// What the sandbox's own process achieved, written to the launcher just before exec (and again
// with exec_errno set if exec fails). Plain data: it crosses a pipe.
struct ChildState {
  int user_ns = 0, mount_ns = 0, net_ns = 0, ipc_ns = 0, pid_ns = 0;
  int own_proc = 0, own_shm = 0, dropped_uid = 0, readonly_root = 0, caps_dropped = 0;
  int landlock_errno = 0;
  int seccomp_errno = 0;
  int failed_step = 0;  // nonzero: a required step failed (see Step)
  int failed_errno = 0;
  int exec_errno = 0;
};

// The helper passes SIGUSR1 (the judge's "dump your stacks" at a deadline) on to the sandbox.
volatile sig_atomic_t g_inner_pid = 0;
void forward_usr1(int) {
  if (g_inner_pid > 0) ::kill(g_inner_pid, SIGUSR1);
}

enum Step { kStepNone = 0, kStepMaps = 1, kStepFork = 2, kStepDropUid = 3, kStepFds = 4, kStepChdir = 5, kStepExec = 6, kStepMounts = 7 };

const char* step_name(int step) {
  switch (step) {
    case kStepMaps: return "entering the user namespace";
    case kStepFork: return "forking the sandbox's first process";
    case kStepDropUid: return "dropping to the sandbox uid";
    case kStepFds: return "placing its file descriptors";
    case kStepChdir: return "changing to its working folder";
    case kStepExec: return "exec";
    case kStepMounts: return "making its writable folders writable again";
  }
  return "?";
}

void write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

bool read_all(int fd, void* data, std::size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

void set_limit(int resource, std::int64_t value) {
  if (value <= 0) return;
  rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  ::setrlimit(resource, &r);
}

// Everything the child needs, prepared before fork so that the child only makes system calls.
struct Prepared {
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
  std::vector<std::pair<int, int>> fds;
  int max_target_fd = 2;
  std::vector<std::string> landlock_paths;
  std::vector<const char*> landlock_cpaths;
  int landlock_abi = 0;
  std::string shm_options;
  bool root = false;
  std::uint32_t outer_uid = 0;
  MountPlan mounts;
  int pid_pipe_w = -1;  // the helper tells the launcher the sandbox's pid here
};

// The device files a sandbox may open for writing (and ioctl): the GPU's (unless `gpu` is off),
// the usual character devices, and its private /dev/shm. Resolved before fork.
std::vector<std::string> writable_devices(bool gpu) {
  std::vector<std::string> out = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/shm"};
  if (DIR* d = gpu ? ::opendir("/dev") : nullptr) {
    while (dirent* e = ::readdir(d))
      if (std::strncmp(e->d_name, "nvidia", 6) == 0) out.push_back(std::string("/dev/") + e->d_name);
    ::closedir(d);
  }
  return out;
}

// No capability survives exec, even for uid 0 inside the namespace.
int drop_capabilities() {
  for (int cap = 0; cap <= 63; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  if (::prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED, 0, 0, 0) != 0)
    return 0;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  return ::syscall(SYS_capset, &header, data) == 0 ? 1 : 0;
}


// The kernel clears the death signal whenever a process's uid or gid changes (a user
// namespace's uid map, setresuid): set it again after each change, and end at once if the parent
// died before it took effect. Without it a killed kbv leaves a spinning sandbox behind.
void keep_death_signal(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(126);
}

[[noreturn]] void run_child(const SandboxSpec& spec, Prepared& p, int sync_w, int go_r, int report_w) {
  const pid_t launcher = ::getppid();
  keep_death_signal(launcher);
  ChildState st;
  char c = 0;
  // As real root: hide what the sandbox's uid may not search, keeping what it needs.
  if (p.root) {
    if (int e = apply_shadows(p.mounts)) {
      st.failed_step = kStepMounts;
      st.failed_errno = e;
      write_all(report_w, &st, sizeof st);
      ::_exit(126);
    }
  }
  if (spec.use_namespaces && ::unshare(CLONE_NEWUSER) == 0) st.user_ns = 1;
  c = st.user_ns ? 'u' : 'n';
  write_all(sync_w, &c, 1);
  if (!read_all(go_r, &c, 1) || c != 'g') {
    st.failed_step = kStepMaps;
    write_all(report_w, &st, sizeof st);
    ::_exit(126);
  }
  ::close(sync_w);
  ::close(go_r);
  if (st.user_ns) {
    if (::setresgid(0, 0, 0) != 0 || ::setresuid(0, 0, 0) != 0) {
      st.failed_step = kStepMaps;
      st.failed_errno = errno;
      write_all(report_w, &st, sizeof st);
      ::_exit(126);
    }
    keep_death_signal(launcher);
  }
  // Each namespace needs CAP_SYS_ADMIN over the current user namespace: ours, or real root.
  if (spec.use_namespaces && (st.user_ns || p.root)) {
    st.mount_ns = ::unshare(CLONE_NEWNS) == 0;
    st.net_ns = ::unshare(CLONE_NEWNET) == 0;
    st.ipc_ns = ::unshare(CLONE_NEWIPC) == 0;
    st.pid_ns = ::unshare(CLONE_NEWPID) == 0;
  }
  pid_t inner = ::fork();
  if (inner < 0) {
    st.failed_step = kStepFork;
    st.failed_errno = errno;
    write_all(report_w, &st, sizeof st);
    ::_exit(126);
  }
  if (inner > 0) {
    // The helper: holds nothing, waits for the sandbox and passes its status on. The launcher
    // learns the sandbox's pid from it, to kill it directly: the sandbox is its namespace's
    // PID 1 and may clear the death signal that would follow the helper's end.
    write_all(p.pid_pipe_w, &inner, sizeof inner);
    ::close(p.pid_pipe_w);
    g_inner_pid = inner;
    ::signal(SIGUSR1, forward_usr1);
    ::close(report_w);
    for (int fd = 0; fd < 1024; ++fd) ::close(fd);
    int status = 0;
    while (::waitpid(inner, &status, 0) < 0 && errno == EINTR) {
    }
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  ::close(p.pid_pipe_w);
  // The sandbox's first process (PID 1 of its namespace when there is one), in a session of its
  // own: a process group is named by no pid, so without this kill(0, ...) from inside would
  // reach the judge's group across the PID namespace.
  const pid_t helper = ::getppid();  // 0 as PID 1 of a new PID namespace: its parent is outside
  keep_death_signal(helper);
  ::setsid();
  if (st.mount_ns) {
    ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
    // Its own /proc shows only its own processes: not the judge's, not kbv's.
    if (st.pid_ns) st.own_proc = ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0;
    st.own_shm = ::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, p.shm_options.c_str()) == 0;
    if (spec.use_readonly_mounts) {
      bool ro = false;
      if (int e = apply_private_mounts(p.mounts, ro)) {
        st.failed_step = kStepMounts;
        st.failed_errno = e;
        write_all(report_w, &st, sizeof st);
        ::_exit(126);
      }
      st.readonly_root = ro;
    }
  }
  if (!st.user_ns && p.root && !spec.keep_uid) {
    // No user namespace but root: run as an unprivileged uid instead.
    if (::setgroups(0, nullptr) != 0 || ::setresgid(p.outer_uid, p.outer_uid, p.outer_uid) != 0 ||
        ::setresuid(p.outer_uid, p.outer_uid, p.outer_uid) != 0) {
      st.failed_step = kStepDropUid;
      st.failed_errno = errno;
      write_all(report_w, &st, sizeof st);
      ::_exit(126);
    }
    st.dropped_uid = 1;
  }
  if ((st.user_ns || p.root) && spec.drop_capabilities) st.caps_dropped = drop_capabilities();
  keep_death_signal(helper);  // after the last change of uid: the helper's end ends the sandbox
  set_limit(RLIMIT_CORE, 0);
  set_limit(RLIMIT_FSIZE, spec.limits.max_file_bytes);
  set_limit(RLIMIT_NOFILE, spec.limits.max_open_files);
  st.landlock_errno = spec.use_landlock && p.landlock_abi > 0
                          ? landlock_restrict(p.landlock_cpaths.data(), static_cast<int>(p.landlock_cpaths.size()), p.landlock_abi)
                          : 0;
  st.seccomp_errno = deny_tracing();
  // fds: first lift every source above the targets, then place each at its number.
  int report_fd = p.max_target_fd + 1;
  int lifted_report = ::fcntl(report_w, F_DUPFD_CLOEXEC, 1000);
  int lifted_fds[64];
  std::size_t n = p.fds.size() < 64 ? p.fds.size() : 64;
  for (std::size_t i = 0; i < n; ++i) lifted_fds[i] = ::fcntl(p.fds[i].first, F_DUPFD_CLOEXEC, 1001 + static_cast<int>(i));
  for (std::size_t i = 0; i < n; ++i) {
    if (lifted_fds[i] < 0 || ::dup2(lifted_fds[i], p.fds[i].second) < 0) {
      st.failed_step = kStepFds;
      st.failed_errno = errno;
      write_all(lifted_report, &st, sizeof st);
      ::_exit(126);
    }
  }
  ::dup2(lifted_report, report_fd);
  ::fcntl(report_fd, F_SETFD, FD_CLOEXEC);
  ::syscall(SYS_close_range, report_fd + 1, ~0U, 0);
  if (!spec.working_dir.empty() && ::chdir(spec.working_dir.c_str()) != 0) {
    st.failed_step = kStepChdir;
    st.failed_errno = errno;
    write_all(report_fd, &st, sizeof st);
    ::_exit(126);
  }
  write_all(report_fd, &st, sizeof st);
  ::execve(spec.program.c_str(), p.argv.data(), p.envp.data());
  st.failed_step = kStepExec;
  st.exec_errno = errno;
  write_all(report_fd, &st, sizeof st);
  ::_exit(127);
}

std::atomic<int> g_sandbox_counter{0};

}  // namespace

Launched launch_sandbox(const SandboxSpec& spec) {
  Launched out;
  IsolationReport& report = out.report;
  Prepared p;
  p.root = ::geteuid() == 0;
  p.outer_uid = spec.outer_uid;
  // Throws when something the sandbox must read stays out of its uid's reach.
  p.mounts = plan_mounts(spec, (p.root && !spec.keep_uid) ? spec.outer_uid : ::geteuid());
  for (const auto& a : spec.argv) p.argv_storage.push_back(a);
  for (const auto& [k, v] : spec.env) p.env_storage.push_back(k + "=" + v);
  for (auto& s : p.argv_storage) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (auto& s : p.env_storage) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);
  p.fds = spec.fds;
  if (p.fds.size() > 64) throw std::runtime_error("launch_sandbox: at most 64 fds");
  for (const auto& [from, to] : p.fds) p.max_target_fd = std::max(p.max_target_fd, to);
  p.shm_options = "size=" + std::to_string(spec.limits.tmp_bytes) + ",mode=1777";
  if (spec.use_landlock) {
    p.landlock_paths = spec.writable;
    for (const auto& d : writable_devices(spec.gpu)) p.landlock_paths.push_back(d);
    // Its own /proc entries only (CUDA names its threads there): never /proc/sysrq-trigger or
    // /proc/sys, which a uid-0 sandbox could otherwise write by file mode alone.
    p.landlock_paths.push_back("/proc/self");
    for (const auto& w : p.landlock_paths) p.landlock_cpaths.push_back(w.c_str());
    p.landlock_abi = landlock_abi();
    if (p.landlock_abi < 1) report.warnings.push_back("filesystem writes not confined: Landlock is not available on this kernel");
  }
  if (!spec.gpu && (!spec.use_landlock || p.landlock_abi < 1))
    report.warnings.push_back("the GPU's device files stay open to it: only CUDA_VISIBLE_DEVICES hides the GPU");

  // The cgroup comes first so the helper can join it before it forks the sandbox.
  Cgroup cgroup;
  if (spec.use_cgroup) {
    std::string name = "sbx-" + std::to_string(::getpid()) + "-" + std::to_string(g_sandbox_counter++);
    cgroup = cgroup_create(name, spec.limits.memory_bytes, spec.limits.max_processes);
    if (cgroup.path.empty()) report.warnings.push_back("no cgroup: " + cgroup.error);
  }

  int sync_pipe[2], go_pipe[2], report_pipe[2], pid_pipe[2];
  if (::pipe2(sync_pipe, O_CLOEXEC) || ::pipe2(go_pipe, O_CLOEXEC) || ::pipe2(report_pipe, O_CLOEXEC) || ::pipe2(pid_pipe, O_CLOEXEC))
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  p.pid_pipe_w = pid_pipe[1];
  // Without a pids cgroup, the process limit is per uid: only meaningful for a uid of its own.
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(sync_pipe[0]);
    ::close(go_pipe[1]);
    ::close(report_pipe[0]);
    ::close(pid_pipe[0]);
    if (cgroup.path.empty()) {
      set_limit(RLIMIT_NPROC, spec.limits.max_processes);
      if (spec.limits.memory_bytes > 0) set_limit(RLIMIT_DATA, spec.limits.memory_bytes);
    }
    run_child(spec, p, sync_pipe[1], go_pipe[0], report_pipe[1]);
  }
  ::close(sync_pipe[1]);
  ::close(go_pipe[0]);
  ::close(report_pipe[1]);
  ::close(pid_pipe[1]);
  out.pid = pid;

  char c = 0;
  bool user_ns = read_all(sync_pipe[0], &c, 1) && c == 'u';
  std::int64_t outer = p.root ? p.outer_uid : ::getuid();
  if (user_ns) {
    std::string base = "/proc/" + std::to_string(pid);
    write_file(base + "/setgroups", "deny");
    std::uint32_t outer_gid = p.root ? p.outer_uid : ::getgid();
    bool mapped = write_file(base + "/uid_map", "0 " + std::to_string(outer) + " 1") &&
                  write_file(base + "/gid_map", "0 " + std::to_string(outer_gid) + " 1");
    if (!mapped) report.warnings.push_back("could not write the user namespace's uid map");
  }
  if (!cgroup.path.empty() && !cgroup_add(cgroup, pid)) {
    report.warnings.push_back("could not move the sandbox into its cgroup");
    cgroup_remove(cgroup);
    cgroup = {};
  }
  char go = 'g';
  write_all(go_pipe[1], &go, 1);
  ::close(sync_pipe[0]);
  ::close(go_pipe[1]);

  // One record before exec, a second if exec failed; EOF once exec succeeded.
  ChildState st, second;
  bool got = read_all(report_pipe[0], &st, sizeof st);
  bool failed = got && read_all(report_pipe[0], &second, sizeof second);
  ::close(report_pipe[0]);
  pid_t inner = -1;
  if (read_all(pid_pipe[0], &inner, sizeof inner) && inner > 0) out.inner_pidfd = static_cast<int>(::syscall(SYS_pidfd_open, inner, 0));
  ::close(pid_pipe[0]);
  if (failed) st = second;
  if (!got || st.failed_step != kStepNone) {
    Launched dead = out;
    int status = 0;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    cgroup_remove(cgroup);
    int err = st.exec_errno ? st.exec_errno : st.failed_errno;
    throw std::runtime_error("cannot start the sandbox (" + spec.program + "): " +
                             (got ? std::string(step_name(st.failed_step)) + " failed: " + std::strerror(err)
                                  : std::string("its helper died before reporting")));
  }

  report.user_namespace = st.user_ns;
  report.outer_uid = (st.user_ns || st.dropped_uid) ? outer : static_cast<std::int64_t>(::geteuid());
  report.pid_namespace = st.pid_ns && st.own_proc;
  report.network_namespace = st.net_ns;
  report.mount_namespace = st.mount_ns;
  report.readonly_root = st.readonly_root;
  report.capabilities_dropped = st.caps_dropped;
  if (st.mount_ns && !st.readonly_root) report.warnings.push_back("mounts not made read-only (no mount_setattr)");
  report.landlock_abi = (spec.use_landlock && p.landlock_abi > 0 && st.landlock_errno == 0) ? p.landlock_abi : 0;
  report.tracing_denied = st.seccomp_errno == 0;
  if (st.seccomp_errno != 0)
    report.warnings.push_back(std::string("seccomp filter not applied (its processes may trace each other): ") + std::strerror(st.seccomp_errno));
  if (spec.use_landlock && p.landlock_abi > 0 && st.landlock_errno != 0)
    report.warnings.push_back(std::string("Landlock not applied: ") + std::strerror(st.landlock_errno));
  report.cgroup = cgroup.path;
  report.file_size_limit_bytes = spec.limits.max_file_bytes;
  report.writable = spec.writable;
  if (!cgroup.path.empty()) {
    report.memory_limit_bytes = spec.limits.memory_bytes;
    report.memory_limit_by = spec.limits.memory_bytes > 0 ? "cgroup" : "";
    report.process_limit = spec.limits.max_processes;
    report.process_limit_by = "cgroup";
  } else {
    report.memory_limit_bytes = spec.limits.memory_bytes;
    report.memory_limit_by = spec.limits.memory_bytes > 0 ? "rlimit_data" : "";
    report.process_limit = spec.limits.max_processes;
    report.process_limit_by = "rlimit_nproc";
    if (report.outer_uid == static_cast<std::int64_t>(::geteuid()) && !st.user_ns)
      report.warnings.push_back("the process limit is shared with kbv's own uid");
  }
  if (!spec.use_namespaces) report.warnings.push_back("namespaces turned off (KBV_SANDBOX_NAMESPACES=0)");
  if (!st.user_ns && !spec.keep_uid)
    report.warnings.push_back(p.root ? "no user namespace (ran as uid " + std::to_string(outer) + " instead)"
                                     : "no user namespace: the sandbox runs as kbv's own uid");
  if (!report.pid_namespace) report.warnings.push_back("no PID namespace: processes that leave the process group survive the sandbox");
  if (!st.net_ns) report.warnings.push_back("no network namespace: the candidate can open network connections");
  if (!st.own_shm && st.mount_ns) report.warnings.push_back("/dev/shm is shared with the host");
  // The private /tmp, /run and folders (the build root, the candidate's folder) come with the
  // read-only step: without it other candidates' files are as visible as the host makes them.
  if ((!st.mount_ns || !spec.use_readonly_mounts) && !spec.keep_uid)
    report.warnings.push_back("no private /tmp or build root: other candidates' files are as readable as their permissions make them");
  else
    for (const auto& k : p.mounts.kept_visible) report.warnings.push_back("not made private: " + k);
  out.cgroup = cgroup.path;
  return out;
}

std::uint32_t resolve_outer_uid(const SandboxSpec& spec) { return ::geteuid() == 0 ? spec.outer_uid : ::getuid(); }

int poll_sandbox(Launched& launched) {
  if (launched.reaped) return launched.status;
  if (launched.pid <= 0) return -1;
  int status = 0;
  if (::waitpid(launched.pid, &status, WNOHANG) != launched.pid) return -1;
  launched.reaped = true;
  launched.status = status;
  return status;
}

int end_sandbox(Launched& launched) {
  if (launched.ended) return launched.reaped ? launched.status : -1;  // ended before: `ended` says how
  bool gone = true;
  // The sandbox itself first (its whole PID namespace dies with it), through a pidfd: no pid
  // reuse can redirect the signal. Then its helper.
  if (launched.inner_pidfd >= 0) {
    ::syscall(SYS_pidfd_send_signal, launched.inner_pidfd, SIGKILL, nullptr, 0);
    // Its namespace is empty only once it has exited: the kernel kills and reaps every other
    // process there before letting the first one finish. Until then they still run (for up to a
    // second while its memory is freed), and the caller must not remove their files under them.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int ready = 0;
    for (;;) {  // readable once it has exited; at most 10 s
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
      if (left <= 0) break;
      pollfd pfd{launched.inner_pidfd, POLLIN, 0};
      ready = ::poll(&pfd, 1, static_cast<int>(left));
      if (ready >= 0 || errno != EINTR) break;
    }
    gone = ready > 0;
    ::close(launched.inner_pidfd);
    launched.inner_pidfd = -1;
  }
  if (launched.pid > 0 && !launched.reaped) {
    ::kill(launched.pid, SIGKILL);
    int status = 0;
    while (::waitpid(launched.pid, &status, 0) < 0 && errno == EINTR) {
    }
    launched.reaped = true;
    launched.status = status;
  }
  if (!launched.cgroup.empty()) gone = cgroup_remove(Cgroup{launched.cgroup, ""}) && gone;
  launched.cgroup.clear();
  launched.ended = gone;
  return launched.reaped ? launched.status : -1;
}

}  // namespace kbv::isolation
