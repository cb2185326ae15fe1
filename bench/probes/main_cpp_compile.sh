#!/usr/bin/env bash
# What a leaner main.cpp would save (session 19): load_inline's main.cpp for one function, compiled
# with torch/extension.h as torch writes it, and with kbv's lean binding (torch/python.h's includes
# less the C++ frontend: src/core/binding_prelude.hpp) in its place; each without and
# with a precompiled header, g++ with torch's flags for main.cpp (no -O, as load_inline). CPU
# seconds (user + system) of each compile, and the weak symbols each object emits.
#   bench/probes/main_cpp_compile.sh [WORKDIR]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)/src/core/binding_prelude.hpp
w=${1:-/tmp/kbv-main-cpp-probe}; mkdir -p "$w/pch/torch"; cd "$w"
py=$(command -v python3)
T=$("$py" -c 'import torch.utils.cpp_extension as c; print(c.include_paths()[0])')
PYINC=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
F=(-DTORCH_EXTENSION_NAME=probe_ext -DTORCH_API_INCLUDE_EXTENSION_H -isystem "$T" -isystem "$T/torch/csrc/api/include"
   -isystem "$PYINC" -fPIC -std=c++17 -Winvalid-pch)
body='torch::Tensor relu_cuda(torch::Tensor x);
PYBIND11_MODULE(probe_ext, m) { m.def("relu_cuda", torch::wrap_pybind_function(relu_cuda), "relu_cuda"); }'
printf '#include <torch/extension.h>\n%s\n' "$body" > full.cpp
# kbv's lean binding as the sandbox uses it (src/core/binding_prelude.hpp's list).
{ echo '#pragma once'; sed -n '/kBindingHeaders = {/,/};/p' "$src" | grep -o '"[^"]*"' | tr -d '"' | sed 's/.*/#include <&>/'; } > prelude.h
printf '#include <prelude.h>\n%s\n' "$body" > lean.cpp
t() { /usr/bin/time -f "$1: %U + %S s of CPU" c++ "${F[@]}" "${@:2}" 2>&1 | grep -v "pragma once\|\^~\||" | tail -1; }
t "torch/extension.h, no PCH" -c full.cpp -o full.o
t "lean binding, no PCH" -I. -c lean.cpp -o lean.o
c++ "${F[@]}" -x c++-header "$T/torch/extension.h" -o pch/torch/extension.h.gch 2>/dev/null
c++ "${F[@]}" -x c++-header prelude.h -o prelude.h.gch 2>/dev/null
t "torch/extension.h, its PCH" -Ipch -c full.cpp -o full.o
t "lean binding, its PCH" -I. -c lean.cpp -o lean.o
echo "weak symbols: torch/extension.h $(nm full.o | grep -c ' W '), lean $(nm lean.o | grep -c ' W ')"
