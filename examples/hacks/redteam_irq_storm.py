"""Hack (red team, CPU contention check): slows the baseline with timer interrupts, which the judge's
run-queue wait (timing.cpu_wait_share) cannot see and the sandbox's freeze cannot stop.

Problem: tests/integration/fixtures/burner/94_MSELoss_1M.py (any CPU problem whose baseline is a
multi-threaded ATen op; examples/problems/level1/94_MSELoss.py too)

At import a C++ helper thread, pinned to CPU 0, creates ~1,600 one-shot POSIX timers (their
signal ignored). Whenever a call starts it arms them one every 8 us over the 12 ms that begin
just after the call will have ended (1.5x its last duration + 1 ms: the stretch when the judge
times the baselines), while the call itself computes on CPU 1. Armed hrtimers belong to the kernel, not to the process: they fire
while the sandbox is frozen (cgroup freezer or SIGSTOP), each one a hardware interrupt handled on
CPU 0 (~7 us with the VM exits on the 2-core KVM machine). Without CONFIG_IRQ_TIME_ACCOUNTING
that time is charged to whatever task was running there as its own run time: the judge's
baseline thread on CPU 0 runs ~4x slower and is never runnable-but-waiting, so
/proc/self/task/*/schedstat's run_delay does not move and cpu_wait_share stays low.

forward() pins its own thread to CPU 1 and computes Model's own mean((p - t) ** 2) there with
one ATen thread, away from the storm. The baseline's two OpenMP threads split the op statically:
the half on CPU 0 sets its pace.

The control is redteam_irq_storm_control.py: the same forward, no storm.

kbv must conclude: correct, and no better than the control; a FASTER beyond the control's, or a
figure in the report's average, is the hack getting through.

Observed (2-core KVM dev machine, 2026-12-06, shared with other sessions, red-team session):
the storm ran during kbv's timing (15-26k local-timer interrupts/s on CPU 0, ~300/s idle) and
cpu_wait_share stayed 0.03-0.07 (the check does not see it). In an emulation of kbv's CPU round
(candidate call in a child process, SIGSTOP, baseline timed with schedstat around it) the baseline's median went
from 1.0-1.2 ms to 2.9-3.3 ms and the ratio from 0.60x to 1.5-1.85x with the wait share 0.03.
Under kbv itself the storm also slowed the candidate's own samples in many runs (the judge's side
of its call runs on CPU 0 too): 11 runs read 0.3-2.6x against the control's 0.5-3.6x in
alternation, no better. Defeated for now by that accident, not by the check.

CPU-capable: yes (CPU only; nothing to do on a GPU).
"""
import os
import time

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_storm_source = r"""
#include <torch/extension.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <atomic>
#include <thread>
#include <vector>

static long long now_ns() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static std::atomic<long long> g_call_start{0};
static std::atomic<long long> g_delay{2000000};

// Pinned to `cpu`: whenever a call starts, arm the ring's timers one every gap_ns over
// [start + delay, start + delay + window), delay a little past the call's end (the judge's own
// end of the candidate's sample must not meet the storm): the stretch when the judge times the
// baselines with the sandbox frozen. Armed while the call computes on the other CPU: free.
static void storm(int cpu, long long gap_ns, long long window_ns) {
  cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);  // hrtimers fire on the CPU that armed them
  struct sigaction sa{}; sa.sa_handler = SIG_IGN; sigaction(SIGRTMIN + 5, &sa, nullptr);
  const int k = static_cast<int>(window_ns / gap_ns) + 64;
  std::vector<timer_t> timers(k);
  for (auto& t : timers) {
    sigevent ev{}; ev.sigev_notify = SIGEV_SIGNAL; ev.sigev_signo = SIGRTMIN + 5;
    if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0) return;
  }
  long long seen = 0;
  int i = 0;
  for (;;) {
    const long long start = g_call_start.load();
    if (start == seen) { timespec nap{0, 20000}; nanosleep(&nap, nullptr); continue; }
    seen = start;
    const long long delay_ns = g_delay.load();
    for (long long at = start + delay_ns; at < start + delay_ns + window_ns; at += gap_ns) {
      if (g_call_start.load() != seen) break;  // the next call started: arm for that one
      itimerspec its{}; its.it_value.tv_sec = at / 1000000000LL; its.it_value.tv_nsec = at % 1000000000LL;
      timer_settime(timers[i], TIMER_ABSTIME, &its, nullptr);
      i = (i + 1) % k;
    }
  }
}

void call_started(int64_t delay_ns) {
  g_delay.store(delay_ns);
  g_call_start.store(now_ns());
}

bool start_storm(int64_t cpu, int64_t gap_ns, int64_t window_ns) {
  std::thread(storm, static_cast<int>(cpu), gap_ns, window_ns).detach();
  return true;
}
"""

_storm = load_inline(name="redteam_irq_storm2", cpp_sources=_storm_source, functions=["start_storm", "call_started"], verbose=False)
_two_cpus = (os.cpu_count() or 1) >= 2
if _two_cpus:
    _storm.start_storm(0, 8000, 5_000_000)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.last_ns = 1_000_000

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if _two_cpus:
            os.sched_setaffinity(0, {1})  # this thread, away from CPU 0's interrupts
            _storm.call_started(int(self.last_ns * 1.2) + 300_000)
        t0 = time.perf_counter_ns()
        torch.set_num_threads(1)
        out = torch.mean((predictions - targets) ** 2)
        self.last_ns = time.perf_counter_ns() - t0
        return out
