#include "store/db_run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/utc_time.hpp"
#include "store/process_identity.hpp"

namespace kbv {
namespace {

std::string read_all(int fd) {
  std::string out;
  char buf[512];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\0')) out.pop_back();
  return out;
}

}  // namespace

DbRunLock::DbRunLock(const std::string& db_path) : path_(db_path + ".lock") {
  // O_CLOEXEC: workers must not inherit the lock (a stray one would hold it after kbv ended).
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw StoreError(fmt::format("cannot create the run lock '{}': {}; kbv run needs to write next to its --db",
                                 path_, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = read_all(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw DbBusyError(fmt::format(
          "another kbv run is writing to '{}' ({}); wait for it to finish (it resumes from the same DB, so running the "
          "same command afterwards evaluates only what it left), or pass another --db",
          db_path, holder.empty() ? "holder unknown" : holder));
    throw StoreError(fmt::format("cannot lock '{}': {}", path_, std::strerror(err)));
  }
  ProcessIdentity me = this_process();
  std::string who = fmt::format("pid {} on {}, started {}\n", me.pid, me.hostname, utc_now_iso());
  if (::ftruncate(fd_, 0) == 0) {
    ssize_t written = ::pwrite(fd_, who.data(), who.size(), 0);
    (void)written;  // the holder line is a courtesy for the message above; the lock is the flock
  }
}

DbRunLock::~DbRunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace kbv
