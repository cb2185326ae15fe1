#pragma once
// Landlock (Linux 5.13+): an unprivileged process confines its own filesystem writes to a few
// folders, for itself and everything it later starts. Reads stay allowed.

namespace kbv::isolation {

// The ABI version the kernel offers; 0 when Landlock is unavailable.
int landlock_abi();

// Restricts the calling process (and everything it starts) so that writes (create, remove,
// write, truncate, device ioctls) are allowed only beneath `writable`; also sets no_new_privs.
// System calls only, so it can run between fork and exec. The paths are resolved when it runs:
// call it after the sandbox's own mounts (its /proc, its /dev/shm), or the rules would name the
// launcher's. Returns 0 or an errno value.
int landlock_restrict(const char* const* writable, int count, int abi);

}  // namespace kbv::isolation
