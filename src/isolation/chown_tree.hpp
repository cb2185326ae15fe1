// Handing a folder that a sandbox writes (its build-cache entry) over to the sandbox's uid.
//
// Every step is relative to an open folder and never follows a link (fchownat with
// AT_SYMLINK_NOFOLLOW, openat with O_NOFOLLOW): a path-based walk, run as root, could be led
// through a folder that another sandbox of the same source swapped for a link at that moment,
// and hand a host file to the sandbox's uid.
#pragma once

#include <string>
#include <sys/types.h>

namespace kbv::isolation {

// Gives `path` and everything under it (to a depth of 32 folders) to uid:gid. Links are given
// themselves, never what they point to. Returns false when something could not be given.
bool chown_tree(const std::string& path, uid_t uid, gid_t gid);

}  // namespace kbv::isolation
