#!/usr/bin/env python3
"""Verdicts of two kbv results DBs side by side (issue 14's "identical verdicts before and after"):
for every slot both hold (run, level, problem, sample, protocol), the outcome, the flags and the
headline speedup with its 95% CI; prints each slot that differs and a closing count. Two speedups
agree when their CIs overlap (timing is a measurement: the same kernel twice is not the same
number), and how far the speedups moved between the two. Usage: compare_verdicts.py BEFORE.db AFTER.db"""
import json
import sqlite3
import sys


def load(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    cols = [r[1] for r in con.execute("PRAGMA table_info(verdicts)")]
    out = {}
    for row in con.execute("SELECT * FROM verdicts"):
        r = dict(zip(cols, row))
        v = json.loads(r["verdict_json"])
        key = (r.get("run_name"), r.get("level"), r.get("problem_id"), r.get("sample_id"), v.get("protocol"))
        t = v.get("timing") or {}
        sp = next((s for s in t.get("speedups", []) if s.get("baseline") == t.get("primary_baseline")), None)
        out[key] = {
            "outcome": v.get("outcome"),
            "flags": sorted(f["name"] for f in v.get("flags", [])),
            "speedup": (sp["median"], sp["ci_low"], sp["ci_high"]) if sp and sp.get("median") else None,
        }
    return out


before, after = load(sys.argv[1]), load(sys.argv[2])
common = sorted(set(before) & set(after), key=str)
differ = outcome_moved = 0
for key in common:
    b, a = before[key], after[key]
    why = []
    if b["outcome"] != a["outcome"]:
        why.append(f"outcome {b['outcome']} -> {a['outcome']}")
        outcome_moved += 1
    if b["flags"] != a["flags"]:
        why.append(f"flags {b['flags']} -> {a['flags']}")
    if b["speedup"] and a["speedup"] and (b["speedup"][2] < a["speedup"][1] or a["speedup"][2] < b["speedup"][1]):
        why.append("speedup {:.3f} [{:.3f}, {:.3f}] -> {:.3f} [{:.3f}, {:.3f}] (CIs apart)".format(*b["speedup"], *a["speedup"]))
    if why:
        differ += 1
        print(" ".join(str(k) for k in key) + ": " + "; ".join(why))
# How far the same kernel's speedup moved between the two DBs, beside what each CI claims.
moves = sorted(abs(after[k]["speedup"][0] / before[k]["speedup"][0] - 1) for k in common
               if before[k]["speedup"] and after[k]["speedup"])
if moves:
    q = lambda f: moves[min(len(moves) - 1, int(f * len(moves)))]
    print(f"speedup moved between the two: median {100 * q(0.5):.2f}%, 90th percentile {100 * q(0.9):.2f}%, "
          f"largest {100 * moves[-1]:.2f}%; within 1%: {sum(m <= 0.01 for m in moves)} of {len(moves)}")
print(f"{len(common)} slots in both ({len(before)} before, {len(after)} after): {differ} differ, "
      f"{outcome_moved} changed outcome")
