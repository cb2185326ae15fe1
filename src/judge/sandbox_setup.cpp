#include "judge/sandbox_setup.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "core/cache_dir.hpp"
#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace kbv::judge {
namespace {

// Names passed through from the judge's environment. Everything else (API keys, tokens, cloud
// credentials, KBV_* settings) stays out.
constexpr std::array<const char*, 16> kPassThrough{
    "PATH",        "LANG",          "LC_ALL",     "LC_CTYPE",       "CUDA_VISIBLE_DEVICES", "CUDA_HOME",
    "CUDA_PATH",   "LD_LIBRARY_PATH", "CC",       "CXX",            "CUDAHOSTCXX",          "MAX_JOBS",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "KBV_PYTHONPATH", "TORCH_CUDA_ARCH_LIST"};

// The files of already-loaded libraries whose names contain one of `parts` (from our own maps:
// the sandbox loads the same ones).
std::vector<std::string> loaded_libraries(const std::vector<std::string>& parts) {
  std::vector<std::string> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    for (const auto& part : parts)
      if (path.find(part) != std::string::npos && std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

// The host's top-level folders that hold its system (programs, libraries, configuration, installed
// software): the sandbox sees them as they are. Every other one (/home, /root, /srv, /mnt, /work,
// a CI runner's workspace...) is user data, of which it sees only what it needs.
const std::set<std::string> kSystemFolders = {"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt",
                                              "proc", "run", "sbin", "sys", "tmp", "usr", "var", "nix", "snap"};

std::vector<std::string> user_data_folders() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/", ec)) {
    std::error_code e;
    if (entry.is_directory(e) && !kSystemFolders.count(entry.path().filename().string())) out.push_back(entry.path().string());
  }
  out.push_back("/var/tmp");  // anyone's to write, like /tmp
  return out;
}

// What comes back beside a PATH entry whose tools read beside it: a venv's pyvenv.cfg and
// libraries (its ninja runs its python), CUDA's headers and libraries (nvcc), a conda
// environment whole, pyenv's root for its shims. Named parts only where the prefix may be a
// project folder (`python -m venv .`): never its other files.
std::vector<std::string> tool_prefix_parts(const fs::path& entry) {
  std::error_code ec;
  const fs::path prefix = entry.parent_path();
  std::vector<std::string> out;
  auto parts = [&](std::initializer_list<const char*> names) {
    for (const char* name : names)
      if (fs::exists(prefix / name, ec)) out.push_back((prefix / name).string());
  };
  if (entry.filename() == "shims" && fs::is_directory(prefix / "libexec", ec)) out.push_back(prefix.string());
  if (entry.filename() != "bin") return out;
  if (fs::exists(prefix / "conda-meta", ec)) out.push_back(prefix.string());
  else if (fs::exists(prefix / "pyvenv.cfg", ec)) parts({"pyvenv.cfg", "lib", "lib64", "include"});
  else if (fs::exists(entry / "nvcc", ec) && fs::exists(prefix / "include" / "cuda.h", ec))
    parts({"include", "lib", "lib64", "nvvm", "targets", "share", "extras"});
  return out;
}

// The folders the site's .pth files add to sys.path (editable installs): its imports need them.
std::vector<std::string> pth_folders(const std::string& site) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(site, ec)) {
    if (entry.path().extension() != ".pth") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      std::error_code e;
      if (!line.empty() && line[0] == '/' && fs::is_directory(line, e) && out.size() < 32) out.push_back(line);
    }
  }
  return out;
}

bool off(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "0";
}

}  // namespace

std::string sandbox_program() {
  if (const char* env = std::getenv("KBV_SANDBOX"); env && *env) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  fs::path candidate = self.parent_path() / "kbv-sandbox";
  if (ec || !fs::exists(candidate)) throw std::runtime_error("kbv-sandbox not found next to kbv-judge (or in $KBV_SANDBOX)");
  return candidate.string();
}

