// The sandbox's private tmp folder on the host (/tmp/kbv-sandbox-XXXXXX): its judge makes it,
// holds a lock on it while the evaluation lasts, and removes it at the end. A judge killed
// outright (SIGKILL, or its kbv killed) cannot remove it, and the judge's copy of the candidate
// would stay on disk: the next judge to make a folder removes every such folder that no judge
// holds (remove_abandoned_sandbox_tmps).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "isolation/remove_tree.hpp"

namespace kbv::isolation {

class SandboxTmp {
 public:
  // A fresh folder under `parent`, locked. Throws std::runtime_error.
  static SandboxTmp make(const std::string& parent = "/tmp");
  SandboxTmp() = default;
  SandboxTmp(SandboxTmp&& other) noexcept;
  SandboxTmp& operator=(SandboxTmp&& other) noexcept;
  SandboxTmp(const SandboxTmp&) = delete;
  SandboxTmp& operator=(const SandboxTmp&) = delete;
  ~SandboxTmp();  // lets go of the lock; the folder stays unless removed

  const std::string& path() const { return path_; }
  bool empty() const { return path_.empty(); }
  // Removes the folder and everything in it, then lets go of the lock.
  RemoveResult remove();

 private:
  std::string path_;
  int lock_fd_ = -1;
};

// Removes the sandbox folders under `parent` that no judge holds and that are older than
// `min_age` (a folder is locked a moment after it is made). Returns how many it removed.
std::size_t remove_abandoned_sandbox_tmps(const std::string& parent = "/tmp",
                                          std::chrono::seconds min_age = std::chrono::seconds(60));

}  // namespace kbv::isolation
