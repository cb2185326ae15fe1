#pragma once
// The sandbox's view of the filesystem, set up in its mount namespace before exec:
// - folders its unprivileged uid may not search (kbv and its Python under /root, say) are
//   covered by a tmpfs into which only the children it needs are bound back, so it can read its
//   own install and nothing else of that folder (keys, histories, other users' files);
// - a private /tmp and /run (the host's unix sockets are not there), with the folders it may
//   write bound back in from the host;
// - the spec's private folders (the build root) empty but for what it writes or reads there;
// - everything read-only but those folders, its own /proc and its own /dev/shm.
// The plan is computed before fork (it allocates); applying it makes system calls only.
#include <cstdint>
#include <string>
#include <vector>

#include "isolation/sandbox_spec.hpp"

namespace kbv::isolation {

struct MountPlan {
  struct Shadow {
    std::string dir;                    // not searchable by the sandbox's uid
    std::vector<std::string> children;  // full paths under it, bound back
  };
  std::vector<Shadow> shadows;
  std::vector<std::string> writable;    // from the spec
  // writable folders, the program and must-read paths under /tmp (as named and as resolved
  // through symlinks), bound back in
  std::vector<std::string> under_tmp;
  // The spec's private folders (outermost first), each with the paths beneath it that come back;
  // under /tmp they apply after the private /tmp's own bind-backs, which may have brought them.
  struct Private {
    std::string dir;
    std::vector<std::string> children;
  };
  std::vector<Private> privates;
  std::vector<std::string> kept_visible;  // private folders that could not be hidden, and why
  std::string tmp_options;              // for the private /tmp, and the scratch folder's tmpfs
  std::string scratch;                  // the spec's scratch folder, with what it holds now
  std::vector<std::string> scratch_children;
};

// Throws std::runtime_error when something the sandbox must read stays unreadable to `uid`
// even with the shadows (a folder deeper down that only its owner may search).
MountPlan plan_mounts(const SandboxSpec& spec, std::uint32_t uid);

// As real root, before the user namespace: a mount namespace holding the shadows (they become
// locked for the sandbox, which cannot unmount them). Returns 0 or an errno value.
int apply_shadows(const MountPlan& plan);

// Inside the sandbox's own user and mount namespaces, after its /proc and /dev/shm: the private
// /tmp and /run, the private folders, the scratch tmpfs, then everything read-only but the
// writable folders (the scratch folder's own contents stay read-only). Returns 0 or an errno
// value; `readonly` says whether the read-only step took (it needs mount_setattr, Linux 5.12).
int apply_private_mounts(const MountPlan& plan, bool& readonly);

}  // namespace kbv::isolation
