"""Attack: the relay of mitm_prequeued_replies.py, but answering each timed call only once it
arrives (nothing queued ahead), i.e. what still works against the working tree's new
RunnerClient::send() check (channel_.pending(): a message waiting before a call is refused).
The relay answers `call` at once with called+completed describing the judge's own input slot
(identity; ReLU on get_inputs()' non-negative draws) and never wakes the runner: no Python
forward(), no export copy, just a relay round trip against the twin's.
Verdict kbv gave: CORRECT (strict), 4.26x and 1.95x FASTER in two runs (identity through the
runner, identity_in_timing.py: 0.59x; honest ReLU: 0.43-0.51x). WORKED: the pending() check
stops pre-queuing, not the relay.

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: the same as identity_in_timing.py, plus every call carries a random token its answers
must echo, and a candidate answering faster than kbv's own null call is a protocol_violation.
kbv must conclude: not correct under strict.
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
                if calls > HONEST_CALLS and view is not None:
                    prequeue(judge, msg["seq"], view)  # answered now, never ahead of the call
                    for fd in fds:
                        os.close(fd)
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


take_over_channel(relay)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
