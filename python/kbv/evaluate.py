"""kbv.evaluate and kbv.evaluate_many: one ``kbv eval`` subprocess per evaluation.

The subprocess is the isolation boundary for the caller: a candidate that segfaults, hangs or
floods its output ends as that candidate's verdict inside kbv (judge + sandbox, as on the
command line), and even a failure of kbv itself only ends one child process.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import queue
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .binary import find_kbv
from .errors import KbvError, KbvInternalError, KbvNoVerdictError, KbvUsageError
from .verdict import Outcome, Verdict

#: A problem or candidate: a path (``str`` without a newline, or ``os.PathLike``) or the Python
#: source itself (a ``str`` with at least one newline).
Source = Union[str, "os.PathLike[str]"]

# kbv's own defaults (src/core/defaults.hpp), used only to size the wall-clock backstop below.
_COMPILE_TIMEOUT_DEFAULT = 900.0
_RUN_TIMEOUT_DEFAULT = 600.0
# What kbv may need beyond its two limits (start-up, a killed worker's stacks, writing the JSON)
# before the API gives up on the process itself.
_TORCH_COMPILE_ALLOWANCE = 900  # kbv's own allowance for compiling the torch_compile baseline
_BACKSTOP_MARGIN_SECONDS = 300.0


def _staging_root() -> str:
    """Where source text is written: under kbv's cache folder, as kbv finds it
    (src/orchestrate/host.cpp), not under /tmp, which the sandbox replaces with one of its own."""
    cache = os.environ.get("KBV_CACHE") or (os.path.join(os.environ["HOME"], ".cache", "kbv")
                                            if os.environ.get("HOME") else None)
    root = os.path.join(cache, "api") if cache else None
    if root is None:
        return tempfile.gettempdir()
    os.makedirs(root, exist_ok=True)
    return root


def _is_source_text(value: Source) -> bool:
    return isinstance(value, str) and "\n" in value


def _materialize(value: Source, folder: Path, name: str, *, shared: bool) -> str:
    """A path for kbv: the given path, or the source written to ``folder/name`` (readable by
    other uids when ``shared``)."""
    if _is_source_text(value):
        folder.mkdir()
        folder.chmod(0o755 if shared else 0o700)
        path = folder / name
        path.write_text(str(value), encoding="utf-8")
        path.chmod(0o644 if shared else 0o600)
        return str(path)
    return os.fspath(value)


def _number(value: Optional[float]) -> Optional[str]:
    return None if value is None else repr(float(value))


def _eval_argv(binary: str, problem: str, candidate: str, json_path: str, *, protocol: str,
               device: str, precision: str, timing: bool, time_budget: Optional[float],
               compile_timeout: Optional[float], run_timeout: Optional[float],
               tolerance: Optional[float], build_dir: Optional[Source], size: Optional[str],
               sandbox_memory: Optional[float], hidden_test: Optional[str], torch_compile: bool,
               extra_args: Sequence[str]) -> List[str]:
    argv = [binary, "eval", problem, candidate, "--protocol", protocol, "--device", device,
            "--precision", precision, "--json", json_path, "--quiet"]
    options = {"--time-budget": _number(time_budget), "--compile-timeout": _number(compile_timeout),
               "--run-timeout": _number(run_timeout), "--tolerance": _number(tolerance),
               "--build-dir": None if build_dir is None else os.fspath(build_dir), "--size": size,
               "--sandbox-memory": _number(sandbox_memory), "--hidden-test": hidden_test}
    for flag, value in options.items():
        if value is not None:
            argv += [flag, value]
    if not timing:
        argv.append("--no-timing")
    if torch_compile:
        argv.append("--torch-compile")
    return argv + [str(a) for a in extra_args]


def evaluate(problem: Source, candidate: Source, *, protocol: str = "strict",
             device: str = "cuda:0", precision: str = "fp32", timing: bool = True,
             time_budget: Optional[float] = None, compile_timeout: Optional[float] = None,
             run_timeout: Optional[float] = None, tolerance: Optional[float] = None,
             build_dir: Optional[Source] = None, size: Optional[str] = None,
             sandbox_memory: Optional[float] = None, hidden_test: Optional[Source] = None,
             torch_compile: bool = False, kbv_path: Optional[Source] = None,
             env: Optional[Mapping[str, str]] = None, extra_args: Sequence[str] = (),
             _live: Optional["_LiveProcesses"] = None) -> Verdict:
    """Evaluate one candidate (``ModelNew``) against one KernelBench problem (``Model``).

    Runs ``kbv eval PROBLEM CANDIDATE --json ...`` (the same engine, judge/sandbox isolation and
    verdict as the command line) and returns its verdict as a :class:`Verdict`.

    ``problem`` and ``candidate`` are paths, or the Python source itself (any ``str`` holding a
    newline; an LLM's completion, say). Source text is written to a temporary folder under
    kbv's cache (``$KBV_CACHE/api`` or ``~/.cache/kbv/api``; not ``/tmp``, which the candidate's
    sandbox replaces with a private one) that is removed afterwards; the verdict's
    ``problem.path``/``candidate.path`` then name files that no longer exist.

    Options map to ``kbv eval``'s (``kbv eval --help``); ``None`` keeps kbv's default:

    - ``protocol``: ``standard``, ``verified`` or ``strict`` (docs/protocols.md).
    - ``device``: ``cuda:N``, ``cuda``, ``cpu`` or ``auto``. The default is ``cuda:0``, not
      ``auto``: a reward computed from CPU timings by accident would mean nothing.
    - ``precision``: ``fp32``, ``bf16`` or ``fp16``.
    - ``timing``: False checks correctness only (``--no-timing``; ``verdict.speedup`` is None).
    - ``time_budget``: seconds of timing before giving up on a +-1% CI (kbv: 5).
    - ``compile_timeout`` / ``run_timeout``: seconds for the build / for everything else
      (kbv: 900 / 600). A candidate past them is a ``timeout`` verdict.
    - ``tolerance``: atol = rtol, overriding the protocol's.
    - ``build_dir``: where extensions are built (kbv: ``$KBV_CACHE/builds`` or
      ``~/.cache/kbv/builds``; keyed by the candidate's hash, so a re-run reuses the build).
    - ``size``: ``default``, ``small`` (the problem's ``KBV_SMALL``) or ``auto`` (small on CPU).
    - ``sandbox_memory``: GiB of host memory the candidate's sandbox may use (0: no limit).
    - ``hidden_test``: a KernelBench-Verified hidden-test file (path or source) whose
      ``get_hidden_inputs()`` lists are checked too, as distributions ``hidden_1``..``hidden_N``.
    - ``torch_compile``: also time ``torch.compile(Model)``; see
      ``verdict.timing.speedup_vs("torch_compile")`` and ``timing.torch_compile_seconds``.
    - ``kbv_path``: the kbv executable (see :func:`kbv.find_kbv` for the search order).
    - ``env``: variables added to this process's environment for kbv.
    - ``extra_args``: more ``kbv eval`` arguments, passed as they are.

    A candidate's failure is never an exception: it is a verdict whose ``outcome`` says which
    (``incorrect``, ``compile_error``, ``runtime_error``, ``timeout``, ``crashed``, ...).

    Raises:
        KbvNotFoundError: no kbv executable.
        KbvUsageError: kbv refused the arguments (exit status 2), e.g. a missing file.
        KbvNoVerdictError: kbv ended without a readable verdict, or ran past
            compile_timeout + run_timeout + 300 s (the process is then killed).
        KbvInternalError: the verdict's outcome is ``internal_error`` (kbv's fault, not the
            candidate's; ``error.verdict`` has it). Evaluate again; do not score it.
    """
    binary = find_kbv(kbv_path)
    with tempfile.TemporaryDirectory(prefix="kbv-py-", dir=_staging_root()) as tmp:
        folder = Path(tmp)
        # The sandbox reads the candidate (and its folder) under a uid of its own: the candidate
        # gets a folder of its own, readable, inside a folder others may only traverse.
        folder.chmod(0o711)
        problem_path = _materialize(problem, folder / "problem", "problem.py", shared=False)
        candidate_path = _materialize(candidate, folder / "candidate", "candidate.py", shared=True)
        hidden_path = (None if hidden_test is None
                       else _materialize(hidden_test, folder / "hidden", "hidden.py", shared=False))
        json_path = str(folder / "verdict.json")
        argv = _eval_argv(binary, problem_path, candidate_path, json_path, protocol=protocol,
                          device=device, precision=precision, timing=timing,
                          time_budget=time_budget, compile_timeout=compile_timeout,
                          run_timeout=run_timeout, tolerance=tolerance, build_dir=build_dir,
                          size=size, sandbox_memory=sandbox_memory, hidden_test=hidden_path,
                          torch_compile=torch_compile, extra_args=extra_args)
        backstop = ((compile_timeout or _COMPILE_TIMEOUT_DEFAULT) + (run_timeout or _RUN_TIMEOUT_DEFAULT)
                    + (time_budget or 0) + _BACKSTOP_MARGIN_SECONDS
                    + (_TORCH_COMPILE_ALLOWANCE if torch_compile else 0))
        child_env = None if env is None else {**os.environ, **env}
        done = _run(argv, child_env, backstop, _live)
        output = done.stdout + done.stderr
        if done.returncode == 2:
            raise KbvUsageError("kbv eval refused its arguments (exit status 2)", argv=argv,
                                returncode=2, output=output)
        if done.returncode != 0:
            raise KbvNoVerdictError(f"kbv eval failed ({_status(done.returncode)}) without a verdict",
                                    argv=argv, returncode=done.returncode, output=output)
        try:
            with open(json_path, encoding="utf-8") as f:
                verdict = Verdict.from_dict(json.load(f))
        except (OSError, ValueError) as e:
            raise KbvNoVerdictError(f"kbv eval exited 0 but its verdict could not be read: {e}",
                                    argv=argv, returncode=0, output=output) from None
    if verdict.outcome == Outcome.INTERNAL_ERROR:
        raise KbvInternalError(f"kbv failed, not the candidate (internal_error): {verdict.reason}",
                               verdict=verdict, argv=argv, returncode=0, output=output)
    return verdict


class _LiveProcesses:
    """The kbv processes of one evaluate_many, so that an interrupted batch can stop them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: "set[subprocess.Popen]" = set()
        self.stopped = False

    def add(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.add(proc)
            stopped = self.stopped
        if stopped:
            proc.terminate()

    def discard(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop(self) -> None:
        # kbv's judge and sandbox die with kbv (their parent-death signal).
        with self._lock:
            self.stopped = True
            procs = list(self._procs)
        for proc in procs:
            proc.terminate()


def _run(argv: List[str], env: Optional[Dict[str, str]], backstop: float,
         live: Optional[_LiveProcesses]) -> subprocess.CompletedProcess:
    """Run kbv to completion; kill it past ``backstop`` seconds or when the caller is
    interrupted (KeyboardInterrupt)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", env=env)
    if live is not None:
        live.add(proc)
    try:
        stdout, stderr = proc.communicate(timeout=backstop)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        raise KbvNoVerdictError(f"kbv eval did not finish within {backstop:.0f} s; killed it",
                                argv=argv, returncode=proc.returncode,
                                output=stdout + stderr) from None
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        if live is not None:
            live.discard(proc)
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _status(returncode: int) -> str:
    return f"killed by signal {-returncode}" if returncode < 0 else f"exit status {returncode}"


def _failed_item(error: KbvError, protocol: str) -> Verdict:
    """The placeholder evaluate_many returns for an item kbv could not evaluate."""
    if isinstance(error, KbvInternalError):
        error.verdict.error = error
        return error.verdict
    return Verdict(schema="", protocol=protocol, outcome=Outcome.INTERNAL_ERROR,
                   reason=f"{type(error).__name__}: {error.message}", stage="",
                   output_tail=error.output, error=error)


def evaluate_many(pairs: Iterable[Tuple[Source, Source]], *, jobs: Optional[int] = None,
                  device: Union[str, Sequence[str]] = "cuda:0", protocol: str = "strict",
                  timing: bool = True, **options: Any) -> List[Verdict]:
    """Evaluate many (problem, candidate) pairs; the verdicts come back in input order.

    Each pair is one :func:`evaluate` call (``options`` are its keyword arguments), each in its
    own kbv process, ``jobs`` at a time on a thread pool. ``device`` may be a list (e.g.
    ``["cuda:0", "cuda:1"]``): every job then holds one device while it runs, and the jobs are
    spread evenly over the devices.

    ``jobs`` defaults to one per device when ``timing`` is on (two evaluations timed on one GPU,
    or on the same CPU cores, would slow each other down and spoil the speedups), and to
    ``min(4, CPU count)`` per device when it is off. Builds run inside each job (kbv's build
    cache is keyed by the candidate's hash: a source seen before is not built again).
    KeyboardInterrupt stops the running kbv processes and starts no more.

    One item never loses the others: an item kbv could not evaluate (an ``internal_error``
    verdict, a usage error such as a missing file, no verdict at all) comes back as a
    :class:`Verdict` with ``outcome == "internal_error"`` and the exception in
    ``verdict.error``; it is kbv's or the caller's fault, not the candidate's, so leave it out
    of any score. Only a missing kbv executable raises (:class:`KbvNotFoundError`), before any
    work starts.
    """
    items = list(pairs)
    devices = [device] if isinstance(device, str) else list(device)
    if not devices:
        raise ValueError("evaluate_many: device is an empty list")
    options["kbv_path"] = find_kbv(options.get("kbv_path"))  # raises before any work
    if jobs is None:
        jobs = len(devices) if timing else len(devices) * min(4, os.cpu_count() or 1)
    if jobs < 1:
        raise ValueError(f"evaluate_many: jobs={jobs} must be at least 1")
    jobs = max(1, min(jobs, len(items)))
    # One slot per job, spread round-robin over the devices; a job holds its slot's device.
    slots: "queue.Queue[str]" = queue.Queue()
    for i in range(jobs):
        slots.put(devices[i % len(devices)])

    def one(pair: Tuple[Source, Source], live: _LiveProcesses) -> Verdict:
        problem, candidate = pair
        slot = slots.get()
        try:
            return evaluate(problem, candidate, device=slot, protocol=protocol, timing=timing,
                            _live=live, **options)
        except KbvError as e:
            return _failed_item(e, protocol)
        finally:
            slots.put(slot)

    if not items:
        return []
    live = _LiveProcesses()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="kbv")
    try:
        futures = [pool.submit(one, pair, live) for pair in items]
        return [f.result() for f in futures]
    except BaseException:  # Ctrl-C: start nothing more, stop what runs
        live.stop()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
