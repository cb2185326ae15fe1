#!/usr/bin/env bash
# Copies the headers that the GPU machine's image lacks (it has no package registry) into
# .gpu-deps/ (git-ignored), to be carried there with the device tool: carry [".gpu-deps"].
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu-deps && mkdir -p .gpu-deps/include
cp -r /usr/include/openssl .gpu-deps/include/
cp /usr/include/x86_64-linux-gnu/openssl/*.h .gpu-deps/include/openssl/
cp /usr/include/sqlite3.h /usr/include/sqlite3ext.h .gpu-deps/include/
cp -r /usr/include/x86_64-linux-gnu/curl .gpu-deps/include/ 2>/dev/null || cp -r /usr/include/curl .gpu-deps/include/
# The GPU copy of the tree has no .git: remember which commit (and whether edited) it is.
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!.gpu-deps' || echo -dirty)" > .gpu-deps/commit
du -sh .gpu-deps
