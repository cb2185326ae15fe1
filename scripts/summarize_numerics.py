#!/usr/bin/env python3
"""Per verdict of a numerics run (scripts/gpu_check.sh numerics): outcome, and for every
distribution where the element-wise tolerance failed, how many elements and what the numerics
model found (candidate vs eager error against float64). Usage: summarize_numerics.py DB"""
import json
import sqlite3
import sys


def main(db: str) -> None:
    rows = sqlite3.connect(db).execute(
        "select problem_id, sample_id, protocol, outcome, reason, speedup, verdict_json from verdicts "
        "order by problem_id, sample_id, protocol").fetchall()
    print("| problem | sample | protocol | outcome | speedup | tolerance failures (numerics: cand/eager max-abs, rms) | reason |")
    print("|---|---|---|---|---|---|---|")
    for pid, sid, protocol, outcome, reason, speedup, vj in rows:
        v = json.loads(vj)
        notes = []
        for d in (v.get("correctness") or {}).get("distributions", []):
            n = d.get("numerics")
            if d.get("mismatched", 0) == 0 and not n:
                continue
            text = f"{d['name']}: {d.get('mismatched', 0)}/{d.get('numel', 0)}"
            if n:
                text += (f" max {n['candidate_max_abs_err']:.3g}/{n['eager_max_abs_err']:.3g}"
                         f" rms {n['candidate_rms_err']:.3g}/{n['eager_rms_err']:.3g}"
                         f" {'within' if n.get('within') else 'OUTSIDE'}{' ' + n['note'] if n.get('note') else ''}")
            notes.append(text)
        sp = f"{speedup:.3f}" if speedup else ""
        print(f"| {pid} | {sid} | {protocol} | {outcome} | {sp} | {'; '.join(notes)} | {(reason or '')[:160]} |")


if __name__ == "__main__":
    main(sys.argv[1])
