"""Typed verdicts: dataclasses mirroring kbv's verdict JSON (schema ``kbv.verdict/1``).

docs/verdict-schema.md describes every field; the C++ definition is src/core/verdict.hpp. Each
object keeps the JSON it was read from in ``raw``, so a field that a newer kbv adds is still
there (``verdict.raw["new_field"]``) and parsing never fails on it. A part that did not run
(``build``, ``correctness``, ``timing``, ``memory``, ``limits``) is ``None``. A number that JSON
could not hold (NaN, written as ``null``) is ``None``.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .errors import KbvError

SCHEMA = "kbv.verdict/1"


class Outcome:
    """The outcome names kbv writes (docs/verdict-schema.md, "Outcomes"); plain strings, so an
    outcome that a newer kbv adds still parses."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    SKIPPED = "skipped"
    PROBLEM_ERROR = "problem_error"
    PROTOCOL_VIOLATION = "protocol_violation"
    INTERNAL_ERROR = "internal_error"


# Flags that inform rather than accuse (docs/checks.md, "(info)").
INFORMATIONAL_FLAGS = frozenset({"no_custom_kernel", "degenerate", "build_cache_tampered", "lower_precision",
                                 "sandbox_account_differs"})


def _convert(value: Any, kind: Any) -> Any:
    if isinstance(kind, list):  # [Class]: a JSON array of objects
        return [_convert(v, kind[0]) for v in value] if isinstance(value, list) else []
    if isinstance(kind, type) and hasattr(kind, "from_dict"):
        return kind.from_dict(value) if isinstance(value, dict) else None
    return value


class _FromJson:
    """from_dict for the dataclasses below: known fields by name, nested ones through
    ``_nested``, and the whole object kept in ``raw``."""

    _nested: Dict[str, Any] = {}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]):
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in ("raw", "error", "api_seconds") or f.name not in data:
                continue  # not from the JSON, or absent: keep the dataclass default
            value = data[f.name]
            kwargs[f.name] = _convert(value, cls._nested[f.name]) if f.name in cls._nested else value
        return cls(**kwargs, raw=dict(data))


def _raw() -> Any:
    return field(default_factory=dict, repr=False, compare=False)


@dataclass
class FileRef(_FromJson):
    path: str = ""
    sha256: str = ""
    raw: Dict[str, Any] = _raw()


@dataclass
class ProblemInfo(_FromJson):
    path: str = ""
    sha256: str = ""
    level: int = 0  #: from the ``levelN`` folder, 0 when unknown
    id: int = -1  #: from ``{id}_{Name}.py``, -1 when unknown
    name: str = ""
    size: str = "default"  #: ``default`` or ``small`` (the problem's KBV_SMALL)
    hidden_tests: Optional[FileRef] = None  #: the hidden-test file also checked (``hidden_test=``)
    raw: Dict[str, Any] = _raw()
    _nested = {"hidden_tests": FileRef}


@dataclass
class DeviceInfo(_FromJson):
    kind: str = ""  #: ``cuda`` or ``cpu``
    name: str = ""
    capability: str = ""
    l2_bytes: int = 0
    memory_bytes: int = 0
    driver: str = ""
    peak_dram_bytes_per_s: Optional[float] = 0.0
    raw: Dict[str, Any] = _raw()


@dataclass
class Provenance(_FromJson):
    kbv_version: str = ""
    git_commit: str = ""
    torch_version: str = ""
    cuda_version: str = ""
    python_version: str = ""
    hostname: str = ""
    started_at: str = ""  #: UTC, ISO 8601
    argv: List[str] = field(default_factory=list)
    raw: Dict[str, Any] = _raw()


@dataclass
class ExtensionBuild(_FromJson):
    requested_name: str = ""  #: the name the candidate passed to load_inline
    unique_name: str = ""  #: the name kbv built it as
    build_dir: str = ""
    seconds: Optional[float] = 0.0
    cuda: bool = False
    raw: Dict[str, Any] = _raw()


@dataclass
class BuildResult(_FromJson):
    seconds: Optional[float] = 0.0  #: importing the candidate, extension builds included
    build_dir: str = ""
    log_path: str = ""
    log_tail: str = ""  #: the last 8 KiB of the compiler output
    extensions: List[ExtensionBuild] = field(default_factory=list)
    raw: Dict[str, Any] = _raw()
    _nested = {"extensions": [ExtensionBuild]}


@dataclass
class NumericsCheck(_FromJson):
    """Errors against a float64 run of the reference, where the tolerance check failed."""

    factor: Optional[float] = 0.0
    candidate_max_abs_err: Optional[float] = 0.0
    eager_max_abs_err: Optional[float] = 0.0
    candidate_rms_err: Optional[float] = 0.0
    eager_rms_err: Optional[float] = 0.0
    within: bool = False
    note: str = ""
    raw: Dict[str, Any] = _raw()


