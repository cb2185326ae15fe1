"""How often a kernel that reads a fraction of a large mean's terms (and scales it up) passes one
strict sparse_spike draw at atol = rtol = 1e-3 (examples/hacks/sampled_reduction.py on
94_MSELoss reads every other column). Monte Carlo over the spikes only: N(0, 0.01^2) background
terms average out in any large subset, so what decides is which of the 2 x 16 spikes (predictions
and targets) the subset holds. Prints the pass rate per spike range, subset fraction and size.

    python3 bench/probes/sparse_spike_subsets.py [trials]
"""
import sys

import numpy as np

trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
rng = np.random.default_rng(3)
for n in (4096 * 4096, 1 << 20):
    for lo, hi in ((100, 200), (100, 1000)):
        e = rng.uniform(lo, hi, (trials, 32)) ** 2  # squared spikes of both inputs
        total = e.sum(1) + 2e-4 * n  # plus the background's mean square, 2 x 0.01^2 a term
        rates = []
        for frac in (0.5, 0.25, 0.75, 0.9):
            kept = rng.random(e.shape) < frac
            estimate = (e * kept).sum(1) / frac + 2e-4 * n
            passed = np.abs(estimate - total) / n <= 1e-3 + 1e-3 * total / n
            rates.append(f"{frac}: {100 * passed.mean():.2f}%")
        print(f"terms {n:>9}  spikes {lo}..{hi}:  " + "  ".join(rates))
