"""Shared helpers of the attack candidates (not a candidate itself: no ModelNew).

Every attack here is written as a candidate that has read kbv's source and wants a good verdict
for a wrong kernel: it returns zeros (wrong for ReLU on any input with a positive value) and
tries, through one route, to make kbv say `correct` anyway, or to hurt other candidates. Each
prints `ATTACK <name>: <what happened>` lines, which the tests read from the verdict's
output_tail.
"""
import os


def report(name, text):
    print(f"ATTACK {name}: {text}", flush=True)


def writable_fds():
    """Every open fd of this process above stderr, with what it points to."""
    out = []
    try:
        for entry in os.listdir("/proc/self/fd"):
            fd = int(entry)
            if fd <= 2:
                continue
            try:
                out.append((fd, os.readlink(f"/proc/self/fd/{fd}")))
            except OSError:
                pass
    except OSError:
        pass
    return out
