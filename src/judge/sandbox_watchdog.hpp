#pragma once
// The judge bounds every wait on the candidate by a deadline, but a wait inside a CUDA driver call
// has none. The watchdog is a thread with two triggers, each run at most once while armed:
//  - overrun: the judge's current deadline has passed by a grace and the judge has not moved it;
//    the judge ends the candidate's processes (a faulted context they hold can hold up the call).
//  - stuck: the candidate's process has ended (`ended` says so without reaping it) and the judge
//    has not noticed within the grace. Ending the candidate does not free the judge: on the H200
//    the judge's next kernel launch (the snapshot of the call's outputs) spun inside the driver
//    after an illegal address in the candidate's context, with the candidate's process long gone
//    (session 13, bench/probes/illegal_address_stack.sh). The judge reports and exits from there.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace kbv::judge {

class SandboxWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  // The candidate's process's wait status once it has ended, nullopt while it runs (or once the
  // judge has reaped it: then the judge is not stuck).
  using EndedProbe = std::function<std::optional<int>()>;

  SandboxWatchdog(std::chrono::milliseconds grace, std::function<void()> overrun);
  ~SandboxWatchdog();
  SandboxWatchdog(const SandboxWatchdog&) = delete;
  SandboxWatchdog& operator=(const SandboxWatchdog&) = delete;

  void arm(Clock::time_point deadline);  // fires at deadline + grace unless armed again or disarmed first
  // From now on while armed, also: `stuck(status)` once the candidate's process has been seen
  // ended for `grace` without disarm() (polled every `poll`).
  void watch_ended(EndedProbe ended, std::function<void(int status)> stuck,
                   std::chrono::milliseconds poll = std::chrono::milliseconds(200));
  // Once the stuck action has begun, waits for it to end (in the judge it never does: it exits), so
  // a judge that noticed the end at the last moment cannot send verdicts beside the action's.
  void disarm();
  bool fired() const;

 private:
  void watch();

  const std::chrono::milliseconds grace_;
  const std::function<void()> overrun_;
  EndedProbe ended_;
  std::function<void(int)> stuck_;
  std::chrono::milliseconds poll_{200};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false, fired_ = false, stopping_ = false, stuck_fired_ = false, stuck_running_ = false;
  Clock::time_point deadline_{};
  std::optional<Clock::time_point> ended_seen_;  // when the probe first said ended, while armed
  std::thread thread_;
};

}  // namespace kbv::judge
