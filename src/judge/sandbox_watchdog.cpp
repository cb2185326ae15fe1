#include "judge/sandbox_watchdog.hpp"

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

void SandboxWatchdog::disarm() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
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
    if (!armed_ || fired_) {
      changed_.wait(lock);
      continue;
    }
    const auto when = deadline_ + grace_;
    if (Clock::now() < when) {
      changed_.wait_until(lock, when);
      continue;  // re-read: it may have been armed again or disarmed meanwhile
    }
    fired_ = true;
    lock.unlock();
    overrun_();
    lock.lock();
  }
}

}  // namespace kbv::judge