std::int64_t sandbox_uid(std::uint32_t sequence) {
  // pid_max is at most 2^22: no two live judges share a block of 255, and a judge's candidates
  // take its block's uids in turn (each ended, its processes gone, long before its uid comes round
  // again). Below 2^31, clear of the ranges systems hand to users and containers.
  constexpr std::int64_t kFirst = 0x40000000, kPerJudge = 255;
  return kFirst + (::getpid() % (1 << 22)) * kPerJudge + sequence % kPerJudge;
}

std::map<std::string, std::string> sandbox_environment(const std::string& tmp_dir) {
  std::map<std::string, std::string> env;
  for (const char* name : kPassThrough)
    if (const char* v = std::getenv(name)) env[name] = v;
  env["HOME"] = tmp_dir;
  env["TMPDIR"] = tmp_dir;
  env["TRITON_CACHE_DIR"] = tmp_dir + "/triton";
  env["PYTHONUNBUFFERED"] = "1";
  env["PYTHONDONTWRITEBYTECODE"] = "1";
  env["PYTHONNOUSERSITE"] = "1";
  return env;
}

constexpr std::uintmax_t kMaxCandidateBytes = 16u << 20;

void check_candidate_file(const std::string& candidate_path) {
  std::error_code ec;
  if (!fs::is_regular_file(candidate_path, ec)) throw std::runtime_error("'" + candidate_path + "' is not a regular file");
  if (fs::file_size(candidate_path, ec) > kMaxCandidateBytes)
    throw std::runtime_error("'" + candidate_path + "' is larger than " + std::to_string(kMaxCandidateBytes >> 20) + " MiB");
}

