"""What a problem or a candidate is: a file, source text, or an LLM's completion. Said, not guessed.

The API never looks inside a string to decide whether it is a path or code (a one-line or empty
completion used to be taken for a file name). The caller says which:

- :class:`File` (or any ``os.PathLike``, e.g. ``pathlib.Path``): a file on disk;
- :class:`Text`: Python source, evaluated exactly as given (empty or unparsable text is the
  candidate's ``compile_error``, never an exception);
- :class:`Completion`: an LLM's whole reply; the candidate is its first fenced code block, by the
  same rule as ``kbv generate`` (:func:`extract_code`), so a reply scored here and the
  ``_kernel.py`` that ``kbv generate`` writes from it are the same bytes.

A bare ``str`` is a path where a file is the norm (``problem``, ``hidden_test``: the command
line's convention), and an error as a ``candidate``, where it is usually a completion.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union


@dataclass(frozen=True)
class File:
    """A Python file on disk (problem, candidate or hidden-test file)."""

    path: Union[str, "os.PathLike[str]"]

    def __post_init__(self) -> None:
        _check_path(self.path)


@dataclass(frozen=True)
class Text:
    """Python source, evaluated exactly as given. Empty or unparsable source is the candidate's
    ``compile_error`` (a reward of zero), not an exception."""

    source: str

    def __post_init__(self) -> None:
        if not isinstance(self.source, str):
            raise TypeError(f"kbv.Text takes the source as a str, not {type(self.source).__name__}")


@dataclass(frozen=True)
class Completion:
    """An LLM's reply. The candidate is its first fenced code block (:func:`extract_code`); a
    reply with no closed block is evaluated whole, so bare code still runs and prose, a refusal
    or a reply cut at the token limit is a ``compile_error``."""

    text: str
    code: str = field(init=False, repr=False, compare=False)
    #: True when the code came from a fenced block, False when the reply is evaluated whole.
    fenced: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"kbv.Completion takes the reply as a str, not {type(self.text).__name__}")
        block = extract_code(self.text)
        object.__setattr__(self, "code", self.text if block is None else block)
        object.__setattr__(self, "fenced", block is not None)


#: What ``problem``, ``candidate`` and ``hidden_test`` accept (see the module's docstring).
Source = Union[File, Text, Completion, str, "os.PathLike[str]"]


def _fence(line: str) -> Optional[str]:
    """A fence line is up to 3 spaces then three backticks (Markdown's rule); the text after the
    backticks (a language tag, or nothing), or None when the line is no fence."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith("```"):
        return None
    return stripped[3:]


def extract_code(text: str) -> Optional[str]:
    """The body of the first fenced code block of ``text`` (```python, ```py, ```cuda or a bare
    ```; the tag is not checked), each line ending in a newline, carriage returns dropped; None
    when there is no block or its fence is never closed (a reply cut at the token limit).

    The rule of ``kbv generate`` (src/generate/code_extract.cpp), kept identical so that a reply
    scored through the API and the ``_kernel.py`` written by ``kbv generate`` match.
    """
    inside = False
    body = []
    for line in text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        tag = _fence(line)
        if not inside:
            inside = tag is not None
            continue
        if tag is not None and tag.strip(" \t") == "":
            return "".join(body)
        body.append(line + "\n")
    return None


def _check_path(value: Union[str, "os.PathLike[str]"]) -> None:
    text = os.fspath(value)
    if not isinstance(text, str):
        raise TypeError("a path must be a str or os.PathLike of str")
    if text == "" or "\n" in text or "\0" in text:
        shown = text if len(text) < 60 else text[:57] + "..."
        raise ValueError(f"{shown!r} is not a file path; to pass Python source, wrap it: kbv.Text(source), "
                         "or kbv.Completion(reply) for an LLM's reply")


def as_source(value: Source, role: str) -> Union[File, Text, Completion]:
    """``value`` as File, Text or Completion, by its type only. ``role`` is ``problem``,
    ``candidate`` or ``hidden_test``: a bare str is a path for the first and last, a TypeError
    for a candidate."""
    if isinstance(value, (File, Text, Completion)):
        return value
    if isinstance(value, os.PathLike):
        return File(value)
    if isinstance(value, str):
        if role == "candidate":
            raise TypeError("a str candidate is ambiguous: pass kbv.Completion(reply) for an LLM's reply "
                            "(its first fenced code block), kbv.Text(source) for Python source, or "
                            "pathlib.Path(path) / kbv.File(path) for a file")
        return File(value)
    raise TypeError(f"{role}: expected kbv.File, kbv.Text, kbv.Completion, a path or a str, "
                    f"not {type(value).__name__}")


def source_code(value: Union[File, Text, Completion]) -> Optional[str]:
    """The Python source to stage for kbv, or None for a file (passed as its path)."""
    if isinstance(value, Text):
        return value.source
    if isinstance(value, Completion):
        return value.code
    return None


def source_key(value: Union[File, Text, Completion]) -> str:
    """A key that is equal for the same problem: the absolute path of a file (its level and id
    come from its path), the SHA-256 of source text. Batches group their items by it."""
    code = source_code(value)
    if code is None:
        return "file:" + str(Path(os.fspath(value.path)).expanduser().absolute())
    return "text:" + _sha256(code.encode("utf-8", "surrogatepass"))


def content_key(value: Union[File, Text, Completion]) -> str:
    """A key that is equal for the same candidate code, from a file or from text: the SHA-256
    of the bytes kbv will read (kbv's build cache is keyed by the source's hash too). A file
    that cannot be read keeps its path as the key (kbv then says what is wrong with it)."""
    code = source_code(value)
    if code is not None:
        return _sha256(code.encode("utf-8", "surrogatepass"))
    try:
        return _sha256(Path(os.fspath(value.path)).expanduser().read_bytes())
    except OSError:
        return source_key(value)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
