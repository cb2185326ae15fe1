#pragma once
// How `kbv run` keeps a finished verdict whatever the store does: into the results DB, retrying
// a transient failure (another connection holding the lock past busy_timeout, a full disk, an
// I/O error) with backoff; if the DB still fails after `retry_seconds`, or fails in a way a
// retry cannot fix, the verdict goes to the spill file and the writer reports the DB failed, so
// the run can stop cleanly. Never throws for a DB failure.
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

#include "store/result_store.hpp"
#include "store/verdict_spill.hpp"

namespace kbv {

struct WriteRetry {
  double retry_seconds = 300;   // give up on the DB after this long (counted from the first failure of a write)
  double first_backoff_seconds = 0.1;
  double max_backoff_seconds = 5;
};

class VerdictWriter {
 public:
  // `cancel` (Ctrl-C) ends a retry early: the verdict is spilled at once.
  VerdictWriter(ResultStore& store, VerdictSpill& spill, WriteRetry retry, const std::atomic<bool>* cancel = nullptr);

  enum class Where { db, spill };
  // Thread-safe. Throws StoreError only when the spill file cannot take the verdict either.
  Where put(const SampleRef& sample, const Verdict& verdict, std::int64_t run_id);

  bool db_failed() const { return db_failed_; }   // later puts go to the spill file without trying the DB
  std::string db_error() const;                   // the failure that made it give up
  std::size_t stored() const;                     // verdicts the DB took

 private:
  ResultStore& store_;
  VerdictSpill& spill_;
  WriteRetry retry_;
  const std::atomic<bool>* cancel_;
  mutable std::mutex mu_;
  std::atomic<bool> db_failed_{false};
  std::string db_error_;
  std::size_t stored_ = 0;
};

}  // namespace kbv
