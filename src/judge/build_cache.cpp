#include "judge/build_cache.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "isolation/chown_tree.hpp"
#include "isolation/remove_tree.hpp"


namespace fs = std::filesystem;

namespace kbv::judge {
namespace {

// What the judge will hash of one entry at most: a sandbox may fill its entry with hard links to
// one huge sparse file (1 TiB to read), and the judge must not spend its evaluation on that.
constexpr std::int64_t kMaxHashedBytes = std::int64_t{8} << 30;

// sha256 of what the open fd holds, or "" past `budget` bytes.
std::string hash_fd(int fd, std::int64_t& budget) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return "";
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if ((budget -= n) < 0) return "";
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(n));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

// A library's hash, read through one fd opened without following links and without blocking
// (the entry is the sandbox's to write: a ".so" may be a symlink, a FIFO, or swapped for one
// between a check and a read), each inode once.
std::string library_hash(const fs::path& path, std::set<std::pair<dev_t, ino_t>>& seen, std::int64_t& budget) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "unreadable";
  struct stat st {};
  std::string hash;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) hash = "not a regular file";
  else if (!seen.insert({st.st_dev, st.st_ino}).second) hash = "a second link to one file";
  else if ((hash = hash_fd(fd, budget)).empty()) hash = "over the " + std::to_string(kMaxHashedBytes >> 30) + " GiB kbv hashes";
  ::close(fd);
  return hash;
}

std::map<std::string, std::string> libraries_in(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::int64_t budget = kMaxHashedBytes;
  std::error_code ec;
  // Links are listed, never followed (a link to a folder could lead anywhere, or loop).
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() != ".so") continue;
    if (!it->is_symlink(ec) && !it->is_regular_file(ec)) continue;
    out[fs::relative(it->path(), dir, ec).string()] = library_hash(it->path(), seen, budget);
  }
  return out;
}

// The entry emptied (the folder kept, for the sandbox's next build) and its record gone.
isolation::RemoveResult empty_entry(const BuildCacheEntry& entry) {
  auto emptied = isolation::empty_tree(entry.dir);
  std::error_code ec;
  fs::remove(entry.manifest, ec);
  return emptied;
}

}  // namespace

BuildCacheEntry build_cache_entry(const std::string& build_root, const std::string& source_sha256) {
  BuildCacheEntry e;
  fs::path root = fs::absolute(build_root);
  std::string key = source_sha256.substr(0, 16);
  e.dir = (root / key).string();
  e.manifest = (root / ".kbv-manifests" / (key + ".json")).string();
  e.lock = (root / ".kbv-manifests" / (key + ".lock")).string();
  e.log = (root / key / "build.log").string();
  return e;
}

std::optional<std::string> build_cache_verify(const BuildCacheEntry& entry) {
  std::error_code ec;
  if (!fs::exists(entry.dir, ec)) return std::nullopt;
  auto present = libraries_in(entry.dir);
  std::ifstream in(entry.manifest);
  nlohmann::json manifest = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  std::optional<std::string> mismatch;
  if (!manifest.is_object() || !manifest.contains("files") || !manifest["files"].is_object()) {
    if (!present.empty()) mismatch = "built libraries with no record of their hashes (" + present.begin()->first + ")";
  } else {
    const auto& recorded = manifest["files"];
    for (const auto& [rel, sha] : present)
      if (sha.size() != 64) mismatch = rel + ": " + sha;  // a link, a FIFO, a second link, too big
      else if (!recorded.contains(rel) || recorded[rel] != sha)
        mismatch = rel + (recorded.contains(rel) ? " changed after it was built" : " appeared after the build");
    for (const auto& [rel, sha] : recorded.items())
      if (!present.count(rel)) mismatch = rel + " vanished after it was built";
  }
  if (mismatch) empty_entry(entry);
  return mismatch;
}

void build_cache_create(const BuildCacheEntry& entry) {
  std::error_code ec;
  fs::create_directories(entry.dir, ec);
  fs::create_directories(fs::path(entry.manifest).parent_path(), ec);
  // Only its owner (the sandbox it is handed to, and the judge) may enter it: another uid's
  // sandbox could otherwise hold the entry's build lock (kbv.flock) and stall this one's builds.
  fs::permissions(entry.dir, fs::perms::owner_all, fs::perm_options::replace, ec);
}

