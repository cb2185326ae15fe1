"""Attack: a hoard held by a child the sandbox never reaps (GPU, a problem whose tensors are a large
part of the device: tests/gpu/test_judge_evidence_gpu.cpp makes one of an eighth of the device).

hoard_under_share.py with the hoard in another process. On its first call the candidate starts a
helper (a fresh interpreter: CUDA cannot be used in a fork of a process that initialised it) that
creates a context through the driver API, allocates the hoard, forks a holder that inherits its
/dev/nvidia* descriptors and sleeps, and exits. The sandbox keeps the Popen object and never waits
for it: the helper is a zombie, out of its cgroup's list of processes, not running, and the driver
goes on listing its pid with the hoard's bytes while the holder keeps the context. The judge counted
no process that does not run as anyone's (isolation::process_running, against
examples/hacks/redteam_zombie_tenant.py's pretended tenant), so the hoard was nobody's: the share
and hoard rules saw a small sandbox, and the judge's out-of-memory was kbv's `internal_error`.

kbv must conclude: the zombie's memory is its parent's, the sandbox's (`runtime_error`, flag
`judge_starved`), or `incorrect` where the judge did not run short; never `internal_error` or
`problem_error`.

CPU-capable: no (CUDA only; on the CPU it returns zeros and is incorrect).
"""
import os
import subprocess
import sys

import torch
import torch.nn as nn

_MARGIN = 256 << 20

_HELPER = r"""
import ctypes, os, sys, time
cuda = ctypes.CDLL("libcuda.so.1")
ctx, ptr = ctypes.c_void_p(), ctypes.c_uint64()
assert cuda.cuInit(0) == 0
assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0) == 0
cuda.cuMemAlloc_v2(ctypes.byref(ptr), int(sys.argv[1]))
print("held", flush=True)
if os.fork() == 0:      # the holder: keeps the device files (and so the context) open
    while True:
        time.sleep(3600)
os._exit(0)             # the helper ends; its parent never reaps it
"""

# The sandbox embeds CPython: sys.executable may be kbv-sandbox itself.
_python = sys.executable if "python" in os.path.basename(sys.executable or "") else os.path.join(sys.base_exec_prefix, "bin", "python3")
_zombie = None


def _start_hoard(device, out_bytes):
    global _zombie
    free, total = torch.cuda.mem_get_info(device)
    own = torch.cuda.memory_reserved(device)
    others = total - free - own
    size = min(free - _MARGIN - out_bytes - (600 << 20), int(0.9 * others) - own - out_bytes)  # 600 MiB: the helper's context
    if size <= (64 << 20):
        return
    try:
        _zombie = subprocess.Popen([_python, "-c", _HELPER, str(size)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL)
        _zombie.stdout.readline()  # the hoard is held
    except OSError:
        _zombie = None


class ModelNew(nn.Module):
    def forward(self, x):
        if x.is_cuda and _zombie is None:
            _start_hoard(x.device, x.numel() * x.element_size())
        return torch.zeros_like(x)
