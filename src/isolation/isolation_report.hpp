#pragma once
// What isolation was actually in force for one sandbox; copied into the verdict (`isolation`),
// so a machine that lacks a mechanism says so instead of staying silent.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbv::isolation {

struct IsolationReport {
  bool user_namespace = false;
  std::int64_t outer_uid = -1;      // the uid the sandbox's processes have outside
  bool pid_namespace = false;       // every process it starts dies with it
  bool network_namespace = false;   // no interfaces: no connection anywhere
  bool mount_namespace = false;     // own /proc and /dev/shm
  bool readonly_root = false;       // every mount read-only but the writable folders
  bool capabilities_dropped = false;
  int landlock_abi = 0;             // 0: Landlock not in force (writes not confined)
  bool tracing_denied = false;      // seccomp: no ptrace or process_vm_* between its processes
  std::string cgroup;               // path of its cgroup v2, empty when none
  std::int64_t memory_limit_bytes = 0;
  std::string memory_limit_by;      // "cgroup", "rlimit_data" or "" (none)
  std::int64_t process_limit = 0;
  std::string process_limit_by;     // "cgroup", "rlimit_nproc" or ""
  std::int64_t file_size_limit_bytes = 0;
  std::vector<std::string> writable;  // where it may write
  std::string environment = "allow-list";
  std::vector<std::string> warnings;  // one line per mechanism that could not be used, and why
};

void to_json(nlohmann::json& j, const IsolationReport& r);

}  // namespace kbv::isolation
