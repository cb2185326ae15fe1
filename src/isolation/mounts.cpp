#include "isolation/mounts.hpp"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace kbv::isolation {
namespace {

namespace fs = std::filesystem;

// Whether `uid` (no supplementary groups) may search the directory.
bool searchable_by(const struct stat& st, std::uint32_t uid) {
  if (st.st_uid == uid) return (st.st_mode & S_IXUSR) != 0;
  return (st.st_mode & S_IXOTH) != 0;
}

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

// "/proc/self/fd/<fd>" into `buf`, with no allocation.
const char* fd_path(char* buf, int fd) {
  char digits[16];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + fd % 10);
    fd /= 10;
  } while (fd > 0);
  std::memcpy(buf, "/proc/self/fd/", 14);
  int i = 14;
  while (n > 0) buf[i++] = digits[--n];
  buf[i] = '\0';
  return buf;
}

// mkdir -p with no allocation (paths are shorter than PATH_MAX).
void make_dirs(const char* path) {
  char buf[4096];
  std::size_t len = std::strlen(path);
  if (len >= sizeof buf) return;
  std::memcpy(buf, path, len + 1);
  for (std::size_t i = 1; i <= len; ++i)
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      ::mkdir(buf, 0755);
      buf[i] = c;
    }
}

// Binds `source_fd` (an O_PATH fd taken before a tmpfs hid it) at `target`, creating the
// target (a folder, or an empty file for a file).
int bind_back(int source_fd, const char* target, bool directory) {
  if (directory) {
    make_dirs(target);
  } else {
    char parent[4096];
    std::size_t len = std::strlen(target);
    if (len >= sizeof parent) return ENAMETOOLONG;
    std::memcpy(parent, target, len + 1);
    if (char* slash = std::strrchr(parent, '/'); slash && slash != parent) {
      *slash = '\0';
      make_dirs(parent);
    }
    int fd = ::open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
  }
  char from[32];
  if (::mount(fd_path(from, source_fd), target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
  return 0;
}

// A tmpfs (`options`) over `dir`, with `children` (full paths beneath it) bound back from fds
// taken before the tmpfs hides them. No allocation. Returns 0 or an errno value.
int cover_and_bring_back(const char* dir, const char* options, const std::vector<std::string>& children) {
  int fds[64];
  bool dirs[64];
  std::size_t n = children.size() < 64 ? children.size() : 64;
  for (std::size_t i = 0; i < n; ++i) {
    fds[i] = ::open(children[i].c_str(), O_PATH | O_CLOEXEC);
    struct stat st {};
    dirs[i] = fds[i] >= 0 && ::fstat(fds[i], &st) == 0 && S_ISDIR(st.st_mode);
  }
  if (::mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0) return errno;
  for (std::size_t i = 0; i < n; ++i) {
    if (fds[i] < 0) continue;
    if (int e = bind_back(fds[i], children[i].c_str(), dirs[i])) return e;
    ::close(fds[i]);
  }
  return 0;
}

}  // namespace

MountPlan plan_mounts(const SandboxSpec& spec, std::uint32_t uid) {
  MountPlan plan;
  plan.writable = spec.writable;
  plan.tmp_options = "size=" + std::to_string(spec.limits.tmp_bytes) + ",mode=1777";
  // What it must read under /tmp comes back too, read-only as all but the writable folders: a
  // candidate kept there, and kbv's own files, the sandbox's program first among them (a checkout
  // or install under /tmp, as containers and CI runners make). /tmp itself never does. A path
  // reached through a symlink comes back both as named (its folders made real in the private
  // /tmp) and as resolved (a link from elsewhere into /tmp, e.g. ~/kbv -> /tmp/kbv).
  auto bring_back = [&](const std::string& p) {
    if (p.empty() || p[0] != '/') return;
    std::error_code ec;
    const std::string named = fs::path(p).lexically_normal().string();
    const std::string resolved = fs::weakly_canonical(p, ec).string();
    for (const std::string& path : {named, ec ? named : resolved})
      if (under(path, "/tmp") && std::find(plan.under_tmp.begin(), plan.under_tmp.end(), path) == plan.under_tmp.end())
        plan.under_tmp.push_back(path);
  };
  for (const auto& w : spec.writable) bring_back(w);
  bring_back(spec.program);
  for (const auto& r : spec.must_read) bring_back(r);
  // Outer folders first, so a folder bound later inside one stays on top of it.
  std::stable_sort(plan.under_tmp.begin(), plan.under_tmp.end(),
                   [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  std::vector<std::string> needed = spec.must_read;
  needed.push_back(spec.program);
  needed.insert(needed.end(), spec.writable.begin(), spec.writable.end());
  // Each private folder, as the mount will see it (symlinks resolved), with what of it comes back.
  // A needed folder above it is no reason to skip it: the tmpfs hides only what lies beneath.
  for (const auto& d : spec.private_dirs) {
    std::error_code ec;
    if (d.empty() || d[0] != '/') continue;
    const std::string dir = fs::weakly_canonical(d, ec).string();
    if (ec || dir == "/" || dir == "/tmp") continue;
    MountPlan::Private priv{dir, {}};
    const std::string named_dir = fs::path(d).lexically_normal().string();
    std::string why;  // why it cannot be hidden: it stays as its permissions make it
    for (const auto& p : needed) {
      if (p.empty() || p[0] != '/') continue;
      const std::string path = fs::weakly_canonical(p, ec).string();
      if (ec) continue;
      const std::string named = fs::path(p).lexically_normal().string();
      if (path == dir) why = "it is itself needed (" + p + ")";
      // Reached through a link inside it that leads out: the tmpfs hides the link, so the path
      // comes back as named (real folders along it, the link's target bound at its end).
      else if ((under(named, named_dir) || under(named, dir)) && !under(path, dir)) {
        const std::string as_named = under(named, dir) ? named : dir + named.substr(named_dir.size());
        if (std::find(priv.children.begin(), priv.children.end(), as_named) == priv.children.end()) priv.children.push_back(as_named);
      } else if (under(path, dir) && std::find(priv.children.begin(), priv.children.end(), path) == priv.children.end())
        priv.children.push_back(path);
    }
    if (priv.children.size() > 48) why = "too many paths beneath it to bring back";
    if (!why.empty()) {
      plan.kept_visible.push_back(dir + ": " + why);
      continue;
    }
    for (const auto& k : spec.private_keep) {
      if (k.empty() || k[0] != '/') continue;
      const std::string path = fs::weakly_canonical(k, ec).string();
      if (ec || !fs::exists(path, ec)) continue;
      if (path == dir || under(dir, path)) continue;  // a tool folder above it: nothing to bring back
      if (priv.children.size() >= 60) break;
      if (under(path, dir) && std::find(priv.children.begin(), priv.children.end(), path) == priv.children.end())
        priv.children.push_back(path);
    }
    std::stable_sort(priv.children.begin(), priv.children.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
    plan.privates.push_back(std::move(priv));
  }
  std::stable_sort(plan.privates.begin(), plan.privates.end(),
                   [](const MountPlan::Private& a, const MountPlan::Private& b) { return a.dir.size() < b.dir.size(); });
  if (!spec.scratch.empty() && spec.scratch[0] == '/') {
    std::error_code ec;
    plan.scratch = fs::path(spec.scratch).lexically_normal().string();
    for (const auto& entry : fs::directory_iterator(plan.scratch, ec)) plan.scratch_children.push_back(entry.path().string());
    if (ec || plan.scratch_children.size() > 60) plan.scratch.clear();  // left as the host's folder
  }
  for (const auto& p : needed) {
    if (p.empty() || p[0] != '/') continue;
    // The first ancestor the uid may not search gets a shadow; the child on the way is bound back.
    fs::path path = fs::path(p).lexically_normal();
    fs::path at = "/";
    for (auto part = std::next(path.begin()); part != path.end(); ++part) {
      struct stat st {};
      if (::stat(at.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) break;
      fs::path child = at / *part;
      if (!searchable_by(st, uid)) {
        auto shadow = std::find_if(plan.shadows.begin(), plan.shadows.end(), [&](const auto& s) { return s.dir == at.string(); });
        if (shadow == plan.shadows.end()) shadow = plan.shadows.insert(plan.shadows.end(), {at.string(), {}});
        if (std::find(shadow->children.begin(), shadow->children.end(), child.string()) == shadow->children.end())
          shadow->children.push_back(child.string());
        // Below the bound child, everything must be searchable as it is.
        for (fs::path deeper = child; deeper != path;) {
          struct stat dst {};
          if (::stat(deeper.c_str(), &dst) == 0 && S_ISDIR(dst.st_mode) && !searchable_by(dst, uid))
            throw std::runtime_error("'" + deeper.string() + "' is not searchable by the sandbox's uid " + std::to_string(uid) +
                                     ", and '" + p + "' lies beneath it: make it readable by others, or install kbv elsewhere");
          auto rel = path.lexically_relative(deeper);
          if (rel.empty() || *rel.begin() == "..") break;
          deeper /= *rel.begin();
        }
        break;
      }
      at = child;
    }
  }
  return plan;
}

int apply_shadows(const MountPlan& plan) {
  if (plan.shadows.empty()) return 0;
  if (::unshare(CLONE_NEWNS) != 0) return errno;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  for (const auto& s : plan.shadows)
    if (int e = cover_and_bring_back(s.dir.c_str(), "mode=755,size=1m", s.children)) return e;
  return 0;
}

int apply_private_mounts(const MountPlan& plan, bool& readonly) {
  readonly = false;
  // /tmp and /run of its own: no host socket, no other sandbox's files; the writable folders
  // that live under /tmp are bound back in.
  if (int e = cover_and_bring_back("/tmp", plan.tmp_options.c_str(), plan.under_tmp)) return e;
  ::mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755,size=1m");
  // The private folders: empty but for what comes back.
  for (const auto& priv : plan.privates) {
    // Under /tmp, one that nothing bound back reaches is not there at all: hidden already.
    struct stat there {};
    if (::stat(priv.dir.c_str(), &there) != 0) continue;
    if (int e = cover_and_bring_back(priv.dir.c_str(), "mode=755,size=1m", priv.children)) return e;
  }
  // Its scratch folder in memory: what it writes there never fills the host's disk.
  if (!plan.scratch.empty())
    if (int e = cover_and_bring_back(plan.scratch.c_str(), plan.tmp_options.c_str(), plan.scratch_children)) return e;

  // Read-only everything, then writable again exactly the folders it may write: a mount flag
  // holds whatever the uid (chmod, chown and writes fail with EROFS).
  for (const auto& w : plan.writable) ::mount(w.c_str(), w.c_str(), nullptr, MS_BIND | MS_REC, nullptr);
  mount_attr ro{};
  ro.attr_set = MOUNT_ATTR_RDONLY;
  if (::syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) != 0) return 0;
  readonly = true;
  mount_attr rw{};
  rw.attr_clr = MOUNT_ATTR_RDONLY;
  for (const auto& w : plan.writable)
    if (::syscall(SYS_mount_setattr, AT_FDCWD, w.c_str(), 0, &rw, sizeof rw) != 0) return errno;
  // /dev stays read-only: its device files still open for writing on a read-only mount, and no
  // file can be made in the host's devtmpfs. /tmp (its own) stays read-only too but for the
  // folders bound back.
  for (const char* own : {"/proc", "/dev/shm"}) ::syscall(SYS_mount_setattr, AT_FDCWD, own, 0, &rw, sizeof rw);
  return 0;
}

}  // namespace kbv::isolation
