"""Shared helpers of the attack candidates (not a candidate itself: no ModelNew).

Attacks import it as `_attack_common`; kbv's sandbox sees the candidate file alone, so the
tests and scripts/gpu_check.sh run them bundled with it (bundle.py).

Every attack here is written as a candidate that has read kbv's source and wants a good verdict
for a wrong kernel: it returns zeros (wrong for ReLU on any input with a positive value) and
tries, through one route, to make kbv say `correct` anyway, or to hurt other candidates. Each
prints `ATTACK <name>: <what happened>` lines, which the tests read from the verdict's
output_tail.
"""
import os
import socket
import struct


# What a harness tells the attacks (bundle.py --set): e.g. the port of its own listener.
SETTINGS = {}


def setting(name):
    """A harness's setting; KeyError when it gave none."""
    return SETTINGS[name]


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


# The runner's channel (fd 3): one SOCK_SEQPACKET message a datagram, fds as SCM_RIGHTS.
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


def take_over_channel(relay):
    """Puts a forked relay between the judge and this runner: relay(judge, runner) gets the judge's
    end of the channel and the runner's new one, and runs in the child until it returns."""
    real = os.dup(3)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        b.close()
        judge = socket.socket(fileno=real)
        try:
            relay(judge, a)
        finally:
            os._exit(0)
    os.close(real)
    a.close()
    os.dup2(b.fileno(), 3)  # the runner's Channel keeps fd 3: now the relay's end
    b.close()


def rewrite_answers(forge):
    """Puts a relay between the judge and this runner that passes every message on, the runner's
    answers through forge(message dict) -> message dict first."""
    import json
    import select

    def relay(judge, runner):
        while True:
            ready, _, _ = select.select([judge, runner], [], [])
            for source, sink, rewrite in ((judge, runner, False), (runner, judge, True)):
                if source not in ready:
                    continue
                data, fds = recv(source)
                if not data:
                    os._exit(0)
                send(sink, json.dumps(forge(json.loads(data))).encode() if rewrite else data, fds)
                for fd in fds:
                    os.close(fd)

    take_over_channel(relay)