void build_cache_hand_over(const BuildCacheEntry& entry, std::int64_t uid) {
  if (::geteuid() != 0 || uid < 0) return;
  // What cannot be handed over stays the judge's: the build will say so if it matters.
  isolation::chown_tree(entry.dir, static_cast<uid_t>(uid), static_cast<gid_t>(uid));
}

void build_cache_close(const BuildCacheEntry& entry) {
  if (entry.dir.empty()) return;
  // chmod on the folder itself, never through a link (the judge made it; only it could replace it).
  struct stat st {};
  if (::lstat(entry.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  ::chmod(entry.dir.c_str(), 0700);
}

namespace {

thread_local std::uintmax_t g_counted_bytes = 0;

int count_blocks(const char*, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_F || type == FTW_SL) g_counted_bytes += static_cast<std::uintmax_t>(st->st_blocks) * 512;
  return 0;
}

}  // namespace

std::uintmax_t build_cache_bytes(const BuildCacheEntry& entry) {
  g_counted_bytes = 0;
  if (!entry.dir.empty()) ::nftw(entry.dir.c_str(), count_blocks, 32, FTW_PHYS);
  return g_counted_bytes;
}

std::optional<std::string> build_cache_cap(const BuildCacheEntry& entry, std::uintmax_t cap) {
  const std::uintmax_t bytes = build_cache_bytes(entry);
  if (bytes <= cap) return std::nullopt;
  auto emptied = empty_entry(entry);
  return "the candidate's build left " + std::to_string(bytes >> 20) + " MiB in its build-cache entry (more than " +
         std::to_string(cap >> 20) + " MiB): emptied" + (emptied.ok ? "" : " in part: " + emptied.error);
}

bool build_says_disk_full(const std::string& message, const std::string& log_tail) {
  auto says = [&](const char* what) { return message.find(what) != std::string::npos || log_tail.find(what) != std::string::npos; };
  return says("No space left on device") || says("ENOSPC") || says("Errno 28");
}

std::optional<std::string> build_failed_for_host_disk(const BuildCacheEntry& entry) {
  if (entry.dir.empty()) return std::nullopt;
  empty_entry(entry);
  struct statvfs vfs {};
  const std::string root = fs::path(entry.dir).parent_path().string();
  if (::statvfs(root.c_str(), &vfs) != 0) return std::nullopt;
  const std::uintmax_t free_bytes = static_cast<std::uintmax_t>(vfs.f_bavail) * vfs.f_frsize;
  const std::uintmax_t total = static_cast<std::uintmax_t>(vfs.f_blocks) * vfs.f_frsize;
  // Full: less free than a build needs at the least, as the judge sees it now (512 MiB, or 1% of a
  // smaller file system).
  const bool full = free_bytes < std::min<std::uintmax_t>(std::uintmax_t{512} << 20, total / 100);
  if (!full) return std::nullopt;
  return "the build ran out of disk space: the build root's file system (" + root + ") has " + std::to_string(free_bytes >> 20) +
         " MiB left, and not by this candidate's build; free some and evaluate it again";
}

void build_cache_record(const BuildCacheEntry& entry) {
  nlohmann::json manifest{{"files", nlohmann::json::object()}};
  for (const auto& [rel, sha] : libraries_in(entry.dir)) manifest["files"][rel] = sha;
  std::string tmp = entry.manifest + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << manifest.dump(1);
  }
  std::error_code ec;
  fs::rename(tmp, entry.manifest, ec);
}

BuildCacheLock::BuildCacheLock(const BuildCacheEntry& entry) {
  // 0600 and O_CLOEXEC: no sandbox of another uid may open it, none of ours inherits it (either
  // could then hold it and stall every judge of this source).
  fd_ = ::open(entry.lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0)
    throw std::runtime_error("cannot open the build cache lock " + entry.lock + ": " + std::strerror(errno) +
                             "; kbv must be able to write in its --build-dir");
  int rc;
  do rc = ::flock(fd_, LOCK_EX);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::runtime_error("cannot lock the build cache entry " + entry.lock + ": " + std::strerror(err));
  }
}

BuildCacheLock::~BuildCacheLock() { ::close(fd_); }  // releases the flock

}  // namespace kbv::judge
