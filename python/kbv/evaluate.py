"""One evaluation: one ``kbv eval`` subprocess, its arguments, and reading its verdict.

The subprocess is the isolation boundary for the caller: a candidate that segfaults, hangs or
floods its output ends as that candidate's verdict inside kbv (judge + sandbox, as on the
command line), and even a failure of kbv itself only ends one child process.
:func:`evaluate` is one call; :class:`kbv.Session` (session.py) runs batches through the same
:func:`run_one`.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .binary import find_kbv
from .errors import KbvDeviceError, KbvError, KbvInternalError, KbvNoVerdictError, KbvUsageError
from .sources import File, Source, Text, Completion, as_source, source_code
from .verdict import Outcome, Verdict

# kbv's own defaults (src/core/defaults.hpp), used only to size the wall-clock backstop below.
_COMPILE_TIMEOUT_DEFAULT = 900.0
_RUN_TIMEOUT_DEFAULT = 600.0
# What kbv may need beyond its two limits (start-up, a killed worker's stacks, writing the JSON)
# before the API gives up on the process itself.
_TORCH_COMPILE_ALLOWANCE = 900  # kbv's own allowance for compiling the torch_compile baseline
_BACKSTOP_MARGIN_SECONDS = 300.0
# The longest a kbv eval waits for its turn on the device (kbv's kMaxDeviceWaitSeconds, docs/timing.md
# "Turns on a device"): other evaluations of the device may come first.
_DEVICE_WAIT_SECONDS = 3600


@dataclass(frozen=True)
class EvalOptions:
    """The ``kbv eval`` options of one evaluation (see :func:`evaluate` for each). ``None`` keeps
    kbv's default."""

    protocol: str = "strict"
    device: str = "auto"
    precision: str = "fp32"
    timing: bool = True
    time_budget: Optional[float] = None
    compile_timeout: Optional[float] = None
    run_timeout: Optional[float] = None
    tolerance: Optional[float] = None
    build_dir: Optional[Union[str, "os.PathLike[str]"]] = None
    size: Optional[str] = None
    sandbox_memory: Optional[float] = None
    hidden_test: Optional[Source] = None
    torch_compile: bool = False
    kbv_path: Optional[Union[str, "os.PathLike[str]"]] = None
    env: Optional[Mapping[str, str]] = None
    extra_args: Sequence[str] = field(default_factory=tuple)

    def backstop_seconds(self) -> float:
        """How long the API lets one kbv process run before killing it."""
        return ((self.compile_timeout or _COMPILE_TIMEOUT_DEFAULT) + (self.run_timeout or _RUN_TIMEOUT_DEFAULT)
                + (self.time_budget or 0) + _BACKSTOP_MARGIN_SECONDS
                + (_TORCH_COMPILE_ALLOWANCE if self.torch_compile else 0)
                + _DEVICE_WAIT_SECONDS)


def staging_root(env: Optional[Mapping[str, str]] = None) -> str:
    """Where source text is written: under kbv's cache folder as the kbv it starts finds it
    (its environment: ours with ``env`` over it; src/core/cache_dir.cpp), not under /tmp, which
    the sandbox replaces with one of its own."""
    env = {**os.environ, **(env or {})}
    cache = env.get("KBV_CACHE") or (os.path.join(env["HOME"], ".cache", "kbv") if env.get("HOME") else None)
    if cache is None:
        return tempfile.gettempdir()
    root = os.path.join(os.path.abspath(cache), "api")
    os.makedirs(root, exist_ok=True)
    return root


def hidden_from_candidates(staging: "Staging", candidates: Sequence[Union[File, Text, Completion]]) -> Tuple[str, ...]:
    """kbv eval's arguments that hide, from every sandbox of a batch, the folders its candidates
    come from: the staging root (every staged completion, this batch's and any other's) and each
    file's folder. kbv hides each candidate's own folder and the others of its command line; a
    batch split over several kbv processes names the rest here."""
    folders = [str(staging.root)]
    for c in candidates:
        if source_code(c) is None:
            path = os.fspath(c.path)
            # as named, and where a linked file really lies
            for folder in (os.path.dirname(os.path.abspath(path)), os.path.dirname(os.path.realpath(path))):
                if folder not in folders and os.path.isdir(folder):
                    folders.append(folder)
    return tuple(a for folder in folders for a in ("--hide-from-candidates", folder))


