#!/usr/bin/env python3
"""A GRPO-style reward for kernel generation, computed with kbv.

A group of completions for one problem (what GRPO samples per prompt) goes through
kbv.evaluate_many; each verdict becomes a reward:

- 0 when the candidate does not build, is wrong, crashes or hangs (any outcome but ``correct``);
- for a correct one, ``base`` plus ``speed_weight * log(speedup)`` (speedup against the
  protocol's eager baseline, clipped to [1/max_speedup, max_speedup]), never below
  ``min_correct`` so a slow correct kernel still beats a wrong one;
- minus ``flag_penalty`` per integrity flag (strict protocol: input_mutated,
  unsynchronized_work, implausible_speed, ...), floored at 0: with the default penalty any flag
  takes the whole reward, so gaming the timer never pays;
- None when kbv could not evaluate the item (``internal_error``): kbv's fault, not the model's;
  leave it out of the group (or evaluate it again).

Then the group-relative advantages (r - mean) / std, as GRPO uses them.

Run on the CPU with the shipped examples (timings are CPU timings at the small size):

    python examples/python/grpo_reward.py --device cpu
    python examples/python/grpo_reward.py --device cuda:0 PROBLEM.py COMPLETION.py ...
"""
from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]
try:
    import kbv
except ImportError:  # not installed (pip install ./python): use the source tree's package
    sys.path.insert(0, str(ROOT / "python"))
    import kbv
EXAMPLE_PROBLEM = ROOT / "examples/problems/level1/19_ReLU.py"
# One group of "completions" for 19_ReLU: correct, wrong, a reward hack, a build failure, a crash.
EXAMPLE_GROUP = ["relu_cpp_ext.py", "relu_wrong_cpu.py", "relu_shape_shortcut.py",
                 "relu_compile_error.py", "relu_crash_segfault.py"]

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


def extract_code(completion: str) -> str:
    """The last fenced code block of an LLM completion, or the whole text when it has none."""
    blocks = _FENCE.findall(completion)
    return blocks[-1] if blocks else completion


def reward(verdict: kbv.Verdict, *, base: float = 0.3, speed_weight: float = 0.5,
           max_speedup: float = 10.0, min_correct: float = 0.05,
           flag_penalty: float = 1.0) -> Optional[float]:
    """The reward of one verdict (see the module docstring); None for kbv's own failures."""
    if verdict.outcome == kbv.Outcome.INTERNAL_ERROR:
        return None
    if not verdict.correct:
        return 0.0
    r = base
    if verdict.speedup is not None and verdict.speedup > 0:
        r += speed_weight * max(-math.log(max_speedup), min(math.log(verdict.speedup), math.log(max_speedup)))
    r = max(r, min_correct)
    return max(0.0, r - flag_penalty * len(verdict.integrity_flags))


def group_rewards(problem: str, completions: Sequence[str],
                  **options) -> Tuple[List[Optional[float]], List[kbv.Verdict]]:
    """Rewards (and the verdicts) for a group of completions of one problem, in order. A
    completion is LLM output (text with a newline; its last code block is evaluated) or a
    path. ``options`` go to kbv.evaluate_many (device, protocol, timing, time_budget, jobs...)."""
    candidates = [c if "\n" not in c else extract_code(c) for c in completions]
    verdicts = kbv.evaluate_many([(problem, c) for c in candidates], **options)
    return [reward(v) for v in verdicts], verdicts


def advantages(rewards: Sequence[Optional[float]]) -> List[Optional[float]]:
    """GRPO's group-relative advantages over the rewards that are not None."""
    scored = [r for r in rewards if r is not None]
    if len(scored) < 2:
        return [0.0 if r is not None else None for r in rewards]
    mean, std = statistics.fmean(scored), statistics.pstdev(scored)
    return [None if r is None else (r - mean) / (std + 1e-6) for r in rewards]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problem", nargs="?", default=str(EXAMPLE_PROBLEM))
    parser.add_argument("completions", nargs="*", help="candidate files (default: a group of examples/candidates)")
    parser.add_argument("--device", default="cuda:0", help="cuda:N, cpu, ... (default cuda:0)")
    parser.add_argument("--protocol", default="strict")
    parser.add_argument("--time-budget", type=float, default=2.0, help="seconds of timing per candidate")
    parser.add_argument("--no-timing", action="store_true", help="correctness only: correct = base reward")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args(argv)

    completions = args.completions or [str(ROOT / "examples/candidates" / name) for name in EXAMPLE_GROUP]
    rewards, verdicts = group_rewards(args.problem, completions, device=args.device, protocol=args.protocol,
                                      timing=not args.no_timing, time_budget=args.time_budget, jobs=args.jobs)
    for i, (completion, r, a, v) in enumerate(zip(completions, rewards, advantages(rewards), verdicts)):
        label = f"completion {i}" if "\n" in completion else Path(completion).name
        shown = "-" if r is None else f"{r:.3f}"
        adv = "-" if a is None else f"{a:+.2f}"
        print(f"{label:28} reward {shown:>6}  advantage {adv:>6}  {v.summary()[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
