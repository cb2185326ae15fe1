#include "judge/torch_pch.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include "core/binding_prelude.hpp"
#include "core/sha256.hpp"

namespace fs = std::filesystem;
namespace py = pybind11;

namespace kbv::judge {
namespace {

// Three variants of torch/extension.h (~750 MB each) and three of kbv/binding.h (~500 MB), and room to spare.
constexpr unsigned long long kMinFreeBytes = 5ULL << 30;

// The flags torch's own use_pch path compiles extension.h with (torch.utils.cpp_extension), plus
// the -O levels LLM-written load_inline calls pass most often.
constexpr const char* kMakeSource = R"PY(
import ctypes, fcntl, json, os, shutil, subprocess, sysconfig, time
import torch.utils.cpp_extension as ext

VARIANTS = {"O0": [], "O2": ["-O2"], "O3": ["-O3"]}

def _die_with_parent():
    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL: no g++ outlives a killed judge

def _link(target, link):
    if os.path.realpath(link) != os.path.realpath(target):
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(target, link)

def make(root):
    includes = ext.include_paths()
    # (the name builds include, the header's file): torch's own, and kbv's lean binding (written
    # by the judge beside it: core/binding_prelude.hpp).
    headers = [("torch/extension.h", os.path.join(includes[0], "torch", "extension.h")),
               ("kbv/binding.h", os.path.join(root, "kbv", "binding.h"))]
    flags = ["-DTORCH_API_INCLUDE_EXTENSION_H"]
    for d in includes + [sysconfig.get_path("include")]:
        flags += ["-isystem", d]
    flags += ["-fPIC", "-std=c++17"]
    compiler = ext.get_cxx_compiler()
    report = {"compiler": compiler, "folder": root, "made": [], "present": [], "failed": {}, "seconds": 0.0}
    start = time.monotonic()
    # The lock is kbv's alone (0600): sandboxes read this folder, and one that could open the
    # lock could hold it and stall every maker after it.
    fd = os.open(os.path.join(root, ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one maker at a time; the next finds the work done
        # torch's header beside its .gch folder (a link to torch's): g++ records the PCH's header
        # at this path, and a second #include of it (a candidate's own, after load_inline's) must
        # find a real file there for #pragma once to hold.
        os.makedirs(os.path.join(root, "torch"), mode=0o755, exist_ok=True)
        _link(headers[0][1], os.path.join(root, "torch", "extension.h"))
        stage = os.path.join(root, ".stage-%s-%d" % (os.uname().nodename, os.getpid()))
        shutil.rmtree(stage, ignore_errors=True)
        running = []
        for include, header in headers:
            if not os.path.isfile(header):
                report["failed"][include] = "missing"
                continue
            gch_dir = os.path.join(root, include + ".gch")
            os.makedirs(gch_dir, mode=0o755, exist_ok=True)
            for variant, extra in VARIANTS.items():
                name = variant if include == headers[0][0] else "binding-" + variant
                final = os.path.join(gch_dir, variant + ".gch")
                if os.path.exists(final):
                    report["present"].append(name)
                    continue
                # Each variant alone in a staging copy of the layout: g++ tries every file in a
                # .gch folder, and a half-written one there would stop every build ("cannot read PCH").
                folder = os.path.join(stage, name)
                os.makedirs(os.path.join(folder, include + ".gch"))
                _link(header, os.path.join(folder, include))
                tmp = os.path.join(folder, include + ".gch", variant + ".gch")
                log = open(os.path.join(root, name + ".log"), "w")
                cmd = [compiler, "-x", "c++-header", header, "-o", tmp] + flags + extra
                running.append((name, include, extra, folder, tmp, final, log,
                                subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)))
        for name, include, extra, folder, tmp, final, log, proc in running:
            code = proc.wait()
            if code == 0:
                with open(tmp, "rb") as f:
                    os.fsync(f.fileno())
                # It must be usable: a compile that fails unless g++ takes this very file.
                probe = os.path.join(folder, "probe.cpp")
                with open(probe, "w") as f:
                    f.write("#include <%s>\nint kbv_pch_probe;\n" % include)
                check = subprocess.run([compiler, "-fsyntax-only", "-Winvalid-pch", "-Werror=invalid-pch", "-I", folder, probe]
                                       + flags + extra, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
                code = check.returncode
            log.close()
            if code == 0:
                os.chmod(tmp, 0o644)
                os.replace(tmp, final)
                report["made"].append(name)
                report["present"].append(name)
            else:
                report["failed"][name] = "exit %d (see %s.log)" % (code, os.path.join(root, name))
        shutil.rmtree(stage, ignore_errors=True)
    report["seconds"] = round(time.monotonic() - start, 1)
    return json.dumps(report)
)PY";

// Ours alone: a real folder, owned by this uid, writable by nobody else.
bool private_folder(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 022) == 0;
}

// What identifies the headers a PCH was made from.
std::string headers_key() {
  std::error_code ec;
  fs::path include = fs::canonical(fs::path(KBV_TORCH_INCLUDE_DIR), ec);
  std::string id = include.string();
  for (const char* file : {"torch/extension.h", "torch/version.h"}) {
    struct stat st {};
    if (::stat((include / file).c_str(), &st) == 0)
      id += "\n" + std::string(file) + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
            std::to_string(st.st_mtim.tv_nsec);
  }
  // and kbv's binding header: g++ does not check a PCH against its header's text either.
  id += "\n" + binding_header_text();
  return sha256_hex(id).substr(0, 16);
}

// <dir>/kbv/binding.h as core/binding_prelude.hpp writes it, replaced in whole when it differs:
// sandboxes include it whether its PCH is made yet or not, so it is there before any build.
// POSIX calls, not std::filesystem: the judge links libtorch, whose own copies of some of those
// functions are what the dynamic linker finds (fs::remove_all and fs::rename crash in them).
bool write_binding_header(const fs::path& dir) {
  const std::string folder = (dir / "kbv").string(), file = folder + "/binding.h";
  ::mkdir(folder.c_str(), 0755);
  ::chmod(folder.c_str(), 0755);
  if (!private_folder(folder)) return false;
  const std::string text = binding_header_text();
  std::ifstream in(file, std::ios::binary);
  if (in && std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == text) return true;
  const std::string tmp = folder + "/.binding.h." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return false;
  }
  ::chmod(tmp.c_str(), 0644);
  return ::rename(tmp.c_str(), file.c_str()) == 0;
}

}  // namespace

