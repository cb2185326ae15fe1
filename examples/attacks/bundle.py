#!/usr/bin/env python3
"""Makes attack candidates self-contained: kbv's sandbox imports a copy of the candidate file
alone (never the folder it came from), so an attack's helper module (_attack_common.py) and its
settings (a port, a socket path) travel inside the file.

    python examples/attacks/bundle.py [--set NAME=VALUE ...] SRC:DEST ...

Each DEST is SRC with a prelude that registers _attack_common (with SETTINGS) as a module.
"""
import argparse
from pathlib import Path

HELPER = Path(__file__).resolve().parent / "_attack_common.py"


def prelude(settings: dict) -> str:
    return (
        "# Bundled by examples/attacks/bundle.py: the helper module and settings below travel in the file.\n"
        "import sys as _kbv_sys, types as _kbv_types\n"
        "_kbv_helper = _kbv_types.ModuleType('_attack_common')\n"
        f"exec(compile({HELPER.read_text()!r}, '_attack_common.py', 'exec'), _kbv_helper.__dict__)\n"
        f"_kbv_helper.SETTINGS.update({settings!r})\n"
        "_kbv_sys.modules['_attack_common'] = _kbv_helper\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("pairs", nargs="+", metavar="SRC:DEST")
    args = parser.parse_args()
    settings = dict(s.split("=", 1) for s in args.set)
    head = prelude(settings)
    for pair in args.pairs:
        src, dest = pair.split(":", 1)
        Path(dest).write_text(head + Path(src).read_text())


if __name__ == "__main__":
    main()
