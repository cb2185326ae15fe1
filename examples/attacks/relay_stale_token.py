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
import socket
import struct

import torch
import torch.nn as nn

MAXMSG = (1 << 20) + 1
FDSPACE = socket.CMSG_SPACE(16 * struct.calcsize("i"))


def recv(sock):
    data, anc, flags, _ = sock.recvmsg(MAXMSG, FDSPACE)
    fds = []
    for level, typ, blob in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds += list(struct.unpack(f"{len(blob) // 4}i", blob[: len(blob) // 4 * 4]))
    return data, fds


def send(sock, data, fds=()):
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))] if fds else []
    sock.sendmsg([data], anc)


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


def take_over_channel():
    real = os.dup(3)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        b.close()
        judge = socket.socket(fileno=real)
        try:
            relay(judge, a, "")
        finally:
            os._exit(0)
    os.close(real)
    a.close()
    os.dup2(b.fileno(), 3)  # the runner's Channel keeps fd 3: now the relay's end
    b.close()


take_over_channel()


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
