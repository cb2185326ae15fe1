#pragma once
// What a sandboxed process gets: its program and environment, the fds it inherits, the only
// paths it may write, and the limits it runs under. The launcher (launch.hpp) applies all of it
// before the program's first instruction, so no candidate byte ever runs without it.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kbv::isolation {

struct SandboxLimits {
  std::int64_t memory_bytes = 0;     // cgroup memory.max; 0: no limit. Falls back to RLIMIT_DATA.
  std::int64_t max_processes = 1024; // cgroup pids.max, else RLIMIT_NPROC (threads count too)
  std::int64_t max_file_bytes = 1LL << 30;  // RLIMIT_FSIZE: no file larger (a build writes tens of MiB)
  std::int64_t max_open_files = 4096;       // RLIMIT_NOFILE
  std::int64_t tmp_bytes = 8LL << 30;       // each private tmpfs: /tmp, /dev/shm, the scratch folder
};

struct SandboxSpec {
  std::string program;                          // absolute path, exec'd as argv[0]
  std::vector<std::string> argv;                // argv[0] included
  std::map<std::string, std::string> env;       // the whole environment (an allow-list, built by the caller)
  // (fd in the launcher, fd number in the sandbox); everything else is closed before exec.
  std::vector<std::pair<int, int>> fds;
  std::vector<std::string> writable;            // folders the sandbox may write beneath (build, tmp)
  // What the program must be able to read (its libraries, its Python, the candidate): when the
  // unprivileged outer uid cannot, the sandbox keeps uid 0 inside its user namespace, with no
  // capabilities, and says so.
  std::vector<std::string> must_read;
  // Folders the sandbox sees only its own part of: an empty tmpfs over each, with its writable
  // folders and must-read paths beneath bound back. The build root: another sandbox's entry is
  // not there, even one its owner opened to all while both run.
  std::vector<std::string> private_dirs;
  // Paths it may need without reading them at start (its PATH's tools, CUDA_HOME...): when one
  // lies beneath a private folder, it comes back too. They never widen anything else.
  std::vector<std::string> private_keep;
  // Its scratch folder (one of `writable`: HOME, TMPDIR, the working folder): in its mount
  // namespace a tmpfs of limits.tmp_bytes (memory, charged to it) over what the folder already
  // holds, bound back read-only. Nothing it writes there reaches the host's disk, so filling it
  // fails its own writes and no other candidate's. Empty: none.
  std::string scratch;
  std::string working_dir;                      // chdir before exec
  SandboxLimits limits;
  // Off switches for machines or tests where a mechanism must not be used; what was in force is
  // reported either way (IsolationReport).
  bool use_namespaces = true;
  bool use_landlock = true;
  bool use_cgroup = true;
  bool use_readonly_mounts = true;
  bool drop_capabilities = true;
  // false: the GPU's device files are not among what it may open for writing (Landlock), so it
  // cannot make a CUDA context (a build beside an evaluation: kbv run --overlap-builds).
  bool gpu = true;
  // A trusted helper (the judge's twin) keeps the launcher's uid: nothing to isolate it from.
  bool keep_uid = false;
  // When the launcher runs as root: the unprivileged uid/gid the sandbox runs as outside its
  // user namespace (it is root only inside it, over nothing it does not own).
  std::uint32_t outer_uid = 100000;
};

}  // namespace kbv::isolation
