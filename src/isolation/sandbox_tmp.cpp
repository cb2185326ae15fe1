#include "isolation/sandbox_tmp.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kbv::isolation {
namespace {

constexpr const char* kPrefix = "kbv-sandbox-";

}  // namespace

SandboxTmp SandboxTmp::make(const std::string& parent) {
  std::string name = parent + "/" + kPrefix + "XXXXXX";
  std::vector<char> tmpl(name.begin(), name.end());
  tmpl.push_back('\0');
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a private tmp folder under " + parent + ": " + std::strerror(errno));
  SandboxTmp tmp;
  tmp.path_ = tmpl.data();
  tmp.lock_fd_ = ::open(tmp.path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (tmp.lock_fd_ < 0 || ::flock(tmp.lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::rmdir(tmp.path_.c_str());
    throw std::runtime_error("cannot lock the private tmp folder " + tmp.path_ + ": " + std::strerror(e));
  }
  return tmp;
}

SandboxTmp::SandboxTmp(SandboxTmp&& other) noexcept
    : path_(std::exchange(other.path_, {})), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

SandboxTmp& SandboxTmp::operator=(SandboxTmp&& other) noexcept {
  if (this != &other) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    path_ = std::exchange(other.path_, {});
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

SandboxTmp::~SandboxTmp() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

RemoveResult SandboxTmp::remove() {
  RemoveResult r;
  if (!path_.empty()) r = remove_tree(path_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
  path_.clear();
  return r;
}

std::size_t remove_abandoned_sandbox_tmps(const std::string& parent, std::chrono::seconds min_age) {
  DIR* dir = ::opendir(parent.c_str());
  if (!dir) return 0;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir))
    if (std::strncmp(e->d_name, kPrefix, std::strlen(kPrefix)) == 0) names.emplace_back(e->d_name);
  ::closedir(dir);
  std::size_t removed = 0;
  const std::time_t now = std::time(nullptr);
  for (const auto& name : names) {
    const std::string path = parent + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (now - st.st_mtime < min_age.count() || now - st.st_ctime < min_age.count()) continue;
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    // Held: its judge is alive. Taken: nobody holds it; hold it while it goes.
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && remove_tree(path).ok) ++removed;
    ::close(fd);
  }
  return removed;
}

}  // namespace kbv::isolation
