#pragma once
// CPU timing is only as fair as the host's cores are free. Under load the baselines, which run in
// the judge (busy between samples: draws, comparisons), wait for a core while the candidate's
// sandbox, asleep between its calls, is scheduled ahead of the load: an identical computation read
// 4-7x FASTER beside one busy loop per core (bench/RESULTS.md, issue 35). The kernel counts, per
// thread, the time it was runnable but not running (/proc/self/task/*/schedstat, second field):
// the judge reads its own threads' count around every baseline sample and calls the host contended
// when that waiting is a noticeable share of the samples' time (docs/timing.md).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kbv::judge {

// Per thread of this process alive now (thread id -> nanoseconds it has spent waiting on a run
// queue); nullopt where the kernel does not keep the count (no CONFIG_SCHED_INFO).
using ThreadWaits = std::map<long, std::int64_t>;
std::optional<ThreadWaits> thread_waits(const std::string& task_dir = "/proc/self/task");

// The wait between two readings, thread by thread: a thread that began between them counts all of
// its wait, one that ended counts nothing (its total must not be subtracted).
std::int64_t waited_between(const ThreadWaits& before, const ThreadWaits& after);

// What share of waiting calls the host contended: core/speed_bound.hpp (the report reads it too).

}  // namespace kbv::judge
