"""Installing the kbv package records where its kbv binary is, so that ``pip install ./python``
needs no ``KBV_BIN``.

The package is pure Python; the binary it drives (kbv, kbv-judge, kbv-sandbox) is the CMake
build of this repository, which links LibTorch and embeds the Python of the venv it was built
against, so it is not copied into the wheel (kbv finds its judge and sandbox next to itself,
and their rpaths point into that build and venv). Instead the build step:

1. finds the repository above this folder (or ``$KBV_SOURCE_DIR``) and its build folder
   (``$KBV_BUILD_DIR``, relative to the repository, else ``build/``, as scripts/setup.sh uses);
2. brings that build up to date (``cmake --build``: a no-op when it is), or configures and
   builds it when there is none (minutes: LibTorch code), with ``$KBV_PYTHON`` or the
   installing interpreter as the Python whose torch the judge embeds;
   ``KBV_NO_BUILD=1`` skips this step and only looks;
3. writes the path of ``bin/kbv`` into the package as ``kbv/_install.json``, which
   :func:`kbv.find_kbv` reads after ``kbv_path=`` and ``$KBV_BIN``.

``KBV_SKIP_BINARY=1`` installs the API without a binary (give one at run time with ``KBV_BIN``
or ``PATH``). Editable installs (``pip install -e``) record nothing: they find the source
tree's ``build/bin/kbv`` directly.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
RECORD = "_install.json"


def _say(message):
    print(f"kbv setup: {message}", file=sys.stderr, flush=True)


def _repository():
    explicit = os.environ.get("KBV_SOURCE_DIR")
    root = Path(explicit).resolve() if explicit else HERE.parent
    if (root / "CMakeLists.txt").is_file() and (root / "apps" / "kbv").is_dir():
        return root
    return None


def _clean_env():
    # pip's isolated build environment hides the installing venv's packages (torch) from child
    # interpreters through these; CMake's probe of KBV_PYTHON must see them.
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME"):
        env.pop(name, None)
    return env


def _build(root, build_dir):
    python = os.environ.get("KBV_PYTHON") or sys.executable
    env = _clean_env()
    if not (build_dir / "CMakeCache.txt").is_file():
        _say(f"configuring {build_dir} (Release, LibTorch from {python}'s torch)")
        subprocess.run(["cmake", "-S", str(root), "-B", str(build_dir), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release", "-DKBV_WITH_TORCH=ON", f"-DKBV_PYTHON={python}"],
                       check=True, env=env)
    _say(f"building {build_dir} (a no-op when it is up to date; the first build takes minutes)")
    subprocess.run(["cmake", "--build", str(build_dir), "--target", "kbv", "kbv-judge", "kbv-sandbox"],
                   check=True, env=env)


def locate_binary():
    """The absolute path of the build's kbv, built or brought up to date first unless
    KBV_NO_BUILD=1. Raises SystemExit with what to do when there is none."""
    root = _repository()
    if root is None:
        raise SystemExit("kbv setup: no kbv repository above python/ (set KBV_SOURCE_DIR to the checkout, "
                         "or KBV_SKIP_BINARY=1 to install the API alone and set KBV_BIN at run time)")
    build_dir = root / os.environ.get("KBV_BUILD_DIR", "build")
    if os.environ.get("KBV_NO_BUILD") != "1":
        try:
            _build(root, build_dir)
        except (OSError, subprocess.CalledProcessError) as e:
            raise SystemExit(f"kbv setup: building {build_dir} failed ({e}); run scripts/setup.sh, "
                             "or set KBV_BUILD_DIR to a built folder and KBV_NO_BUILD=1") from None
    binary = build_dir / "bin" / "kbv"
    missing = [p.name for p in (binary, binary.with_name("kbv-judge"), binary.with_name("kbv-sandbox"))
               if not os.access(p, os.X_OK)]
    if missing:
        raise SystemExit(f"kbv setup: {build_dir / 'bin'} lacks {', '.join(missing)} (a build without "
                         "LibTorch has no judge); run scripts/setup.sh, or set KBV_BUILD_DIR")
    return str(binary.resolve()), str(root)


class BuildPyWithBinary(build_py):
    """build_py, then kbv/_install.json naming the binary (see the module's docstring)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("KBV_SKIP_BINARY") == "1":
            return
        binary, root = locate_binary()
        target = Path(self.build_lib) / "kbv" / RECORD
        target.write_text(json.dumps({"kbv": binary, "source": root}, indent=2) + "\n", encoding="utf-8")
        _say(f"recorded {binary} in {target.name}")


setup(cmdclass={"build_py": BuildPyWithBinary})
