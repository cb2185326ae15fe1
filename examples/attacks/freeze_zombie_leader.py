"""Attack: escape the freeze with helper processes whose main thread has exited (94_MSELoss).

Problem: examples/problems/level1/94_MSELoss.py

The judge freezes the sandbox while it times the baselines; without a cgroup v2 freezer it sends
SIGSTOP to every process of the sandbox's PID namespace until all are stopped. At import this
candidate forks three helpers; each starts a burner thread and then ends its own main thread with
the raw exit system call. /proc/<pid>/stat then shows the process 'Z' while its burner thread runs
on. The burners spin exactly while the candidate's own process is stopped, i.e. while the judge
times the baselines, and rest otherwise; forward is Model's own reduction and prints how many
chunks the burners ran while the candidate was stopped.
Verdict kbv gave (red team, 2026-12-02, CPU): correct, `sandbox_frozen` true, 510-837 chunks burned
while "frozen", the baseline's median 354 ms against ~77 ms. WORKED.

Fixed: the freeze looks at every thread of a process (/proc/<pid>/task/*/stat), not the main
thread's state alone, and signals any process with a thread not stopped. kbv must conclude:
correct, no speedup from a slowed baseline; Isolation.AFrozenSandboxStopsThreadsWhoseMainThreadExited.
"""
import ctypes, mmap, os, struct, sys, threading, time
_cnt = mmap.mmap(-1, 8)
import torch
import torch.nn as nn

_libc = ctypes.CDLL(None)

def _runner_stopped(parent):
    try:
        with open(f"/proc/{parent}/stat") as f:
            s = f.read()
        return s[s.rfind(")") + 2] in "Tt"
    except OSError:
        os._exit(0)

def _burn(parent):
    x = 0
    while True:
        if _runner_stopped(parent):
            for _ in range(20000):
                x += 1
            _cnt[0:8] = struct.pack('q', struct.unpack('q', _cnt[0:8])[0] + 1)
        else:
            time.sleep(0.0005)

_parent = os.getpid()
for _ in range(3):
    if os.fork() == 0:
        try:
            threading.Thread(target=_burn, args=(_parent,)).start()
            time.sleep(0.05)
            _libc.syscall(60, 0)   # SYS_exit: only this thread; leader -> 'Z', burner thread lives on
        finally:
            os._exit(0)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, predictions, targets):
        print('burn-chunks-while-runner-stopped', struct.unpack('q', _cnt[0:8])[0], file=sys.stderr, flush=True)
        return torch.mean((predictions - targets) ** 2)
