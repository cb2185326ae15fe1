#!/usr/bin/env python3
"""The judges' tensor memory per step (KBV_JUDGE_PROFILE=DIR with KBV_JUDGE_MEMORY=1,
src/judge/profile.hpp): per protocol, step and device, the most the judge's main thread held during
the step (above what it held when its first step began) and the most it rose within the step, the
largest over every judge in DIR; largest first. With --unit BYTES, also in units of BYTES (e.g. the
problem's largest input, to read the judge's working set as a count of tensors).

    bench/probes/summarize_memory.py DIR [--unit BYTES] [--top N]
"""
import argparse
import collections
import pathlib
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--unit", type=int, default=0)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    files = sorted(pathlib.Path(args.folder).glob("judge-*.memory"))
    if not files:
        print(f"no judge-*.memory files in {args.folder}")
        return 1
    peak = collections.defaultdict(int)
    rise = collections.defaultdict(int)
    for f in files:
        for line in f.read_text().splitlines():
            protocol, step, device, p, r, _count = line.split("\t")
            key = (protocol, step, device)
            peak[key] = max(peak[key], int(p))
            rise[key] = max(rise[key], int(r))
    mib = 1 << 20
    unit = f" | peak, units | rise, units" if args.unit else ""
    print(f"| protocol | step | device | peak MiB | rise MiB{unit} |")
    print("|---|---|---|---:|---:" + ("|---:|---:" if args.unit else "") + "|")
    for key in sorted(peak, key=lambda k: -peak[k])[: args.top]:
        if peak[key] == 0 and rise[key] == 0:
            continue
        cells = [*key, f"{peak[key] / mib:.1f}", f"{rise[key] / mib:.1f}"]
        if args.unit:
            cells += [f"{peak[key] / args.unit:.2f}", f"{rise[key] / args.unit:.2f}"]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
