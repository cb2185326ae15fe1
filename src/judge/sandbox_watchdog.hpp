#pragma once
// The judge bounds every wait on the candidate by a deadline, but a wait inside a CUDA driver call
// has none: a candidate whose kernel faulted holds its CUDA context, and while that context lives
// the driver can hold up another process's call that touches its memory (mapping the call's
// outputs, a kernel reading them). The watchdog is a thread that, once the judge's current
// deadline has passed by a grace and the judge has not moved it, runs `overrun` once: the judge
// ends the candidate's processes, which frees the device and the judge's stuck call with it.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace kbv::judge {

class SandboxWatchdog {
 public:
  using Clock = std::chrono::steady_clock;

  SandboxWatchdog(std::chrono::milliseconds grace, std::function<void()> overrun);
  ~SandboxWatchdog();
  SandboxWatchdog(const SandboxWatchdog&) = delete;
  SandboxWatchdog& operator=(const SandboxWatchdog&) = delete;

  void arm(Clock::time_point deadline);  // fires at deadline + grace unless armed again or disarmed first
  void disarm();
  bool fired() const;

 private:
  void watch();

  const std::chrono::milliseconds grace_;
  const std::function<void()> overrun_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false, fired_ = false, stopping_ = false;
  Clock::time_point deadline_{};
  std::thread thread_;
};

}  // namespace kbv::judge