@dataclass
class Distribution(_FromJson):
    """One input distribution of the protocol (e.g. ``D1_x1``, ``D4_neg``) and how the candidate
    did on it."""

    name: str = ""
    kind: str = ""
    status: str = ""  #: ``pass``, ``fail`` or ``skipped``
    reason: str = ""
    max_abs_err: Optional[float] = 0.0
    max_rel_err: Optional[float] = 0.0
    mismatched: int = 0  #: elements outside atol + rtol * |reference|
    numel: int = 0
    trivial_pass: str = ""  #: a trivial output that also passes here; empty when none
    numerics: Optional[NumericsCheck] = None
    raw: Dict[str, Any] = _raw()
    _nested = {"numerics": NumericsCheck}

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass
class Correctness(_FromJson):
    atol: Optional[float] = 0.0
    rtol: Optional[float] = 0.0
    distributions: List[Distribution] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)
    raw: Dict[str, Any] = _raw()
    _nested = {"distributions": [Distribution]}

    @property
    def failed(self) -> List[Distribution]:
        """The distributions that failed, in run order."""
        return [d for d in self.distributions if d.status == "fail"]


@dataclass
class Series(_FromJson):
    """The timed samples of one callable: ``candidate``, ``eager_tf32_off``, ``eager_tf32_on``."""

    name: str = ""
    samples: int = 0
    median_ms: Optional[float] = 0.0
    q1_ms: Optional[float] = 0.0
    q3_ms: Optional[float] = 0.0
    min_ms: Optional[float] = 0.0
    max_ms: Optional[float] = 0.0
    mean_ms: Optional[float] = 0.0
    samples_ms: List[Optional[float]] = field(default_factory=list)
    raw: Dict[str, Any] = _raw()


@dataclass
class Speedup(_FromJson):
    """Median over rounds of baseline_ms / candidate_ms, its 95% CI and a comparison word."""

    baseline: str = ""
    median: Optional[float] = 0.0
    ci_low: Optional[float] = 0.0
    ci_high: Optional[float] = 0.0
    compare: str = ""  #: ``FASTER``, ``SLOWER``, ``SAME`` or ``UNSURE``
    raw: Dict[str, Any] = _raw()


@dataclass
class Timing(_FromJson):
    clock: str = ""  #: ``cuda_events`` or ``cpu_steady_clock``
    primary_baseline: str = ""  #: the protocol's baseline series
    l2_flush: bool = False
    l2_flush_bytes: int = 0
    input_sets: int = 1
    warmup_rounds: int = 0
    rounds: int = 0
    seconds: Optional[float] = 0.0
    stop_reason: str = ""  #: ``converged`` or ``budget``
    target_rel_ci: Optional[float] = 0.01
    series: List[Series] = field(default_factory=list)
    speedups: List[Speedup] = field(default_factory=list)
    hop_ms: Optional[float] = 0.0
    hop_samples: int = 0
    gated: bool = False
    checked_calls: int = 0
    #: seconds torch.compile(Model) took (``torch_compile=True``); None when not asked for
    torch_compile_seconds: Optional[float] = None
    #: CPU: the share of the baselines' timed time the judge's threads waited for a core; above
    #: 0.1 the host was contended and every speedup is UNSURE (docs/timing.md)
    cpu_wait_share: Optional[float] = None
    #: candidate samples credited the timer's floor; half or more: no figure (docs/timing.md)
    floor_samples: int = 0
    raw: Dict[str, Any] = _raw()
    _nested = {"series": [Series], "speedups": [Speedup]}

    #: above this cpu_wait_share the host was contended (kbv's core/speed_bound.hpp)
    CONTENDED_WAIT_SHARE = 0.10

    @property
    def no_figure(self) -> bool:
        """True when kbv says the speedup is no figure to credit, as its report does: half the
        candidate's samples or more at the timer's floor, or CPU timing on a contended host (or
        one whose contention could not be read)."""
        candidate = next((s for s in self.series if s.name == "candidate"), None)
        if candidate is not None and candidate.samples and 2 * self.floor_samples >= candidate.samples:
            return True
        if self.clock == "cpu_steady_clock":
            return self.cpu_wait_share is None or self.cpu_wait_share > self.CONTENDED_WAIT_SHARE
        return False

    def speedup_vs(self, baseline: str) -> Optional[Speedup]:
        """The speedup against one baseline series (e.g. ``eager_tf32_off``), or None."""
        return next((s for s in self.speedups if s.baseline == baseline), None)

    @property
    def primary(self) -> Optional[Speedup]:
        """The speedup against the protocol's baseline (the first one when it is not named)."""
        return self.speedup_vs(self.primary_baseline) or (self.speedups[0] if self.speedups else None)


@dataclass
class MemoryUse(_FromJson):
    peak_allocated_bytes: int = 0  #: caching allocator peak during one forward
    peak_device_bytes: int = 0  #: all device allocations, raw cudaMalloc included
    resident_bytes: int = 0  #: held by the model between calls
    raw: Dict[str, Any] = _raw()

    @property
    def footprint_bytes(self) -> int:
        return self.resident_bytes + self.peak_device_bytes


