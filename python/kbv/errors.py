"""Exceptions of the kbv Python API.

Only kbv's own failures are exceptions. A candidate that does not compile, is wrong, crashes or
hangs is a :class:`~kbv.Verdict` with that outcome, never an exception.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:
    from .verdict import Verdict


class KbvError(Exception):
    """Base class: kbv could not give a verdict.

    ``argv``, ``returncode`` and ``output`` (what kbv printed, stdout then stderr) are set when a
    kbv process ran; ``str(error)`` includes kbv's output.
    """

    def __init__(self, message: str, *, argv: Optional[Sequence[str]] = None,
                 returncode: Optional[int] = None, output: str = "") -> None:
        self.message = message
        self.argv = list(argv) if argv is not None else None
        self.returncode = returncode
        self.output = output
        text = message
        if output.strip():
            text += "\nkbv said:\n" + output.rstrip()
        super().__init__(text)


class KbvNotFoundError(KbvError):
    """The kbv executable was not found (or is not executable). See :func:`kbv.find_kbv`."""


class KbvUsageError(KbvError):
    """kbv refused the arguments (exit status 2): an unknown value, a missing file, a bad limit."""


class KbvDeviceError(KbvUsageError):
    """The device asked for is not there (e.g. ``cuda:0`` on a machine without a GPU): the
    caller's setting, not the candidate's result, so never a ``skipped`` verdict. ``verdict``
    holds what kbv wrote. In a batch it stops the batch: every item would fail the same way."""

    def __init__(self, message: str, *, verdict: "Verdict", **kwargs) -> None:
        super().__init__(message, **kwargs)
        self.verdict = verdict


class KbvNoVerdictError(KbvError):
    """kbv ended without writing a readable verdict (kbv itself failed, or it ran past the
    wall-clock backstop of :func:`kbv.evaluate`)."""


class KbvInternalError(KbvError):
    """kbv wrote a verdict whose outcome is ``internal_error``: kbv or its environment failed
    (e.g. a judge that could not start), not the candidate. ``verdict`` holds that verdict.
    Never score it as the candidate's result; evaluate it again."""

    def __init__(self, message: str, *, verdict: "Verdict", **kwargs) -> None:
        super().__init__(message, **kwargs)
        self.verdict = verdict
