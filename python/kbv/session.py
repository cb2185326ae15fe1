"""kbv.Session: batches of evaluations, grouped by problem, on one or more devices.

An RL step scores many completions of the same problem. A Session takes them as a batch, groups
the items by problem (same file, or the same source text) and splits each group into as many
runs as evaluations may go at once (``jobs``). Each run is one ``kbv eval PROBLEM C1 C2 ...``:
one judge kept warm across its candidates (its interpreter, ``import torch`` and CUDA context
start once, ~3 s on an H100; each candidate still gets a sandbox of its own, started while the
one before it is evaluated on a GPU). A run of one candidate is a plain ``kbv eval``.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

from .binary import find_kbv
from .errors import KbvDeviceError, KbvError, KbvInternalError
from .evaluate import EvalOptions, LiveProcesses, Staging, hidden_from_candidates, options_with, run_many, run_one
from .sources import Completion, File, Source, Text, as_source, content_key, source_key
from .verdict import Outcome, Verdict

Devices = Union[str, Sequence[str]]


@dataclass
class ProblemGroup:
    """The items of one batch that share a problem, in input order (``indices`` into the batch)."""

    key: str  #: the problem's absolute path, or the SHA-256 of its source
    problem: Union[File, Text, Completion]
    indices: List[int] = field(default_factory=list)


def group_by_problem(problems: Sequence[Union[File, Text, Completion]]) -> List[ProblemGroup]:
    """The groups of a batch, in the order each problem first appears."""
    groups: "dict[str, ProblemGroup]" = {}
    for i, problem in enumerate(problems):
        key = source_key(problem)
        groups.setdefault(key, ProblemGroup(key, problem)).indices.append(i)
    return list(groups.values())


def _default_jobs(devices: Sequence[str], timing: bool) -> int:
    """Evaluations at once for a batch: untimed, ``min(4, CPUs)`` per device. Timed, two runs per
    device, which take turns on it (a timed evaluation holds it alone): each run's next candidate
    starts up (its sandbox's ``import torch``, ~3 s on an H100; with a judge per item, the judge's
    too) while the other run's candidate is timed. One warm run per device was 1.4x slower: its
    sandboxes started ahead were not ready by their turns (bench/RESULTS.md, session 25). The warm
    judge waiting for its turn holds a CUDA context meanwhile; strict's device_busy does not take
    such an idle kbv judge for another tenant (docs/checks.md)."""
    if not timing:
        return len(devices) * min(4, os.cpu_count() or 1)
    return 2 * len(devices)


def _placeholder(error: KbvError, protocol: str) -> Verdict:
    """The verdict a batch returns for an item kbv could not evaluate."""
    if isinstance(error, KbvInternalError):
        error.verdict.error = error
        return error.verdict
    return Verdict(schema="", protocol=protocol, outcome=Outcome.INTERNAL_ERROR,
                   reason=f"{type(error).__name__}: {error.message}", stage="",
                   output_tail=error.output, error=error)


def _copy(verdict: Verdict, candidate: Union[File, Text, Completion]) -> Verdict:
    """A verdict of its own for a repeated item: parsed again from kbv's JSON (a placeholder,
    which has none, is copied), naming the item's own file when it is one."""
    if not verdict.raw:
        return dataclasses.replace(verdict)
    raw = json.loads(json.dumps(verdict.raw))
    if isinstance(candidate, File) and isinstance(raw.get("candidate"), dict):
        raw["candidate"]["path"] = str(Path(os.fspath(candidate.path)).expanduser().absolute())
    copy = Verdict.from_dict(raw)
    copy.api_seconds, copy.error = verdict.api_seconds, verdict.error
    return copy


