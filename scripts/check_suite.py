#!/usr/bin/env python3
"""Dev check of kbv's built-in problem suite (problems/level*/): not the product's audit.

For every problem file it
  * imports the module by path and checks the KernelBench contract (Model, get_inputs,
    get_init_inputs, KBV_SMALL naming existing module constants);
  * computes the default-size input and parameter bytes on the meta device
    (`with torch.device("meta"): get_inputs()`), which must work for every problem;
  * applies KBV_SMALL (unless --size default), seeds, builds Model(*get_init_inputs()) and
    runs the reference forward under torch.no_grad for each distribution kbv uses:
      D1_x1, D2_x3, D3_x0.01, D4_neg   float tensors of get_inputs() scaled (ints kept)
      normal                           fresh N(0, 1)
      heavy_tail                       fresh Student-t(2) with ~0.1% outliers of 50..200
      zeros_ties                       fresh values on {-2,-1,-0.5,0,0.5,1,2}, ~30% zeros
      reinit_params                    x1 inputs, biases ~U(-0.5,0.5), constant 1-D weights ~U(0.5,1.5)
    (the same definitions as src/worker/distributions.cpp);
  * checks that each reference output is finite and whether trivial answers match it at
    atol = rtol = 1e-3 (|cand - ref| <= atol + rtol * |ref|):
      Z  all zeros
      C  a constant (the mean of the reference; for a one-element output: one constant
         across all distributions, judged once per problem)
      I  one of the forward's float inputs, returned unchanged (when shape and dtype match)
    A distribution where any of them matches is non-discriminative.

A problem FAILS when some reference output is non-finite, when no distribution
discriminates, or when it breaks the contract. Exit status 1 if any problem fails.

Usage (from the repo root):
  python scripts/check_suite.py                     # small sizes on the CPU
  python scripts/check_suite.py --only level1/2     # a subset (regex on 'levelL/ID_Name')
  python scripts/check_suite.py --device cuda --size default --time   # on a GPU: default
                                                    # sizes, eager timing TF32 off / on
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import math
import re
import sys
import time
from pathlib import Path

import torch

ATOL = 1e-3
RTOL = 1e-3
SMALL_FORWARD_MS = 50.0
SCALED = [("D1_x1", 1.0), ("D2_x3", 3.0), ("D3_x0.01", 0.01), ("D4_neg", -1.0)]
FRESH = ["normal", "heavy_tail", "zeros_ties"]
DISTS = [name for name, _ in SCALED] + FRESH + ["reinit_params"]
SHORT = {
    "D1_x1": "x1",
    "D2_x3": "x3",
    "D3_x0.01": "x.01",
    "D4_neg": "x-1",
    "normal": "norm",
    "heavy_tail": "heavy",
    "zeros_ties": "zeros",
    "reinit_params": "reinit",
}

_module_counter = 0


def problem_files(root: Path) -> list[Path]:
    files = []
    for level_dir in sorted(root.glob("level*")):
        if not level_dir.is_dir():
            continue
        for f in level_dir.glob("*.py"):
            m = re.match(r"^(\d+)_", f.name)
            if m:
                files.append(f)

    def key(f: Path):
        return (int(re.sub(r"\D", "", f.parent.name) or 0), int(f.name.split("_", 1)[0]))

    return sorted(files, key=key)


def load_module(path: Path):
    global _module_counter
    _module_counter += 1
    name = f"kbv_check_problem_{_module_counter}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def flat_tensors(obj) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in flat_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in flat_tensors(o)]
    return []


def nbytes(obj) -> int:
    return sum(t.numel() * t.element_size() for t in flat_tensors(obj))


def human(n: float) -> str:
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


# ---- distributions (mirror src/worker/distributions.cpp) ----------------------------------

def _work_dtype(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


def draw_fresh(t: torch.Tensor, kind: str, gen: torch.Generator) -> torch.Tensor:
    wd = _work_dtype(t.dtype)
    shape, dev = t.shape, t.device
    if kind == "normal":
        v = torch.randn(shape, generator=gen, dtype=wd, device=dev)
    elif kind == "heavy_tail":
        z = torch.randn(shape, generator=gen, dtype=wd, device=dev)
        e = torch.empty(shape, dtype=wd, device=dev).exponential_(1.0, generator=gen).clamp_min_(1e-12)
        v = z / e.sqrt()
        pick = torch.rand(shape, generator=gen, dtype=wd, device=dev) < 1e-3
        mag = torch.rand(shape, generator=gen, dtype=wd, device=dev) * 150.0 + 50.0
        v = torch.where(pick, torch.where(z >= 0, mag, -mag), v).clamp_(-1000.0, 1000.0)
    elif kind == "zeros_ties":
        grid = torch.tensor([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], dtype=wd, device=dev)
        idx = torch.randint(0, grid.numel(), shape, generator=gen, device=dev)
        v = grid[idx]
        v.masked_fill_(torch.rand(shape, generator=gen, dtype=wd, device=dev) < 0.3, 0.0)
    else:
        raise ValueError(kind)
    out = torch.empty_like(t)
    out.copy_(v)
    return out


def make_inputs(template: list, dist: str, gen: torch.Generator) -> list:
    out = []
    for a in template:
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            scale = dict(SCALED).get(dist)
            if scale is not None:
                out.append(a * scale)
            elif dist in FRESH:
                out.append(draw_fresh(a, dist, gen))
            else:  # reinit_params: inputs as drawn
                out.append(a)
        else:
            out.append(a)
    return out


def reinit_parameters(model: torch.nn.Module, seed: int) -> None:
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            if not p.is_floating_point() or p.numel() == 0:
                continue
            if name.endswith("bias"):
                lo, hi = -0.5, 0.5
            elif p.dim() == 1 and name.endswith("weight") and bool(p.min() == p.max()):
                lo, hi = 0.5, 1.5
            else:
                continue
            g = torch.Generator(device=p.device)
            g.manual_seed(seed * 1000003 + i)
            v = torch.empty(p.shape, dtype=_work_dtype(p.dtype), device=p.device).uniform_(lo, hi, generator=g)
            p.copy_(v)


# ---- trivial-answer checks -------------------------------------------------------------------

def matches(cand: torch.Tensor, ref: torch.Tensor) -> bool:
    if cand.shape != ref.shape:
        return False
    a, r = cand.double(), ref.double()
    return bool(((a - r).abs() <= ATOL + RTOL * r.abs()).all())


def trivial_matches(outs: list[torch.Tensor], inputs: list) -> tuple[str, bool]:
    """Letters of the trivial answers that match every output tensor; whether all are finite."""
    finite = all(bool(torch.isfinite(o).all()) for o in outs if o.is_floating_point())
    if not finite:
        return "", False
    letters = ""
    if all(matches(torch.zeros_like(o, dtype=torch.float64), o) for o in outs):
        letters += "Z"
    if all(o.numel() > 1 for o in outs) and all(
        matches(torch.full(o.shape, o.double().mean().item(), dtype=torch.float64, device=o.device), o)
        for o in outs
    ):
        letters += "C"
    float_inputs = [a for a in inputs if isinstance(a, torch.Tensor) and a.is_floating_point()]
    if all(
        any(a.shape == o.shape and a.dtype == o.dtype and matches(a, o) for a in float_inputs) for o in outs
    ):
        letters += "I"
    return letters, True


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def time_forward(model, inputs, device: str, reps: int) -> float:
    """Median eager forward time in ms (CUDA events)."""
    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
        sync(device)
        times = []
        for _ in range(reps):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            model(*inputs)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def set_tf32(on: bool) -> None:
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


# ---- one problem ---------------------------------------------------------------------------

def check_problem(path: Path, args) -> dict:
    rel = f"{path.parent.name}/{path.stem}"
    res = {"name": rel, "errors": [], "codes": {}, "notes": []}

    # Contract + default-size bytes from shapes only (meta device).
    try:
        mod = load_module(path)
        for attr in ("Model", "get_inputs", "get_init_inputs", "KBV_SMALL"):
            if not hasattr(mod, attr):
                res["errors"].append(f"missing {attr}")
        if res["errors"]:
            return res
        for k in mod.KBV_SMALL:
            if not hasattr(mod, k):
                res["errors"].append(f"KBV_SMALL names unknown constant {k!r}")
        with torch.device("meta"):
            meta_inputs = mod.get_inputs()
            meta_model = mod.Model(*mod.get_init_inputs())
        res["input_bytes"] = nbytes(meta_inputs)
        res["param_bytes"] = sum(p.numel() * p.element_size() for p in meta_model.parameters()) + sum(
            b.numel() * b.element_size() for b in meta_model.buffers()
        )
        res["default_shapes"] = [tuple(t.shape) for t in flat_tensors(meta_inputs)]
        del meta_inputs, meta_model
    except Exception as exc:  # noqa: BLE001
        res["errors"].append(f"meta: {type(exc).__name__}: {exc}")
        return res

    device = args.device
    try:
        mod = load_module(path)  # fresh constants
        if args.size == "small":
            for k, v in mod.KBV_SMALL.items():
                setattr(mod, k, v)
        torch.manual_seed(args.seed)
        init = mod.get_init_inputs()
        with torch.device(device):
            model = mod.Model(*init)
        torch.manual_seed(args.seed + 1)
        with torch.device(device):
            template = mod.get_inputs()
        template = [a.to(device) if isinstance(a, torch.Tensor) else a for a in template]
        res["run_shapes"] = [tuple(t.shape) for t in flat_tensors(template)]
        res["run_input_bytes"] = nbytes(template)
    except Exception as exc:  # noqa: BLE001
        res["errors"].append(f"build: {type(exc).__name__}: {exc}")
        return res

    gen = torch.Generator(device=device)
    scalars = {}
    fwd_ms = []
    for di, dist in enumerate(DISTS):
        try:
            gen.manual_seed(args.seed * 100 + di)
            inputs = make_inputs(template, dist, gen)
            m = model
            if dist == "reinit_params":
                m = copy.deepcopy(model)
                reinit_parameters(m, args.seed + 7)
            sync(device)
            t0 = time.perf_counter()
            with torch.no_grad():
                out = m(*inputs)
            sync(device)
            fwd_ms.append((time.perf_counter() - t0) * 1e3)
            outs = flat_tensors(out)
            letters, finite = trivial_matches(outs, inputs)
            if not finite:
                res["codes"][dist] = "NaN"
                res["errors"].append(f"non-finite reference on {dist}")
            else:
                res["codes"][dist] = letters or "ok"
                if len(outs) == 1 and outs[0].numel() == 1:
                    scalars[dist] = outs[0].double().item()
            if "shape" not in res:
                res["shape"] = [tuple(o.shape) for o in outs]
                res["dtype"] = [str(o.dtype).replace("torch.", "") for o in outs]
            del out, outs, inputs, m
        except Exception as exc:  # noqa: BLE001
            res["codes"][dist] = "ERR"
            res["errors"].append(f"{dist}: {type(exc).__name__}: {exc}")

    # One-element outputs: is a single constant right on every distribution?
    if scalars:
        vals = list(scalars.values())
        c = (max(vals) + min(vals)) / 2
        if all(abs(c - v) <= ATOL + RTOL * abs(v) for v in vals):
            res["errors"].append(f"scalar output is the same constant {c:.6g} on every distribution")
        res["notes"].append("scalar: C judged across distributions: " + ", ".join(
            f"{SHORT[k]}={v:.4g}" for k, v in scalars.items()))

    discriminating = [d for d, c in res["codes"].items() if c == "ok"]
    if not discriminating and not any(c == "ERR" for c in res["codes"].values()):
        res["errors"].append("degenerate: no distribution discriminates")
    res["n_disc"] = len(discriminating)
    res["fwd_ms"] = min(fwd_ms) if fwd_ms else float("nan")
    if device == "cpu" and args.size == "small" and res["fwd_ms"] > SMALL_FORWARD_MS:
        res["notes"].append(f"WARN small forward {res['fwd_ms']:.0f} ms > {SMALL_FORWARD_MS:.0f} ms")

    if args.time and device == "cuda" and not res["errors"]:
        try:
            set_tf32(False)
            res["ms_fp32"] = time_forward(model, template, device, args.reps)
            set_tf32(True)
            res["ms_tf32"] = time_forward(model, template, device, args.reps)
            set_tf32(False)
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            with torch.no_grad():
                out = model(*template)
            sync(device)
            res["peak_extra"] = torch.cuda.max_memory_allocated() - base
            del out
        except Exception as exc:  # noqa: BLE001
            res["errors"].append(f"timing: {type(exc).__name__}: {exc}")
    del model, template
    if device == "cuda":
        torch.cuda.empty_cache()
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    repo = Path(__file__).resolve().parent.parent
    ap.add_argument("--root", type=Path, default=repo / "problems", help="suite folder (holds level1/ ...)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--size", default="small", choices=["small", "default"])
    ap.add_argument("--only", default=None, help="regex on 'levelL/ID_Name'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time", action="store_true", help="(cuda) time eager forward, TF32 off and on")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: keep it light)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    set_tf32(False)

    files = problem_files(args.root)
    if args.only:
        files = [f for f in files if re.search(args.only, f"{f.parent.name}/{f.stem}")]
    if not files:
        print(f"no problem files under {args.root}", file=sys.stderr)
        return 2

    head = f"{'problem':42s} {'in(default)':>11s} {'params':>9s} {'fwd ms':>7s}  " + " ".join(
        f"{SHORT[d]:>6s}" for d in DISTS)
    if args.time:
        head += f" {'fp32 ms':>8s} {'tf32 ms':>8s} {'peak+':>9s}"
    head += "  verdict"
    print(f"# device={args.device} size={args.size} atol=rtol={ATOL:g}   codes: ok = discriminates; "
          "Z/C/I = zeros/constant/input passes; NaN = non-finite reference")
    print(head)
    print("-" * len(head))
    failures = 0
    total_in = 0
    for f in files:
        r = check_problem(f, args)
        ok = not r["errors"]
        failures += 0 if ok else 1
        total_in += r.get("input_bytes", 0)
        line = f"{r['name']:42s} {human(r.get('input_bytes', 0)):>11s} {human(r.get('param_bytes', 0)):>9s} " \
               f"{r.get('fwd_ms', float('nan')):7.1f}  " + " ".join(
                   f"{r['codes'].get(d, '-'):>6s}" for d in DISTS)
        if args.time:
            pe = r.get("peak_extra")
            line += f" {r.get('ms_fp32', math.nan):8.3f} {r.get('ms_tf32', math.nan):8.3f} " \
                    f"{human(pe) if pe is not None else '-':>9s}"
        line += "  " + ("PASS" if ok else "FAIL") + f" ({r.get('n_disc', 0)}/{len(DISTS)} discriminate)"
        print(line, flush=True)
        for e in r["errors"]:
            print(f"    ERROR {e}")
        for n in r["notes"]:
            print(f"    note  {n}")
    print("-" * len(head))
    print(f"{len(files)} problems, {len(files) - failures} pass, {failures} fail; "
          f"default-size inputs total {human(total_in)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
