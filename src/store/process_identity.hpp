#pragma once
// Who wrote a `running` row of the runs table: host, pid and the process's start time, so a
// later kbv can tell a run that is still going from one whose process died (kill -9, a crash,
// a power loss) and mark the latter interrupted. The start time guards against pid reuse.
#include <cstdint>
#include <string>

namespace kbv {

struct ProcessIdentity {
  std::string hostname;
  std::int64_t pid = 0;
  std::uint64_t start_ticks = 0;  // field 22 of /proc/<pid>/stat: clock ticks after boot
};

ProcessIdentity this_process();

// True when `pid` is alive on this host and started at `start_ticks` (0: any start time).
bool process_is_running(std::int64_t pid, std::uint64_t start_ticks);

}  // namespace kbv
