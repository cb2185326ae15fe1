"""Attack (GPU only): processes whose exit outlasts the sandbox's end, into the next candidate's
timing (examples/problems/level1/19_ReLU.py). Found by the session-16 red team, from the source.

At import it starts 128 interpreters (exec'd, not forked), each with a CUDA context, 256 MiB of
device memory and 128 MiB of pinned host memory, one also with 24 GiB of touched host memory, so
that tearing them down takes a while. The sandbox's end kills its first process and waits at most
10 s for its PID namespace to empty. Were the device's next turn handed on regardless, the next
evaluation's timing would see these processes on the device (and strict's device_busy check,
which catches examples/hacks/persistent_kernel.py, would become a warning).

kbv must conclude: this candidate correct (its forward is a plain ReLU); the next evaluation on
the device unharmed. The judge says `released` only when the sandbox's end saw every process of
it gone (isolation::Launched::ended: its first process exited and its cgroup was removed);
otherwise the next turn waits for the judge's exit, as before. Not yet run on the GPU.
"""
import os
import subprocess
import sys

import torch
import torch.nn as nn

_CHILD = r"""
import ctypes, sys, time
cu = ctypes.CDLL("libcuda.so.1")
cu.cuInit(0)
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); cu.cuCtxSetCurrent(ctx)
d = ctypes.c_uint64(); cu.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(256 << 20))
h = ctypes.c_void_p(); cu.cuMemHostAlloc(ctypes.byref(h), ctypes.c_size_t(128 << 20), 0)
if len(sys.argv) > 1:
    big = bytearray(int(sys.argv[1]))
    for i in range(0, len(big), 4096):
        big[i] = 1
time.sleep(10 ** 9)
"""

_python = os.path.join(sys.base_exec_prefix, "bin", "python3")
_children = [subprocess.Popen([_python, "-c", _CHILD] + (["%d" % (24 << 30)] if k == 0 else []),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for k in range(128)]


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
