#pragma once
// What the candidate's sandbox gets (docs/architecture.md, "the sandbox"): its program, an
// allow-listed environment (no API keys, no kbv secrets), a private tmp, the only folders it may
// write (its own build-cache entry and that tmp), its own unprivileged uid, and limits. And the
// twin's: the same program in its trusted role, no sandbox needed.
#include <cstdint>
#include <map>
#include <string>

#include "core/job.hpp"
#include "isolation/sandbox_spec.hpp"
#include "judge/build_cache.hpp"

namespace kbv::judge {

// kbv-sandbox next to this executable, or $KBV_SANDBOX.
std::string sandbox_program();

// The uid the sandbox runs as outside its user namespace when the judge is root: high enough to
// belong to no real user or container range, and one per candidate (`sequence`: its place in its
// judge's life, JudgeLife) so that per-uid limits and permissions separate concurrent sandboxes,
// a warm judge's next one started ahead included.
std::int64_t sandbox_uid(std::uint32_t sequence);

// The environment a sandbox sees: a fixed allow-list of names passed through from the judge's,
// plus HOME and TMPDIR pointing into its private `tmp_dir`.
std::map<std::string, std::string> sandbox_environment(const std::string& tmp_dir);

// KBV_SANDBOX_NAMESPACES=0 / KBV_SANDBOX_LANDLOCK=0 / KBV_SANDBOX_CGROUP=0 turn a mechanism off
// (to see what a machine without it gets); the verdict's `isolation` says what was in force.
// A candidate is a source file, of a source file's size (16 MiB at most): not a FIFO to hang
// on, not gigabytes to copy. Throws std::runtime_error saying which.
void check_candidate_file(const std::string& candidate_path);

// A read-only copy of the candidate file in the sandbox's private tmp (<tmp>/kbv-candidate/<its
// name>), which is what the sandbox imports; returns its path.
std::string copy_candidate_into(const std::string& candidate_path, const std::string& tmp_dir);

isolation::SandboxSpec candidate_sandbox_spec(const WorkerJob& job, const BuildCacheEntry& cache, const std::string& tmp_dir,
                                              std::uint32_t sequence);
isolation::SandboxSpec twin_spec();

}  // namespace kbv::judge