std::string torch_pch_dir(const std::string& build_root) {
  std::error_code ec;
  fs::path root = fs::absolute(build_root, ec);
  if (ec || !private_folder(root)) return "";
  fs::path dir = root / "torch-pch";
  fs::create_directory(dir, ec);
  ::chmod(dir.c_str(), 0755);  // the sandboxes' uids read it
  if (!private_folder(dir)) return "";
  dir /= headers_key();
  fs::create_directory(dir, ec);
  ::chmod(dir.c_str(), 0755);
  return private_folder(dir) && write_binding_header(dir) ? dir.string() : "";
}

int make_torch_pch(const std::string& build_root, std::string* summary) {
  const std::string dir = torch_pch_dir(build_root);
  auto skip = [&](const std::string& why) {
    if (summary) *summary = nlohmann::json{{"made", nlohmann::json::array()}, {"skipped", why}}.dump();
    return 1;
  };
  if (dir.empty()) return skip("the build folder " + build_root + " is not this user's alone (owner, group/other write, or a link)");
  const fs::path default_variant = fs::path(dir) / "torch" / "extension.h.gch" / "O0.gch";
  if (!fs::exists(default_variant)) {
    struct statvfs fsinfo {};
    if (::statvfs(dir.c_str(), &fsinfo) == 0 &&
        static_cast<unsigned long long>(fsinfo.f_bavail) * fsinfo.f_frsize < kMinFreeBytes)
      return skip("less than 3 GiB free in " + dir);
  }
  py::dict scope;
  scope["__builtins__"] = py::module_::import("builtins");
  py::exec(kMakeSource, scope);
  std::string report = py::str(scope["make"](dir));
  if (summary) *summary = report;
  return fs::exists(default_variant) ? 0 : 1;
}

}  // namespace kbv::judge
