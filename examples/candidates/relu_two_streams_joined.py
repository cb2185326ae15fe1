"""Honest: splits a ReLU over two private streams, each waiting for the caller's stream first and
both joined back before forward returns (events waited on the current stream, record_stream on
what crosses streams). Must be correct with honest figures in every protocol, no flag.

Problem: examples/problems/level1/19_ReLU.py
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.streams = [torch.cuda.Stream(), torch.cuda.Stream()] if torch.cuda.is_available() else []

    def forward(self, x):
        if not self.streams or not x.is_cuda:
            return torch.relu(x)
        current = torch.cuda.current_stream()
        y = torch.empty_like(x)
        halves_in = x.chunk(2, dim=0)
        halves_out = y.chunk(2, dim=0)
        for s, xin, yout in zip(self.streams, halves_in, halves_out):
            s.wait_stream(current)  # the input (and y's allocation) are the caller's
            with torch.cuda.stream(s):
                torch.clamp(xin, min=0, out=yout)
        for s in self.streams:
            current.wait_stream(s)  # joined: the caller reads the finished output
        x.record_stream(self.streams[0])
        x.record_stream(self.streams[1])
        y.record_stream(self.streams[0])
        y.record_stream(self.streams[1])
        return y
