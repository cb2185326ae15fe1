#!/usr/bin/env python3
"""Compiles the CUDA source of load_inline candidates with nvcc the way kbv's build hooks would
(src/sandbox/build_hooks.cpp), with the lean torch/types.h and (--compare) with torch/types.h,
and prints the CPU seconds of each and which ones compiled.

  bench/probes/lean_prelude_compile.py [--compare] [--jobs 2] [--arch 9.0] FILE_OR_DIR...

Each candidate is executed up to the load_inline call it makes at import (caught before anything
is built): whatever it does before that runs here, unsandboxed. Run it only on candidates you
trust (bench/corpus-l1/runs, examples/candidates), never on examples/attacks or examples/hacks.
"""
import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sysconfig
import tempfile

import torch
import torch.utils.cpp_extension as ext

ROOT = pathlib.Path(__file__).resolve().parents[2]


def hook_scope():
    text = (ROOT / "src/sandbox/build_hooks.cpp").read_text()
    source = re.search(r'kHookSource = R"PY\((.*?)\)PY"', text, re.S).group(1)
    scope = {"__builtins__": __builtins__}
    exec(source, scope)
    return scope


class Captured(Exception):
    pass


def capture(path):
    """The load_inline arguments of the first call the candidate makes at import."""
    seen = {}

    def fake(name, cpp_sources, cuda_sources=None, **kwargs):
        seen.update(name=name, cpp_sources=cpp_sources, cuda_sources=cuda_sources, **kwargs)
        raise Captured()

    original = ext.load_inline
    ext.load_inline = fake
    try:
        code = compile(pathlib.Path(path).read_text(), str(path), "exec")
        exec(code, {"__name__": "kbv_probe_candidate", "__file__": str(path)})
    except Captured:
        pass
    except Exception as e:  # noqa: BLE001 - a probe: report and go on
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        ext.load_inline = original
    return seen


def nvcc_command(source, out, arch, extra):
    inc = os.path.join(os.path.dirname(torch.__file__), "include")
    py = sysconfig.get_paths()["include"]
    return [os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin/nvcc"), "-DTORCH_EXTENSION_NAME=probe",
            "-DTORCH_API_INCLUDE_EXTENSION_H", "-isystem", inc, "-isystem", os.path.join(inc, "torch/csrc/api/include"),
            "-isystem", "/usr/local/cuda/include", "-isystem", py, "-D__CUDA_NO_HALF_OPERATORS__",
            "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
            "--expt-relaxed-constexpr", f"-gencode=arch=compute_{arch.replace('.', '')},code=sm_{arch.replace('.', '')}",
            "--compiler-options", "-fPIC", "-O3", "-std=c++17", *extra, "-c", source, "-o", out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--compare", action="store_true", help="also compile with torch/types.h (kbv's step before)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--arch", default="9.0")
    args = ap.parse_args()
    scope = hook_scope()
    files = []
    for p in args.paths:
        p = pathlib.Path(p)
        files += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    jobs = []
    for f in files:
        if "cuda_sources" not in f.read_text(errors="replace"):
            continue  # executing it would gain nothing (and examples/attacks act at import)
        a = capture(f)
        cuda = a.get("cuda_sources")
        if not cuda:
            continue
        extra = [str(x) for x in (a.get("extra_cuda_cflags") or [])]
        lean = scope["_lean_prelude"](cuda)
        slim = scope["_without_extension_h"](cuda)
        body = slim if slim is not None else cuda
        types_h = "\n".join(["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"] +
                            ([body] if isinstance(body, str) else [str(s) for s in body]))
        variants = {}
        if lean is not None:
            variants["lean"] = "\n".join(lean)
        if args.compare or lean is None:
            variants["types_h"] = types_h
        for name, text in variants.items():
            jobs.append((str(f.relative_to(ROOT) if f.is_absolute() and ROOT in f.parents else f), name, text, extra))

    def run(job):
        path, name, text, extra = job
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "cuda.cu")
            pathlib.Path(src).write_text(text)
            # time(1) per compile: the CPU of nvcc and everything it runs, compile by compile.
            cmd = nvcc_command(src, os.path.join(d, "cuda.o"), args.arch, extra)
            r = subprocess.run(["/usr/bin/time", "-f", "KBVCPU %U %S"] + cmd, capture_output=True, text=True)
            cpu = re.findall(r"KBVCPU ([\d.]+) ([\d.]+)", r.stderr)
            seconds = float(cpu[-1][0]) + float(cpu[-1][1]) if cpu else float("nan")
            err = next((line for line in (r.stdout + r.stderr).splitlines() if "error" in line), "")
            return path, name, r.returncode == 0, seconds, err

    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for path, name, ok, seconds, err in pool.map(run, jobs):
            results.append((path, name, ok, seconds))
            print(f"{name:8s} {'ok  ' if ok else 'FAIL'} {seconds:7.1f} s  {path}  {err[:160] if not ok else ''}", flush=True)
    for name in ("lean", "types_h"):
        done = [r for r in results if r[1] == name]
        ok = [r for r in done if r[2]]
        if done:
            print(f"{name}: {len(ok)}/{len(done)} compiled, {sum(r[3] for r in ok) / max(len(ok), 1):.1f} s CPU each on average")


if __name__ == "__main__":
    main()