class Staging:
    """A temporary folder for the source text of one call or one batch, removed on close.

    Only the caller (and kbv's judge, which runs as the caller) reads it: the sandbox imports a
    copy of its candidate that the judge makes in the sandbox's own tmp, so no sandbox can read
    another completion of the batch, or a verdict written here."""

    def __init__(self, env: Optional[Mapping[str, str]] = None) -> None:
        self.root = staging_root(env)
        self._tmp = tempfile.TemporaryDirectory(prefix="kbv-py-", dir=self.root)
        self.folder = Path(self._tmp.name)
        self.folder.chmod(0o700)
        self._count = 0
        self._lock = threading.Lock()

    def path_of(self, value: Union[File, Text, Completion], name: str) -> str:
        """A path for kbv: the file's own path, or the source written to a fresh folder."""
        code = source_code(value)
        if code is None:
            return os.fspath(value.path)
        with self._lock:
            self._count += 1
            folder = self.folder / f"{self._count}"
        folder.mkdir(mode=0o700)
        folder.chmod(0o700)
        path = folder / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(code)
        return str(path)

    def close(self) -> None:
        self._tmp.cleanup()


def _number(value: Optional[float]) -> Optional[str]:
    return None if value is None else repr(float(value))


def eval_argv(binary: str, problem: str, candidates: Sequence[str], out_path: str, hidden_test: Optional[str],
              o: EvalOptions, *, lines: bool = False) -> List[str]:
    """kbv eval's command line: the verdict written to ``out_path`` as JSON (``--json``, one
    candidate), or with ``lines`` one verdict per line (``--jsonl``, any number)."""
    argv = [binary, "eval", problem, *candidates, "--protocol", o.protocol, "--device", o.device,
            "--precision", o.precision, "--jsonl" if lines else "--json", out_path, "--quiet"]
    options = {"--time-budget": _number(o.time_budget), "--compile-timeout": _number(o.compile_timeout),
               "--run-timeout": _number(o.run_timeout), "--tolerance": _number(o.tolerance),
               "--build-dir": None if o.build_dir is None else os.fspath(o.build_dir), "--size": o.size,
               "--sandbox-memory": _number(o.sandbox_memory), "--hidden-test": hidden_test}
    for flag, value in options.items():
        if value is not None:
            argv += [flag, value]
    if not o.timing:
        argv.append("--no-timing")
    if o.torch_compile:
        argv.append("--torch-compile")
    return argv + [str(a) for a in o.extra_args]


class LiveProcesses:
    """The kbv processes of one batch, so that an interrupted batch can stop them."""

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
         live: Optional[LiveProcesses]) -> subprocess.CompletedProcess:
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


def run_one(binary: str, problem_path: str, candidate_path: str, hidden_path: Optional[str],
            json_path: str, o: EvalOptions, live: Optional[LiveProcesses] = None) -> Verdict:
    """Run one ``kbv eval`` on staged paths and return its verdict, with ``api_seconds`` set.
    Raises what :func:`evaluate` documents."""
    started = time.monotonic()
    argv = eval_argv(binary, problem_path, [candidate_path], json_path, hidden_path, o)
    child_env = None if o.env is None else {**os.environ, **o.env}
    done = _run(argv, child_env, o.backstop_seconds(), live)
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
    verdict.api_seconds = time.monotonic() - started
    return _checked(verdict, argv, output, o)


def _checked(verdict: Verdict, argv: List[str], output: str, o: EvalOptions) -> Verdict:
    """``verdict`` as the API returns it, or the exception it stands for: kbv's own failure, or a
    device that is not there."""
    if verdict.outcome == Outcome.INTERNAL_ERROR:
        raise KbvInternalError(f"kbv failed, not the candidate (internal_error): {verdict.reason}",
                               verdict=verdict, argv=argv, returncode=0, output=output)
    if verdict.outcome == Outcome.SKIPPED and verdict.stage == "device":
        # The judge could not open the device asked for (e.g. cuda:0 on a machine without a
        # GPU): the caller's setting, not the candidate's result. Never a silent `skipped`.
        raise KbvDeviceError(f"device {o.device!r} is not usable here: {verdict.reason}; "
                             "pass device='auto' (a GPU when there is one, else the CPU) or device='cpu'",
                             verdict=verdict, argv=argv, returncode=0, output=output)
    return verdict


