"""Attack: a kernel that does nothing once the timing starts, with no protocol tampering (19_ReLU).

forward() computes a real ReLU for the first 8 calls (strict's 7 distributions + the repeat;
standard's 5 trials are covered too) and afterwards returns its input tensor itself: zero work.
Why it passes:
  - the timed calls' checks (timing_phase.cpp, one round in four) compare with the reference
    of inputs drawn by get_inputs() only (draw_inputs(source_, rng())): torch.rand, >= 0, on
    which ReLU is the identity. None of the mixed-sign distributions of the correctness phase
    is used for timed calls, so any shortcut that is right on get_inputs()' distribution
    passes them (identity for ReLU, LeakyReLU, ELU, HardTanh, ReLU6, clamp...);
  - the output is a view of the input slot ("where": "input"): output_aliases_input and the
    other per-call strict checks (check_candidate_call) are applied to correctness calls only,
    never to checked timed calls.
Verdict kbv gave: strict, --size default (4096x16384), CPU: CORRECT, speedup 567,062,059x
(1 timed round, it was a checked one and passed; the candidate's sample fell below the hop
median and net() floored it at 1e-6 ms). Small size: CORRECT, 216 checked timed calls all
passed (speedup 0.59x there: the call overhead dominates 64 KiB). WORKED.

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: timed rounds draw from the protocol's own distributions (mixed signs under strict and
verified), and the strict per-call checks run on checked timed calls. kbv must conclude: not
correct under strict.
"""
import torch
import torch.nn as nn

HONEST_CALLS = 8


class ModelNew(nn.Module):
    def __init__(self, *init_inputs):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls <= HONEST_CALLS:
            return torch.relu(x)
        return x  # timing: no work at all
