#pragma once
// Stops every process of a running sandbox for a while, and lets them go on afterwards: the
// judge's own work (compiling the torch_compile baseline) then runs without the candidate's
// processes competing for the CPUs. With the sandbox's cgroup, its cgroup.freeze; without one,
// SIGSTOP to every process of its PID namespace (found through /proc, in passes until all are
// stopped at once: a stopped process can neither start nor continue another), SIGCONT to the
// same ones afterwards. A sandbox with neither a cgroup nor a PID namespace of its own is not
// frozen (frozen() false): its "namespace" would be the whole machine.
#include <sys/types.h>

#include <string>
#include <vector>

#include "isolation/launch.hpp"

namespace kbv::isolation {

class SandboxFreeze {
 public:
  explicit SandboxFreeze(const Launched& launched);  // freezes
  ~SandboxFreeze();                                  // thaws
  SandboxFreeze(const SandboxFreeze&) = delete;
  SandboxFreeze& operator=(const SandboxFreeze&) = delete;

  bool frozen() const { return error_.empty(); }
  const std::string& error() const { return error_; }  // why not (a warning for the verdict)
  std::size_t stopped() const { return stopped_.size(); }  // processes stopped by signal (no cgroup)

 private:
  std::string cgroup_;
  std::vector<pid_t> stopped_;
  std::vector<int> pidfds_;  // of stopped_, for SIGCONT
  std::string error_;
};

// The host pids of the processes in the PID namespace whose first process is `inner_pidfd`.
std::vector<pid_t> namespace_processes(int inner_pidfd);
// Every process of a running sandbox (host pids): its cgroup's members, else its PID namespace's,
// else its first process alone.
std::vector<pid_t> sandbox_processes(const Launched& launched);
// Whether `pid` is a process that can still run: one of its threads has not ended. False for a
// pid that ended and for a zombie (ended, not yet reaped): kill(pid, 0) succeeds on a zombie, a
// cgroup's cgroup.procs no longer lists it, and the driver goes on listing its CUDA context
// while another process holds the device files it opened, so a sandbox could otherwise pass
// its own dead child off as another tenant of the device. True for a pid that exists but whose
// /proc entry cannot be read (a tenant as far as anyone can tell).
bool process_running(pid_t pid);
// The parent of `pid` as /proc shows it (a zombie's too, until it is reaped); 0 when unknown.
pid_t parent_process(pid_t pid);
// Whether SandboxFreeze can stop this sandbox at all (a cgroup, or a PID namespace of its own).
bool can_freeze(const Launched& launched);

}  // namespace kbv::isolation
