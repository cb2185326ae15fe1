#pragma once
// Landlock (Linux 5.13+): an unprivileged process confines its own filesystem writes to a few
// folders, for itself and everything it later starts. Reads stay allowed.
#include <string>
#include <vector>

namespace kbv::isolation {

// The ABI version the kernel offers; 0 when Landlock is unavailable.
int landlock_abi();

// Prepared before fork (allocates); applied in the child with system calls only.
struct LandlockRules {
  int ruleset_fd = -1;  // -1: nothing to apply
  int abi = 0;
  std::string error;
};

// Writes (create, remove, write, truncate, device ioctls) allowed only beneath `writable`.
LandlockRules landlock_prepare(const std::vector<std::string>& writable);

// In the child: no_new_privs, then restrict itself. Returns 0 or an errno value.
int landlock_apply(const LandlockRules& rules);

}  // namespace kbv::isolation
