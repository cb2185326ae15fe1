"""Attack: answer a request with an answer made for another one (19_ReLU, CPU).

The relay of relay_forges_answers.py, but what it forges is an answer the judge did not ask for:
it passes `construct` on to the runner, swallows the runner's `constructed`, and sends the judge a
`constructed` of its own that carries the token of the request before (the job, `hello`), which
it saw go by in the runner's `imported`. Before issue 34 only call answers carried tokens: any `constructed`, `bound`,
`weights_loaded` or `memory` that arrived when one was expected was taken. The kernel returns
zeros.

kbv must conclude: `protocol_violation` (an answer that does not carry its request's token is one
the judge did not ask for), never `correct`.
"""
import json
import os
import select
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import recv, send, take_over_channel  # noqa: E402


def relay(judge, runner, hello_token):
    swallow = False
    last_token = hello_token
    while True:
        r, _, _ = select.select([judge, runner], [], [])
        if judge in r:
            data, fds = recv(judge)
            if not data:
                os._exit(0)
            msg = json.loads(data)
            if msg.get("type") == "construct":
                send(judge, json.dumps({"type": "constructed", "state": [], "token": last_token}).encode())
                swallow = True
            send(runner, data, fds)
            for fd in fds:
                os.close(fd)
        if runner in r:
            data, fds = recv(runner)
            if not data:
                os._exit(0)
            msg = json.loads(data)
            last_token = msg.get("token", last_token)  # `imported` carries the job's token
            if swallow and msg.get("type") == "constructed":
                swallow = False
                continue
            send(judge, data, fds)
            for fd in fds:
                os.close(fd)


take_over_channel(lambda judge, runner: relay(judge, runner, ""))


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
