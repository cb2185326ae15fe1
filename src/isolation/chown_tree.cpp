#include "isolation/chown_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace kbv::isolation {
namespace {

constexpr int kMaxDepth = 32;  // deeper folders stay as they are: the sandbox's own doing

bool give_children(int dir_fd, uid_t uid, gid_t gid, int depth) {
  DIR* dir = ::fdopendir(dir_fd);  // owns dir_fd from here
  if (!dir) {
    ::close(dir_fd);
    return false;
  }
  bool ok = true;
  while (dirent* e = ::readdir(dir)) {
    const char* name = e->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    if (::fchownat(::dirfd(dir), name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0) ok = false;
    if (depth + 1 >= kMaxDepth) continue;
    int child = ::openat(::dirfd(dir), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child >= 0) ok = give_children(child, uid, gid, depth + 1) && ok;  // not a folder: ENOTDIR, ELOOP
  }
  ::closedir(dir);
  return ok;
}

}  // namespace

bool chown_tree(const std::string& path, uid_t uid, gid_t gid) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fchown(fd, uid, gid) == 0;
  return give_children(fd, uid, gid, 0) && ok;
}

}  // namespace kbv::isolation
