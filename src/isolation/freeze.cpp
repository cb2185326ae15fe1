#include "isolation/freeze.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace kbv::isolation {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) return false;
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// The pid a pidfd refers to, from /proc/self/fdinfo ("Pid:\t<n>"); -1 when it has ended.
pid_t pid_of_pidfd(int pidfd) {
  std::istringstream in(read_text("/proc/self/fdinfo/" + std::to_string(pidfd)));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Pid:", 0) == 0) return static_cast<pid_t>(std::stol(line.substr(4)));
  return -1;
}

std::string pid_namespace(pid_t pid) {
  char target[128];
  ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

bool cgroup_is_frozen(const std::string& cgroup) {
  std::istringstream in(read_text(cgroup + "/cgroup.events"));
  for (std::string key, value; in >> key >> value;)
    if (key == "frozen") return value == "1";
  return false;
}

}  // namespace

std::vector<pid_t> namespace_processes(int inner_pidfd) {
  std::vector<pid_t> out;
  const pid_t first = inner_pidfd >= 0 ? pid_of_pidfd(inner_pidfd) : -1;
  if (first <= 0) return out;
  const std::string ns = pid_namespace(first);
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

SandboxFreeze::SandboxFreeze(const Launched& launched) {
  if (!launched.cgroup.empty()) {
    if (write_text(launched.cgroup + "/cgroup.freeze", "1")) {
      cgroup_ = launched.cgroup;
      // Freezing is asynchronous: the kernel says when every task has stopped.
      for (int i = 0; i < 200 && !cgroup_is_frozen(cgroup_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (!cgroup_is_frozen(cgroup_)) error_ = "the sandbox's cgroup did not report frozen within 1 s";
      return;
    }
  }
  // No cgroup: stop what runs in its PID namespace until a pass finds nothing new (a process
  // forked between two passes is caught by the next; a stopped one forks no more).
  // Signals go through pidfds, checked to be in the namespace after opening: a pid that ended
  // and was reused by a process outside the sandbox is never stopped or continued.
  const pid_t first = launched.inner_pidfd >= 0 ? pid_of_pidfd(launched.inner_pidfd) : -1;
  const std::string ns = first > 0 ? pid_namespace(first) : "";
  for (int pass = 0; pass < 16 && !ns.empty(); ++pass) {
    bool found_new = false;
    for (pid_t pid : namespace_processes(launched.inner_pidfd)) {
      if (std::find(stopped_.begin(), stopped_.end(), pid) != stopped_.end()) continue;
      int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
      if (fd < 0) continue;
      if (pid_namespace(pid) == ns && ::syscall(SYS_pidfd_send_signal, fd, SIGSTOP, nullptr, 0) == 0) {
        stopped_.push_back(pid);
        pidfds_.push_back(fd);
        found_new = true;
      } else {
        ::close(fd);
      }
    }
    if (!found_new) break;
    if (pass == 15) error_ = "processes kept appearing in the sandbox while it was being stopped";
  }
  if (stopped_.empty() && error_.empty()) error_ = "no process of the sandbox could be found to stop";
}

SandboxFreeze::~SandboxFreeze() {
  if (!cgroup_.empty()) write_text(cgroup_ + "/cgroup.freeze", "0");
  for (int fd : pidfds_) {
    ::syscall(SYS_pidfd_send_signal, fd, SIGCONT, nullptr, 0);
    ::close(fd);
  }
}

}  // namespace kbv::isolation
