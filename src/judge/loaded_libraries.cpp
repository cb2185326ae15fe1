#include "judge/loaded_libraries.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace kbv::judge {
namespace {

namespace fs = std::filesystem;

bool is_library_name(const std::string& name) {
  const auto at = name.find(".so");
  return at != std::string::npos && at > 0 && (at + 3 == name.size() || name[at + 3] == '.');
}

}  // namespace

bool parse_maps_line(const std::string& line, MapsLine* out) {
  // address perms offset dev inode [path]
  std::istringstream in(line);
  std::string address, perms, offset, dev;
  unsigned long long inode = 0;
  if (!(in >> address >> perms >> offset >> dev >> inode)) return false;
  unsigned major = 0, minor = 0;
  if (std::sscanf(dev.c_str(), "%x:%x", &major, &minor) != 2) return false;
  std::string path;
  std::getline(in >> std::ws, path);
  // The kernel marks a file removed after it was mapped.
  if (const std::string gone = " (deleted)"; path.size() > gone.size() && path.compare(path.size() - gone.size(), gone.size(), gone) == 0)
    path.resize(path.size() - gone.size());
  out->major = major;
  out->minor = minor;
  out->inode = inode;
  out->path = path;
  return true;
}

std::vector<std::string> libraries_mapped_from(const std::string& entry_dir, const std::vector<pid_t>& pids) {
  // The entry's libraries: (device, inode) -> relative path, and absolute path -> relative path.
  std::map<std::pair<dev_t, ino_t>, std::string> by_inode;
  std::map<std::string, std::string> by_path;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(entry_dir, ec);
  if (ec) return {};
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_regular_file(ec) || !is_library_name(it->path().filename().string())) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const std::string rel = it->path().lexically_relative(root).string();
    by_inode[{st.st_dev, st.st_ino}] = rel;
    by_path[it->path().string()] = rel;
  }
  std::set<std::string> found;
  if (by_inode.empty()) return {};
  for (pid_t pid : pids) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    MapsLine m;
    while (std::getline(maps, line)) {
      if (!parse_maps_line(line, &m) || m.path.empty() || m.inode == 0) continue;
      if (auto it = by_inode.find({makedev(m.major, m.minor), static_cast<ino_t>(m.inode)}); it != by_inode.end()) {
        found.insert(it->second);
        continue;
      }
      // overlayfs shows the lower file's numbers in maps and its own to stat: the path, then (a
      // regular file of the entry, walked above without following links, is there now).
      if (auto it = by_path.find(m.path); it != by_path.end()) {
        struct stat st {};
        if (::lstat(m.path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) found.insert(it->second);
      }
    }
  }
  return {found.begin(), found.end()};
}

}  // namespace kbv::judge
