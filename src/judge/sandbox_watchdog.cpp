#include "judge/sandbox_watchdog.hpp"

#include <algorithm>

namespace kbv::judge {

SandboxWatchdog::SandboxWatchdog(std::chrono::milliseconds grace, std::function<void()> overrun)
    : grace_(grace), overrun_(std::move(overrun)), thread_([this] { watch(); }) {}

SandboxWatchdog::~SandboxWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void SandboxWatchdog::arm(Clock::time_point deadline) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = true;
    deadline_ = deadline;
  }
  changed_.notify_all();
}

void SandboxWatchdog::watch_ended(EndedProbe ended, std::function<void(int status)> stuck, std::chrono::milliseconds poll) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ended_ = std::move(ended);
    stuck_ = std::move(stuck);
    poll_ = poll;
  }
  changed_.notify_all();
}

void SandboxWatchdog::disarm() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    armed_ = false;
    ended_seen_.reset();
    changed_.wait(lock, [this] { return !stuck_running_; });
  }
  changed_.notify_all();
}

bool SandboxWatchdog::fired() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fired_;
}

void SandboxWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const bool watching_ended = armed_ && ended_ && !stuck_fired_;
    if (!armed_ || (fired_ && !watching_ended)) {
      changed_.wait(lock);
      continue;
    }
    const auto now = Clock::now();
    if (watching_ended) {
      // The probe runs without the lock: it may take a moment, and arm()/disarm() must not wait.
      EndedProbe probe = ended_;
      lock.unlock();
      std::optional<int> status = probe();
      lock.lock();
      if (stopping_ || !armed_) continue;
      if (!status) {
        ended_seen_.reset();
      } else if (!ended_seen_) {
        ended_seen_ = now;
      } else if (now - *ended_seen_ >= grace_) {
        stuck_fired_ = stuck_running_ = true;
        auto stuck = stuck_;
        lock.unlock();
        stuck(*status);  // the judge's action does not return (it exits)
        lock.lock();
        stuck_running_ = false;
        changed_.notify_all();
        continue;
      }
    }
    const auto overrun_at = deadline_ + grace_;
    if (!fired_ && Clock::now() >= overrun_at) {
      fired_ = true;
      lock.unlock();
      overrun_();
      lock.lock();
      continue;
    }
    // Re-read after each wait: it may have been armed again or disarmed meanwhile.
    if (watching_ended) changed_.wait_until(lock, fired_ ? Clock::now() + poll_ : std::min(overrun_at, Clock::now() + poll_));
    else changed_.wait_until(lock, overrun_at);
  }
}

}  // namespace kbv::judge
