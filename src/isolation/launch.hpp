#pragma once
// Starts a program inside a sandbox (SandboxSpec) and reports what was in force. Linux only.
//
// The process tree: the launcher forks a helper that enters new user, mount, network, IPC and PID
// namespaces (each when the machine allows it), and the helper forks the sandbox itself as PID 1
// of the new PID namespace; when that process ends, the kernel kills every process it started,
// `setsid` survivors included. The helper waits for it and exits with its status (a signal N as
// 128 + N), so the launcher sees one child: `pid` below. Both die with the launcher
// (PR_SET_PDEATHSIG). Between fork and exec only system calls run, on data prepared before the
// fork, so launching from a multi-threaded process is safe.
#include <sys/types.h>

#include <optional>
#include <string>

#include "isolation/isolation_report.hpp"
#include "isolation/sandbox_spec.hpp"

namespace kbv::isolation {

struct Launched {
  pid_t pid = -1;          // the helper: wait for it, kill it (SIGKILL ends the whole sandbox)
  IsolationReport report;
  std::string cgroup;      // removed by end_sandbox()
  int inner_pidfd = -1;    // the sandbox's first process (PID 1 of its namespace), killed first
  bool reaped = false;     // the helper was waited for; `status` is its wait status
  int status = 0;
  // Set by end_sandbox(): true when it saw all of it gone (its first process exited, so its PID
  // namespace is empty, and its cgroup was removed, so no process of it is left; as far as it
  // has either), false when either was still there when it gave up.
  std::optional<bool> ended;
};

// The uid the sandbox will have outside its user namespace: spec.outer_uid when the launcher is
// root (what it must read is made reachable by its mount namespace, mounts.hpp), the launcher's
// own uid when it is not. Call it before preparing folders the sandbox must own.
std::uint32_t resolve_outer_uid(const SandboxSpec& spec);

// Throws std::runtime_error when the program cannot be started at all (exec failed, fork
// failed); a mechanism that is unavailable is a warning in the report, not an error.
Launched launch_sandbox(const SandboxSpec& spec);

// Ends the sandbox: kills the helper (its PID-namespace child follows), kills and removes the
// cgroup if there is one, and reaps the helper; Launched::ended says whether all of it went.
// Again on an ended sandbox: nothing. Returns the helper's wait status (or -1).
int end_sandbox(Launched& launched);

// Waits without blocking: the helper's wait status when it has exited, else -1.
int poll_sandbox(Launched& launched);

}  // namespace kbv::isolation
