#include "judge/torch_pch.hpp"

#include <sys/stat.h>

#include <filesystem>

#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

namespace fs = std::filesystem;
namespace py = pybind11;

namespace kbv::judge {
namespace {

// The flags torch's own use_pch path compiles extension.h with (torch.utils.cpp_extension), plus
// the -O levels LLM-written load_inline calls pass most often.
constexpr const char* kMakeSource = R"PY(
import fcntl, json, os, subprocess, sysconfig, time
import torch.utils.cpp_extension as ext

VARIANTS = {"O0": [], "O2": ["-O2"], "O3": ["-O3"]}

def make(root):
    includes = ext.include_paths()
    header = os.path.join(includes[0], "torch", "extension.h")
    flags = ["-DTORCH_API_INCLUDE_EXTENSION_H"]
    for d in includes + [sysconfig.get_path("include")]:
        flags += ["-isystem", d]
    flags += ["-fPIC", "-std=c++17"]
    compiler = ext.get_cxx_compiler()
    gch_dir = os.path.join(root, "torch", "extension.h.gch")
    os.makedirs(gch_dir, mode=0o755, exist_ok=True)
    for d in (os.path.join(root, "torch"), gch_dir):
        os.chmod(d, 0o755)
    report = {"compiler": compiler, "made": [], "present": [], "failed": {}, "seconds": 0.0}
    start = time.monotonic()
    with open(os.path.join(root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one maker at a time; the next finds the work done
        # The header itself beside its .gch folder (a link to torch's): g++ records the PCH's header
        # at this path, and a second #include of it (a candidate's own, after load_inline's) must
        # find a real file there for #pragma once to hold.
        link = os.path.join(root, "torch", "extension.h")
        if os.path.realpath(link) != os.path.realpath(header):
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(header, link)
        running = []
        for name, extra in VARIANTS.items():
            final = os.path.join(gch_dir, name + ".gch")
            if os.path.exists(final):
                report["present"].append(name)
                continue
            # Outside the .gch folder: g++ tries every file in it, a half-written one included.
            tmp = os.path.join(root, "." + name + ".gch.tmp")
            log = open(os.path.join(root, name + ".log"), "w")
            cmd = [compiler, "-x", "c++-header", header, "-o", tmp] + flags + extra
            running.append((name, tmp, final, log, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)))
        for name, tmp, final, log, proc in running:
            code = proc.wait()
            log.close()
            if code == 0:
                os.chmod(tmp, 0o644)
                os.replace(tmp, final)
                report["made"].append(name)
                report["present"].append(name)
            else:
                if os.path.exists(tmp):
                    os.remove(tmp)
                report["failed"][name] = "exit %d (see %s.log)" % (code, name)
    report["seconds"] = round(time.monotonic() - start, 1)
    return json.dumps(report)
)PY";

}  // namespace

std::string torch_pch_root(const std::string& build_root) {
  fs::path root = fs::absolute(fs::path(build_root) / "torch-pch");
  std::error_code ec;
  fs::create_directories(root, ec);
  ::chmod(root.c_str(), 0755);  // the sandboxes' uids read it
  return root.string();
}

int make_torch_pch(const std::string& build_root, std::string* summary) {
  py::dict scope;
  scope["__builtins__"] = py::module_::import("builtins");
  py::exec(kMakeSource, scope);
  std::string report = py::str(scope["make"](torch_pch_root(build_root)));
  if (summary) *summary = report;
  return fs::exists(fs::path(torch_pch_root(build_root)) / "torch" / "extension.h.gch" / "O0.gch") ? 0 : 1;
}

}  // namespace kbv::judge