class Session:
    """Evaluations with shared settings, one at a time or as batches grouped by problem::

        with kbv.Session(device="auto", protocol="strict", time_budget=2) as session:
            verdicts = session.evaluate_completions(problem_path, replies)   # input order
            verdicts = session.evaluate_many([(problem, kbv.Text(src)), ...], timing=False)

    ``device`` is ``auto`` (the default: the first GPU when there is one, else the CPU),
    ``cuda:N``, ``cuda``, ``cpu``, or a list of devices (``["cuda:0", "cuda:1"]``) that a batch
    spreads its jobs over, each job holding one device while it runs. ``jobs`` is how many runs
    go at once, each one ``kbv eval`` whose judge stays warm for its share of a group's items: by
    default two per device when timing (kbv evaluations of one device take turns, a timed one
    holding it alone; each run's next candidate starts up while the other's is timed),
    ``min(4, CPU count)`` per device untimed. ``warm=False`` gives every item a judge of its own
    (a ``kbv eval`` each, as :func:`kbv.evaluate`): the same verdicts, slower; for comparing the
    two. Other keyword arguments are :func:`kbv.evaluate`'s options (``protocol``, ``timing``,
    ``time_budget``, ``size``, ``kbv_path``, ...); every call may override them.

    The kbv executable is found when the Session is made (:class:`KbvNotFoundError` then, not
    midway through a batch). ``close()`` (or leaving the ``with`` block) ends the session; it
    holds no process between calls (a judge stays warm within one call's group, not across calls).
    """

    def __init__(self, *, device: Devices = "auto", jobs: Optional[int] = None, warm: bool = True,
                 **options: Any) -> None:
        self._devices = self._device_list(device)
        self._jobs = jobs
        self._warm = warm
        self._options = EvalOptions(device=self._devices[0], **options)
        self._binary = find_kbv(self._options.kbv_path)
        self._closed = False

    # -- settings ---------------------------------------------------------------------------

    @staticmethod
    def _device_list(device: Devices) -> List[str]:
        devices = [device] if isinstance(device, str) else list(device)
        if not devices:
            raise ValueError("kbv.Session: device is an empty list")
        return devices

    @property
    def devices(self) -> List[str]:
        """The devices a batch spreads over."""
        return list(self._devices)

    @property
    def options(self) -> EvalOptions:
        """The session's evaluation options."""
        return self._options

    def _options_for(self, overrides: dict) -> Tuple[EvalOptions, List[str]]:
        if self._closed:
            raise RuntimeError("kbv.Session is closed")
        devices = self._device_list(overrides.pop("device")) if "device" in overrides else self._devices
        o = options_with(self._options, device=devices[0], **overrides)
        if "kbv_path" in overrides:
            find_kbv(o.kbv_path)
        return o, devices

    def _binary_for(self, o: EvalOptions) -> str:
        return self._binary if o.kbv_path == self._options.kbv_path else find_kbv(o.kbv_path)

    # -- one evaluation ---------------------------------------------------------------------

    def evaluate(self, problem: Source, candidate: Source, **overrides: Any) -> Verdict:
        """One evaluation with the session's options (``overrides`` change some for this call).
        Raises as :func:`kbv.evaluate` does."""
        o, devices = self._options_for(dict(overrides))
        [verdict] = self._run_batch([as_source(problem, "problem")], [as_source(candidate, "candidate")],
                                    o, devices, jobs=1, placeholders=False)
        return verdict

    # -- batches ----------------------------------------------------------------------------

    def evaluate_many(self, pairs: Iterable[Tuple[Source, Source]], *, jobs: Optional[int] = None,
                      **overrides: Any) -> List[Verdict]:
        """Evaluate (problem, candidate) pairs; the verdicts come back in input order.

        Problems and candidates are typed as in :func:`kbv.evaluate` (a bare str candidate is a
        TypeError, raised before any work). The items are grouped by problem and run group by
        group, ``jobs`` at a time (see the class). KeyboardInterrupt stops the running kbv
        processes and starts no more.

        The same candidate code twice for one problem (from text or files) is judged once, and
        each item gets its own copy of that verdict: GRPO groups often repeat a completion, and
        two evaluations of one source at once would wait on one build-cache entry, one after the
        other. For that reason too, the same code for other problems is evaluated one problem
        after the other.

        One item never loses the others: an item kbv could not evaluate (an ``internal_error``
        verdict, a usage error such as a missing file, no verdict at all) comes back as a
        :class:`Verdict` with ``outcome == "internal_error"`` and the exception in
        ``verdict.error``; it is kbv's or the caller's fault, not the candidate's, so leave it
        out of any score. A device that is not there (:class:`KbvDeviceError`) stops the batch
        and raises: every item would fail the same way.
        """
        o, devices = self._options_for(dict(overrides))
        items = list(pairs)
        problems, candidates = [], []
        for n, pair in enumerate(items):
            try:
                problem, candidate = pair
            except (TypeError, ValueError):
                raise TypeError(f"evaluate_many: item {n} is not a (problem, candidate) pair") from None
            problems.append(as_source(problem, "problem"))
            candidates.append(as_source(candidate, "candidate"))
        return self._run_batch(problems, candidates, o, devices, jobs=jobs, placeholders=True)

    def evaluate_completions(self, problem: Source, completions: Iterable[Union[str, Source]],
                             *, jobs: Optional[int] = None, **overrides: Any) -> List[Verdict]:
        """Evaluate a group of completions of one problem (what GRPO samples per prompt), in
        order. A ``str`` is an LLM's reply (:class:`kbv.Completion`: its first fenced code block,
        or the whole reply when it has none); ``kbv.Text`` / ``kbv.File`` / a path are taken as
        they are. Otherwise as :meth:`evaluate_many`."""
        candidates = [Completion(c) if isinstance(c, str) else c for c in completions]
        return self.evaluate_many([(problem, c) for c in candidates], jobs=jobs, **overrides)

    def _run_batch(self, problems: List[Union[File, Text, Completion]],
                   candidates: List[Union[File, Text, Completion]], o: EvalOptions, devices: List[str],
                   *, jobs: Optional[int], placeholders: bool) -> List[Verdict]:
        if not candidates:
            return []
        binary = self._binary_for(o)
        hidden = None if o.hidden_test is None else as_source(o.hidden_test, "hidden_test")
        if jobs is None:
            jobs = self._jobs
        if jobs is None:
            jobs = _default_jobs(devices, o.timing)
        if jobs < 1:
            raise ValueError(f"jobs={jobs} must be at least 1")
        jobs = min(jobs, len(candidates))
        # One slot per job, spread round-robin over the devices; a job holds its slot's device.
        slots: "queue.Queue[str]" = queue.Queue()
        for i in range(jobs):
            slots.put(devices[i % len(devices)])

        staging = Staging(o.env)
        # No sandbox of the batch sees into another's candidate, whichever kbv process runs it.
        o = options_with(o, extra_args=tuple(o.extra_args) + hidden_from_candidates(staging, candidates))
        live = LiveProcesses()
        groups = group_by_problem(problems)

        def chunk(problem_path: str, hidden_path: Optional[str], indices: List[int],
                  after: "List[concurrent.futures.Future]") -> "List[Verdict]":
            """Some of a group's items, one kbv eval for them all (one warm judge)."""
            concurrent.futures.wait(after)  # the same code's earlier evaluations, submitted earlier
            slot = slots.get()
            started = time.monotonic()
            try:
                paths = [staging.path_of(candidates[i], "candidate.py") for i in indices]
                if len(indices) == 1:  # a plain kbv eval
                    try:
                        results = [run_one(binary, problem_path, paths[0], hidden_path,
                                           str(staging.folder / f"verdict-{indices[0]}.json"),
                                           options_with(o, device=slot), live)]
                    except KbvDeviceError:
                        raise
                    except KbvError as e:
                        results = [e]
                else:
                    results = run_many(binary, problem_path, paths, hidden_path,
                                       str(staging.folder / f"verdicts-{indices[0]}.jsonl"),
                                       options_with(o, device=slot), live)
                out = []
                for result in results:
                    if isinstance(result, KbvError):
                        if not placeholders:
                            raise result
                        result = _placeholder(result, o.protocol)
                        result.api_seconds = (time.monotonic() - started) / len(indices)
                    out.append(result)
                return out
            finally:
                slots.put(slot)

        pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="kbv")
        try:
            hidden_path = None if hidden is None else staging.path_of(hidden, "hidden.py")
            chunks: "List[Tuple[List[int], concurrent.futures.Future]]" = []
            first_of: "dict[int, int]" = {}  # a repeated candidate -> its first item in the group
            latest: "dict[str, concurrent.futures.Future]" = {}  # code -> the chunk that last had it
            for group in groups:  # group by group: each group's chunks keep one judge warm each
                problem_path = staging.path_of(group.problem, "problem.py")
                seen: "dict[str, int]" = {}
                unique: List[int] = []
                for index in group.indices:
                    key = content_key(candidates[index])
                    if key in seen:
                        first_of[index] = seen[key]
                    else:
                        seen[key] = index
                        unique.append(index)
                # As many chunks as evaluations may run at once, each a run of the group's items
                # (cold: one item each).
                n = min(jobs, len(unique)) if self._warm else len(unique)
                bounds = [len(unique) * k // n for k in range(n + 1)]
                for k in range(n):
                    indices = unique[bounds[k]:bounds[k + 1]]
                    keys = [content_key(candidates[i]) for i in indices]
                    # Another group's evaluation of the same code: wait for it, one at a time
                    # (the pool takes work in order, so that one runs or has run: no deadlock).
                    after = list({id(latest[key]): latest[key] for key in keys if key in latest}.values())
                    future = pool.submit(chunk, problem_path, hidden_path, indices, after)
                    for key in keys:
                        latest[key] = future
                    chunks.append((indices, future))
            done, _ = concurrent.futures.wait([f for _, f in chunks],
                                              return_when=concurrent.futures.FIRST_EXCEPTION)
            for f in done:
                if f.exception() is not None:
                    raise f.exception()
            verdict_of: "dict[int, Verdict]" = {}
            for indices, future in chunks:
                verdict_of.update(zip(indices, future.result()))
            return [verdict_of[i] if i in verdict_of else _copy(verdict_of[first_of[i]], candidates[i])
                    for i in range(len(candidates))]
        except BaseException:  # Ctrl-C, a missing device: start nothing more, stop what runs
            live.stop()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            staging.close()

    # -- life -------------------------------------------------------------------------------

    def close(self) -> None:
        """End the session. Calls after it raise RuntimeError."""
        self._closed = True

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def evaluate_many(pairs: Iterable[Tuple[Source, Source]], *, jobs: Optional[int] = None,
                  device: Devices = "auto", **options: Any) -> List[Verdict]:
    """Evaluate many (problem, candidate) pairs in a one-off :class:`Session`; the verdicts
    come back in input order. See :meth:`Session.evaluate_many` (grouping, placeholders,
    devices) and :func:`kbv.evaluate` (options, how problems and candidates are typed)."""
    return Session(device=device, jobs=jobs, **options).evaluate_many(pairs)
