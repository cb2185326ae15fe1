#!/usr/bin/env bash
# Installs what kbv needs and builds it. Idempotent: a second run only rebuilds what changed.
#   scripts/setup.sh            # Debian packages, a venv with torch 2.11.0, then build/ (Release)
#   KBV_BUILD_DIR=... KBV_VENV=... scripts/setup.sh
#   KBV_PYTHON=/path/to/python scripts/setup.sh   # a Python that has torch already: no venv
#   KBV_SKIP_PACKAGES=1 scripts/setup.sh           # no apt (non-root, packages installed otherwise)
# On the GPU machine use scripts/gpu_check.sh instead (no package registry there).
set -euo pipefail
cd "$(dirname "$0")/.."

KBV_VENV="${KBV_VENV:-$HOME/.cache/kbv-venv}"
KBV_BUILD_DIR="${KBV_BUILD_DIR:-build}"
TORCH_VERSION="2.11.0"   # the GPU machine's torch: one code base builds in both places

say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }

# 1. Debian packages for the C++ side. The last five are for tests only (the HTML report's
# screenshot; the Slurm test, tests/slurm/, starts its own single-node Slurm and compares DBs
# with the sqlite3 shell): without them those tests skip.
required=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev
          libsqlite3-dev libssl-dev libcurl4-openssl-dev)
optional=(chromium slurmctld slurmd slurm-client munge sqlite3)
missing=() missing_required=()
if [ "${KBV_SKIP_PACKAGES:-0}" != 1 ] && command -v dpkg >/dev/null; then
  for p in "${required[@]}" "${optional[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  for p in "${required[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing_required+=("$p"); done
fi
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=sudo
    elif ((${#missing_required[@]})); then
      say "missing packages: ${missing_required[*]}; this user cannot install them (no root, no sudo)."
      say "ask for them (apt-get install ${missing_required[*]}), or install them another way and run"
      say "KBV_SKIP_PACKAGES=1 scripts/setup.sh"
      exit 1
    else
      say "note: test-only packages missing (${missing[*]}): the tests that need them skip"
      missing=()
    fi
  fi
  if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

# 2. Python with torch. KBV_PYTHON: an interpreter that already has torch, used as it is (no
# venv is made). Otherwise a venv shared by every checkout on this machine (it is 4-5 GB).
if [ -n "${KBV_PYTHON:-}" ]; then
  "$KBV_PYTHON" -c "import torch" 2>/dev/null || { say "KBV_PYTHON=$KBV_PYTHON cannot import torch"; exit 1; }
  say "using torch $("$KBV_PYTHON" -c 'import torch; print(torch.__version__)') from $KBV_PYTHON"
  KBV_PY_BIN="$(dirname "$KBV_PYTHON")"
else
  # The installed version from its metadata: importing torch to ask costs seconds on every run.
  if ! "$KBV_VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('torch').startswith('$TORCH_VERSION') else 1)" 2>/dev/null; then
    say "creating $KBV_VENV with torch==$TORCH_VERSION (a few minutes, once)"
    python3 -m venv "$KBV_VENV"
    "$KBV_VENV/bin/pip" install -q --upgrade pip
    "$KBV_VENV/bin/pip" install -q "torch==$TORCH_VERSION" numpy ninja
  fi
  # pytest runs the Python package's tests (tests/python).
  "$KBV_VENV/bin/python" -c "import pytest" 2>/dev/null || "$KBV_VENV/bin/pip" install -q pytest
  KBV_PYTHON="$KBV_VENV/bin/python"
  KBV_PY_BIN="$KBV_VENV/bin"
fi
# load_inline runs ninja from the candidate's process; make it findable.
export PATH="$KBV_PY_BIN:$PATH"

# 3. Configure and build.
if [ ! -f "$KBV_BUILD_DIR/CMakeCache.txt" ]; then
  say "configuring $KBV_BUILD_DIR"
  cmake -S . -B "$KBV_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKBV_PYTHON="$KBV_PYTHON" >/dev/null
fi
say "building $KBV_BUILD_DIR (the first build compiles LibTorch code: several minutes on 2 cores)"
cmake --build "$KBV_BUILD_DIR" -j"$(nproc)"
say "done: $KBV_BUILD_DIR/bin/kbv"