std::string copy_candidate_into(const std::string& candidate_path, const std::string& tmp_dir) {
  const fs::path dir = fs::path(tmp_dir) / "kbv-candidate";
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const fs::path name = fs::path(candidate_path).filename();
  const fs::path copy = dir / (name.empty() ? fs::path("candidate.py") : name);
  check_candidate_file(candidate_path);
  fs::copy_file(candidate_path, copy, fs::copy_options::overwrite_existing);
  fs::permissions(copy, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  return copy.string();
}

isolation::SandboxSpec candidate_sandbox_spec(const WorkerJob& job, const BuildCacheEntry& cache, const std::string& tmp_dir,
                                              std::uint32_t sequence) {
  isolation::SandboxSpec spec;
  spec.program = sandbox_program();
  spec.argv = {spec.program};
  spec.env = sandbox_environment(tmp_dir);
  spec.writable = {cache.dir, tmp_dir};
  spec.scratch = tmp_dir;
  spec.working_dir = tmp_dir;
  spec.limits.memory_bytes = job.sandbox_memory_bytes;
  // Its tmpfs folders (/tmp, /dev/shm, the scratch) are memory: none larger than its limit, even
  // where no memory cgroup counts their pages against it (RLIMIT_DATA does not).
  if (job.sandbox_memory_bytes > 0) spec.limits.tmp_bytes = std::min(spec.limits.tmp_bytes, job.sandbox_memory_bytes);
  spec.limits.max_processes = job.sandbox_max_processes;
  spec.use_namespaces = !off("KBV_SANDBOX_NAMESPACES");
  spec.use_landlock = !off("KBV_SANDBOX_LANDLOCK");
  spec.use_cgroup = !off("KBV_SANDBOX_CGROUP");
  spec.use_readonly_mounts = !off("KBV_SANDBOX_READONLY");
  spec.drop_capabilities = !off("KBV_SANDBOX_CAPS");
  spec.outer_uid = static_cast<std::uint32_t>(sandbox_uid(sequence));
  // What the sandbox reads to start: its Python's packages. The candidate it imports is its own
  // copy in its tmp (copy_candidate_into).
  spec.must_read = {KBV_SANDBOX_PYTHON_SITE, KBV_SANDBOX_PYTHON_HOME};
  for (const auto& lib : loaded_libraries({"libpython", "libtorch_cpu"})) spec.must_read.push_back(lib);
  // Of the build root it sees its own entry (and the torch PCH, when it may read it), and of
  // kbv's cache (the Python API's staging), the folder the candidate came from and its batch's
  // (kbv run's runs) only what it needs: no candidate reads another, even one whose sandbox
  // opened its entry to all, or another's verdict. What it needs beneath them comes back, and so
  // do the folders its environment names (its tools: PATH, CUDA_HOME...) and the parts of their
  // prefixes those tools read (tool_prefix_parts).
  for (const char* name : {"PATH", "LD_LIBRARY_PATH", "KBV_PYTHONPATH", "CUDA_HOME", "CUDA_PATH"}) {
    auto it = spec.env.find(name);
    if (it == spec.env.end()) continue;
    std::stringstream parts(it->second);
    for (std::string part; std::getline(parts, part, ':');) {
      if (part.empty()) continue;
      spec.private_keep.push_back(part);
      for (auto& extra : tool_prefix_parts(fs::path(part).lexically_normal())) spec.private_keep.push_back(std::move(extra));
    }
  }
  for (auto& folder : pth_folders(KBV_SANDBOX_PYTHON_SITE)) spec.private_keep.push_back(std::move(folder));
  // What it sees of the host's user data is an allow-list: beneath every top-level folder that is
  // not the system's, only what comes back. So no candidate file, hidden test, results DB or
  // anything else a user keeps there is in its sight, wherever it lies, named or not.
  spec.private_dirs = {fs::path(cache.dir).parent_path().string(), fs::absolute(default_cache_dir()).string()};
  for (auto& folder : user_data_folders()) spec.private_dirs.push_back(std::move(folder));
  auto holds_tools = [&](const std::string& folder) {
    std::error_code ec;
    const fs::path named = fs::path(folder).lexically_normal();
    const fs::path real = fs::weakly_canonical(folder, ec);
    auto beneath = [&](const std::string& p) {
      if (p.empty() || p[0] != '/') return false;
      for (const fs::path& q : {fs::path(p).lexically_normal(), fs::weakly_canonical(p, ec)})
        for (const fs::path& d : {named, real}) {
          auto rel = q.lexically_relative(d);
          if (!rel.empty() && *rel.begin() != "..") return true;
        }
      return false;
    };
    return beneath(spec.program) || std::any_of(spec.must_read.begin(), spec.must_read.end(), beneath) ||
           std::any_of(spec.private_keep.begin(), spec.private_keep.end(), beneath);
  };
  // And by name, for those under the system's folders: the batch's folders, the candidate's (as
  // named and, for a link, where its file really lies) and the hidden tests'. One that holds
  // kbv, its Python or its tools (a project root in /opt) is not covered by name: what its tools
  // read there beside the named paths is not known.
  std::vector<std::string> folders = job.batch_folders;
  for (const std::string& file : {job.candidate_path, job.hidden_tests_path}) {
    if (file.empty()) continue;
    std::error_code ec;
    folders.push_back(fs::absolute(file).parent_path().string());
    const fs::path real = fs::weakly_canonical(fs::absolute(file), ec);
    if (!ec) folders.push_back(real.parent_path().string());
  }
  for (const std::string& folder : folders)
    if (!folder.empty() && !holds_tools(folder) &&
        std::find(spec.private_dirs.begin(), spec.private_dirs.end(), folder) == spec.private_dirs.end())
      spec.private_dirs.push_back(folder);
  if (device_free_build(job)) {
    // No GPU to see, and (Landlock) none to open should the candidate's import set the variable
    // back: a build beside an evaluation must not become a tenant of its device.
    spec.env["CUDA_VISIBLE_DEVICES"] = "";
    spec.gpu = false;
  }
  return spec;
}

isolation::SandboxSpec twin_spec() {
  isolation::SandboxSpec spec;
  spec.program = sandbox_program();
  spec.argv = {spec.program};
  spec.env = sandbox_environment(fs::temp_directory_path().string());
  spec.use_namespaces = false;
  spec.use_landlock = false;
  spec.use_cgroup = false;
  spec.keep_uid = true;
  spec.limits.memory_bytes = 0;
  spec.limits.max_processes = 0;
  return spec;
}

}  // namespace kbv::judge
