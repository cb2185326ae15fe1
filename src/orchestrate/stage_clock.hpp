#pragma once
// Wall time per worker stage, measured on the orchestrator's side from the worker's stage
// messages: it needs nothing from the worker, so a worker that hangs or dies still leaves the
// time it spent where it stopped.

#include <chrono>
#include <map>
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

  // Closes the current stage and returns seconds per stage (a stage entered twice adds up).
  std::map<std::string, double> finish(Clock::time_point now = Clock::now()) {
    close(now);
    return seconds_;
  }

 private:
  void close(Clock::time_point now) {
    seconds_[stage_] += std::chrono::duration<double>(now - since_).count();
    since_ = now;
  }

  std::string stage_;
  Clock::time_point since_;
  std::map<std::string, double> seconds_;
};

}  // namespace kbv