@dataclass
class Memory(_FromJson):
    method: str = ""
    candidate: Optional[MemoryUse] = None
    baseline: Optional[MemoryUse] = None
    ratio_allocated: Optional[float] = 0.0
    ratio_device: Optional[float] = 0.0
    ratio_footprint: Optional[float] = 0.0  #: candidate / baseline footprint, what reports compare
    raw: Dict[str, Any] = _raw()
    _nested = {"candidate": MemoryUse, "baseline": MemoryUse}


@dataclass
class Flag(_FromJson):
    """An integrity flag of the strict protocol (docs/checks.md) or an informational mark."""

    name: str = ""
    evidence: str = ""
    raw: Dict[str, Any] = _raw()

    @property
    def informational(self) -> bool:
        return self.name in INFORMATIONAL_FLAGS


@dataclass
class Limits(_FromJson):
    compile_timeout_seconds: Optional[float] = 0.0
    run_timeout_seconds: Optional[float] = 0.0
    raw: Dict[str, Any] = _raw()


@dataclass
class Verdict(_FromJson):
    """The verdict of one (problem, candidate) evaluation.

    ``outcome`` is one of :class:`Outcome`'s names; ``reason`` says why in one line (empty when
    correct); ``stage`` is the last stage the evaluation reached. ``raw`` is the whole JSON
    object. ``error`` is set only on the placeholders :func:`kbv.evaluate_many` returns for an
    item kbv could not evaluate (outcome ``internal_error``). ``api_seconds`` is the wall-clock
    time the API spent on it; ``wall_seconds`` kbv's own.
    """

    schema: str = ""
    protocol: str = ""
    protocol_version: int = 0
    precision: str = ""
    outcome: str = ""
    reason: str = ""
    stage: str = ""
    problem: Optional[ProblemInfo] = None
    candidate: Optional[FileRef] = None
    device: Optional[DeviceInfo] = None
    provenance: Optional[Provenance] = None
    build: Optional[BuildResult] = None
    correctness: Optional[Correctness] = None
    timing: Optional[Timing] = None
    memory: Optional[Memory] = None
    custom_kernel: bool = False
    flags: List[Flag] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    output_tail: str = field(default="", repr=False)
    isolation: Dict[str, Any] = field(default_factory=dict, repr=False)
    wall_seconds: Optional[float] = 0.0
    stage_seconds: Dict[str, float] = field(default_factory=dict, repr=False)
    limits: Optional[Limits] = None
    raw: Dict[str, Any] = _raw()
    error: Optional[KbvError] = field(default=None, repr=False, compare=False)
    #: Seconds the Python API spent on this item, kbv's start-up and the wait included (set by
    #: kbv.evaluate / Session; None on a Verdict built from JSON).
    api_seconds: Optional[float] = field(default=None, repr=False, compare=False)
    _nested = {"problem": ProblemInfo, "candidate": FileRef, "device": DeviceInfo,
               "provenance": Provenance, "build": BuildResult, "correctness": Correctness,
               "timing": Timing, "memory": Memory, "flags": [Flag], "limits": Limits}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Verdict":
        """Build a Verdict from kbv's verdict JSON (a dict). Unknown fields stay in ``raw``."""
        if not isinstance(data, dict) or "outcome" not in data:
            raise ValueError("not a kbv verdict: no 'outcome' field")
        return super().from_dict(data)

    @property
    def correct(self) -> bool:
        """True when the outcome is ``correct``."""
        return self.outcome == Outcome.CORRECT

    @property
    def speedup(self) -> Optional[float]:
        """The headline speedup: median of baseline/candidate against the protocol's baseline;
        None without timing (``timing=False``, or the candidate was not correct) and where kbv
        says it is no figure (``timing.no_figure``: the timer's floor, a contended CPU), as kbv's
        report leaves it out. ``timing.primary.median`` is the measured ratio either way."""
        if self.timing is not None and self.timing.no_figure:
            return None
        primary = self.timing.primary if self.timing else None
        if primary is None or primary.median is None or math.isnan(primary.median):
            return None
        return primary.median

    @property
    def integrity_flags(self) -> List[Flag]:
        """The flags that accuse the candidate (informational marks left out)."""
        return [f for f in self.flags if not f.informational]

    @property
    def memory_ratio(self) -> Optional[float]:
        """Candidate / baseline memory footprint (CUDA, verified and strict only), or None."""
        return self.memory.ratio_footprint if self.memory else None

    def to_dict(self) -> Dict[str, Any]:
        """The verdict JSON as kbv wrote it."""
        return dict(self.raw)

    def summary(self) -> str:
        """One line: outcome, speedup when timed, flags, and the reason."""
        parts = [self.outcome]
        if self.speedup is not None:
            parts.append(f"{self.speedup:.3g}x")
        if self.flags:
            parts.append("flags: " + ",".join(f.name for f in self.flags))
        if self.reason:
            parts.append(self.reason)
        return " - ".join(parts)
