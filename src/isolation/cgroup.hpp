#pragma once
// A cgroup v2 per sandbox, when the machine has the unified hierarchy and we may write it (as
// root): hard memory and process limits for everything the sandbox starts, and cgroup.kill to
// end all of it at once.
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace kbv::isolation {

struct Cgroup {
  std::string path;   // empty: none was made (error says why)
  std::string error;
};

// Creates <root>/kbv/<name> with memory.max and pids.max (0 = no limit).
Cgroup cgroup_create(const std::string& name, std::int64_t memory_max, std::int64_t pids_max);
// Moves `pid` into it. False when the kernel refused.
bool cgroup_add(const Cgroup& cgroup, pid_t pid);
// Asks the kernel to freeze (or thaw) every process in the cgroup at `path` (cgroup.freeze).
// False when the file cannot be written (no cgroup v2 freezer).
bool cgroup_request_freeze(const std::string& path, bool frozen);
// Freezing is asynchronous: waits up to ~1 s for cgroup.events to say it is done.
bool cgroup_wait_frozen(const std::string& path);
// Kills every process in it and removes it (waits up to ~1 s for the processes to go). False:
// it is still there (a process in it has not gone yet).
bool cgroup_remove(const Cgroup& cgroup);

}  // namespace kbv::isolation
