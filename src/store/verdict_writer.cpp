#include "store/verdict_writer.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace kbv {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Sleeps `seconds` in short steps so that Ctrl-C ends the wait.
void sleep_unless_cancelled(double seconds, const std::atomic<bool>* cancel) {
  auto until = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
  while (SteadyClock::now() < until && !(cancel && *cancel))
    std::this_thread::sleep_for(std::min<SteadyClock::duration>(std::chrono::milliseconds(50), until - SteadyClock::now()));
}

}  // namespace

VerdictWriter::VerdictWriter(ResultStore& store, VerdictSpill& spill, WriteRetry retry, const std::atomic<bool>* cancel)
    : store_(store), spill_(spill), retry_(retry), cancel_(cancel) {}

VerdictWriter::Where VerdictWriter::put(const SampleRef& sample, const Verdict& verdict, std::int64_t run_id) {
  std::lock_guard lock(mu_);  // one write at a time: the others would only wait on the DB lock
  if (!db_failed_) {
    auto give_up = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                            std::chrono::duration<double>(retry_.retry_seconds));
    double backoff = retry_.first_backoff_seconds;
    for (;;) {
      try {
        store_.put_verdict(sample, verdict, run_id);
        ++stored_;
        return Where::db;
      } catch (const StoreError& e) {
        bool again = store_error_is_transient(e) && SteadyClock::now() < give_up && !(cancel_ && *cancel_);
        if (!again) {
          db_error_ = e.what();
          db_failed_ = true;
          break;
        }
      }
      sleep_unless_cancelled(backoff, cancel_);
      backoff = std::min(backoff * 2, retry_.max_backoff_seconds);
    }
  }
  spill_.append({sample, verdict, run_id});
  return Where::spill;
}

std::string VerdictWriter::db_error() const {
  std::lock_guard lock(mu_);
  return db_error_;
}

std::size_t VerdictWriter::stored() const {
  std::lock_guard lock(mu_);
  return stored_;
}

}  // namespace kbv