VerdictOrError = Union[Verdict, KbvError]


def run_many(binary: str, problem_path: str, candidate_paths: Sequence[str], hidden_path: Optional[str],
             jsonl_path: str, o: EvalOptions, live: Optional[LiveProcesses] = None) -> List[VerdictOrError]:
    """One ``kbv eval PROBLEM C1 C2 ... --jsonl`` on staged paths: one judge kept warm across the
    candidates (its interpreter and CUDA context start once; each candidate has its own sandbox).
    Per candidate, in order: its verdict (``api_seconds``: the batch's wall time over its
    candidates), or the :class:`KbvError` :func:`run_one` would raise for it. A missing file is that
    item's usage error alone. Raises KbvDeviceError (the whole batch would fail alike)."""
    started = time.monotonic()
    results: List[Optional[VerdictOrError]] = [None] * len(candidate_paths)
    present = []
    for i, path in enumerate(candidate_paths):
        if os.path.isfile(path):
            present.append(i)
        else:
            results[i] = KbvUsageError(f"candidate '{path}' is not a readable file")
    if present:
        argv = eval_argv(binary, problem_path, [candidate_paths[i] for i in present], jsonl_path, hidden_path, o,
                         lines=True)
        child_env = None if o.env is None else {**os.environ, **o.env}
        backstop = _DEVICE_WAIT_SECONDS + len(present) * (o.backstop_seconds() - _DEVICE_WAIT_SECONDS)
        done = _run(argv, child_env, backstop, live)
        output = done.stdout + done.stderr
        lines: List[str] = []
        try:
            with open(jsonl_path, encoding="utf-8") as f:
                lines = [line for line in f if line.strip()]
        except OSError:
            pass
        share = (time.monotonic() - started) / len(present)
        for k, i in enumerate(present):
            if done.returncode == 2:
                results[i] = KbvUsageError("kbv eval refused its arguments (exit status 2)", argv=argv,
                                           returncode=2, output=output)
                continue
            try:
                verdict = Verdict.from_dict(json.loads(lines[k]))
            except (IndexError, ValueError) as e:
                why = (f"kbv eval failed ({_status(done.returncode)}) without a verdict for it"
                       if done.returncode != 0 else f"kbv eval exited 0 but its verdict could not be read: {e}")
                results[i] = KbvNoVerdictError(why, argv=argv, returncode=done.returncode, output=output)
                continue
            verdict.api_seconds = share
            try:
                results[i] = _checked(verdict, argv, output, o)
            except KbvDeviceError:
                raise
            except KbvError as e:
                results[i] = e
    return [r for r in results if r is not None]


