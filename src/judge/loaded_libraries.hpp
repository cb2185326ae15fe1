#pragma once
// Which of the libraries a candidate built are loaded in its sandbox, seen by the judge itself:
// the files under its build-cache entry (the judge walks them, following no link) against the
// mappings of the sandbox's processes (/proc/<pid>/maps, which the kernel writes, not the
// sandbox). This, not the sandbox's report of what it built, is the verdict's `custom_kernel`:
// the sandbox's channel can be relayed and its answers rewritten by the candidate.
#include <sys/types.h>

#include <string>
#include <vector>

namespace kbv::judge {

// The regular files named *.so or *.so.N under `entry_dir` (no link followed) that one of `pids`
// has mapped, matched by device and inode or, where a filesystem (overlayfs) shows the mapping
// with other numbers, by path; as paths relative to `entry_dir`, sorted, each once. A process
// whose mappings cannot be read (gone, or it made itself unreadable) contributes nothing: that
// can only cost its own candidate the mark.
std::vector<std::string> libraries_mapped_from(const std::string& entry_dir, const std::vector<pid_t>& pids);

// One line of /proc/<pid>/maps, parsed: device (major, minor), inode and path (empty for an
// anonymous mapping). False when the line is not a mapping line.
struct MapsLine {
  unsigned major = 0, minor = 0;
  unsigned long long inode = 0;
  std::string path;
};
bool parse_maps_line(const std::string& line, MapsLine* out);

}  // namespace kbv::judge
