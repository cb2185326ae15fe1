#include "isolation/freeze.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>

#include "isolation/cgroup.hpp"

namespace kbv::isolation {
namespace {

// The pid a pidfd refers to, from /proc/self/fdinfo ("Pid:\t<n>"); -1 when it has ended.
pid_t pid_of_pidfd(int pidfd) {
  std::ifstream in("/proc/self/fdinfo/" + std::to_string(pidfd));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Pid:", 0) == 0) return static_cast<pid_t>(std::stol(line.substr(4)));
  return -1;
}

std::string pid_namespace(pid_t pid) {
  char target[128];
  ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

// The state letter of one /proc/.../stat file ('?' when it cannot be read: the task ended).
char stat_state(const std::string& path) {
  std::ifstream in(path);
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

// Every thread of the process stopped by a signal ('T') or traced ('t'), or ended ('Z', 'X', or
// gone). Every thread, not the process's own stat: a process whose main thread has exited shows
// 'Z' there while its other threads run on.
bool process_stopped(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (!dir) return true;  // ended
  bool stopped = true;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const char state = stat_state(tasks + "/" + e->d_name + "/stat");
    if (state != 'T' && state != 't' && state != 'Z' && state != 'X' && state != '?') stopped = false;
  }
  ::closedir(dir);
  return stopped;
}

// The PID namespace whose first process `inner_pidfd` is, when it is not the caller's own: a
// sandbox launched without a PID namespace shares the caller's, whose "namespace" is the whole
// machine (the caller and kbv included), never something to stop. "" then, or when it ended.
std::string own_namespace(int inner_pidfd) {
  const pid_t first = inner_pidfd >= 0 ? pid_of_pidfd(inner_pidfd) : -1;
  const std::string ns = first > 0 ? pid_namespace(first) : "";
  return ns == pid_namespace(::getpid()) ? "" : ns;
}

std::vector<pid_t> processes_in(const std::string& ns) {
  std::vector<pid_t> out;
  if (ns.empty()) return out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    if (pid_namespace(static_cast<pid_t>(pid)) == ns) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return out;
}

}  // namespace

std::vector<pid_t> namespace_processes(int inner_pidfd) { return processes_in(own_namespace(inner_pidfd)); }

std::vector<pid_t> sandbox_processes(const Launched& launched) {
  std::vector<pid_t> out;
  if (!launched.cgroup.empty()) {
    std::ifstream procs(launched.cgroup + "/cgroup.procs");
    for (pid_t p; procs >> p;) out.push_back(p);
    if (!out.empty()) return out;
  }
  out = namespace_processes(launched.inner_pidfd);
  if (out.empty() && launched.inner_pidfd >= 0)
    if (pid_t first = pid_of_pidfd(launched.inner_pidfd); first > 0) out.push_back(first);
  return out;
}

bool process_running(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;  // ended and reaped
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (!dir) return true;  // it exists, but /proc does not show it to us
  bool running = false;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const char state = stat_state(tasks + "/" + e->d_name + "/stat");
    if (state != 'Z' && state != 'X' && state != '?') running = true;
  }
  ::closedir(dir);
  return running;
}

pid_t parent_process(pid_t pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');  // after the command name: " <state> <ppid> ..."
  if (paren == std::string::npos) return 0;
  std::istringstream rest(stat.substr(paren + 1));
  std::string state;
  long ppid = 0;
  return rest >> state >> ppid ? static_cast<pid_t>(ppid) : 0;
}

bool can_freeze(const Launched& launched) {
  return !launched.cgroup.empty() || !own_namespace(launched.inner_pidfd).empty();
}

SandboxFreeze::SandboxFreeze(const Launched& launched) {
  if (!launched.cgroup.empty() && cgroup_request_freeze(launched.cgroup, true)) {
    cgroup_ = launched.cgroup;  // asked to freeze: thawed in any case
    if (!cgroup_wait_frozen(cgroup_)) error_ = "the sandbox's cgroup did not report frozen within 1 s";
    return;
  }
  // No cgroup: SIGSTOP to what runs in its PID namespace, in passes, until one pass finds every
  // process stopped at once (a process forked, or continued by a not-yet-stopped one, between
  // two passes is stopped by the next; once all are stopped none can fork or continue another).
  // Signals go through pidfds, checked to be in the namespace after opening: a pid that ended
  // and was reused by a process outside the sandbox is never stopped or continued.
  const std::string ns = own_namespace(launched.inner_pidfd);
  if (ns.empty()) {
    error_ = "the sandbox has no cgroup and no PID namespace of its own: nothing can freeze it alone";
    return;
  }
  // Up to 1 s, as the cgroup's wait: on a loaded machine (2 cores, the candidate's processes
  // spinning) a stop can take longer to land than 64 quick passes did (~120 ms; a CI run lost a
  // round to that).
  useconds_t pause = 100;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (int pass = 0; pass < 64 || std::chrono::steady_clock::now() < give_up; ++pass) {
    bool all_stopped = true;
    for (pid_t pid : processes_in(ns)) {
      if (process_stopped(pid)) continue;
      all_stopped = false;
      auto known = std::find(stopped_.begin(), stopped_.end(), pid);
      int fd = known != stopped_.end() ? pidfds_[static_cast<std::size_t>(known - stopped_.begin())]
                                       : static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
      if (fd < 0) continue;
      bool ok = pid_namespace(pid) == ns && ::syscall(SYS_pidfd_send_signal, fd, SIGSTOP, nullptr, 0) == 0;
      if (known == stopped_.end()) {
        if (ok) {
          stopped_.push_back(pid);
          pidfds_.push_back(fd);
        } else {
          ::close(fd);
        }
      }
    }
    if (all_stopped) {
      if (stopped_.empty()) error_ = "no process of the sandbox could be found to stop";
      return;
    }
    // SIGSTOP is delivered asynchronously: let it land before looking again (briefly at first:
    // the judge freezes the sandbox around every round it times without it).
    ::usleep(pause);
    pause = std::min<useconds_t>(pause * 2, 2000);
  }
  error_ = "the sandbox's processes kept running (or appearing) while it was being stopped";
}

SandboxFreeze::~SandboxFreeze() {
  if (!cgroup_.empty()) cgroup_request_freeze(cgroup_, false);
  for (int fd : pidfds_) {
    ::syscall(SYS_pidfd_send_signal, fd, SIGCONT, nullptr, 0);
    ::close(fd);
  }
}

}  // namespace kbv::isolation
