"""Attack: kill the judge through the process group the sandbox still shares with it (19_ReLU).

The launcher forks the sandbox without setsid()/setpgid(): it stays in the judge's process group
(kbv puts the judge in a group of its own, subprocess.cpp). kill(0, sig) signals the caller's
process group by its struct pid, which does not depend on the PID namespace (it needs no pid
the sandbox can see), and the permission check is a uid match: the sandbox's uid is global
uid 0 here (uid_map "0 0 1"), so is the judge's. (examples/attacks/kill_parent.py tries the
parent pid, /proc pids and kill(-1): all stay inside the PID namespace; kill(0) does not.)
So at its first forward() the candidate sends SIGKILL to its group: the judge, the twin and
itself die; kbv records internal_error ("kbv's own failure"), counted nowhere, re-run forever.
Returns zeros (wrong) if it were still alive.
Verdict kbv gave: internal_error "kbv-judge killed by signal 9 (SIGKILL) during stage
'correctness' without a verdict". WORKED.
(The working tree's launcher now setsid()s the sandbox: fixed there, not in the binary.)

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: the sandbox's first process starts a session of its own, so kill(0, ...) reaches only
its own processes. kbv must conclude: the candidate's own outcome (crashed), never internal_error.
"""
import os
import signal

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *init_inputs):  # any problem's init inputs
        super().__init__()

    def forward(self, x):
        print("ATTACK kill_process_group: kill(0, SIGKILL)", flush=True)
        os.kill(0, signal.SIGKILL)
        return torch.zeros_like(x)
