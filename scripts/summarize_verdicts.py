#!/usr/bin/env python3
"""Prints a Markdown table of kbv verdict JSON files (used by scripts/gpu_check.sh, whose
machine has Python but where `kbv report` would need the results store)."""
import json
import sys


def gib(b):
    return f"{b / 2**20:.0f} MiB" if b is not None else "-"


def row(path):
    with open(path) as f:
        v = json.load(f)
    t = v.get("timing") or {}
    m = v.get("memory") or {}
    series = {s["name"]: s for s in t.get("series", [])}
    speed = {s["baseline"]: s for s in t.get("speedups", [])}

    def sp(name):
        s = speed.get(name)
        return f"{s['median']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]" if s else "-"

    cand = series.get("candidate", {}).get("median_ms")
    mc, mb = m.get("candidate", {}), m.get("baseline", {})
    return "| " + " | ".join([
        path.rsplit("/", 1)[-1][2:-5], v.get("protocol", ""), v.get("outcome", ""),
        f"{cand:.4f}" if cand else "-",
        f"{series['eager_tf32_off']['median_ms']:.4f}" if "eager_tf32_off" in series else "-",
        f"{series['eager_tf32_on']['median_ms']:.4f}" if "eager_tf32_on" in series else "-",
        sp("eager_tf32_off"), sp("eager_tf32_on"),
        f"{t.get('rounds', '-')} {t.get('stop_reason', '')}",
        f"{gib(mc.get('peak_device_bytes'))} / {gib(mb.get('peak_device_bytes'))}" if m else "-",
        (f"{t.get('hop_ms', 0):.3f} / {t['idle_hop_ms']:.3f} / {t.get('busy_hop_share', 0):.2f}" if "idle_hop_ms" in t else "-")
        + (" frozen" if t.get("sandbox_frozen") else ""),
        gib(mc.get("process_bytes")) if "process_bytes" in mc else "-",
        ", ".join(f["name"] for f in v.get("flags", [])) or "-",
        (v.get("reason") or "")[:90].replace("|", "/"),
    ]) + " |"


print("| example | protocol | outcome | cand ms | eager ms (TF32 off) | eager ms (TF32 on) | speedup vs off [95% CI] | speedup vs on [95% CI] | rounds | peak device mem cand / base | hop / idle hop ms / busy share | cand process mem | flags | reason |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for p in sorted(sys.argv[1:]):
    try:
        print(row(p))
    except Exception as e:  # a broken file must not hide the others
        print(f"| {p} | unreadable: {e} |")
