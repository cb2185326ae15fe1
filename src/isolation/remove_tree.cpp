#include "isolation/remove_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kbv::isolation {
namespace {

// Folders deeper than this are moved up to the top folder and emptied from there, so at most
// this many folders are open at once however deep the tree goes.
constexpr int kMaxOpenDepth = 32;

class Remover {
 public:
  explicit Remover(int top_fd) : top_fd_(top_fd) {}

  RemoveResult empty_top() {
    int fd = ::dup(top_fd_);
    if (fd < 0) fail("dup", "");
    else empty(fd, 0);
    // Folders moved up from deep inside: each is emptied (possibly moving more up) and removed.
    while (!deferred_.empty()) {
      std::string name = deferred_.back();
      deferred_.pop_back();
      remove_folder(top_fd_, name, 0);
    }
    return result_;
  }

 private:
  void fail(const char* what, const std::string& name) {
    if (!result_.ok) return;
    result_.ok = false;
    result_.error = std::string(what) + " " + name + ": " + std::strerror(errno);
  }

  // Empties the open folder `fd` (taking ownership of it).
  void empty(int fd, int depth) {
    DIR* dir = ::fdopendir(fd);
    if (!dir) {
      fail("fdopendir", "");
      ::close(fd);
      return;
    }
    std::vector<std::string> folders;
    while (dirent* e = ::readdir(dir)) {
      const char* name = e->d_name;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
      // unlinkat without AT_REMOVEDIR removes files and links (never what a link points to) and
      // refuses folders with EISDIR: the kernel, not a racy stat, tells the two apart.
      if (::unlinkat(::dirfd(dir), name, 0) == 0 || errno == ENOENT) continue;
      if (errno == EISDIR) folders.emplace_back(name);
      else fail("unlink", name);
    }
    for (const auto& name : folders) {
      if (depth + 1 < kMaxOpenDepth) {
        remove_folder(::dirfd(dir), name, depth + 1);
        continue;
      }
      std::string moved;
      if (move_up(::dirfd(dir), name, moved)) deferred_.push_back(moved);
    }
    ::closedir(dir);
  }

  // Empties and removes the folder `name` inside `parent_fd`.
  void remove_folder(int parent_fd, const std::string& name, int depth) {
    int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES) {
      // A folder its writer made unreadable (chmod 000): take the permissions back, without
      // following a link (a process still running could have swapped one in since EISDIR).
      ::fchmodat(parent_fd, name.c_str(), S_IRWXU, AT_SYMLINK_NOFOLLOW);
      fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      if (errno != ENOENT) fail("open", name);
      return;
    }
    ::fchmod(fd, S_IRWXU);  // entries of a folder without write permission cannot be removed
    empty(fd, depth);
    if (::unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) fail("rmdir", name);
  }

  bool move_up(int parent_fd, const std::string& name, std::string& moved) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      // Unpredictable names: folders planted under the names it would use cannot block it.
      std::uint64_t r = 0;
      if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) r = (static_cast<std::uint64_t>(::getpid()) << 32) ^ next_;
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r));
      moved = std::string(".kbv-removing-") + hex + "-" + std::to_string(next_++);
      if (::renameat2(parent_fd, name.c_str(), top_fd_, moved.c_str(), RENAME_NOREPLACE) == 0) return true;
      if (errno != EEXIST) break;
    }
    fail("move up", name);
    return false;
  }

  int top_fd_;
  std::vector<std::string> deferred_;
  unsigned long next_ = 0;
  RemoveResult result_;
};

RemoveResult with_open_folder(const std::string& path, bool remove_it) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    RemoveResult r;
    if (errno == ENOENT) return r;
    if (remove_it && (errno == ENOTDIR || errno == ELOOP)) {
      // A file or a link where the folder was: remove that, never what a link points to.
      if (::unlink(path.c_str()) == 0 || errno == ENOENT) return r;
    }
    r.ok = false;
    r.error = "open " + path + ": " + std::strerror(errno);
    return r;
  }
  if (remove_it) ::fchmod(fd, S_IRWXU);  // a folder that is kept keeps its mode
  RemoveResult r = Remover(fd).empty_top();
  ::close(fd);
  if (remove_it && ::rmdir(path.c_str()) != 0 && errno != ENOENT && r.ok) {
    r.ok = false;
    r.error = "rmdir " + path + ": " + std::strerror(errno);
  }
  return r;
}

}  // namespace

RemoveResult remove_tree(const std::string& path) { return with_open_folder(path, true); }

RemoveResult empty_tree(const std::string& path) { return with_open_folder(path, false); }

}  // namespace kbv::isolation
