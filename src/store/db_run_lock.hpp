#pragma once
// One `kbv run` writes to a results DB at a time. Two runs on one DB would both evaluate
// everything and the last writer would win; instead the second is refused, with the first
// one's pid, host and start time. The lock is an advisory flock on <db>.lock, held for the whole
// run; the kernel releases it when the process ends however it ends (kill -9 included), so a
// dead run never leaves a stale lock. The file itself stays (removing a lock file races).
#include <string>

#include "store/sqlite.hpp"

namespace kbv {

// Another process holds the run lock of the DB.
struct DbBusyError : StoreError {
  using StoreError::StoreError;
};

class DbRunLock {
 public:
  // Takes the lock without waiting; throws DbBusyError when another process holds it, StoreError
  // when the lock file cannot be created (e.g. a read-only folder).
  explicit DbRunLock(const std::string& db_path);
  ~DbRunLock();
  DbRunLock(const DbRunLock&) = delete;
  DbRunLock& operator=(const DbRunLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace kbv
