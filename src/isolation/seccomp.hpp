// A seccomp filter for the sandbox: no process in it may trace or read/write another's memory,
// or make or enter namespaces.
//
// A candidate process that ptrace-seizes the sandbox's first process with PTRACE_O_TRACEEXIT
// holds it, once SIGKILLed, at the start of its exit: its PID namespace is never torn down and
// everything in it outlives the evaluation. Denying ptrace (and process_vm_readv/writev) closes
// that; nothing a kernel or PyTorch needs uses them. Other system-call ABIs (i386 and x32 on
// x86-64) are denied outright, so the filter cannot be stepped around.
//
// Nor may a process in it make new namespaces or enter others (unshare, setns, clone with a
// CLONE_NEW* flag; clone3, whose flags a filter cannot read, is "not implemented" and glibc
// falls back to clone): a process in a PID namespace nested in the sandbox's is not one of the
// sandbox's processes to the freeze (isolation/freeze.hpp) or to the judge's per-process view of
// the GPU, so it could run while the judge times the baselines (red team, 2026-12-02).
#pragma once

namespace kbv::isolation {

// Installs the filter on the calling thread (inherited across fork and exec, never removable).
// Sets no_new_privs. Async-signal-safe: called between fork and exec. Returns 0 or an errno.
int deny_tracing();

}  // namespace kbv::isolation
