"""Finding the kbv executable that the API drives."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Optional, Union

from .errors import KbvNotFoundError

PathLike = Union[str, "os.PathLike[str]"]


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _source_tree_binary() -> Optional[Path]:
    # python/kbv/binary.py -> the repository root, when the package runs from the source tree
    # (PYTHONPATH=python or `pip install -e ./python`); an installed copy has no such root.
    root = Path(__file__).resolve().parents[2]
    candidate = root / "build" / "bin" / "kbv"
    if (root / "CMakeLists.txt").is_file() and _executable(candidate):
        return candidate
    return None


def _installed_binary() -> "tuple[Optional[Path], Optional[str]]":
    """The binary that ``pip install ./python`` recorded (python/setup.py writes
    ``kbv/_install.json``): (its path when executable, the recorded path in any case)."""
    record = Path(__file__).resolve().with_name("_install.json")
    try:
        recorded = json.loads(record.read_text(encoding="utf-8")).get("kbv")
    except (OSError, ValueError, AttributeError):
        return None, None
    if not isinstance(recorded, str):
        return None, None
    return (Path(recorded) if _executable(Path(recorded)) else None), recorded


def find_kbv(kbv_path: Optional[PathLike] = None) -> str:
    """Return the path of the kbv executable to run.

    In order: ``kbv_path`` if given; else the environment variable ``KBV_BIN`` (the executable,
    or the folder holding it, e.g. ``build/bin``); else the build that ``pip install ./python``
    recorded (python/setup.py); else ``kbv`` on ``PATH``; else the source tree's
    ``build/bin/kbv`` when this package runs from the kbv repository (editable install or
    ``PYTHONPATH=python``). An explicit ``kbv_path`` or ``KBV_BIN`` that does not name an
    executable is an error, never skipped. kbv finds its judge and sandbox next to itself, so
    point at the kbv of a build folder (``build/bin/kbv``), not a copy.

    Raises :class:`KbvNotFoundError` when none is found.
    """
    for source, value in (("kbv_path", kbv_path), ("KBV_BIN", os.environ.get("KBV_BIN"))):
        if value is None or str(value) == "":
            continue
        path = Path(value).expanduser()
        if path.is_dir():
            path = path / "kbv"
        if not _executable(path):
            raise KbvNotFoundError(f"{source}={value!s}: {path} is not an executable kbv; "
                                   "point it at build/bin/kbv (scripts/setup.sh builds it)")
        return str(path.resolve())
    installed, recorded = _installed_binary()
    if installed:
        return str(installed)
    on_path = shutil.which("kbv")
    if on_path:
        return on_path
    in_tree = _source_tree_binary()
    if in_tree:
        return str(in_tree)
    gone = f"the kbv recorded at install ({recorded}) is gone; reinstall (pip install ./python) or " if recorded else ""
    raise KbvNotFoundError(f"kbv executable not found: {gone}pass kbv_path=, set KBV_BIN=/path/to/build/bin/kbv, "
                           "or put build/bin on PATH (scripts/setup.sh builds it)")
