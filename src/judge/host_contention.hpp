#pragma once
// CPU timing is only as fair as the host's cores are free. Under load the baselines, which run in
// the judge (busy between samples: draws, comparisons), wait for a core while the candidate's
// sandbox, asleep between its calls, is scheduled ahead of the load: an identical computation read
// 4-7x FASTER beside one busy loop per core (bench/RESULTS.md, issue 35). The kernel counts, per
// thread, the time it was runnable but not running (/proc/self/task/*/schedstat, second field):
// the judge reads its own threads' count around every baseline sample and calls the host contended
// when that waiting is a noticeable share of the samples' time (docs/timing.md).
#include <cstdint>
#include <optional>
#include <string>

namespace kbv::judge {

// Nanoseconds this process's threads have spent waiting on a run queue, summed over the threads
// alive now; nullopt where the kernel does not keep the count (no CONFIG_SCHED_INFO).
std::optional<std::int64_t> runqueue_wait_ns(const std::string& task_dir = "/proc/self/task");
// What share of waiting calls the host contended: core/speed_bound.hpp (the report reads it too).

}  // namespace kbv::judge
