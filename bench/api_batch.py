#!/usr/bin/env python3
"""Seconds per completion of a batch through the Python API (issue 36's goal: a batch of 16
completions of one problem at <= 0.3 s of judge time per completion after the first, builds and
the candidate's own timing aside).

    python bench/api_batch.py [--problem P.py] [--candidate K.py] [-n 16] [--device auto] [--timing]
                              [--cold] [--jobs J]

It scores N completions of one problem through one kbv.Session: the candidate (by default a
torch.relu ModelNew, which builds nothing) N times, each copy made distinct by a comment so that
the batch judges every one (it judges a repeated candidate once). It prints each item's seconds
(the API's wall clock, kbv's own, and kbv's stages) and a summary: the median seconds per
completion after the first, with and without the build and timing stages. Record the figures in bench/RESULTS.md
with the date and the machine.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import kbv
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))
    import kbv

_TORCH_RELU = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
"""

# Stages that are not the judge's per-candidate overhead: the candidate's own build and timing.
_OWN_STAGES = ("build", "timing")


def judge_seconds(v: kbv.Verdict) -> float:
    """kbv's wall seconds for the item, less the candidate's build and its timing rounds."""
    stages = v.stage_seconds or {}
    return (v.wall_seconds or 0.0) - sum(stages.get(s, 0.0) for s in _OWN_STAGES)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default=str(ROOT / "examples/problems/level1/19_ReLU.py"))
    parser.add_argument("--candidate", help="a candidate file (default: a torch.relu ModelNew)")
    parser.add_argument("-n", type=int, default=16, help="completions in the batch")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--protocol", default="strict")
    parser.add_argument("--timing", action="store_true", help="time each candidate too (default: correctness only)")
    parser.add_argument("--time-budget", type=float, default=1.0)
    parser.add_argument("--cold", action="store_true", help="a judge per completion (Session(warm=False)), for comparison")
    parser.add_argument("--jobs", type=int, help="runs at once (default: the Session's)")
    parser.add_argument("--json", help="write every item's figures here")
    args = parser.parse_args(argv)

    code = Path(args.candidate).read_text(encoding="utf-8") if args.candidate else _TORCH_RELU
    replies = ["```python\n" + code + f"\n# completion {i}\n```\n" for i in range(args.n)]
    started = time.monotonic()
    with kbv.Session(device=args.device, protocol=args.protocol, timing=args.timing,
                     time_budget=args.time_budget, warm=not args.cold, jobs=args.jobs) as session:
        verdicts = session.evaluate_completions(args.problem, replies)
    total = time.monotonic() - started

    rows = []
    for i, v in enumerate(verdicts):
        row = {"item": i, "outcome": v.outcome, "api_s": v.api_seconds, "kbv_s": v.wall_seconds,
               "judge_s": judge_seconds(v), "stages": v.stage_seconds}
        rows.append(row)
        stages = " ".join(f"{k} {s:.2f}" for k, s in (v.stage_seconds or {}).items())
        print(f"{i:3} {v.outcome:14} api {v.api_seconds or 0:6.2f} s  kbv {v.wall_seconds or 0:6.2f} s  "
              f"judge {row['judge_s']:6.2f} s  [{stages}]")
    rest = rows[1:] or rows
    print(f"{len(rows)} completions in {total:.1f} s on {verdicts[0].device.kind if verdicts and verdicts[0].device else '?'}; "
          f"after the first, median per completion: api {statistics.median(r['api_s'] or 0 for r in rest):.2f} s, "
          f"kbv {statistics.median(r['kbv_s'] or 0 for r in rest):.2f} s, "
          f"judge without build and timing {statistics.median(r['judge_s'] for r in rest):.2f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"total_s": total, "items": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
