"""Attack: relay the runner's channel and rewrite the answers that carry figures (19_ReLU, CPU).

At import the candidate forks a relay that takes over the runner's channel (as
relay_answers_on_arrival.py does: it keeps the real socket, puts one end of a fresh pair on fd 3).
Calls pass through untouched (the kernel is an honest torch.relu, no extension at all); the
relay rewrites what the judge used to take on the sandbox's word:
- `imported`: a made-up extension in `extensions`, so the verdict said `custom_kernel: true`
  (and under strict flagged no_custom_kernel at once: the two disagreed);
- `memory` (GPU): peak, device and resident bytes of 0;
- `constructed` / `weights_loaded`: the state list and the counts are passed on as they are (they
  only decide warnings and whether reinit_params runs: dodge_reinit_params.py).
The relay sees each request's token and copies it into its forged answer: tokens stop answers
written before the request, not a relay. So the figures must not come from these answers.
Red team, 2026-12-06: `custom_kernel: true` under standard, stored and exported.

kbv must conclude: `custom_kernel: false` (the judge finds no library of the candidate's build
loaded in its processes) with the flag `sandbox_account_differs`; on the GPU the memory figure is
the driver's per-process reading, not 0.
"""
import json
import os
import select
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import recv, send, take_over_channel  # noqa: E402

FAKE_EXTENSION = {"requested_name": "relu_ext", "unique_name": "relu_ext_forged", "build_dir": "/nonexistent",
                  "seconds": 1.0, "cuda": True}


def forge(msg):
    kind = msg.get("type")
    if kind == "imported":
        msg["extensions"] = list(msg.get("extensions", [])) + [FAKE_EXTENSION]
    elif kind == "memory" and msg.get("status") == "ok":
        msg["peak_allocated"] = msg["peak_device"] = msg["resident"] = 0
    return msg


def relay(judge, runner, pending_imported):
    while True:
        r, _, _ = select.select([judge, runner], [], [])
        if judge in r:
            data, fds = recv(judge)
            if not data:
                os._exit(0)
            send(runner, data, fds)
            for fd in fds:
                os.close(fd)
        if runner in r:
            data, fds = recv(runner)
            if not data:
                os._exit(0)
            send(judge, json.dumps(forge(json.loads(data))).encode(), fds)
            for fd in fds:
                os.close(fd)


take_over_channel(lambda judge, runner: relay(judge, runner, True))


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