def evaluate(problem: Source, candidate: Source, *, protocol: str = "strict",
             device: str = "auto", precision: str = "fp32", timing: bool = True,
             time_budget: Optional[float] = None, compile_timeout: Optional[float] = None,
             run_timeout: Optional[float] = None, tolerance: Optional[float] = None,
             build_dir: Optional[Union[str, "os.PathLike[str]"]] = None, size: Optional[str] = None,
             sandbox_memory: Optional[float] = None, hidden_test: Optional[Source] = None,
             torch_compile: bool = False, kbv_path: Optional[Union[str, "os.PathLike[str]"]] = None,
             env: Optional[Mapping[str, str]] = None, extra_args: Sequence[str] = ()) -> Verdict:
    """Evaluate one candidate (``ModelNew``) against one KernelBench problem (``Model``).

    Runs ``kbv eval PROBLEM CANDIDATE --json ...`` (the same engine, judge/sandbox isolation and
    verdict as the command line) and returns its verdict as a :class:`Verdict`.

    What ``problem`` and ``candidate`` are is said by their type, never guessed from their
    content (kbv/sources.py):

    - ``kbv.File(path)`` or a ``pathlib.Path``: a file;
    - ``kbv.Text(source)``: Python source, as given;
    - ``kbv.Completion(reply)``: an LLM's reply, whose first fenced code block is the candidate
      (the whole reply when it has no closed block);
    - a bare ``str``: a path for ``problem`` and ``hidden_test``; for ``candidate`` a TypeError
      (say Completion, Text or File).

    An empty, unparsable or ModelNew-less candidate is a ``compile_error`` verdict, never an
    exception: refusing to answer scores as a failure. Source text is written to a temporary
    folder under kbv's cache (``$KBV_CACHE/api`` or ``~/.cache/kbv/api``; not ``/tmp``, which
    the candidate's sandbox replaces with a private one) that is removed afterwards; the
    verdict's ``problem.path``/``candidate.path`` then name files that no longer exist.

    Options map to ``kbv eval``'s (``kbv eval --help``); ``None`` keeps kbv's default:

    - ``protocol``: ``standard``, ``verified`` or ``strict`` (docs/protocols.md).
    - ``device``: ``auto`` (the default: the first GPU when there is one, else the CPU; the
      verdict's ``device.kind`` says which), ``cuda:N``, ``cuda`` or ``cpu``. A CUDA device on a
      machine without one raises :class:`KbvDeviceError`.
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
    - ``hidden_test``: a KernelBench-Verified hidden-test file (path, ``kbv.File`` or
      ``kbv.Text``) whose ``get_hidden_inputs()`` lists are checked too, as distributions
      ``hidden_1``..``hidden_N``.
    - ``torch_compile``: also time ``torch.compile(Model)``; see
      ``verdict.timing.speedup_vs("torch_compile")`` and ``timing.torch_compile_seconds``.
    - ``kbv_path``: the kbv executable (see :func:`kbv.find_kbv` for the search order).
    - ``env``: variables added to this process's environment for kbv.
    - ``extra_args``: more ``kbv eval`` arguments, passed as they are.

    ``verdict.api_seconds`` is the wall-clock time of the call (kbv's start-up included);
    ``verdict.wall_seconds`` is kbv's own.

    Raises:
        TypeError / ValueError: a str candidate, or a path that is not one (before any work).
        KbvNotFoundError: no kbv executable.
        KbvUsageError: kbv refused the arguments (exit status 2), e.g. a missing file.
        KbvDeviceError: the device asked for is not there (a KbvUsageError).
        KbvNoVerdictError: kbv ended without a readable verdict, or ran past
            compile_timeout + run_timeout + 300 s (the process is then killed).
        KbvInternalError: the verdict's outcome is ``internal_error`` (kbv's fault, not the
            candidate's; ``error.verdict`` has it). Evaluate again; do not score it.
    """
    o = EvalOptions(protocol=protocol, device=device, precision=precision, timing=timing,
                    time_budget=time_budget, compile_timeout=compile_timeout, run_timeout=run_timeout,
                    tolerance=tolerance, build_dir=build_dir, size=size, sandbox_memory=sandbox_memory,
                    hidden_test=hidden_test, torch_compile=torch_compile, kbv_path=kbv_path, env=env,
                    extra_args=tuple(extra_args))
    return evaluate_with(o, problem, candidate)


def evaluate_with(o: EvalOptions, problem: Source, candidate: Source) -> Verdict:
    """:func:`evaluate` with its options already gathered."""
    problem_src = as_source(problem, "problem")
    candidate_src = as_source(candidate, "candidate")
    hidden_src = None if o.hidden_test is None else as_source(o.hidden_test, "hidden_test")
    binary = find_kbv(o.kbv_path)
    staging = Staging(o.env)
    try:
        problem_path = staging.path_of(problem_src, "problem.py")
        candidate_path = staging.path_of(candidate_src, "candidate.py")
        hidden_path = None if hidden_src is None else staging.path_of(hidden_src, "hidden.py")
        return run_one(binary, problem_path, candidate_path, hidden_path,
                       str(staging.folder / "verdict.json"), o)
    finally:
        staging.close()


def options_with(o: EvalOptions, **changes) -> EvalOptions:
    """``o`` with some options changed; an unknown name is a TypeError."""
    return replace(o, **changes)
