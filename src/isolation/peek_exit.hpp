#pragma once
// Whether a child has exited, asked from any thread without reaping it: the thread that waits
// for it (and frees its pid) keeps its status. The judge's watchdog asks this of the sandbox's
// launcher while the judge's main thread may be the one that reaps it.
#include <optional>

namespace kbv::isolation {

// A pidfd for `pid` (pidfd_open), or -1. It names that process for its life, never a later one
// with the same pid.
int open_pidfd(int pid);

// The wait status of the child `pidfd` names once it has exited; nullopt while it runs, once it
// has been reaped, or for a bad fd.
std::optional<int> peek_exit_status(int pidfd);

}  // namespace kbv::isolation
