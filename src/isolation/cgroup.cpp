#include "isolation/cgroup.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace kbv::isolation {
namespace {

constexpr const char* kRoot = "/sys/fs/cgroup";
constexpr long kCgroup2Magic = 0x63677270;

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) return false;
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Cgroup cgroup_create(const std::string& name, std::int64_t memory_max, std::int64_t pids_max) {
  Cgroup cg;
  struct statfs fs {};
  if (::statfs(kRoot, &fs) != 0 || fs.f_type != kCgroup2Magic) {
    cg.error = "no cgroup v2 hierarchy at /sys/fs/cgroup";
    return cg;
  }
  if (::geteuid() != 0) {
    cg.error = "cgroups need root (kbv runs as uid " + std::to_string(::geteuid()) + ")";
    return cg;
  }
  std::string parent = std::string(kRoot) + "/kbv";
  ::mkdir(parent.c_str(), 0755);
  // Controllers must be enabled at each level above the cgroup that uses them.
  write_text(std::string(kRoot) + "/cgroup.subtree_control", "+memory +pids");
  write_text(parent + "/cgroup.subtree_control", "+memory +pids");
  std::string path = parent + "/" + name;
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    cg.error = "cannot create " + path;
    return cg;
  }
  if (memory_max > 0 && !write_text(path + "/memory.max", std::to_string(memory_max))) {
    cg.error = "cannot set memory.max (memory controller not available)";
    ::rmdir(path.c_str());
    return cg;
  }
  write_text(path + "/memory.swap.max", "0");
  if (pids_max > 0 && !write_text(path + "/pids.max", std::to_string(pids_max))) {
    cg.error = "cannot set pids.max (pids controller not available)";
    ::rmdir(path.c_str());
    return cg;
  }
  cg.path = path;
  return cg;
}

bool cgroup_add(const Cgroup& cgroup, pid_t pid) {
  return !cgroup.path.empty() && write_text(cgroup.path + "/cgroup.procs", std::to_string(pid));
}

bool cgroup_request_freeze(const std::string& path, bool frozen) {
  return write_text(path + "/cgroup.freeze", frozen ? "1" : "0");
}

bool cgroup_wait_frozen(const std::string& path) {
  auto is_frozen = [&] {
    std::istringstream in(read_text(path + "/cgroup.events"));
    for (std::string key, value; in >> key >> value;)
      if (key == "frozen") return value == "1";
    return false;
  };
  // The judge freezes a sandbox around every round it times without it: look often at first
  // (an idle sandbox freezes within microseconds), then back off, for up to 1 s.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  auto pause = std::chrono::microseconds(20);
  while (std::chrono::steady_clock::now() < until) {
    if (is_frozen()) return true;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
  return is_frozen();
}

bool cgroup_remove(const Cgroup& cgroup) {
  if (cgroup.path.empty()) return true;
  if (!write_text(cgroup.path + "/cgroup.kill", "1")) {
    std::istringstream procs(read_text(cgroup.path + "/cgroup.procs"));
    for (pid_t p; procs >> p;) ::kill(p, SIGKILL);
  }
  for (int i = 0; i < 100; ++i) {
    if (::rmdir(cgroup.path.c_str()) == 0 || errno == ENOENT) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace kbv::isolation
