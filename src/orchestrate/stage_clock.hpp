#pragma once
// Wall time per worker stage, measured on the orchestrator's side from the worker's stage
// messages: it needs nothing from the worker, so a worker that hangs or dies still leaves the
// time it spent where it stopped.

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>
#include <string>

namespace kbv {

class StageClock {
 public:
  using Clock = std::chrono::steady_clock;

  // The clock starts in stage "start" (process start-up: Python, torch, CUDA context).
  explicit StageClock(Clock::time_point now = Clock::now()) : stage_("start"), since_(now) {}

  void enter(const std::string& stage, Clock::time_point now = Clock::now()) {
    close(now);
    stage_ = stage;
  }

  const std::string& current() const { return stage_; }

  // A judge started ahead reached its turn: of everything measured so far (the current stage up
  // to `now` included), the first `ahead_seconds` at most become stage `ahead` (its start-up
  // overlapped another evaluation), the rest stage "start" (start-up the device waited for);
  // then stage `next` begins. Returns the seconds put in `ahead`.
  double fold_ahead(const std::string& ahead, double ahead_seconds, const std::string& next, Clock::time_point now = Clock::now()) {
    close(now);
    double total = 0;
    for (const auto& [stage, seconds] : seconds_) total += seconds;
    double overlapped = std::clamp(ahead_seconds, 0.0, total);
    seconds_.clear();
    seconds_[ahead] = overlapped;
    if (total - overlapped > 0) seconds_["start"] = total - overlapped;
    stage_ = next;
    return overlapped;
  }

  // Seconds per stage so far, handed out and forgotten: the current stage goes on, counting from
  // `now` (a judge serving several protocols: the stages up to here were the previous one's).
  std::map<std::string, double> take(Clock::time_point now = Clock::now()) {
    close(now);
    return std::exchange(seconds_, {});
  }

  // Closes the current stage and returns seconds per stage (a stage entered twice adds up).
  std::map<std::string, double> finish(Clock::time_point now = Clock::now()) {
    close(now);
    return seconds_;
  }

 private:
  void close(Clock::time_point now) {
    now = std::max(now, since_);  // times from two sources (the judge's messages, kbv's own reads) never run back
    seconds_[stage_] += std::chrono::duration<double>(now - since_).count();
    since_ = now;
  }

  std::string stage_;
  Clock::time_point since_;
  std::map<std::string, double> seconds_;
};

}  // namespace kbv
