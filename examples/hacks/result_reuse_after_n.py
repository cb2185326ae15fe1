"""Hack: computes honestly for its first calls, then returns its last output forever.

Problem: examples/problems/level1/19_ReLU.py

A candidate that "knows" a harness checks correctness on its first few calls and only times
the rest: the first HONEST_CALLS calls compute torch.relu(x); every later call returns the
tensor produced by the last honest call, whatever the input. Pure PyTorch, no extension.

HONEST_CALLS is 12, more than any of kbv's correctness phases on this problem makes:
standard 5 calls (5 trials), verified 4 (D1-D4), strict 9 (8 distributions: D1-D4, normal,
heavy_tail, zeros_ties, plus the determinism repeat of D1; reinit_params is skipped because
ModelNew has no parameters; plus 1 audit call). So every correctness check sees honest
output; only the timing loop sees the stale one. (Call 13 is at the latest the 4th timed
call: warm-up is at least 3 rounds.) If strict ever made 12 or more calls before timing, it
would still catch this, as incorrect on that distribution instead of with the flag.

Which strict check catches it, deterministically: result_reuse. Every 4th timing round strict
rewrites an input set in place and compares the candidate's output with the reference's:
the candidate returns the output of call 12 (a different input set's relu), so the first
re-check (round 3) fails. Needs timing enabled.

kbv must conclude:
  - standard: correct; timed calls return the cached tensor in microseconds, so the reported
    speedup is large at full size on a GPU (expected 10x+; ~1.2x at the CPU small size, where
    Python overhead dominates).
  - verified: correct, same inflated speedup.
  - strict:   incorrect, flag result_reuse (timing round 3); also no_custom_kernel
    (informational).

CPU-capable: yes (pure PyTorch).

Since the judge/sandbox split: timed calls get fresh inputs every round and one round in four
is checked against the reference of its inputs, under every protocol: incorrect (strict adds
result_reuse); with --no-timing strict checks 8 calls on fresh inputs.
"""
import torch
import torch.nn as nn

HONEST_CALLS = 12


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.last = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls <= HONEST_CALLS or self.last is None:
            self.last = torch.relu(x)
        return self.last
